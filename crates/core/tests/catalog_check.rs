//! Lookup, parsing and checking through the public API, on the cases issue 2 names.

use nictune_core::catalog::{
    catalog, check, check_many, default_value, lookup, select_spec, CatalogValue, Context,
    ContextError, LookupError, SourceKind,
};

fn ctx(driver: Option<&str>, device: Option<&str>, generation: Option<&str>) -> Context {
    Context {
        driver: driver.map(String::from),
        device: device.map(String::from),
        generation: generation.map(String::from),
    }
}

fn check_text(name: &str, value: &str, context: &Context) -> nictune_core::catalog::CheckReport {
    let entry = catalog().lookup(name, context.driver.as_deref()).unwrap();
    let value = entry.parse_value(value).unwrap();
    check(entry, &value, context).unwrap()
}

#[test]
fn aliases_resolve_to_canonical_keys() {
    assert_eq!(lookup("rx-usecs").unwrap().key, "coalesce.rx-usecs");
    assert_eq!(
        lookup("ETHTOOL_A_COALESCE_RX_USECS").unwrap().key,
        "coalesce.rx-usecs"
    );
    assert_eq!(
        lookup("net.core.busy_poll").unwrap().key,
        "sysctl.net.core.busy_poll"
    );
    assert_eq!(
        lookup("kern.polling.burst_max").unwrap().key,
        "freebsd.kern.polling.burst_max"
    );
    assert_eq!(lookup("HZ").unwrap().key, "freebsd.kern.hz");
    assert_eq!(
        lookup("dev.igb.3.rx_processing_limit").unwrap().key,
        "freebsd.dev.igb.N.rx_processing_limit"
    );
    assert_eq!(
        lookup("COALESCE.RX-USECS").unwrap().key,
        "coalesce.rx-usecs"
    );
}

#[test]
fn shared_module_parameter_names_are_ambiguous_until_a_driver_is_given() {
    match lookup("InterruptThrottleRate") {
        Err(LookupError::Ambiguous { candidates, .. }) => {
            for key in [
                "e1000.InterruptThrottleRate",
                "e1000e.InterruptThrottleRate",
                "igb.InterruptThrottleRate",
                "ixgbe.InterruptThrottleRate",
                "ixgbevf.InterruptThrottleRate",
            ] {
                assert!(
                    candidates.iter().any(|c| c == key),
                    "{key} not in {candidates:?}"
                );
            }
        }
        other => panic!("expected ambiguity, got {other:?}"),
    }
    let e1000 = catalog()
        .lookup("InterruptThrottleRate", Some("e1000"))
        .unwrap();
    assert_eq!(e1000.key, "e1000.InterruptThrottleRate");
}

#[test]
fn a_key_of_another_driver_is_refused() {
    let err = catalog()
        .lookup("e1000.RxIntDelay", Some("igb"))
        .unwrap_err();
    assert!(matches!(err, LookupError::WrongDriver { .. }), "{err:?}");
}

#[test]
fn unknown_names_get_the_nearest_keys() {
    match lookup("rx-usec") {
        Err(LookupError::Unknown { suggestions, .. }) => {
            assert_eq!(
                suggestions.first().map(String::as_str),
                Some("coalesce.rx-usecs")
            );
        }
        other => panic!("expected unknown, got {other:?}"),
    }
    match lookup("InteruptThrottleRate") {
        Err(LookupError::Unknown { suggestions, .. }) => {
            assert!(
                suggestions
                    .iter()
                    .any(|s| s == "e1000.InterruptThrottleRate"),
                "{suggestions:?}"
            );
        }
        other => panic!("expected unknown, got {other:?}"),
    }
}

#[test]
fn rx_abs_int_delay_has_both_defaults_with_sources() {
    let entry = catalog().lookup("RxAbsIntDelay", Some("e1000")).unwrap();
    let spec = select_spec(entry, &Context::default()).unwrap().unwrap();
    let code = spec
        .defaults
        .iter()
        .find(|c| c.kind == SourceKind::Code)
        .unwrap();
    let doc = spec
        .defaults
        .iter()
        .find(|c| c.kind == SourceKind::Doc)
        .unwrap();
    assert_eq!((code.value.as_str(), doc.value.as_str()), ("8", "128"));
    assert!(code.source.contains("e1000_param.c"));
    assert!(doc.source.contains("e1000.rst"));
    assert_eq!(spec.ranges, vec![[0, 65535]]);
}

