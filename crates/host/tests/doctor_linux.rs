//! Each Linux doctor rule on a hand-made host that triggers it and one that does not. The
//! hosts are FakeHosts shaped like a 4-CPU machine with one 4-queue igb port `eth1`
//! (IRQs 100–103 named `eth1-TxRx-N`); each test changes only what its rule reads.

use nictune_core::units::Nanos;
use nictune_host::cpuset::CpuSet;
use nictune_host::doctor::{self, Finding, Severity};
use nictune_host::rates::{self, Rates};
use nictune_host::read::{EthtoolInfo, FakeHost};
use nictune_host::snapshot::{self, Coalesce, HostSnapshot, Readable, Rings};

/// Knobs of the hand-made host.
#[derive(Clone)]
struct Shape {
    /// Effective CPU of each queue IRQ.
    irq_cpus: [u32; 4],
    /// SMT siblings list per CPU (`0,2` means CPUs 0 and 2 share a core).
    siblings: [&'static str; 4],
    rx_packets: u64,
    rx_bytes: u64,
    rx_drop: u64,
    rx_fifo: u64,
    squeeze: u64,
    rx_ring: u32,
    coalesce: &'static [(&'static str, u64)],
    busy_poll: u64,
    defer: u64,
    irqbalance: bool,
    affinity: &'static str,
    irq_counts: u64,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            irq_cpus: [0, 1, 2, 3],
            siblings: ["0", "1", "2", "3"],
            rx_packets: 1_000,
            rx_bytes: 0,
            rx_drop: 0,
            rx_fifo: 0,
            squeeze: 0,
            rx_ring: 4096,
            coalesce: &[("rx-usecs", 3), ("adaptive-rx", 1)],
            busy_poll: 0,
            defer: 0,
            irqbalance: false,
            affinity: "0-3",
            irq_counts: 1000,
        }
    }
}

fn host(s: &Shape) -> FakeHost {
    let mut interrupts = String::from("  CPU0 CPU1 CPU2 CPU3\n");
    let mut h = FakeHost::new();
    for q in 0..4u32 {
        let irq = 100 + q;
        let mut counts = [0u64; 4];
        counts[s.irq_cpus[q as usize] as usize] = s.irq_counts;
        interrupts.push_str(&format!(
            " {irq}: {} {} {} {} IR-PCI-MSI 52428{q}-edge eth1-TxRx-{q}\n",
            counts[0], counts[1], counts[2], counts[3]
        ));
        let cpu = s.irq_cpus[q as usize];
        h = h
            .with_file(&format!("/proc/irq/{irq}/smp_affinity_list"), s.affinity)
            .with_file(
                &format!("/proc/irq/{irq}/effective_affinity_list"),
                &cpu.to_string(),
            )
            .with_file(&format!("/sys/class/net/eth1/queues/rx-{q}/rps_cpus"), "0")
            .with_file(
                &format!("/sys/devices/pci0000:00/0000:00:01.0/msi_irqs/{irq}"),
                "msix",
            );
    }
    for cpu in 0..4 {
        h = h.with_file(
            &format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"),
            s.siblings[cpu],
        );
    }
    let softnet = format!(
        "00001000 00000000 {:08x}\n00001000 00000000 00000000\n",
        s.squeeze
    );
    let mut h = h
        .with_file("/proc/interrupts", &interrupts)
        .with_file(
            "/proc/stat",
            "cpu 0 0 0 0\ncpu0 1 0 1 10\ncpu1 1 0 1 10\ncpu2 1 0 1 10\ncpu3 1 0 1 10\n",
        )
        .with_file(
            "/proc/net/dev",
            &format!(
                "h\nh\n eth1: {} {} 0 {} {} 0 0 0 0 5 0 0 0 0 0 0\n",
                s.rx_bytes, s.rx_packets, s.rx_drop, s.rx_fifo
            ),
        )
        .with_file("/proc/net/softnet_stat", &softnet)
        .with_file("/proc/sys/net/core/busy_poll", &s.busy_poll.to_string())
        .with_file("/proc/sys/net/core/busy_read", "0")
        .with_file("/sys/class/net/eth1/ifindex", "3")
        .with_file(
            "/sys/class/net/eth1/napi_defer_hard_irqs",
            &s.defer.to_string(),
        )
        .with_file(
            "/sys/class/net/eth1/gro_flush_timeout",
            &(s.defer * 100_000).to_string(),
        )
        .with_link(
            "/sys/class/net/eth1",
            "../../devices/pci0000:00/0000:00:01.0/net/eth1",
        )
        .with_link("/sys/class/net/eth1/device", "../../../0000:00:01.0")
        .with_link(
            "/sys/class/net/eth1/device/driver",
            "../../../bus/pci/drivers/igb",
        );
    let coalesce = Coalesce(
        s.coalesce
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
    );
    h.ethtool.insert(
        "eth1".into(),
        EthtoolInfo {
            coalesce: Readable::Value(coalesce),
            rings: Readable::Value(Rings {
                rx: Some(s.rx_ring),
                rx_max: Some(4096),
                tx: Some(256),
                tx_max: Some(4096),
                ..Rings::default()
            }),
            channels: Readable::Unsupported("test".into()),
            features: Readable::Unsupported("test".into()),
        },
    );
    h.netdev.napis = Readable::Value(vec![nictune_host::snapshot::Napi {
        id: 9,
        ifindex: 3,
        ..Default::default()
    }]);
    if s.irqbalance {
        h.processes = vec!["irqbalance".into()];
    }
    h
}

