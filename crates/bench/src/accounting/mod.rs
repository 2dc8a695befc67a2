//! What the measured interval cost one host: CPU time split per CPU, interrupts per second
//! per source, NET_RX/NET_TX softirqs, softnet and busy-poll counters, interface drops, and
//! the CPU time per transaction (service demand) derived from them.
//!
//! How the kernel accounts CPU time shapes what these numbers can say, and the result says
//! it too ([`Accounting::notes`]):
//! * without `CONFIG_IRQ_TIME_ACCOUNTING`, hard-IRQ time is never charged (irq stays 0) and
//!   softirq time is *sampled* by the tick: a tick that lands in softirq charges the whole
//!   tick to softirq, softirq work run at `local_bh_enable()` in a task is often charged to
//!   system;
//! * busy polling runs the network receive path inside the polling task's system call, so
//!   it appears as system time and softirq falls towards 0 — the network cost has moved,
//!   not vanished. Service demand (all busy CPU time per transaction) stays comparable.

pub mod sample;
mod split;

pub use sample::{read_live, ProcTexts, Sample};

use nictune_core::metrics::HostMetrics;
pub use nictune_core::metrics::IrqRate;
use nictune_core::units::Nanos;
use nictune_host::procfs::{IrqLine, IrqSource, NetDevCounters};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The cost of the measured interval on one host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Accounting {
    /// Length of the interval between the two samples, seconds.
    pub interval_s: f64,
    /// The metrics shared with the simulator (CPU split, drops, and interrupts per second of
    /// the NIC vectors only: loopback and veth have none, so 0 there).
    pub host: HostMetrics,
    /// Every device interrupt line that fired (disks and other devices too), with its rate.
    pub device_irqs: Vec<IrqRate>,
    /// The NIC's own vectors, each separately (e.g. e1000e's `eth0-rx-0`, `eth0-tx-0` and
    /// `eth0`), including those that did not fire.
    #[serde(default)]
    pub nic_vectors: Vec<IrqRate>,
    /// Drops of each measured interface (their sums are `host.drops`' `interface_rx` and
    /// `interface_tx`).
    #[serde(default)]
    pub interface_drops: Vec<InterfaceDrops>,
    /// Architecture interrupts per second (`LOC`, `CAL`, `RES`, `TLB`, ...), only those that
    /// fired. `CAL`/`RES` are cross-CPU wake-ups.
    pub arch_irqs_per_sec: BTreeMap<String, f64>,
    /// `NET_RX` softirqs per second, all CPUs (`/proc/softirqs`).
    pub net_rx_softirqs_per_sec: f64,
    /// `NET_TX` softirqs per second, all CPUs (`/proc/softirqs`).
    pub net_tx_softirqs_per_sec: f64,
    /// Packets processed by NAPI/backlog per second (softnet column 1).
    pub softnet_processed_per_sec: f64,
    /// Packets received inside busy-poll loops (`BusyPollRxPackets`, per namespace).
    pub busy_poll_rx_packets: Option<u64>,
    /// Fraction of time the hypervisor ran something else (excluded from the split).
    pub steal: f64,
    /// All busy CPU time (every CPU, user+system+irq+softirq) per transaction, µs.
    pub cpu_us_per_transaction: Option<f64>,
    /// The same per KiB moved (stream).
    pub cpu_us_per_kib: Option<f64>,
    /// `Some(false)`: irq time stayed 0 while CPUs were busy, so the kernel does not account
    /// hard-IRQ time (no `CONFIG_IRQ_TIME_ACCOUNTING`); `None`: could not tell.
    pub irq_time_accounted: Option<bool>,
    /// How to read these numbers on this host.
    pub notes: Vec<String>,
}

/// Each line's rate by its [`IrqRate::label`].
pub fn rates_by_label(lines: &[IrqRate]) -> BTreeMap<String, f64> {
    lines.iter().map(|l| (l.label(), l.per_sec)).collect()
}

