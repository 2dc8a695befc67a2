//! The build machine's capture (fixtures/linux-vm-6.18, see its PROVENANCE.md) read back
//! and turned into a snapshot: what `show --root` and `doctor --root` see.

use nictune_host::snapshot::{self, QueueKind};
use std::path::Path;

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/linux-vm-6.18")
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
