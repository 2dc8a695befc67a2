//! What a run is made of: hosts, how they connect, the workload and the duration.

use crate::host::costs::Costs;
use crate::host::napi::NapiConfig;
use crate::moderation::ModerationPolicy;
use crate::nic::NicConfig;
use crate::workload::stream::Generator;
use crate::workload::Workload;

/// Everything that defines one host.
#[derive(Debug)]
pub struct HostSpec {
    /// Name in the results (`client`, `server`).
    pub name: String,
    /// The NIC.
    pub nic: NicConfig,
    /// Oscillator offset (ppm) the NIC timers run on.
    pub clock_ppm: f64,
    /// Oscillator offset (ppm) the host's kernel tick runs on: the driver's watchdog, a
    /// jiffies timer, keeps its period on this clock, not the NIC's.
    pub host_clock_ppm: f64,
    /// CPU cores.
    pub cores: usize,
    /// Core the NIC interrupt (and so its softirq) runs on.
    pub irq_core: usize,
    /// Core the application thread runs on.
    pub app_core: usize,
    /// Cost model.
    pub costs: Costs,
    /// NAPI settings.
    pub napi: NapiConfig,
    /// Interrupt-moderation policy.
    pub policy: Box<dyn ModerationPolicy>,
    /// Where this host's timers stand at time 0: the throttle's first interval boundary and
    /// the first watchdog run (ns). Hosts are not synchronised; scenarios draw these from the
    /// seed.
    pub phase: Phases,
}

/// Start phases of a host's free-running timers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Phases {
    /// First boundary of the throttle's interval clock.
    pub throttle_ns: u64,
    /// First watchdog run.
    pub watchdog_ns: u64,
}

/// How the hosts are connected.
#[derive(Debug)]
pub enum Topology {
    /// Two hosts (client, server) joined by a full-duplex link.
    Pair {
        /// Bit rate.
        bits_per_sec: f64,
        /// Propagation delay (ns).
        propagation_ns: u64,
    },
    /// A traffic generator feeding the one host.
    Generator(Generator),
}

/// A complete run description.
#[derive(Debug)]
pub struct SimSpec {
    /// One host (generator topology) or two (client, server).
    pub hosts: Vec<HostSpec>,
    /// How they connect.
    pub topology: Topology,
    /// What runs on them.
    pub workload: Workload,
    /// Simulated time (ns).
    pub duration_ns: u64,
}
