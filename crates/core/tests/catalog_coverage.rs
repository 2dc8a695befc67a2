//! The catalog covers every knob issue 2 lists, and its data is internally consistent.

use nictune_core::catalog::{catalog, Catalog, Entry, ValueType};

/// Every key issue 2 names, family by family.
const REQUIRED: &[&str] = &[
    // Linux ethtool coalescing: every attribute of the netlink coalesce message.
    "coalesce.rx-usecs",
    "coalesce.rx-frames",
    "coalesce.rx-usecs-irq",
    "coalesce.rx-frames-irq",
    "coalesce.tx-usecs",
    "coalesce.tx-frames",
    "coalesce.tx-usecs-irq",
    "coalesce.tx-frames-irq",
    "coalesce.rx-usecs-low",
    "coalesce.rx-frames-low",
    "coalesce.tx-usecs-low",
    "coalesce.tx-frames-low",
    "coalesce.rx-usecs-high",
    "coalesce.rx-frames-high",
    "coalesce.tx-usecs-high",
    "coalesce.tx-frames-high",
    "coalesce.adaptive-rx",
    "coalesce.adaptive-tx",
    "coalesce.stats-block-usecs",
    "coalesce.pkt-rate-low",
    "coalesce.pkt-rate-high",
    "coalesce.rate-sample-interval",
    "coalesce.cqe-mode-rx",
    "coalesce.cqe-mode-tx",
    "coalesce.tx-aggr-max-bytes",
    "coalesce.tx-aggr-max-frames",
    "coalesce.tx-aggr-time-usecs",
    "coalesce.rx-profile",
    "coalesce.tx-profile",
    "coalesce.rx-cqe-frames",
    "coalesce.rx-cqe-nsecs",
    // Rings, channels, GRO.
    "ring.rx",
    "ring.tx",
    "ring.rx-mini",
    "ring.rx-jumbo",
    "channel.rx",
    "channel.tx",
    "channel.other",
    "channel.combined",
    "feature.gro",
    // Per-NAPI and sysfs.
    "napi.defer-hard-irqs",
    "napi.gro-flush-timeout",
    "napi.irq-suspend-timeout",
    "napi.threaded",
    "sysfs.napi_defer_hard_irqs",
    "sysfs.gro_flush_timeout",
    // sysctls.
    "sysctl.net.core.busy_read",
    "sysctl.net.core.busy_poll",
    "sysctl.net.core.netdev_budget",
    "sysctl.net.core.netdev_budget_usecs",
    "sysctl.net.core.netdev_max_backlog",
    "sysctl.net.core.dev_weight",
    // IRQ affinity, RPS/XPS.
    "irq.affinity",
    "rps.cpus",
    "xps.cpus",
    // Driver module parameters.
    "e1000.InterruptThrottleRate",
    "e1000.RxIntDelay",
    "e1000.RxAbsIntDelay",
    "e1000.TxIntDelay",
    "e1000.TxAbsIntDelay",
    "e1000.RxDescriptors",
    "e1000.TxDescriptors",
    "e1000.XsumRX",
    // e1000e has no RxDescriptors/TxDescriptors/XsumRX parameters (ethtool -G / -K instead).
    "e1000e.InterruptThrottleRate",
    "e1000e.RxIntDelay",
    "e1000e.RxAbsIntDelay",
    "e1000e.TxIntDelay",
    "e1000e.TxAbsIntDelay",
    "igb.InterruptThrottleRate",
    "ixgbe.InterruptThrottleRate",
    "ixgbevf.InterruptThrottleRate",
    // FreeBSD.
    "freebsd.kern.hz",
    "freebsd.options.DEVICE_POLLING",
    "freebsd.ifconfig.polling",
    "freebsd.kern.polling.burst",
    "freebsd.kern.polling.burst_max",
    "freebsd.kern.polling.each_burst",
    "freebsd.kern.polling.user_frac",
    "freebsd.kern.polling.reg_frac",
    "freebsd.kern.polling.idle_poll",
    "freebsd.hw.igb.rxd",
    "freebsd.hw.igb.txd",
    "freebsd.hw.igb.num_queues",
    "freebsd.hw.igb.enable_aim",
    "freebsd.hw.igb.max_interrupt_rate",
    "freebsd.hw.igb.rx_process_limit",
    "freebsd.hw.em.rxd",
    "freebsd.hw.em.txd",
    "freebsd.hw.em.num_queues",
    "freebsd.hw.em.enable_aim",
    "freebsd.hw.em.max_interrupt_rate",
    "freebsd.hw.em.rx_process_limit",
    "freebsd.hw.em.rx_int_delay",
    "freebsd.hw.em.tx_int_delay",
    "freebsd.hw.em.rx_abs_int_delay",
    "freebsd.hw.em.tx_abs_int_delay",
    "freebsd.dev.igb.N.rx_processing_limit",
    "freebsd.kern.ipc.nmbclusters",
    "freebsd.kern.ipc.nmbjumbop",
    "freebsd.kern.ipc.nmbjumbo9",
    "freebsd.kern.ipc.nmbjumbo16",
    "freebsd.net.inet.ip.intr_queue_maxlen",
    "freebsd.net.route.netisr_maxqlen",
];

#[test]
fn every_data_file_parses() {
    let loaded = Catalog::load().expect("embedded catalog parses");
    assert!(loaded.entries().len() >= REQUIRED.len());
}