#[test]
fn itr_80000_on_an_82547_warns_of_a_hang() {
    let report = check_text(
        "InterruptThrottleRate",
        "80000",
        &ctx(Some("e1000"), Some("82547"), None),
    );
    assert!(report.errors.is_empty());
    assert!(
        report.warnings.iter().any(|w| w.message.contains("hang")),
        "{report:?}"
    );
    assert!(!report.is_clean());
}

#[test]
fn itr_0_on_an_82547gi_also_warns_and_other_devices_do_not() {
    let hang = |device: &str, value: &str| {
        check_text(
            "InterruptThrottleRate",
            value,
            &ctx(Some("e1000"), Some(device), None),
        )
        .warnings
        .iter()
        .any(|w| w.message.contains("hang"))
    };
    assert!(hang("82547GI", "0"));
    assert!(!hang("82546EB", "80000"));
    assert!(!hang("82547", "8000"));
}

#[test]
fn with_the_device_unknown_the_hang_is_a_conditional_note() {
    let report = check_text(
        "InterruptThrottleRate",
        "80000",
        &ctx(Some("e1000"), None, None),
    );
    assert!(report.warnings.is_empty());
    assert!(report
        .notes
        .iter()
        .any(|n| n.message.starts_with("if the device is 82547")));
}

#[test]
fn itr_8000_converts_to_register_488() {
    let report = check_text(
        "InterruptThrottleRate",
        "8000",
        &ctx(Some("e1000"), None, None),
    );
    assert!(report.is_clean(), "{report:?}");
    let itr = &report.conversions[0];
    assert_eq!(itr.value, 488.0);
    assert!(itr.text.contains("124.9 µs"), "{}", itr.text);
}

#[test]
fn rx_usecs_50_on_igb_is_200_quarter_microseconds() {
    let report = check_text("rx-usecs", "50", &ctx(Some("igb"), None, None));
    assert!(report.errors.is_empty());
    assert_eq!(report.conversions[0].value, 200.0);
    assert!(report.conversions[0].text.contains("0.25 µs"));
}

#[test]
fn out_of_range_values_are_errors_naming_what_is_allowed() {
    let report = check_text(
        "InterruptThrottleRate",
        "50",
        &ctx(Some("e1000"), None, None),
    );
    let error = &report.errors[0].message;
    assert!(error.contains("100–100000"), "{error}");
    assert!(error.contains("uses the default 3"), "{error}");
    let igb = check_text("rx-usecs", "5", &ctx(Some("igb"), None, None));
    assert!(igb.errors[0].message.contains("10–10000"));
}

#[test]
fn per_port_arrays_check_every_port() {
    let report = check_text(
        "InterruptThrottleRate",
        "8000,99",
        &ctx(Some("e1000"), None, None),
    );
    assert_eq!(report.errors.len(), 1);
    assert!(matches!(report.value, CatalogValue::PerPort(ref v) if v.len() == 2));
}

#[test]
fn device_specific_ranges_apply() {
    let on = |device| {
        check_text(
            "RxDescriptors",
            "1024",
            &ctx(Some("e1000"), Some(device), None),
        )
    };
    assert_eq!(on("82543GC").errors.len(), 1);
    assert!(on("82545EM").errors.is_empty());
}

#[test]
fn generations_change_defaults_and_unknown_ones_are_refused() {
    let entry = catalog().get("e1000.InterruptThrottleRate").unwrap();
    let old = select_spec(entry, &ctx(None, None, Some("7.0")))
        .unwrap()
        .unwrap();
    assert_eq!(old.defaults[0].value, "8000");
    let current = select_spec(entry, &ctx(None, None, None)).unwrap().unwrap();
    assert_eq!(current.defaults[0].value, "3");
    let err = select_spec(entry, &ctx(None, None, Some("9.9"))).unwrap_err();
    let ContextError::UnknownGeneration { known, .. } = err;
    assert!(known.contains(&"7.0".to_string()) && known.contains(&"7.3+".to_string()));
}

