//! Captures read back and turned into a snapshot: what `show --root` and `doctor --root`
//! see. The build machine (fixtures/linux-vm-6.18) and the real-driver testbed guests
//! (fixtures/linux-guest-e1000*-6.1); each has a PROVENANCE.md.

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
