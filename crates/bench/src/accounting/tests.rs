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
    // Device interrupts are background virtio noise only.
    assert!(
        acc.host.interrupts_per_sec.unwrap() < 100.0,
        "{:?}",
        acc.device_irqs
    );
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
fn nic_irqs_are_recognised_by_interface_or_virtio_queue_name() {
    let ifaces = ["eth0".to_string()];
    let a = |s: &str| vec![s.to_string()];
    assert!(is_nic_irq(&a("eth0-TxRx-3"), &ifaces));
    assert!(is_nic_irq(&a("virtio2-input.0"), &ifaces));
    assert!(!is_nic_irq(&a("virtio0-requests"), &ifaces));
    assert!(!is_nic_irq(&a("ahci[0000:00:1f.2]"), &ifaces));
}