/// One interface's packet drops over the interval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfaceDrops {
    /// Interface name as in `/proc/net/dev` of the side's namespace.
    pub iface: String,
    /// Receive drops (`/proc/net/dev` `drop` column) over the interval, packets.
    pub rx: u64,
    /// Transmit drops (`/proc/net/dev` `drop` column) over the interval, packets.
    pub tx: u64,
}

/// The work the interval did, to derive service demand.
#[derive(Debug, Clone, Copy, Default)]
pub struct Work {
    /// Transactions completed in the interval (RR, ping); `None` when not counted. Gives
    /// `cpu_us_per_transaction`.
    pub transactions: Option<u64>,
    /// Bytes moved in the interval (stream); `None` when not counted. Gives `cpu_us_per_kib`.
    pub bytes: Option<u64>,
}

/// Computes what happened between `before` and `after`, `elapsed` apart. `interfaces`
/// limits the drop counters to the measured path (`None`: every interface that moved).
pub fn account(
    before: &Sample,
    after: &Sample,
    elapsed: Nanos,
    user_hz: u32,
    work: Work,
    interfaces: Option<&[String]>,
) -> Accounting {
    let secs = elapsed.as_secs_f64().max(1e-9);
    let cpu = split::cpu_split(&before.stat, &after.stat);
    let (device, arch) = irq_rates(before, after, secs);
    let nic_names = moved_names(after, interfaces);
    let nic_vectors = nic_vectors(before, after, secs, &nic_names);
    // Folded from +0.0: an empty f64 sum is -0.0, which JSON would print as `-0.0`.
    let nic_irqs = nic_vectors.iter().fold(0.0, |sum, v| sum + v.per_sec);
    let interface_drops = interface_drops(before, after, interfaces);
    let busy_ns = split::busy_nanos(&before.stat, &after.stat, user_hz);
    let net_rx = softirq_delta(before, after, "NET_RX") as f64 / secs;
    let mut acc = Accounting {
        interval_s: secs,
        device_irqs: device,
        nic_vectors,
        arch_irqs_per_sec: arch,
        net_rx_softirqs_per_sec: net_rx,
        net_tx_softirqs_per_sec: softirq_delta(before, after, "NET_TX") as f64 / secs,
        softnet_processed_per_sec: softnet_delta(before, after, |r| r.processed) as f64 / secs,
        busy_poll_rx_packets: delta_opt(before.busy_poll_rx, after.busy_poll_rx),
        steal: split::steal_fraction(&before.stat, &after.stat),
        cpu_us_per_transaction: per(busy_ns, work.transactions, 1),
        cpu_us_per_kib: per(busy_ns, work.bytes, 1024),
        irq_time_accounted: split::irq_time_accounted(&before.stat, &after.stat),
        host: HostMetrics {
            interrupts_per_sec: Some(nic_irqs),
            packets_per_interrupt: None,
            cpu,
            drops: drops(before, after, &interface_drops),
            time_squeeze: Some(softnet_delta(before, after, |r| r.time_squeeze)),
            net_rx_softirqs_per_sec: Some(net_rx),
            // The bench's document lists them once, as `nic_vectors`; a tune's results copy
            // them here (`nictune_live::measure`).
            vectors: Vec::new(),
        },
        interface_drops,
        notes: Vec::new(),
    };
    acc.host.packets_per_interrupt =
        packets_per_interrupt(before, after, interfaces, nic_irqs * secs);
    acc.notes = notes(&acc);
    acc
}

fn per(busy_ns: u64, n: Option<u64>, unit: u64) -> Option<f64> {
    let n = n.filter(|&n| n >= unit)?;
    Some(busy_ns as f64 / 1e3 / (n as f64 / unit as f64))
}

fn delta_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(b?.saturating_sub(a?))
}

fn softirq_delta(before: &Sample, after: &Sample, name: &str) -> u64 {
    let sum = |s: &Sample| s.softirqs.get(name).map_or(0, |v| v.iter().sum::<u64>());
    sum(after).saturating_sub(sum(before))
}