/// README: an unknown generation exits 2 — also for a setting with one set of values for
/// every generation (e1000e's InterruptThrottleRate, igb's rx-usecs), which once took any
/// name; a generation the driver knows elsewhere still reads there.
#[test]
fn unknown_generations_are_refused_where_the_values_never_changed() {
    let itr = catalog().get("e1000e.InterruptThrottleRate").unwrap();
    let err = select_spec(itr, &ctx(None, None, Some("zzz"))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "e1000e.InterruptThrottleRate: no generation \"zzz\" known for driver e1000e; the \
         catalog has one set of values for every generation: drop --generation"
    );
    let usecs = catalog().get("coalesce.rx-usecs").unwrap();
    assert!(select_spec(usecs, &ctx(Some("igb"), None, Some("bogus"))).is_err());
    let err = select_spec(usecs, &ctx(Some("e1000"), None, Some("6.0"))).unwrap_err();
    assert!(err.to_string().contains("known: 7.3+, 7.0, "), "{err}");
    let spec = select_spec(usecs, &ctx(Some("e1000"), None, Some("7.0"))).unwrap();
    assert_eq!(
        spec,
        select_spec(usecs, &ctx(Some("e1000"), None, None)).unwrap()
    );
}

#[test]
fn rx_int_delay_nonzero_warns() {
    let report = check_text("e1000.RxIntDelay", "32", &Context::default());
    assert!(report.warnings.iter().any(|w| w.message.contains("hang")));
    assert!(report.conversions[0].text.contains("32.768 µs"));
    assert!(check_text("e1000.RxIntDelay", "0", &Context::default()).is_clean());
}

#[test]
fn unparsable_values_name_key_value_and_what_is_allowed() {
    let entry = lookup("rx-usecs").unwrap();
    let err = entry.parse_value("abc").unwrap_err();
    assert_eq!(err.key, "coalesce.rx-usecs");
    assert_eq!(err.value, "abc");
    assert_eq!(
        err.to_string(),
        "setting coalesce.rx-usecs: \"abc\" is not an integer (µs)"
    );
}

#[test]
fn enums_bools_and_cpu_sets_parse() {
    let threaded = lookup("napi.threaded").unwrap();
    assert_eq!(threaded.parse_value("1").unwrap().to_string(), "enabled");
    assert_eq!(
        threaded.parse_value("busy-poll").unwrap().to_string(),
        "busy-poll"
    );
    assert!(threaded.parse_value("maybe").is_err());
    assert_eq!(
        lookup("gro").unwrap().parse_value("off").unwrap(),
        CatalogValue::Bool(false)
    );
    let rps = lookup("rps_cpus").unwrap().parse_value("f0").unwrap();
    assert_eq!(rps.to_string(), "4-7");
    let irq = lookup("irq.affinity")
        .unwrap()
        .parse_value("0-2,5")
        .unwrap();
    assert_eq!(irq.to_string(), "0-2,5");
}

#[test]
fn sysfs_writes_warn_that_they_overwrite_per_napi_values() {
    let report = check_text("napi_defer_hard_irqs", "2", &Context::default());
    assert!(report
        .notes
        .iter()
        .any(|n| n.message.contains("overwrites")));
    assert!(report
        .warnings
        .iter()
        .any(|w| w.message.contains("gro_flush_timeout")));
}

#[test]
fn freebsd_em_delay_converts_to_ticks() {
    let report = check_text("hw.em.rx_abs_int_delay", "66", &Context::default());
    assert!(
        report.conversions[0].text.contains("64 ticks"),
        "{report:?}"
    );
}

#[test]
fn settings_checked_together_do_not_warn_about_each_other() {
    let defer = lookup("napi.defer-hard-irqs").unwrap();
    let timeout = lookup("napi.gro-flush-timeout").unwrap();
    let alone = check(defer, &CatalogValue::Integer(2), &Context::default()).unwrap();
    assert!(alone
        .warnings
        .iter()
        .any(|w| w.message.contains("gro-flush-timeout")));
    let with = |ns: i64| {
        let set = [
            (defer, CatalogValue::Integer(2)),
            (timeout, CatalogValue::Integer(ns)),
        ];
        check_many(&set, &Context::default()).unwrap()
    };
    assert!(with(20_000)[0].warnings.is_empty(), "{:?}", with(20_000));
    assert!(!with(0)[0].warnings.is_empty());
}

