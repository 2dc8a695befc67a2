//! Busy time of a simulated core by category, and its share of a run: the one conversion
//! from accounted nanoseconds to the [`CoreSplit`] of `nictune.sim/v1`, used by the engine's
//! metrics and the case models alike.

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
    /// As fractions of `span` ns, idle the rest. Nothing is clamped: a model that charges
    /// more than `span` shows a negative idle (`crates/sim/tests/properties.rs` checks that
    /// none does).
    pub fn split(&self, span: u64) -> CoreSplit {
        let f = |ns: u64| ns as f64 / span.max(1) as f64;
        let (irq, softirq, user, sys) =
            (f(self.irq), f(self.softirq), f(self.user), f(self.system));
        CoreSplit {
            irq,
            softirq,
            system: (self.system > 0).then_some(sys),
            user,
            idle: (span.max(1) as f64 - (self.irq + self.softirq + self.user + self.system) as f64)
                / span.max(1) as f64,
        }
    }
}

/// The host split of per-core busy times over `span` ns.
pub fn cpu_split(cores: &[CoreNs], span: u64) -> CpuSplit {
    CpuSplit::from_cores(cores.iter().map(|c| c.split(span)).collect())
}
