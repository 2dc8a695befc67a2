//! What a change touches: a [`Key`] (which knob) on an [`Object`] (which device, queue, NAPI instance, IRQ, namespace or module), together a
//! [`Setting`]. Keys carry their [`Stage`], which fixes the order of writes in a transaction.
//!
//! Key names are the canonical ones users type (`coalesce.rx-usecs`, `napi.gro-flush-timeout`,
//! `sysctl.net.core.somaxconn`, `irq.affinity@45`). When the shared settings catalog lands, its
//! keys map one to one onto these variants; the engine only needs the stage and the value kind.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The fixed order of a transaction. Channel and ring changes recreate queues (and on many
/// drivers reset the link and IRQ affinity), so they go first; everything that lives on a
/// queue, a NAPI instance or an IRQ goes after them (ecosystem.md §5.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Driver module parameters: applying one reloads the driver, which recreates every
    /// device of the driver with default run-time settings, so it goes before everything.
    Module,
    /// Channel counts (`ethtool -L`): they recreate queues, so they come first after module
    /// reloads.
    Channels,
    /// Ring sizes (`ethtool -G`): they reallocate rings and on many drivers reset the link.
    Rings,
    /// Offload features such as GRO and LRO (`ethtool -K`).
    Features,
    /// Interrupt coalescing parameters (`ethtool -C`).
    Coalesce,
    /// The device-wide sysfs NAPI files: they overwrite every per-NAPI value, so they go
    /// before the per-NAPI netlink settings.
    SysfsNapi,
    /// Per-NAPI settings through the netdev netlink family (`napi-set`).
    Napi,
    /// Sysctls of the target network namespace.
    Sysctl,
    /// IRQ affinity (`/proc/irq/<n>/smp_affinity_list`), after channels so recreated vectors get
    /// it.
    IrqAffinity,
    /// RPS/XPS steering files under `queues/`; last, as channel changes reset them.
    Steering,
}

/// ethtool channel counts (`ethtool -L`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Channel {
    /// Receive-only channels.
    Rx,
    /// Transmit-only channels.
    Tx,
    /// Channels for other purposes (link interrupts, control).
    Other,
    /// Combined receive and transmit channels (most multiqueue drivers).
    Combined,
}

/// ethtool ring sizes (`ethtool -G`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ring {
    /// Receive ring descriptors.
    Rx,
    /// Receive mini ring descriptors (small buffers; few drivers have them).
    RxMini,
    /// Receive jumbo ring descriptors (large buffers; few drivers have them).
    RxJumbo,
    /// Transmit ring descriptors.
    Tx,
}

/// Device-wide NAPI files under `/sys/class/net/<if>/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SysfsNapi {
    /// `napi_defer_hard_irqs`: how many empty polls keep the device's IRQs masked.
    NapiDeferHardIrqs,
    /// `gro_flush_timeout`, ns: how long GRO holds packets and, with deferral, the re-arm timer.
    GroFlushTimeout,
    /// `threaded`: 0 polls in softirq context, 1 in per-NAPI kernel threads (2 is newer than 6.18).
    Threaded,
}

/// Per-NAPI settings of the netdev netlink family (`napi-set`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Napi {
    /// `defer-hard-irqs`: empty polls that keep this NAPI instance's IRQ masked (0..=`i32::MAX`).
    DeferHardIrqs,
    /// `gro-flush-timeout`, ns: GRO hold time and the deferral re-arm timer of this instance.
    GroFlushTimeout,
    /// `irq-suspend-timeout`, ns: how long a busy-polling application may keep the IRQ suspended.
    IrqSuspendTimeout,
    /// `threaded`: 0 softirq, 1 kernel thread (2, busy-poll thread, is newer than 6.18).
    Threaded,
}

/// Receive/transmit steering files under `queues/{rx,tx}-<n>/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Steering {
    /// `rps_cpus`: the CPUs receive packet steering hands this queue's packets to.
    RpsCpus,
    /// `rps_flow_cnt`: entries of this queue's RFS flow table.
    RpsFlowCnt,
    /// `xps_cpus`: the CPUs whose transmits use this queue.
    XpsCpus,
}

