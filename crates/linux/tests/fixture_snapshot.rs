//! Captures read back and turned into a snapshot: what `show --root` and `doctor --root`
//! see. The build machine (fixtures/linux-vm-6.18) and the real-driver testbed guests
//! (fixtures/linux-guest-e1000*-6.1); each has a PROVENANCE.md.

use nictune_core::units::Nanos;
use nictune_host::doctor::{self, Finding, Severity};
use nictune_host::rates::{IrqRate, Rates};
use nictune_host::read::FakeHost;
use nictune_host::snapshot::{self, HostSnapshot, IrqMode, QueueKind};
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    named("linux-vm-6.18")
}

fn named(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
}

fn guest(nic: &str) -> FakeHost {
    nictune_linux::capture::load(&named(&format!("linux-guest-{nic}-6.1")))
        .unwrap()
        .0
}

/// `(queue, irq, how found)` of eth0's queues.
fn chain(snap: &HostSnapshot) -> Vec<(String, Option<u32>, Option<&'static str>)> {
    let eth0 = snap.nic("eth0").unwrap();
    let q = |q: &snapshot::Queue| (format!("{}-{}", q.kind, q.index), q.irq, q.irq_from);
    eth0.queues.iter().map(q).collect()
}

#[test]
fn the_virtio_nic_chain_is_complete() {
    let (host, manifest) = nictune_linux::capture::load(&fixture()).unwrap();
    assert_eq!(manifest.kernel.as_deref(), Some("6.18.44-fc-v657"));
    let snap = snapshot::build(&host, &[]);
    let eth0 = snap.nic("eth0").unwrap();
    assert_eq!(eth0.driver.value().map(String::as_str), Some("virtio_net"));
    assert_eq!(eth0.device_irqs, [37, 38, 39]);
    let coalesce = eth0.coalesce.value().unwrap();
    assert_eq!(
        (coalesce.get("rx-usecs"), coalesce.get("rx-frames")),
        (Some(0), Some(1))
    );
    assert_eq!(coalesce.get("adaptive-tx"), None);
    let rings = eth0.rings.value().unwrap();
    assert_eq!((rings.rx, rings.rx_max), (Some(256), Some(256)));
    assert_eq!(eth0.channels.value().unwrap().combined, Some(1));
    let rx0 = eth0
        .queues
        .iter()
        .find(|q| q.kind == QueueKind::Rx)
        .unwrap();
    assert_eq!(
        (rx0.napi_id, rx0.irq, rx0.irq_from),
        (Some(257), Some(38), Some("irq-name"))
    );
    let irq = snap.irq(38).unwrap();
    assert_eq!(irq.actions, ["virtio2-input.0"]);
    assert_eq!(irq.effective.value().unwrap().to_list(), "1");
    assert_eq!(irq.affinity.value().unwrap().to_list(), "0-1");
}

#[test]
fn virtual_interfaces_say_why_they_have_no_settings() {
    let (host, _) = nictune_linux::capture::load(&fixture()).unwrap();
    let snap = snapshot::build(&host, &["lo".to_string()]);
    assert_eq!(snap.nics.len(), 1);
    let lo = &snap.nics[0];
    assert!(lo.driver.reason().unwrap().contains("virtual"));
    assert!(
        lo.coalesce.reason().unwrap().contains("not supported"),
        "{:?}",
        lo.coalesce
    );
    assert!(lo.device_irqs.is_empty());
}

#[test]
fn e1000s_legacy_intx_line_serves_both_queues() {
    let snap = snapshot::build(&guest("e1000"), &[]);
    let eth0 = snap.nic("eth0").unwrap();
    assert_eq!(eth0.driver.value().map(String::as_str), Some("e1000"));
    assert_eq!(
        (&eth0.device_irqs[..], eth0.irq_mode),
        (&[11][..], Some(IrqMode::Intx))
    );
    assert_eq!(
        chain(&snap),
        [
            ("rx-0".into(), Some(11), Some("only-irq")),
            ("tx-0".into(), Some(11), Some("only-irq"))
        ]
    );
    let irq = snap.irq(11).unwrap();
    assert_eq!(irq.actions, ["eth0"]);
    assert_eq!(irq.chip.as_deref(), Some("IO-APIC"));
    assert_eq!(irq.cpus().unwrap().to_list(), "0");
    assert_eq!(irq.affinity.value().unwrap().to_list(), "0");
}

#[test]
fn e1000es_msix_vectors_go_rx_tx_and_other_by_name() {
    let snap = snapshot::build(&guest("e1000e"), &[]);
    let eth0 = snap.nic("eth0").unwrap();
    assert_eq!(
        (&eth0.device_irqs[..], eth0.irq_mode),
        (&[26, 27, 28][..], Some(IrqMode::Msix))
    );
    assert_eq!(
        chain(&snap),
        [
            ("rx-0".into(), Some(26), Some("irq-name")),
            ("tx-0".into(), Some(27), Some("irq-name"))
        ]
    );
    assert_eq!(
        snap.irq(28).unwrap().actions,
        ["eth0"],
        "the other-causes vector"
    );
    assert_eq!(
        snap.irq(26).unwrap().effective.value().unwrap().to_list(),
        "0"
    );
    let e1000e = &snap.modules["e1000e"];
    assert_eq!(e1000e.devices, ["0000:00:03.0"]);
    assert!(
        !e1000e.params.contains_key("InterruptThrottleRate"),
        "the default"
    );
}