#[test]
fn every_required_key_is_present() {
    let missing: Vec<&&str> = REQUIRED
        .iter()
        .filter(|key| catalog().get(key).is_none())
        .collect();
    assert!(missing.is_empty(), "missing catalog keys: {missing:?}");
}

#[test]
fn keys_are_unique_and_family_dot_name() {
    let mut keys: Vec<&str> = catalog().entries().iter().map(|e| e.key.as_str()).collect();
    for key in &keys {
        let (family, name) = key.split_once('.').expect("family.name");
        assert!(!family.is_empty() && !name.is_empty(), "{key}");
    }
    let total = keys.len();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), total, "duplicate keys");
}

#[test]
fn no_alias_is_another_entrys_key() {
    for entry in catalog().entries() {
        for alias in &entry.aliases {
            let owner = catalog().get(&alias.name);
            assert!(
                owner.is_none_or(|o| o.key == entry.key),
                "alias {} of {} is the key of another entry",
                alias.name,
                entry.key
            );
        }
    }
}

#[test]
fn sysctls_and_freebsd_knobs_answer_to_their_native_name() {
    for entry in catalog().entries() {
        let native = entry.key.strip_prefix("sysctl.").or_else(|| {
            let rest = entry.key.strip_prefix("freebsd.")?;
            let tree = rest.split('.').next()?;
            ["kern", "hw", "dev", "net"].contains(&tree).then_some(rest)
        });
        if let Some(native) = native {
            assert!(
                entry
                    .aliases
                    .iter()
                    .any(|a| a.name.eq_ignore_ascii_case(native)),
                "{} lacks alias {native}",
                entry.key
            );
        }
    }
}

#[test]
fn every_entry_has_a_default_and_a_way_to_set_it() {
    for entry in catalog().entries() {
        assert!(
            entry.specs.iter().any(|s| !s.defaults.is_empty()),
            "{} has no default",
            entry.key
        );
        let read_only = entry
            .caveats
            .iter()
            .any(|c| c.text.starts_with("read-only"));
        assert!(
            !entry.set.is_empty() || read_only,
            "{} cannot be set",
            entry.key
        );
    }
}

#[test]
fn numeric_code_defaults_are_valid_values() {
    for entry in catalog().entries() {
        for spec in &entry.specs {
            for claim in &spec.defaults {
                let Ok(n) = claim.value.parse::<i64>() else {
                    continue;
                };
                let valid = !spec.is_ranged()
                    || spec.in_range(n)
                    || spec.specials.iter().any(|s| s.value == n);
                assert!(
                    valid,
                    "{} [{}]: default {n} is not allowed",
                    entry.key, spec.label
                );
            }
        }
    }
}

#[test]
fn structured_defaults_parse_as_values() {
    for entry in catalog().entries() {
        if !matches!(entry.value_type, ValueType::DimProfile | ValueType::Enum) {
            continue;
        }
        for claim in entry.specs.iter().flat_map(|s| &s.defaults) {
            let parsed = entry.parse_value(&claim.value);
            assert!(
                parsed.is_ok(),
                "{}: default {:?} does not parse",
                entry.key,
                claim.value
            );
        }
    }
}

#[test]
fn enums_have_choices_and_conversions_sit_on_integers() {
    for entry in catalog().entries() {
        if entry.value_type == ValueType::Enum {
            assert!(!entry.choices.is_empty(), "{} has no choices", entry.key);
        }
        let converts = entry.specs.iter().any(|s| s.conversion.is_some());
        assert!(
            !converts || entry.value_type == ValueType::Integer,
            "{}",
            entry.key
        );
    }
}

#[test]
fn doc_vs_source_conflicts_named_by_the_issue_are_recorded() {
    let conflict_values = |key: &str| -> Vec<String> {
        let entry: &Entry = catalog().get(key).unwrap();
        entry
            .conflicts
            .iter()
            .flat_map(|c| c.claims.iter().map(|claim| claim.value.clone()))
            .collect()
    };
    let radv = conflict_values("e1000.RxAbsIntDelay");
    assert!(radv.contains(&"8".to_string()) && radv.contains(&"128".to_string()));
    let rdtr = conflict_values("e1000.RxIntDelay");
    assert!(rdtr.iter().any(|v| v.starts_with("128")) && rdtr.contains(&"0".to_string()));
    let ixgbe = conflict_values("ixgbe.InterruptThrottleRate");
    assert!(ixgbe.contains(&"956–488281".to_string()) && ixgbe.contains(&"100–100000".to_string()));
}

#[test]
fn every_key_and_alias_finds_its_entry() {
    for entry in catalog().entries() {
        let names = std::iter::once(&entry.key).chain(entry.aliases.iter().map(|a| &a.name));
        for name in names {
            let found = catalog().matches(name);
            assert!(
                found.iter().any(|e| e.key == entry.key),
                "{name} does not find {}",
                entry.key
            );
        }
    }
}

#[test]
fn ethtool_set_commands_take_the_value() {
    for entry in catalog().entries() {
        for method in entry
            .set
            .iter()
            .filter(|m| m.template.starts_with("ethtool -"))
        {
            assert!(
                method.template.contains("{value}") || method.template.contains('<'),
                "{}: {}",
                entry.key,
                method.template
            );
        }
    }
}