/// Softnet counters are u32 that wrap: the delta is taken modulo 2^32 per CPU.
fn softnet_delta(
    before: &Sample,
    after: &Sample,
    f: fn(&nictune_host::procfs::SoftnetRow) -> u64,
) -> u64 {
    after
        .softnet
        .iter()
        .map(|a| {
            let b = before.softnet.iter().find(|b| b.cpu == a.cpu).map_or(0, f);
            (f(a).wrapping_sub(b)) & 0xffff_ffff
        })
        .sum()
}

/// Per-second rates of every interrupt line that fired, split into device and architecture.
fn irq_rates(before: &Sample, after: &Sample, secs: f64) -> (Vec<IrqRate>, BTreeMap<String, f64>) {
    let (mut device, mut arch) = (Vec::new(), BTreeMap::new());
    for line in &after.interrupts.lines {
        let d = irq_delta(before, line);
        if d == 0 {
            continue;
        }
        match &line.source {
            IrqSource::Device(n) => device.push(IrqRate {
                irq: *n,
                action: line.actions.join(","),
                per_sec: d as f64 / secs,
            }),
            IrqSource::Arch(name) => {
                arch.insert(name.clone(), d as f64 / secs);
            }
        }
    }
    (device, arch)
}

/// Names of the measured interfaces (or of every interface whose packet counters moved).
fn moved_names(after: &Sample, interfaces: Option<&[String]>) -> Vec<String> {
    match interfaces {
        Some(list) => list.to_vec(),
        None => after
            .net_dev
            .iter()
            .filter(|d| d.rx_packets + d.tx_packets > 0 && d.name != "lo")
            .map(|d| d.name.clone())
            .collect(),
    }
}

/// True for a device IRQ of one of the measured interfaces `ifaces`: an action naming the
/// interface as a whole word (`eth0`, `eth0-TxRx-3`, `ice-eth0-TxRx-0`; never `eth10-TxRx-0`
/// for `eth1`), or naming the device below it (its `parents` entry), as drivers that do not
/// name the interface do: virtio-net (`virtio2-input.0` below `virtio2`), mlx5
/// (`mlx5_comp3@pci:0000:03:00.0` below `0000:03:00.0`). Another device's lines are not the
/// measured path's: on a virtual machine the machine's own `eth0` is a virtio NIC too, and its
/// traffic (a login session, say) must not count as a veth or tap testbed's interrupts.
pub fn is_nic_irq(
    actions: &[String],
    ifaces: &[String],
    parents: &BTreeMap<String, String>,
) -> bool {
    let names = |a: &str, i: &String| {
        names_word(a, i) || parents.get(i).is_some_and(|device| names_word(a, device))
    };
    actions.iter().any(|a| ifaces.iter().any(|i| names(a, i)))
}

/// True when `word` occurs in `action` bounded on each side by its start or end or a
/// separator drivers put around an interface or device name (`-`, `:`, `@`, `[`, `]`).
fn names_word(action: &str, word: &str) -> bool {
    let sep = |c: Option<char>| c.is_none_or(|c| matches!(c, '-' | ':' | '@' | '[' | ']'));
    !word.is_empty()
        && action.match_indices(word).any(|(at, _)| {
            sep(action[..at].chars().next_back()) && sep(action[at + word.len()..].chars().next())
        })
}

/// Interrupts per second of each NIC vector; their sum is the simulator's
/// `interrupts_per_sec`.
fn nic_vectors(before: &Sample, after: &Sample, secs: f64, ifaces: &[String]) -> Vec<IrqRate> {
    after
        .interrupts
        .lines
        .iter()
        .filter(|l| is_nic_irq(&l.actions, ifaces, &after.parents))
        .filter_map(|l| {
            Some(IrqRate {
                irq: l.irq()?,
                action: l.actions.join(","),
                per_sec: irq_delta(before, l) as f64 / secs,
            })
        })
        .collect()
}

