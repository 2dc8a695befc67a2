//! Models of the field cases 2–5 (seed-cases.md) built from the mechanisms of Simulator II.
//!
//! Each case is one file: its parameters with the field report's values as defaults, the
//! host costs it assumes (each with its source or the reason for its value), a `run` that
//! returns [`nictune_core::metrics::Metrics`] plus the case's own observations, and an
//! `EXPLAIN` text stating the model's assumptions. Runs are deterministic: the seed is a
//! parameter and the wall clock is never read.

pub mod dim_bulk;
pub mod isa;
pub mod ixgbevf;
pub mod napi_rr;
pub mod polling;
pub mod qemu_nic;
pub mod registry;
pub mod router;
pub mod rxhost;
pub mod veth_rr;

use crate::engine::rng::Rng;

/// A packet ledger at the end of a run: every packet a model admitted at one stage is
/// delivered onward, dropped, or still inside the stage. The property tests check that every
/// case model's ledgers balance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Which stage (`nic`, `socket`, `rings`, `card`).
    pub stage: &'static str,
    /// Packets that reached the stage.
    pub offered: u64,
    /// Packets it passed on.
    pub delivered: u64,
    /// Packets it dropped.
    pub dropped: u64,
    /// Packets still in it when the run ended.
    pub in_flight: u64,
}

impl Ledger {
    /// Whether every offered packet is accounted for.
    pub fn balanced(&self) -> bool {
        self.offered == self.delivered + self.dropped + self.in_flight
    }
}
pub use crate::metrics::core_ns::{cpu_split, CoreNs};

/// An exponential gap in whole nanoseconds (at least 1) with mean `mean_ns` (ziggurat: the
/// case models draw one per packet).
#[inline]
pub(crate) fn exp_ns(rng: &mut Rng, mean_ns: f64) -> u64 {
    ((mean_ns * crate::engine::ziggurat::exp1(rng)) as u64).max(1)
}
