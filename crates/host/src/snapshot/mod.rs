//! The host snapshot: every NIC with its moderation settings, queues, NAPIs and IRQs, every
//! IRQ with its CPUs, CPU topology, the counters, relevant sysctls and agents — built from
//! the raw inputs of a [`HostRead`](crate::read::HostRead).
//!
//! The chain NIC → queue → NAPI → IRQ → CPU comes from netdev netlink where the driver links
//! NAPIs to IRQs, else from the device's `msi_irqs` and the IRQ action names
//! ([`chain`]); a device without MSI (legacy INTx, e.g. e1000) has one line,
//! `device/irq`, which serves all of its queues. Queues are keyed by interface and queue
//! index.

mod build;
pub mod chain;
mod ethtool;
mod modules;
mod netdev;
mod readable;

pub use build::{build, build_counters};
pub use ethtool::{Channels, Coalesce, Features, Rings, COALESCE_FIELDS};
pub use modules::LoadedModule;
pub use netdev::{Napi, NetdevQueue, QueueKind};
pub use readable::Readable;

use crate::cpuset::CpuSet;
use crate::procfs::{NetDevCounters, ProcInterrupts, ProcSoftirqs, ProcStat, SoftnetRow};
use serde::Serialize;
use std::collections::BTreeMap;

/// One Linux host as read at one instant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostSnapshot {
    /// `uname -r` equivalent (`/proc/sys/kernel/osrelease`).
    pub kernel: Readable<String>,
    /// `/proc/sys/kernel/hostname`.
    pub hostname: Readable<String>,
    /// Every CPU under `/sys/devices/system/cpu/cpuN`, by id.
    pub cpus: Vec<Cpu>,
    /// Every interface under `/sys/class/net` (except `bonding_masters`), or those asked for.
    pub nics: Vec<Nic>,
    /// Device IRQs (not architecture lines), with their CPUs.
    pub irqs: Vec<Irq>,
    /// Network-relevant sysctls by dotted name (`net.core.netdev_budget`), each one integer.
    pub sysctls: BTreeMap<String, Readable<i64>>,
    /// Whether irqbalance is running.
    pub irqbalance_running: Readable<bool>,
    /// Module parameters by driver: readable `/sys/module/DRV/parameters/*`, overlaid by
    /// `options DRV key=value` lines of `/etc/modprobe.d/*.conf` (what the next load uses).
    pub module_options: BTreeMap<String, BTreeMap<String, String>>,
    /// The NIC drivers that are loaded modules, with what they run with now (sysfs, else
    /// nictune's reload record, modprobe.d and the kernel command line) and their devices.
    pub modules: BTreeMap<String, LoadedModule>,
    /// The raw counters, kept for rates against a later snapshot.
    pub counters: Counters,
}

/// One CPU and where it sits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cpu {
    /// CPU number (the `N` of `cpuN`, the column of `/proc/interrupts`).
    pub id: u32,
    /// `topology/core_id`; `None` when unreadable.
    pub core_id: Option<u32>,
    /// `topology/physical_package_id` (socket); `None` when unreadable.
    pub package_id: Option<u32>,
    /// Hardware threads sharing this CPU's core (itself included).
    pub thread_siblings: CpuSet,
}

/// One network interface.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Nic {
    /// Interface name, e.g. `eth0`.
    pub name: String,
    /// `/sys/class/net/IF/ifindex`; `None` when unreadable. Matches netdev netlink objects to the
    /// NIC.
    pub ifindex: Option<u32>,
    /// The device's driver (`device/driver`); for a virtual device its rtnetlink kind
    /// (`veth`, `bridge`, ...), as `ethtool -i` names it.
    pub driver: Readable<String>,
    /// IFLA_MTU (else sysfs `mtu`), bytes.
    pub mtu_bytes: Option<u32>,
    /// Link speed, Mb/s: ethtool LINKMODES_GET (what `ethtool IF` prints), else sysfs
    /// `speed` (captures); `None` when the driver reports none.
    pub speed_mbps: Option<u32>,
    /// IFLA_OPERSTATE (else sysfs `operstate`): `up`, `down`, `lowerlayerdown`, ...
    pub operstate: Option<String>,
    /// IFLA_QDISC: the root queueing discipline (rtnetlink only).
    pub qdisc: Option<String>,
    /// IFLA_TXQLEN (else sysfs `tx_queue_len`), packets.
    pub txqlen: Option<u32>,
    /// ethtool COALESCE_GET (`ethtool -c`).
    pub coalesce: Readable<Coalesce>,
    /// ethtool RINGS_GET (`ethtool -g`).
    pub rings: Readable<Rings>,
    /// ethtool CHANNELS_GET (`ethtool -l`).
    pub channels: Readable<Channels>,
    /// ethtool FEATURES_GET (`ethtool -k`): the receive-offload features in `Features::RELEVANT`.
    pub features: Readable<Features>,
    /// `/sys/class/net/IF/napi_defer_hard_irqs` (device-wide; per-NAPI values are in `napis`).
    pub napi_defer_hard_irqs: Readable<u64>,
    /// `/sys/class/net/IF/gro_flush_timeout`, nanoseconds.
    pub gro_flush_timeout_ns: Readable<u64>,
    /// `/sys/class/net/IF/threaded`: 0 (softirq), 1 (threaded NAPI), 2 (threaded busy
    /// polling, Linux 6.17+).
    pub threaded: Readable<u64>,
    /// This device's NAPI instances from netdev netlink (`napi-get`).
    pub napis: Readable<Vec<Napi>>,
    /// The `queues/rx-N` and `queues/tx-N` directories, sorted rx before tx, by index.
    pub queues: Vec<Queue>,
    /// IRQs of the device (`device/msi_irqs`, or the parent's for virtio; else the legacy
    /// INTx line `device/irq`).
    pub device_irqs: Vec<u32>,
    /// How the device interrupts, when known.
    pub irq_mode: Option<IrqMode>,
    /// The device's name in sysfs (its bus address, `0000:00:03.0`; `virtio2`).
    pub device: Option<String>,
    /// PCI vendor and device ids (`device/vendor`, `device/device`), e.g. `0x8086`, `0x1019`.
    pub pci_id: Option<(String, String)>,
}

