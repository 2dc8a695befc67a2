//! What a run leaves behind: per-host statistics and the raw output the metrics come from.

use crate::host::cpu::CoreTime;
use crate::metrics::recorder::Recorder;
use crate::nic::NicCounters;

/// Per-host statistics kept by the engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostStats {
    /// Hard interrupts taken.
    pub interrupts: u64,
    /// Frames the stack processed.
    pub rx_processed: u64,
    /// NAPI poll calls.
    pub polls: u64,
    /// Polls that returned less than their budget (emptied the ring).
    pub polls_done: u64,
    /// Polls that used their whole budget (ring not emptied).
    pub polls_not_done: u64,
    /// NET_RX runs that ended with work left.
    pub time_squeeze: u64,
    /// Shortest gap between two interrupt assertions (ns; `u64::MAX` if fewer than two).
    pub min_irq_gap: u64,
    /// Time of the last assertion.
    pub last_irq: Option<u64>,
}

/// One host after the run.
#[derive(Debug, Clone)]
pub struct HostReport {
    /// Name.
    pub name: String,
    /// NIC statistics.
    pub counters: NicCounters,
    /// Engine statistics.
    pub stats: HostStats,
    /// Per-core time.
    pub cores: Vec<CoreTime>,
    /// Frames on the card (buffer and ring) at the end.
    pub holding: u64,
    /// Frames on the link towards this host at the end.
    pub on_link: u64,
    /// The throttle interval in force at the end (nominal ns).
    pub interval_ns: u64,
}

/// What a run produced.
#[derive(Debug)]
pub struct SimOutput {
    /// Workload measurements.
    pub recorder: Recorder,
    /// Per host.
    pub hosts: Vec<HostReport>,
    /// Events processed.
    pub events: u64,
    /// Frames that arrived at any NIC.
    pub packets: u64,
    /// Simulated time (ns).
    pub sim_ns: u64,
    /// Whether the workload counts transactions.
    pub transactions: bool,
    /// Events a handler tried to schedule in the past (a broken model if not 0).
    pub time_reversals: u64,
}