fn snap(s: &Shape) -> HostSnapshot {
    snapshot::build(&host(s), &[])
}

fn no_caveats(_: &HostSnapshot) -> Vec<Finding> {
    Vec::new()
}

fn ids(s: &Shape, rates: Option<&Rates>) -> Vec<&'static str> {
    doctor::linux::run(&snap(s), rates, &no_caveats)
        .iter()
        .map(|f| f.id)
        .collect()
}

fn find(s: &Shape, id: &str, rates: Option<&Rates>) -> Option<Finding> {
    doctor::linux::run(&snap(s), rates, &no_caveats)
        .into_iter()
        .find(|f| f.id == id)
}

/// Rates between `before` and `after`, one second apart.
fn rates_between(before: &Shape, after: &Shape) -> Rates {
    rates::between(
        &snap(before).counters,
        &snap(after).counters,
        Nanos::from_secs(1),
    )
}

#[test]
fn a_healthy_host_has_no_findings() {
    assert!(
        ids(&Shape::default(), None).is_empty(),
        "{:?}",
        ids(&Shape::default(), None)
    );
}

#[test]
fn the_chain_uses_irq_names_and_msi_irqs() {
    let s = snap(&Shape::default());
    let nic = s.nic("eth1").unwrap();
    assert_eq!(nic.device_irqs, [100, 101, 102, 103]);
    assert_eq!(nic.driver.value().map(String::as_str), Some("igb"));
    assert!(nic.queues.iter().all(|q| q.irq.is_some()));
}

#[test]
fn irq_pileup_on_one_cpu_gives_a_spread_map() {
    let piled = Shape {
        irq_cpus: [0, 0, 0, 1],
        ..Shape::default()
    };
    let f = find(&piled, "irq-pileup", None).expect("pile-up found");
    assert_eq!(f.severity, Severity::Warning);
    let targets: CpuSet = f
        .fix
        .iter()
        .filter_map(|c| c.strip_prefix("echo ")?.split(' ').next()?.parse().ok())
        .collect();
    assert_eq!(targets.len(), 4, "{:?}", f.fix);
    assert!(f
        .fix
        .iter()
        .any(|c| c.ends_with("/proc/irq/100/smp_affinity_list")));
}

#[test]
fn irq_pileup_on_smt_siblings_while_a_core_idles() {
    // CPUs 0/1 are one core, 2/3 another: 2 IRQs on 0 and 1, 2 on 2 and 3 is fine, but
    // all four on 0 and 1 leaves core 2/3 idle.
    let siblings = ["0-1", "0-1", "2-3", "2-3"];
    let crowded = Shape {
        irq_cpus: [0, 1, 0, 1],
        siblings,
        ..Shape::default()
    };
    assert!(find(&crowded, "irq-pileup", None).is_some());
    let one_each = Shape {
        siblings,
        ..Shape::default()
    };
    assert!(find(&one_each, "irq-pileup", None).is_none());
}

#[test]
fn drops_since_boot_are_information_and_growing_drops_a_warning() {
    let dropped = Shape {
        rx_drop: 50,
        rx_fifo: 7,
        ..Shape::default()
    };
    assert_eq!(
        find(&dropped, "nic-drops", None).unwrap().severity,
        Severity::Info
    );
    let more = Shape {
        rx_drop: 90,
        rx_fifo: 7,
        rx_packets: 2_000,
        ..Shape::default()
    };
    let growing = rates_between(&dropped, &more);
    assert_eq!(
        find(&more, "nic-drops", Some(&growing)).unwrap().severity,
        Severity::Warning
    );
    let same = rates_between(&dropped, &dropped);
    assert!(find(&dropped, "nic-drops", Some(&same)).is_none());
}

