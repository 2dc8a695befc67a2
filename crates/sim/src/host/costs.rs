//! The host CPU cost model: what each unit of work costs in nanoseconds of one core.
//!
//! The simulator charges these as the work happens, so CPU shares, latency and capacity all
//! follow from the same numbers. Scenario files give every value with its source; see
//! `scenarios/seed-e1000-rr.toml` for how Case 1's base round trip fixes the split.

/// Per-host costs (ns of one core).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Costs {
    /// Hard interrupt: entry, the driver's ICR read and mask, exit (irq time).
    pub irq_ns: u64,
    /// Fixed cost of one NAPI poll call (softirq time).
    pub poll_ns: u64,
    /// Receiving one frame through driver and stack (softirq time).
    pub rx_pkt_ns: u64,
    /// Sending one frame through stack and driver, wherever it is sent from.
    pub tx_pkt_ns: u64,
    /// Cleaning one completed tx descriptor (softirq time).
    pub tx_clean_ns: u64,
    /// The application's work per transaction or message: wake-up, syscalls, its own loop
    /// (user time).
    pub app_ns: u64,
    /// A high-resolution timer interrupt that schedules NAPI (irq time).
    pub hrtimer_ns: u64,
}