#[test]
fn default_values_follow_driver_generation_and_device() {
    let radv = catalog().get("e1000.RxAbsIntDelay").unwrap();
    assert_eq!(
        default_value(radv, &Context::default()).unwrap(),
        Some(CatalogValue::Integer(8))
    );
    let old = ctx(None, None, Some("2.6-historical"));
    assert_eq!(
        default_value(radv, &old).unwrap(),
        Some(CatalogValue::Integer(128))
    );
    let rx_usecs = lookup("rx-usecs").unwrap();
    assert_eq!(default_value(rx_usecs, &Context::default()).unwrap(), None);
    let igb = ctx(Some("igb"), None, None);
    assert_eq!(
        default_value(rx_usecs, &igb).unwrap(),
        Some(CatalogValue::Integer(3))
    );
    let gro = lookup("gro").unwrap();
    assert_eq!(
        default_value(gro, &Context::default()).unwrap(),
        Some(CatalogValue::Bool(true))
    );
}

#[test]
fn polling_is_checked_against_the_drivers_polling4_lists() {
    let msk = check_text("polling", "on", &ctx(Some("msk"), None, None));
    assert_eq!(msk.warnings.len(), 1, "{msk:?}");
    assert!(msk.warnings[0].message.contains("polling(4) does not list"));
    assert!(msk.warnings[0]
        .source
        .as_deref()
        .unwrap()
        .contains("share/man/man4/polling.4"));
    let em = check_text("polling", "on", &ctx(Some("em"), None, None));
    assert!(em.is_clean(), "{em:?}");
    let off = check_text("polling", "off", &ctx(Some("msk"), None, None));
    assert!(off.is_clean(), "switching polling off needs no support");
    let unknown = check_text("polling", "on", &ctx(None, None, None));
    assert!(unknown.is_clean());
    assert!(unknown.notes.iter().any(|n| n
        .message
        .starts_with("if the driver is not one of those listed: ")));
}

#[test]
fn each_burst_above_burst_max_warns_only_when_checked_together() {
    let set = |burst_max: &str, each_burst: &str| {
        let max = lookup("kern.polling.burst_max").unwrap();
        let each = lookup("kern.polling.each_burst").unwrap();
        let pairs = [
            (max, max.parse_value(burst_max).unwrap()),
            (each, each.parse_value(each_burst).unwrap()),
        ];
        check_many(&pairs, &Context::default()).unwrap()
    };
    let clamped = set("20", "50");
    assert!(clamped[0].is_clean());
    assert_eq!(clamped[1].warnings.len(), 1, "{:?}", clamped[1]);
    assert!(clamped[1].warnings[0]
        .message
        .contains("resets each_burst to 10"));
    assert!(clamped[1].warnings[0]
        .source
        .as_deref()
        .unwrap()
        .contains("kern_poll.c"));
    assert!(
        set("20", "20").iter().all(|r| r.is_clean()),
        "equal is allowed"
    );
    // burst_max raised first: each_burst 200 holds, and the default-150 caveat is moot.
    assert!(set("300", "200").iter().all(|r| r.is_clean()));
    // Alone, each_burst 200 is above the default burst_max.
    let alone = check_text("kern.polling.each_burst", "200", &Context::default());
    assert_eq!(alone.warnings.len(), 1);
}

#[test]
fn tcp_buffer_triples_parse_in_sysctl_order_and_nfs_sizes_name_the_client_rule() {
    let rmem = lookup("net.ipv4.tcp_rmem").unwrap();
    for text in [
        "4096 131072 6291456",
        "4096\t131072\t6291456",
        "4096,131072,6291456",
    ] {
        assert_eq!(
            rmem.parse_value(text).unwrap(),
            CatalogValue::Triple([4096, 131072, 6291456]),
            "{text:?}"
        );
    }
    for bad in ["4096 131072", "6291456 131072 4096", "a b c", "1 2 3 4"] {
        let err = rmem.parse_value(bad).unwrap_err().to_string();
        assert!(err.contains("three integers"), "{bad:?}: {err}");
    }
    let zero = check_text("tcp_rmem", "0 131072 6291456", &Context::default());
    assert!(
        zero.errors[0].message.contains("0 is out of range"),
        "{zero:?}"
    );
    assert_eq!(lookup("rsize").unwrap().key, "nfs.rsize");
    assert_eq!(lookup("window").unwrap().key, "route.window");
    let small = check_text("nfs.rsize", "512", &Context::default());
    assert!(
        small.errors[0].message.contains("the client uses 4096"),
        "{small:?}"
    );
    let ok = check_text("nfs.wsize", "2048", &Context::default());
    assert!(ok.is_clean() && !ok.notes.is_empty(), "{ok:?}");
}
