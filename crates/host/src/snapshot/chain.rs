//! Which queue an IRQ serves, from the name its driver requested it under — the fallback
//! when netdev netlink does not link NAPIs to IRQs.
//!
//! Names seen in the field: Intel `eth0-TxRx-3`, `eth0-rx-1`, `eth0-tx-1`, `iavf-eth0-TxRx-0`,
//! `i40e-eth0-TxRx-0`; virtio `virtio2-input.0` / `virtio2-output.0` (named after the virtio
//! device, not the interface); Broadcom/others `eth0-3`; mlx5 `mlx5_comp3@pci:0000:81:00.0`
//! (named after the PCI device). Link/misc vectors (`eth0`, `eth0-link`, `virtio2-config`)
//! serve no queue.

use super::QueueKind;

/// The queue an IRQ action name points at: `Both` when one vector serves rx and tx.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueRef {
    /// One queue of one kind and its index (`eth0-rx-1`, `virtio2-input.0`).
    One(QueueKind, u32),
    /// Rx and tx queue of the same index served by one vector (`eth0-TxRx-3`, `eth0-3`, mlx5
    /// completion vectors).
    Both(u32),
}

/// Reads an action name of interface `ifname`, whose device is `device` (`virtio2`,
/// `0000:81:00.0`), as a queue reference.
pub fn queue_of_action(action: &str, ifname: &str, device: &str) -> Option<QueueRef> {
    if let Some(rest) = strip_owner(action, ifname) {
        return intel_style(rest);
    }
    if let Some(rest) = action.strip_prefix(device) {
        return virtio_style(rest);
    }
    mlx5_style(action, device)
}

/// `eth0-...`, `iavf-eth0-...`: the part after `<ifname>-`.
fn strip_owner<'a>(action: &'a str, ifname: &str) -> Option<&'a str> {
    let at = action.find(ifname)?;
    let before = &action[..at];
    if !(before.is_empty() || before.ends_with('-')) {
        return None;
    }
    action[at + ifname.len()..].strip_prefix('-')
}

fn intel_style(rest: &str) -> Option<QueueRef> {
    let lower = rest.to_ascii_lowercase();
    let (kind, index) = match lower.rsplit_once('-') {
        Some((kind, index)) => (kind.to_string(), index),
        None => (String::new(), lower.as_str()),
    };
    let index: u32 = index.parse().ok()?;
    match kind.as_str() {
        "txrx" | "" | "combined" | "fp" | "queue" => Some(QueueRef::Both(index)),
        "rx" => Some(QueueRef::One(QueueKind::Rx, index)),
        "tx" => Some(QueueRef::One(QueueKind::Tx, index)),
        _ => None,
    }
}

fn virtio_style(rest: &str) -> Option<QueueRef> {
    let (kind, index) = rest.strip_prefix('-')?.split_once('.')?;
    let index = index.parse().ok()?;
    match kind {
        "input" => Some(QueueRef::One(QueueKind::Rx, index)),
        "output" => Some(QueueRef::One(QueueKind::Tx, index)),
        _ => None,
    }
}

fn mlx5_style(action: &str, device: &str) -> Option<QueueRef> {
    let (name, at) = action.split_once('@')?;
    if !at.ends_with(device) {
        return None;
    }
    name.strip_prefix("mlx5_comp")?
        .parse()
        .ok()
        .map(QueueRef::Both)
}

#[cfg(test)]
mod tests {
    use super::*;
    use QueueKind::{Rx, Tx};

    #[test]
    fn intel_names() {
        assert_eq!(
            queue_of_action("eth0-TxRx-3", "eth0", "x"),
            Some(QueueRef::Both(3))
        );
        assert_eq!(
            queue_of_action("eth0-rx-1", "eth0", "x"),
            Some(QueueRef::One(Rx, 1))
        );
        assert_eq!(
            queue_of_action("eth0-tx-1", "eth0", "x"),
            Some(QueueRef::One(Tx, 1))
        );
        assert_eq!(
            queue_of_action("i40e-eth0-TxRx-0", "eth0", "x"),
            Some(QueueRef::Both(0))
        );
        assert_eq!(
            queue_of_action("eth0-2", "eth0", "x"),
            Some(QueueRef::Both(2))
        );
    }

    #[test]
    fn other_interfaces_and_link_vectors_are_not_queues() {
        assert_eq!(queue_of_action("eth10-TxRx-3", "eth1", "x"), None);
        assert_eq!(queue_of_action("veth0-TxRx-3", "eth0", "x"), None);
        assert_eq!(queue_of_action("eth0", "eth0", "x"), None);
        assert_eq!(queue_of_action("eth0-link", "eth0", "x"), None);
        assert_eq!(queue_of_action("virtio2-config", "eth0", "virtio2"), None);
    }

    #[test]
    fn virtio_and_mlx5_names_follow_the_device() {
        let v = |a| queue_of_action(a, "eth0", "virtio2");
        assert_eq!(v("virtio2-input.0"), Some(QueueRef::One(Rx, 0)));
        assert_eq!(v("virtio2-output.3"), Some(QueueRef::One(Tx, 3)));
        assert_eq!(v("virtio12-input.0"), None);
        let m = queue_of_action("mlx5_comp7@pci:0000:81:00.0", "ens1f0", "0000:81:00.0");
        assert_eq!(m, Some(QueueRef::Both(7)));
    }
}