/// One queue of a NIC, with the NAPI and IRQ that serve it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Queue {
    /// Receive or transmit.
    pub kind: QueueKind,
    /// Queue number, the `N` of `queues/rx-N` or `queues/tx-N`.
    pub index: u32,
    /// NAPI id serving the queue (netdev netlink `queue-get`); `None` when the kernel or driver
    /// does not link it.
    pub napi_id: Option<u32>,
    /// IRQ serving the queue, found as `irq_from` says; `None` when no way found one.
    pub irq: Option<u32>,
    /// How the IRQ was found: `netdev` (NAPI link), `irq-name` (action name) or `only-irq`
    /// (the device has one IRQ — a legacy INTx line or a single MSI vector — serving every
    /// queue).
    pub irq_from: Option<&'static str>,
    /// `rps_cpus` (rx) or `xps_cpus` (tx).
    pub steering_cpus: Readable<CpuSet>,
}

/// How a PCI device signals interrupts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IrqMode {
    /// MSI-X vectors (`msi_irqs/N` reads `msix`).
    Msix,
    /// MSI vectors (`msi_irqs/N` reads `msi`).
    Msi,
    /// One legacy INTx line (no `msi_irqs`; `device/irq`), possibly shared.
    Intx,
}

impl std::fmt::Display for IrqMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IrqMode::Msix => "msix",
            IrqMode::Msi => "msi",
            IrqMode::Intx => "intx",
        })
    }
}

/// One device IRQ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Irq {
    /// IRQ number.
    pub irq: u32,
    /// Handler names (`/sys/kernel/irq/N/actions`, else the `/proc/interrupts` line), e.g.
    /// `eth0-TxRx-0`.
    pub actions: Vec<String>,
    /// Interrupt chip from `/proc/interrupts`, e.g. `PCI-MSIX-0000:00:03.0`, `IO-APIC`.
    pub chip: Option<String>,
    /// Requested CPUs (`smp_affinity_list`).
    pub affinity: Readable<CpuSet>,
    /// Where it actually fires (`effective_affinity_list`).
    pub effective: Readable<CpuSet>,
    /// Count per CPU since boot, as `(cpu, count)` (JSON: `{"cpu", "count"}` objects).
    #[serde(serialize_with = "crate::json::cpu_counts")]
    pub per_cpu: Vec<(u32, u64)>,
}

impl Irq {
    /// The CPUs it fires on: effective affinity when readable, else the requested one.
    pub fn cpus(&self) -> Option<&CpuSet> {
        self.effective.value().or(self.affinity.value())
    }
}

/// The counters, for rates between two snapshots.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Counters {
    /// `/proc/stat` CPU times.
    pub stat: Readable<ProcStat>,
    /// `/proc/interrupts`.
    pub interrupts: Readable<ProcInterrupts>,
    /// `/proc/softirqs`.
    pub softirqs: Readable<ProcSoftirqs>,
    /// `/proc/net/softnet_stat`, one row per CPU.
    pub softnet: Readable<Vec<SoftnetRow>>,
    /// `/proc/net/dev`, one row per interface.
    pub net_dev: Readable<Vec<NetDevCounters>>,
}

impl HostSnapshot {
    /// The NIC named `name`, if the snapshot holds it.
    pub fn nic(&self, name: &str) -> Option<&Nic> {
        self.nics.iter().find(|n| n.name == name)
    }

    /// The device IRQ numbered `irq`, if the snapshot holds it.
    pub fn irq(&self, irq: u32) -> Option<&Irq> {
        self.irqs.iter().find(|i| i.irq == irq)
    }

    /// The CPU numbered `id`, if the snapshot holds it.
    pub fn cpu(&self, id: u32) -> Option<&Cpu> {
        self.cpus.iter().find(|c| c.id == id)
    }

    /// A sysctl's value, if readable and not negative.
    pub fn sysctl_u64(&self, name: &str) -> Option<u64> {
        u64::try_from(*self.sysctls.get(name)?.value()?).ok()
    }
}