/// Which knob.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "name", rename_all = "kebab-case")]
pub enum Key {
    /// A channel count of the device (`channel.rx`, `channel.combined`, ...).
    Channels(Channel),
    /// A ring size of the device (`ring.rx`, `ring.tx`, ...).
    Ring(Ring),
    /// An ethtool feature by its kernel name, e.g. `rx-gro`.
    Feature(String),
    /// An ethtool coalescing parameter by its catalog name, e.g. `rx-usecs`, `adaptive-rx`.
    Coalesce(String),
    /// A device-wide NAPI file (`sysfs.napi_defer_hard_irqs`, ...).
    SysfsNapi(SysfsNapi),
    /// A per-NAPI netlink setting (`napi.defer-hard-irqs`, ...).
    Napi(Napi),
    /// A sysctl in the target network namespace, dotted, e.g. `net.core.somaxconn`.
    Sysctl(String),
    /// The CPU set of one IRQ (`irq.affinity@<irq>`).
    IrqAffinity,
    /// A steering file of one queue (`rps.cpus`, `rps.flow-cnt`, `xps.cpus`).
    Steering(Steering),
    /// A driver module parameter (`e1000.InterruptThrottleRate`), set by reloading the
    /// driver with it.
    ModuleParam {
        /// Module name as `lsmod` and `/sys/module` show it, e.g. `e1000`.
        module: String,
        /// Parameter name under `/sys/module/<module>/parameters/`, e.g. `InterruptThrottleRate`.
        param: String,
    },
}

/// Coalescing parameters that are switches; the rest are 32-bit counts or times.
const COALESCE_SWITCHES: [&str; 4] = ["adaptive-rx", "adaptive-tx", "cqe-mode-rx", "cqe-mode-tx"];

/// Feature names as the catalog spells them (`feature.gro`) and as the kernel does (`rx-gro`).
const FEATURE_NAMES: [(&str, &str); 2] = [("gro", "rx-gro"), ("lro", "rx-lro")];

/// The kernel's feature name for a catalog feature name.
pub fn kernel_feature(name: &str) -> &str {
    FEATURE_NAMES
        .iter()
        .find(|(c, _)| *c == name)
        .map_or(name, |(_, k)| k)
}

/// The catalog's feature name for a kernel feature name.
pub fn catalog_feature(kernel: &str) -> &str {
    FEATURE_NAMES
        .iter()
        .find(|(_, k)| *k == kernel)
        .map_or(kernel, |(c, _)| c)
}

/// What kind of value a key takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// An integer from `min` to `max`, in `unit`.
    Int {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
        /// Unit shown to users: `µs`, `frames`, `packets/s`, `ns`, `polls`, `descriptors`, ...
        unit: &'static str,
    },
    /// On or off.
    Bool,
    /// A set of CPUs.
    Cpus,
    /// Free text compared after collapsing whitespace (sysctls).
    Text,
}

impl Key {
    /// Where this key sits in the write order.
    pub fn stage(&self) -> Stage {
        match self {
            Key::Channels(_) => Stage::Channels,
            Key::Ring(_) => Stage::Rings,
            Key::Feature(_) => Stage::Features,
            Key::Coalesce(_) => Stage::Coalesce,
            Key::SysfsNapi(_) => Stage::SysfsNapi,
            Key::Napi(_) => Stage::Napi,
            Key::Sysctl(_) => Stage::Sysctl,
            Key::IrqAffinity => Stage::IrqAffinity,
            Key::Steering(_) => Stage::Steering,
            Key::ModuleParam { .. } => Stage::Module,
        }
    }

    /// The value this key takes and its range as the kernel interface defines it. Driver
    /// limits (e.g. the channel maximum) come from the host and are checked in the plan.
    pub fn value_kind(&self) -> ValueKind {
        const U32: u64 = u32::MAX as u64;
        // napi_defer_hard_irqs is capped at S32_MAX by the kernel (netdev.yaml, sysfs store).
        const S32: u64 = i32::MAX as u64;
        let int = |min, max, unit| ValueKind::Int { min, max, unit };
        match self {
            Key::Channels(_) => int(0, U32, "channels"),
            Key::Ring(_) => int(1, U32, "descriptors"),
            Key::Feature(_) => ValueKind::Bool,
            Key::Coalesce(p) if COALESCE_SWITCHES.contains(&p.as_str()) => ValueKind::Bool,
            Key::Coalesce(p) if p.contains("usecs") => int(0, U32, "µs"),
            // ETHTOOL_A_COALESCE_RATE_SAMPLE_INTERVAL counts seconds (ethtool.h: "how often to
            // do adaptive coalescing packet rate sampling, measured in seconds").
            Key::Coalesce(p) if p == "rate-sample-interval" => int(0, U32, "s"),
            Key::Coalesce(p) if p.starts_with("pkt-rate") => int(0, U32, "packets/s"),
            Key::Coalesce(_) => int(0, U32, "frames"),
            Key::SysfsNapi(SysfsNapi::NapiDeferHardIrqs) | Key::Napi(Napi::DeferHardIrqs) => {
                int(0, S32, "polls")
            }
            Key::SysfsNapi(SysfsNapi::GroFlushTimeout)
            | Key::Napi(Napi::GroFlushTimeout | Napi::IrqSuspendTimeout) => int(0, u64::MAX, "ns"),
            // 0 = softirq, 1 = kthread; 2 (busy-poll kthread) is newer than 6.18 (EIO there).
            Key::SysfsNapi(SysfsNapi::Threaded) | Key::Napi(Napi::Threaded) => int(0, 2, "mode"),
            Key::Sysctl(_) => ValueKind::Text,
            Key::IrqAffinity | Key::Steering(Steering::RpsCpus | Steering::XpsCpus) => {
                ValueKind::Cpus
            }
            Key::Steering(Steering::RpsFlowCnt) => int(0, U32, "entries"),
            // One integer or a per-port comma list; the catalog checks the numbers. An empty
            // value means "not given": the driver's default.
            Key::ModuleParam { .. } => ValueKind::Text,
        }
    }