#[test]
fn growing_time_squeeze_suggests_a_larger_budget() {
    let before = Shape {
        squeeze: 10,
        ..Shape::default()
    };
    let after = Shape {
        squeeze: 30,
        ..Shape::default()
    };
    let f = find(
        &after,
        "softnet-squeeze",
        Some(&rates_between(&before, &after)),
    )
    .unwrap();
    assert_eq!(f.severity, Severity::Warning);
    assert!(f
        .fix
        .iter()
        .any(|c| c.starts_with("sysctl -w net.core.netdev_budget=")));
    assert!(find(
        &before,
        "softnet-squeeze",
        Some(&rates_between(&before, &before))
    )
    .is_none());
}

#[test]
fn small_rings_with_drops() {
    let small = Shape {
        rx_ring: 256,
        rx_fifo: 100,
        ..Shape::default()
    };
    let f = find(&small, "ring-small", None).unwrap();
    assert_eq!(f.fix, ["ethtool -G eth1 rx 1024"]);
    let small_no_drops = Shape {
        rx_ring: 256,
        ..Shape::default()
    };
    assert!(find(&small_no_drops, "ring-small", None).is_none());
    let big_with_drops = Shape {
        rx_fifo: 100,
        ..Shape::default()
    };
    assert!(find(&big_with_drops, "ring-small", None).is_none());
}

#[test]
fn one_interrupt_per_packet_at_high_rate_is_a_mismatch() {
    let fixed = &[("rx-usecs", 0), ("adaptive-rx", 0)][..];
    let before = Shape {
        coalesce: fixed,
        rx_packets: 0,
        irq_counts: 0,
        ..Shape::default()
    };
    // 400k packets/s over 4 queues, each IRQ firing 100k/s: one interrupt per packet.
    let after = Shape {
        coalesce: fixed,
        rx_packets: 400_000,
        irq_counts: 100_000,
        ..Shape::default()
    };
    let f = find(
        &after,
        "moderation-mismatch",
        Some(&rates_between(&before, &after)),
    )
    .unwrap();
    assert_eq!(f.fix, ["ethtool -C eth1 rx-usecs 50"]);
    let batched = Shape {
        coalesce: fixed,
        rx_packets: 400_000,
        irq_counts: 8_000,
        ..Shape::default()
    };
    assert!(find(
        &batched,
        "moderation-mismatch",
        Some(&rates_between(&before, &batched))
    )
    .is_none());
}

#[test]
fn a_long_timer_on_a_quiet_queue_is_a_mismatch() {
    let slow = &[("rx-usecs", 250), ("adaptive-rx", 0)][..];
    let before = Shape {
        coalesce: slow,
        rx_packets: 0,
        irq_counts: 0,
        ..Shape::default()
    };
    let after = Shape {
        coalesce: slow,
        rx_packets: 800,
        irq_counts: 200,
        ..Shape::default()
    };
    assert!(find(
        &after,
        "moderation-mismatch",
        Some(&rates_between(&before, &after))
    )
    .is_some());
}

#[test]
fn adaptive_off_with_a_fixed_timer() {
    let off = Shape {
        coalesce: &[("rx-usecs", 50), ("adaptive-rx", 0)],
        ..Shape::default()
    };
    assert_eq!(
        find(&off, "adaptive-off", None).unwrap().severity,
        Severity::Info
    );
    let unsupported = Shape {
        coalesce: &[("rx-usecs", 50)],
        ..Shape::default()
    };
    assert!(find(&unsupported, "adaptive-off", None).is_none());
}

#[test]
fn busy_poll_without_napi_deferral() {
    let bare = Shape {
        busy_poll: 50,
        ..Shape::default()
    };
    let f = find(&bare, "busy-poll-no-napi", None).unwrap();
    assert!(f.fix[0].contains("napi_defer_hard_irqs"));
    let deferred = Shape {
        busy_poll: 50,
        defer: 2,
        ..Shape::default()
    };
    assert!(find(&deferred, "busy-poll-no-napi", None).is_none());
}

