//! FreeBSD doctor rules over a [`FreeBsdSnapshot`] read from captured command output.

mod mbufs;
mod pileup;
mod polling;

use super::Finding;
use crate::freebsd::FreeBsdSnapshot;

/// Runs every FreeBSD rule.
pub fn run(snap: &FreeBsdSnapshot) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(mbufs::clusters(snap));
    out.extend(pileup::irq_pileup(snap));
    out.extend(polling::polling_ceiling(snap));
    out.extend(polling::rx_processing_limit(snap));
    out
}

/// Queue interrupt vectors per interface: `(interface, queue, irq, rate/s)`.
pub(crate) fn queue_vectors(snap: &FreeBsdSnapshot) -> Vec<(String, u32, u32, u64)> {
    let Some(irqs) = &snap.interrupts else {
        return Vec::new();
    };
    irqs.iter()
        .filter_map(|v| {
            let (dev, queue) = v.queue()?;
            Some((dev.to_string(), queue, v.irq?, v.rate))
        })
        .collect()
}

/// The driver name of an interface (`igb7` → `igb`).
pub(crate) fn driver_of(ifname: &str) -> &str {
    ifname.trim_end_matches(|c: char| c.is_ascii_digit())
}