    /// What the write does to the device beyond setting the value, shown in plans.
    pub fn side_effect(&self) -> Option<&'static str> {
        match self {
            Key::Channels(_) => Some("recreates queues; resets IRQ affinity, RPS/XPS and NAPI ids"),
            Key::Ring(_) => Some("reallocates rings; many drivers reset the link"),
            Key::SysfsNapi(SysfsNapi::NapiDeferHardIrqs | SysfsNapi::GroFlushTimeout) => {
                Some("overwrites the per-NAPI value of every NAPI instance")
            }
            Key::ModuleParam { .. } => Some(
                "reloads the driver: every port it drives goes down and comes back with its \
                 MTU, up state and IPv4 addresses restored (not static IPv6 addresses, routes \
                 other than connected ones, VLANs or bond/bridge membership) and run-time \
                 settings at their defaults",
            ),
            _ => None,
        }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Channels(c) => write!(f, "channel.{}", channel_name(*c)),
            Key::Ring(r) => write!(f, "ring.{}", ring_name(*r)),
            Key::Feature(n) => write!(f, "feature.{}", catalog_feature(n)),
            Key::Coalesce(p) => write!(f, "coalesce.{p}"),
            Key::SysfsNapi(s) => write!(f, "sysfs.{}", sysfs_napi_name(*s)),
            Key::Napi(n) => write!(f, "napi.{}", napi_name(*n)),
            Key::Sysctl(s) => write!(f, "sysctl.{s}"),
            Key::IrqAffinity => f.write_str("irq.affinity"),
            Key::Steering(s) => f.write_str(steering_name(*s)),
            Key::ModuleParam { module, param } => write!(f, "{module}.{param}"),
        }
    }
}

pub(crate) fn channel_name(c: Channel) -> &'static str {
    match c {
        Channel::Rx => "rx",
        Channel::Tx => "tx",
        Channel::Other => "other",
        Channel::Combined => "combined",
    }
}

pub(crate) fn ring_name(r: Ring) -> &'static str {
    match r {
        Ring::Rx => "rx",
        Ring::RxMini => "rx-mini",
        Ring::RxJumbo => "rx-jumbo",
        Ring::Tx => "tx",
    }
}

/// The sysfs file name, which is also the key suffix (`sysfs.napi_defer_hard_irqs`).
pub fn sysfs_napi_name(s: SysfsNapi) -> &'static str {
    match s {
        SysfsNapi::NapiDeferHardIrqs => "napi_defer_hard_irqs",
        SysfsNapi::GroFlushTimeout => "gro_flush_timeout",
        SysfsNapi::Threaded => "threaded",
    }
}

pub(crate) fn napi_name(n: Napi) -> &'static str {
    match n {
        Napi::DeferHardIrqs => "defer-hard-irqs",
        Napi::GroFlushTimeout => "gro-flush-timeout",
        Napi::IrqSuspendTimeout => "irq-suspend-timeout",
        Napi::Threaded => "threaded",
    }
}

pub(crate) fn steering_name(s: Steering) -> &'static str {
    match s {
        Steering::RpsCpus => "rps.cpus",
        Steering::RpsFlowCnt => "rps.flow-cnt",
        Steering::XpsCpus => "xps.cpus",
    }
}

/// Which object a key is set on. NAPI instances are named by their position among the
/// device's NAPIs sorted by id, not by id: ids change when queues are recreated while the
/// settings stay with the queue (ecosystem.md §1.4).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "object", rename_all = "kebab-case")]
pub enum Object {
    /// The device as a whole: channels, rings, features, coalescing, device-wide NAPI files.
    Device {
        /// Interface name.
        iface: String,
    },
    /// One NAPI instance of a device (per-NAPI netlink settings).
    Napi {
        /// Interface name.
        iface: String,
        /// Position among the device's NAPI instances sorted by NAPI id, from 0.
        index: u32,
    },
    /// One receive queue (`queues/rx-<n>/`: RPS).
    RxQueue {
        /// Interface name.
        iface: String,
        /// Queue number, the `<n>` of `rx-<n>`.
        queue: u32,
    },
    /// One transmit queue (`queues/tx-<n>/`: XPS).
    TxQueue {
        /// Interface name.
        iface: String,
        /// Queue number, the `<n>` of `tx-<n>`.
        queue: u32,
    },
    /// One interrupt line (affinity).
    Irq {
        /// IRQ number as in `/proc/interrupts` and `/proc/irq/<n>/`.
        irq: u32,
    },
    /// The network namespace the command runs in (sysctls).
    Netns,
    /// A driver module (module parameters).
    Module {
        /// Module name, e.g. `e1000`.
        module: String,
    },
}