fn dynamic_itr(snap: &HostSnapshot, rates: Option<&Rates>) -> Option<Finding> {
    doctor::linux::run(snap, rates, &|_| Vec::new())
        .into_iter()
        .find(|f| f.id == "e1000e-dynamic-itr")
}

fn evidence<'a>(f: &'a Finding, what: &str) -> &'a str {
    let e = f.evidence.iter().find(|e| e.what == what);
    e.map_or("", |e| e.value.as_str())
}

/// Interrupts/s of the RX (26) and TX (27) vectors over one second.
fn vector_rates(rx: f64, tx: f64) -> Rates {
    let irq = |irq, per_sec| IrqRate {
        irq,
        per_sec,
        per_cpu: vec![(0, per_sec)],
    };
    Rates {
        elapsed: Nanos::from_secs(1),
        irqs: vec![irq(26, rx), irq(27, tx)],
        cpus: Vec::new(),
        nics: Vec::new(),
    }
}

#[test]
fn rx_usecs_from_the_default_dynamic_mode_is_the_e1000e_trap() {
    let snap = snapshot::build(&guest("e1000e"), &[]);
    let f = dynamic_itr(&snap, None).expect("a warning from the configuration alone");
    assert_eq!(
        (f.severity, f.subject.as_str()),
        (Severity::Warning, "eth0")
    );
    assert_eq!(evidence(&f, "rx-usecs (read back)"), "2000");
    assert_eq!(evidence(&f, "interrupt limit it sets"), "500/s per vector");
    assert!(
        evidence(&f, "module InterruptThrottleRate")
            .starts_with("3 (dynamic conservative; the driver's default"),
        "{f:?}"
    );
    assert_eq!(
        evidence(&f, "MSI-X vectors"),
        "rx irq 26 (eth0-rx-0), tx irq 27 (eth0-tx-0)"
    );
    assert_eq!(f.fix[0], "nictune apply e1000e.InterruptThrottleRate=500");
    assert!(
        f.explanation.contains("e1000_intr_msix_rx"),
        "{}",
        f.explanation
    );

    // Measured: RX far above the limit while TX keeps to it — definite, both rates named.
    let f = dynamic_itr(&snap, Some(&vector_rates(4_980.0, 480.0))).unwrap();
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(evidence(&f, "rx vector interrupts/s"), "4980");
    assert_eq!(evidence(&f, "tx vector interrupts/s"), "480");
    assert!(
        f.explanation
            .starts_with("rx-usecs 2000 is not in effect on the RX vector: over the interval it fired 4980 times/s"),
        "{}",
        f.explanation
    );
    // Both vectors alike (the emulator's overshoot, or no stale rate on RX now): a warning.
    for (rx, tx) in [(830.0, 840.0), (300.0, 310.0)] {
        let f = dynamic_itr(&snap, Some(&vector_rates(rx, tx))).unwrap();
        assert_eq!(f.severity, Severity::Warning, "{rx} {tx}");
    }
    // Both far above it (past what an honoured limit lets through even on the emulator): the
    // stale rates a reset writes back onto both vectors — definite.
    let f = dynamic_itr(&snap, Some(&vector_rates(1_900.0, 1_950.0))).unwrap();
    assert_eq!(f.severity, Severity::Error);
    assert!(
        f.explanation.starts_with(
            "rx-usecs 2000 is in effect on neither vector: over the interval the RX vector \
             fired 1900 times/s and the TX vector 1950"
        ),
        "{}",
        f.explanation
    );
}

#[test]
fn a_fixed_module_rate_or_a_dynamic_rx_usecs_is_no_trap() {
    let host = guest("e1000e").with_file(
        "/run/nictune/module-params/e1000e",
        "InterruptThrottleRate=500\n",
    );
    let snap = snapshot::build(&host, &[]);
    assert_eq!(dynamic_itr(&snap, None), None, "loaded with a fixed rate");
    let host = guest("e1000e").with_file(
        "/etc/modprobe.d/e1000e.conf",
        "options e1000e InterruptThrottleRate=1\n",
    );
    let f = dynamic_itr(&snapshot::build(&host, &[]), None).unwrap();
    assert_eq!(
        evidence(&f, "module InterruptThrottleRate"),
        "1 (dynamic; /etc/modprobe.d/e1000e.conf)"
    );
    let mut host = guest("e1000e");
    let info = host.ethtool.get_mut("eth0").unwrap();
    info.coalesce = snapshot::Readable::Value(snapshot::Coalesce(
        [("rx-usecs".to_string(), 3)].into_iter().collect(),
    ));
    assert_eq!(
        dynamic_itr(&snapshot::build(&host, &[]), None),
        None,
        "rx-usecs 3: a mode"
    );
}