/// How often `line` fired since `before` (a line new since then counts from 0).
fn irq_delta(before: &Sample, line: &IrqLine) -> u64 {
    let was = before
        .interrupts
        .lines
        .iter()
        .find(|b| b.source == line.source);
    line.total.saturating_sub(was.map_or(0, |b| b.total))
}

fn moved<'a>(
    s: &'a Sample,
    interfaces: Option<&'a [String]>,
) -> impl Iterator<Item = &'a NetDevCounters> + 'a {
    s.net_dev
        .iter()
        .filter(move |d| interfaces.is_none_or(|l| l.contains(&d.name)))
}

/// Drops of the measured interfaces (or of every interface that received packets).
fn interface_drops(
    before: &Sample,
    after: &Sample,
    interfaces: Option<&[String]>,
) -> Vec<InterfaceDrops> {
    moved(after, interfaces)
        .filter(|a| interfaces.is_some() || dev_delta(before, a, |d| d.rx_packets) > 0)
        .map(|a| InterfaceDrops {
            iface: a.name.clone(),
            rx: dev_delta(before, a, |d| d.rx_drop),
            tx: dev_delta(before, a, |d| d.tx_drop),
        })
        .collect()
}

/// Drops by cause, as the simulator names them: the interfaces' receive and transmit drops
/// (summed; each interface apart is in `interface_drops`) and softnet backlog drops.
fn drops(before: &Sample, after: &Sample, interfaces: &[InterfaceDrops]) -> BTreeMap<String, u64> {
    BTreeMap::from([
        ("interface_rx".into(), interfaces.iter().map(|d| d.rx).sum()),
        ("interface_tx".into(), interfaces.iter().map(|d| d.tx).sum()),
        (
            "backlog".into(),
            softnet_delta(before, after, |r| r.dropped),
        ),
    ])
}

fn packets_per_interrupt(
    before: &Sample,
    after: &Sample,
    interfaces: Option<&[String]>,
    irqs: f64,
) -> Option<f64> {
    if irqs < 1.0 {
        return None;
    }
    let rx: u64 = moved(after, interfaces)
        .map(|a| dev_delta(before, a, |d| d.rx_packets))
        .sum();
    Some(rx as f64 / irqs)
}

/// Counter `f` of interface `a` since `before` (an interface new since then counts from 0).
fn dev_delta(before: &Sample, a: &NetDevCounters, f: fn(&NetDevCounters) -> u64) -> u64 {
    let was = before.net_dev.iter().find(|b| b.name == a.name);
    f(a).saturating_sub(was.map_or(0, f))
}

fn notes(acc: &Accounting) -> Vec<String> {
    let mut n = Vec::new();
    if acc.irq_time_accounted == Some(false) {
        n.push(
            "irq time is not accounted by this kernel (irq stayed 0 while CPUs were busy: no \
             CONFIG_IRQ_TIME_ACCOUNTING); softirq time is sampled by the tick, so treat ±1–2 % \
             as noise and use cpu_us_per_transaction to compare runs"
                .into(),
        );
    }
    if acc.busy_poll_rx_packets.is_some_and(|p| p > 0) {
        n.push(
            "busy polling received packets: that network work is charged to system time, so a \
             low softirq share does not mean the network cost vanished"
                .into(),
        );
    }
    if acc.host.interrupts_per_sec.unwrap_or(0.0) < 1.0 {
        n.push(
            "no NIC interrupts on this path (loopback and veth have none); the interrupts that \
             matter are the cross-CPU wake-ups CAL/RES"
                .into(),
        );
    }
    n.push("CPU figures are host-wide (/proc/stat): other work on the machine is included".into());
    if acc.steal > 0.01 {
        n.push(format!(
            "the hypervisor stole {:.1} % of CPU time",
            acc.steal * 100.0
        ));
    }
    n
}

#[cfg(test)]
mod tests;