#[test]
fn irqbalance_against_hand_pinned_irqs() {
    let pinned = Shape {
        irqbalance: true,
        affinity: "2",
        ..Shape::default()
    };
    let f = find(&pinned, "irqbalance-pinned", None).unwrap();
    assert!(f.fix[0].contains("--banirq=100 --banirq=101"));
    let unpinned = Shape {
        irqbalance: true,
        ..Shape::default()
    };
    assert!(find(&unpinned, "irqbalance-pinned", None).is_none());
    let no_daemon = Shape {
        affinity: "2",
        ..Shape::default()
    };
    assert!(find(&no_daemon, "irqbalance-pinned", None).is_none());
}

#[test]
fn caveats_come_from_the_supplied_hook() {
    let hook = |_: &HostSnapshot| vec![Finding::new("driver-caveat", Severity::Warning, "eth1")];
    let found = doctor::linux::run(&snap(&Shape::default()), None, &hook);
    assert_eq!(found.len(), 1);
    assert!(doctor::has_problems(&found));
}

#[test]
fn adaptive_off_on_mixed_frame_sizes_is_a_warning() {
    let fixed = &[("rx-usecs", 50), ("adaptive-rx", 0)][..];
    let before = Shape {
        coalesce: fixed,
        rx_packets: 0,
        rx_bytes: 0,
        ..Shape::default()
    };
    // 10k frames/s averaging 600 bytes: small and full-size frames mixed.
    let mixed = Shape {
        coalesce: fixed,
        rx_packets: 10_000,
        rx_bytes: 6_000_000,
        ..Shape::default()
    };
    let f = find(
        &mixed,
        "adaptive-off",
        Some(&rates_between(&before, &mixed)),
    )
    .unwrap();
    assert_eq!(f.severity, Severity::Warning);
    // 10k frames/s of 1500 bytes: one bulk shape, a fixed timer is a fair choice.
    let bulk = Shape {
        coalesce: fixed,
        rx_packets: 10_000,
        rx_bytes: 15_000_000,
        ..Shape::default()
    };
    let f = find(&bulk, "adaptive-off", Some(&rates_between(&before, &bulk))).unwrap();
    assert_eq!(f.severity, Severity::Info);
}

#[test]
fn squeezes_name_a_hot_cpu_that_serves_several_queue_irqs() {
    let hot = Shape {
        irq_cpus: [0, 0, 2, 3],
        squeeze: 5,
        ..Shape::default()
    };
    let f = find(&hot, "softnet-squeeze", None).unwrap();
    let cpu0 = f.evidence.iter().find(|e| e.what == "cpu 0").unwrap();
    assert!(
        cpu0.value.contains("serves queue IRQs [100, 101]"),
        "{}",
        cpu0.value
    );
}

#[test]
fn overruns_growing_during_the_interval_name_ring_buffer_and_window() {
    let before = Shape {
        rx_ring: 256,
        rx_fifo: 7,
        coalesce: &[("rx-usecs", 100), ("adaptive-rx", 0)],
        ..Shape::default()
    };
    let after = Shape {
        rx_fifo: 57,
        rx_packets: 9_000,
        ..before.clone()
    };
    let growing = rates_between(&before, &after);
    let f = find(&after, "rx-overruns", Some(&growing)).expect("rx-overruns");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.explanation.contains("rx ring"), "{}", f.explanation);
    assert!(f.explanation.contains("rx-usecs"), "{}", f.explanation);
    assert!(f.explanation.contains("window"), "{}", f.explanation);
    let ring = f
        .evidence
        .iter()
        .find(|e| e.what.starts_with("rx ring"))
        .unwrap();
    assert_eq!(ring.value, "256 / 4096");
    assert_eq!(f.fix[0], "ethtool -G eth1 rx 4096");
    assert_eq!(f.fix[1], "ethtool -C eth1 rx-usecs 50");
    assert!(
        f.fix[2].starts_with(&format!(
            "ip route change <destination> dev eth1 window {}",
            4096 * 1448
        )),
        "{:?}",
        f.fix
    );
    assert!(f.fix[3].starts_with("nictune explain nfs.rsize"));
    // Overruns only since boot, or not growing: no rx-overruns finding.
    assert!(find(&after, "rx-overruns", None).is_none());
    let still = rates_between(&after, &after);
    assert!(find(&after, "rx-overruns", Some(&still)).is_none());
    // Drops without overruns are nic-drops' business.
    let dropping = Shape {
        rx_drop: 500,
        rx_packets: 9_000,
        ..before.clone()
    };
    let drops_only = rates_between(&before, &dropping);
    assert!(find(&dropping, "rx-overruns", Some(&drops_only)).is_none());
}
