//! Live, read-only: this machine's own interfaces read through netlink and sysfs agree with
//! `ethtool -c/-g/-l` and /proc. Nothing is written.
//!
//! What they need: ethtool (scripts/install-deps installs it) and an interface with a device
//! and driver behind it (any VM or machine has one: virtio-net, e1000, a real NIC), whose
//! queues have interrupts of their own. A container with only veth or loopback has none:
//! there each test skips through [`nictune_core::live::skip`], saying why, and under
//! `NICTUNE_REQUIRE_LIVE` (a root `scripts/test`) it fails instead; set
//! `NICTUNE_REQUIRE_LIVE=0` on such a machine.

use nictune_core::live::skip;
use nictune_host::snapshot::{self, Nic, Readable};
use nictune_linux::LinuxHost;
use std::process::Command;

/// `ethtool ARGS IFACE` output, or None when ethtool is not installed or fails.
fn ethtool(args: &[&str], iface: &str) -> Option<String> {
    let out = Command::new("ethtool")
        .args(args)
        .arg(iface)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Values of `key:` lines (`RX:`, `rx-usecs:`) in order of appearance; `n/a` is None.
fn values(text: &str, key: &str) -> Vec<Option<u64>> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(key))
        .map(|v| v.trim().parse().ok())
        .collect()
}

fn physical_nics() -> Vec<Nic> {
    let host = LinuxHost::live();
    snapshot::build(&host, &[])
        .nics
        .into_iter()
        .filter(|n| n.driver.value().is_some())
        .collect()
}

#[test]
fn rings_channels_and_coalesce_match_ethtool() {
    if Command::new("ethtool").arg("--version").output().is_err() {
        skip("ethtool is not installed (scripts/install-deps installs it)");
        return;
    }
    let nics = physical_nics();
    if nics.is_empty() {
        skip("no interface on this machine has a device and driver behind it");
        return;
    }
    for nic in &nics {
        if let (Readable::Value(r), Some(text)) = (&nic.rings, ethtool(&["-g"], &nic.name)) {
            // Pre-set maximums come first, current settings second.
            assert_eq!(
                values(&text, "RX:"),
                [r.rx_max.map(u64::from), r.rx.map(u64::from)],
                "{}",
                nic.name
            );
            assert_eq!(
                values(&text, "TX:"),
                [r.tx_max.map(u64::from), r.tx.map(u64::from)],
                "{}",
                nic.name
            );
        }
        if let (Readable::Value(c), Some(text)) = (&nic.channels, ethtool(&["-l"], &nic.name)) {
            let combined = values(&text, "Combined:");
            assert_eq!(
                combined,
                [c.combined_max.map(u64::from), c.combined.map(u64::from)],
                "{}",
                nic.name
            );
        }
        if let (Readable::Value(c), Some(text)) = (&nic.coalesce, ethtool(&["-c"], &nic.name)) {
            for field in ["rx-usecs", "rx-frames", "tx-usecs", "tx-frames"] {
                let shown = values(&text, &format!("{field}:"))
                    .first()
                    .copied()
                    .flatten();
                assert_eq!(shown, c.get(field), "{} {field}", nic.name);
            }
        }
    }
}

#[test]
fn queue_irqs_exist_in_proc_with_effective_cpus() {
    let host = LinuxHost::live();
    let snap = snapshot::build(&host, &[]);
    let queue_irqs: Vec<u32> = snap
        .nics
        .iter()
        .flat_map(|n| n.queues.iter().filter_map(|q| q.irq))
        .collect();
    if queue_irqs.is_empty() {
        skip("no interface on this machine has queue interrupts (virtual NICs only?)");
        return;
    }
    for irq in queue_irqs {
        let proc =
            std::fs::read_to_string(format!("/proc/irq/{irq}/effective_affinity_list")).unwrap();
        let seen = snap.irq(irq).unwrap().effective.value().unwrap().to_list();
        assert_eq!(seen, proc.trim(), "irq {irq}");
    }
}