impl Object {
    /// The interface the object belongs to; `None` for the namespace, an IRQ or a module.
    pub fn iface(&self) -> Option<&str> {
        match self {
            Object::Device { iface }
            | Object::Napi { iface, .. }
            | Object::RxQueue { iface, .. }
            | Object::TxQueue { iface, .. } => Some(iface),
            _ => None,
        }
    }

    /// The same object on the interface now named `name` (a renamed device); the namespace,
    /// an IRQ or a module as they are.
    pub fn on_iface(&self, name: &str) -> Object {
        let mut o = self.clone();
        match &mut o {
            Object::Device { iface }
            | Object::Napi { iface, .. }
            | Object::RxQueue { iface, .. }
            | Object::TxQueue { iface, .. } => *iface = name.to_string(),
            Object::Irq { .. } | Object::Netns | Object::Module { .. } => {}
        }
        o
    }
}

impl fmt::Display for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Object::Device { iface } => f.write_str(iface),
            Object::Napi { iface, index } => write!(f, "{iface} napi[{index}]"),
            Object::RxQueue { iface, queue } => write!(f, "{iface} rx-{queue}"),
            Object::TxQueue { iface, queue } => write!(f, "{iface} tx-{queue}"),
            Object::Irq { irq } => write!(f, "irq {irq}"),
            Object::Netns => f.write_str("netns"),
            Object::Module { module } => write!(f, "module {module}"),
        }
    }
}

/// One knob on one object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Setting {
    /// Which object the knob is on.
    pub target: Object,
    /// Which knob.
    pub key: Key,
}

impl Setting {
    /// A setting of `key` on `target`.
    pub fn new(target: Object, key: Key) -> Setting {
        Setting { target, key }
    }

    /// The driver module whose parameter this is, for a module parameter: settings of one
    /// module are written together, by one reload ([`crate::write::HostWrite::write_all`]).
    pub fn module(&self) -> Option<&str> {
        match (&self.target, &self.key) {
            (Object::Module { module }, Key::ModuleParam { .. }) => Some(module),
            _ => None,
        }
    }

    /// Whether `self` and `other` are written by one operation: parameters of the same
    /// module.
    pub fn written_with(&self, other: &Setting) -> bool {
        self.module().is_some() && self.module() == other.module()
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.target, self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_sample_interval_is_in_seconds_as_the_catalog_and_ethtool_h_say() {
        let unit = |key: &str| match Key::Coalesce(key.into()).value_kind() {
            ValueKind::Int { unit, .. } => unit,
            other => panic!("{key}: {other:?}"),
        };
        assert_eq!(unit("rate-sample-interval"), "s");
        assert_eq!(unit("rx-usecs"), "µs");
        assert_eq!(unit("rx-usecs-high"), "µs");
    }

    #[test]
    fn stages_follow_the_documented_apply_order() {
        let order = [
            Key::ModuleParam {
                module: "e1000".into(),
                param: "InterruptThrottleRate".into(),
            },
            Key::Channels(Channel::Combined),
            Key::Ring(Ring::Rx),
            Key::Feature("rx-gro".into()),
            Key::Coalesce("rx-usecs".into()),
            Key::SysfsNapi(SysfsNapi::GroFlushTimeout),
            Key::Napi(Napi::DeferHardIrqs),
            Key::Sysctl("net.core.somaxconn".into()),
            Key::IrqAffinity,
            Key::Steering(Steering::RpsCpus),
        ];
        let stages: Vec<Stage> = order.iter().map(Key::stage).collect();
        let mut sorted = stages.clone();
        sorted.sort();
        assert_eq!(stages, sorted);
    }

    #[test]
    fn coalesce_kinds_follow_the_parameter_name() {
        let kind = |p: &str| Key::Coalesce(p.into()).value_kind();
        assert_eq!(kind("adaptive-rx"), ValueKind::Bool);
        assert!(matches!(
            kind("rx-usecs"),
            ValueKind::Int { unit: "µs", .. }
        ));
        assert!(matches!(
            kind("tx-frames-irq"),
            ValueKind::Int { unit: "frames", .. }
        ));
        assert!(matches!(
            kind("pkt-rate-low"),
            ValueKind::Int {
                unit: "packets/s",
                ..
            }
        ));
    }
}
