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
pub mod polling;
pub mod registry;
pub mod router;
pub mod rxhost;

use crate::engine::rng::Rng;
use nictune_core::metrics::{CoreSplit, CpuSplit};

/// Busy time of one simulated core by category, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoreNs {
    /// Hard interrupt time.
    pub irq: u64,
    /// Kernel network processing (softirq, netisr, interrupt threads).
    pub softirq: u64,
    /// Application time.
    pub user: u64,
    /// Kernel time in process context (busy polling).
    pub system: u64,
}

impl CoreNs {
    /// As fractions of `span` ns (idle is the rest, never negative).
    pub fn split(&self, span: u64) -> CoreSplit {
        let f = |ns: u64| (ns as f64 / span.max(1) as f64).min(1.0);
        let (irq, softirq, user, sys) =
            (f(self.irq), f(self.softirq), f(self.user), f(self.system));
        CoreSplit {
            irq,
            softirq,
            system: (self.system > 0).then_some(sys),
            user,
            idle: (1.0 - irq - softirq - user - sys).max(0.0),
        }
    }
}

/// The host split of per-core busy times over `span` ns.
pub fn cpu_split(cores: &[CoreNs], span: u64) -> CpuSplit {
    CpuSplit::from_cores(cores.iter().map(|c| c.split(span)).collect())
}

/// An exponential gap in whole nanoseconds (at least 1) with mean `mean_ns` (ziggurat: the
/// case models draw one per packet).
#[inline]
pub(crate) fn exp_ns(rng: &mut Rng, mean_ns: f64) -> u64 {
    ((mean_ns * crate::engine::ziggurat::exp1(rng)) as u64).max(1)
}
