use super::*;

fn texts(dir: &str) -> ProcTexts {
    let base = format!(
        "{}/fixtures/rr-loopback-2s/{dir}",
        env!("CARGO_MANIFEST_DIR")
    );
    let read = |f: &str| std::fs::read_to_string(format!("{base}/{f}")).unwrap();
    ProcTexts {
        stat: read("stat"),
        interrupts: read("interrupts"),
        softirqs: read("softirqs"),
        softnet: read("net/softnet_stat"),
        net_dev: read("net/dev"),
        netstat: read("net/netstat"),
        parents: Vec::new(),
    }
}

fn captured() -> Accounting {
    let before = Sample::parse(&texts("before")).unwrap();
    let after = Sample::parse(&texts("after")).unwrap();
    let work = Work {
        transactions: Some(100_000),
        bytes: None,
    };
    account(
        &before,
        &after,
        Nanos::from_secs(2),
        100,
        work,
        Some(&["lo".to_string()]),
    )
}

#[test]
fn cpu_fractions_sum_to_one_per_cpu_and_match_the_tick_deltas() {
    let acc = captured();
    let cpu = &acc.host.cpu;
    assert_eq!(cpu.per_core.len(), 2);
    for c in &cpu.per_core {
        let sum = c.irq + c.softirq + c.system.unwrap() + c.user + c.idle;
        assert!((sum - 1.0).abs() < 1e-9, "{c:?}");
    }
    // cpu0: user +191, system +10, softirq +2 ticks, nothing else (see the fixture).
    let c0 = cpu.per_core[0];
    assert!((c0.user - 191.0 / 203.0).abs() < 1e-9, "{c0:?}");
    assert!((c0.softirq - 2.0 / 203.0).abs() < 1e-9);
    assert_eq!(c0.idle, 0.0);
}

#[test]
fn irq_time_not_accounted_is_detected_and_explained() {
    let acc = captured();
    assert_eq!(acc.irq_time_accounted, Some(false));
    assert!(acc
        .notes
        .iter()
        .any(|n| n.contains("irq time is not accounted")));
}

#[test]
fn rr_traffic_shows_as_net_rx_softirqs_and_no_device_interrupts_on_lo() {
    let acc = captured();
    assert!(
        acc.net_rx_softirqs_per_sec > 10_000.0,
        "{}",
        acc.net_rx_softirqs_per_sec
    );
    assert!(acc.arch_irqs_per_sec.contains_key("LOC"));
    // The lines that fired are the machine's own virtio devices: none is lo's, so the NIC
    // interrupts are exactly +0 (never the -0.0 of an empty f64 sum).
    assert!(!acc.device_irqs.is_empty());
    assert!(acc.nic_vectors.is_empty(), "{:?}", acc.nic_vectors);
    let ints = acc.host.interrupts_per_sec.unwrap();
    assert!(ints == 0.0 && ints.is_sign_positive(), "{ints}");
    assert_eq!(acc.host.drops.get("interface_rx"), Some(&0));
    let lo = acc
        .interface_drops
        .iter()
        .find(|d| d.iface == "lo")
        .unwrap();
    assert_eq!((lo.rx, lo.tx), (0, 0));
    assert_eq!(acc.host.drops.get("backlog"), Some(&0));
    // Service demand: all busy CPU time over the transactions.
    let busy_ticks = 345 + 44 + 15; // user + system + softirq deltas of the `cpu` line
    let want = busy_ticks as f64 * 10_000.0 / 100_000.0;
    assert!((acc.cpu_us_per_transaction.unwrap() - want).abs() < 1e-6);
}

#[test]
fn softnet_counters_wrap_at_32_bits() {
    let mut before = Sample::parse(&texts("before")).unwrap();
    let after = Sample::parse(&texts("after")).unwrap();
    for r in &mut before.softnet {
        r.processed = r.processed.wrapping_add(0xffff_fff0) & 0xffff_ffff;
    }
    let d = softnet_delta(&before, &after, |r| r.processed);
    let plain = softnet_delta(&Sample::parse(&texts("before")).unwrap(), &after, |r| {
        r.processed
    });
    assert_eq!(d, plain + 2 * 0x10);
}

#[test]
fn nic_irqs_are_recognised_by_interface_or_by_the_device_below_it() {
    let ifaces = ["eth1".to_string(), "enp3s0f0np0".to_string()];
    let parents = BTreeMap::from([
        ("eth1".to_string(), "virtio2".to_string()),
        ("enp3s0f0np0".to_string(), "0000:03:00.0".to_string()),
    ]);
    let nic = |s: &str| is_nic_irq(&[s.to_string()], &ifaces, &parents);
    let yes = [
        "eth1",
        "eth1-TxRx-3",
        "ice-eth1-TxRx-0",
        "eth1-rx-0",
        "virtio2-input.0",
        "virtio2-output.1",
        "virtio2-config",
        "mlx5_comp3@pci:0000:03:00.0",
        "mlx5_async0@pci:0000:03:00.0",
    ];
    for line in yes {
        assert!(nic(line), "{line}");
    }
    // Another interface whose name starts the same, another virtio NIC, the other port of
    // the same card, other virtio devices and other hardware.
    let no = [
        "eth10-TxRx-0",
        "veth1",
        "virtio3-input.0",
        "virtio22-input.0",
        "virtio0-requests",
        "mlx5_comp3@pci:0000:03:00.1",
        "ahci[0000:00:1f.2]",
    ];
    for line in no {
        assert!(!nic(line), "{line}");
    }
}

#[test]
fn a_virtio_nic_that_is_not_on_the_measured_path_is_not_counted() {
    // A veth testbed on a virtual machine: the veth has no parent device; the machine's own
    // eth0 (virtio2) carries a login session. Its lines are device lines, not the NIC's.
    let ifaces = ["veth0".to_string()];
    let parents = BTreeMap::from([("eth0".to_string(), "virtio2".to_string())]);
    let nic = |s: &str| is_nic_irq(&[s.to_string()], &ifaces, &parents);
    assert!(!nic("virtio2-input.0"));
    assert!(!nic("virtio2-output.0"));
    // Without parents (a kernel before 5.14, outside the caller's namespace) nothing virtio
    // is attributed either.
    assert!(!is_nic_irq(
        &["virtio2-input.0".to_string()],
        &ifaces,
        &BTreeMap::new()
    ));
}
