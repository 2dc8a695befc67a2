//! FreeBSD doctor rules over a [`FreeBsdSnapshot`] read from captured command output.

mod mbufs;
mod nat;
mod pileup;
pub use pileup::rates_source;
mod polling;

use super::Finding;
use crate::freebsd::FreeBsdSnapshot;

/// Runs every FreeBSD rule.
pub fn run(snap: &FreeBsdSnapshot) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(mbufs::clusters(snap));
    out.extend(pileup::irq_pileup(snap));
    out.extend(nat::nat_lock(snap));
    out.extend(polling::polling_ceiling(snap));
    out.extend(polling::rx_processing_limit(snap));
    out
}

/// One queue interrupt vector of an interface, from `vmstat -i`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QueueVector {
    /// Interface, e.g. `igb0`.
    pub dev: String,
    /// Queue number on the interface.
    pub queue: u32,
    pub irq: u32,
    /// Interrupts per second.
    pub rate: u64,
}

/// The queue interrupt vectors of every interface.
pub(crate) fn queue_vectors(snap: &FreeBsdSnapshot) -> Vec<QueueVector> {
    let Some(irqs) = &snap.interrupts else {
        return Vec::new();
    };
    irqs.iter()
        .filter_map(|v| {
            let (dev, queue) = v.queue()?;
            Some(QueueVector {
                dev: dev.to_string(),
                queue,
                irq: v.irq?,
                rate: v.rate,
            })
        })
        .collect()
}

/// The driver name of an interface (`igb7` → `igb`).
pub(crate) fn driver_of(ifname: &str) -> &str {
    ifname.trim_end_matches(|c: char| c.is_ascii_digit())
}
