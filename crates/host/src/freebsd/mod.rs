//! FreeBSD, offline: parsers for captured command output and config files, and the
//! [`FreeBsdSnapshot`] the doctor reads. A capture directory holds any of
//! [`FILES`]; missing ones are reported, not fatal.

mod dmesg;
mod ifconfig;
mod ipfw;
mod kv;
mod netstat_m;
pub mod script;
mod top;
mod topology;
mod vmstat_i;

pub use dmesg::{parse_dmesg, DmesgFacts};
pub use ifconfig::{parse_ifconfig, IfInfo};
pub use ipfw::{parse_nat_config, parse_rules, IpfwNat, NatInstance, NatRules};
pub use kv::{kv_lines, parse_kv};
pub use netstat_m::{parse_netstat_m, MbufStats};
pub use top::{parse_top, parse_top_processes, TopCpu, TopProcess};
pub use topology::parse_smt_groups;
pub use vmstat_i::{parse_vmstat_i, VmstatIrq};

use crate::error::ParseError;
use nictune_core::input;
use serde::Serialize;
use std::collections::BTreeMap;

/// The file names a FreeBSD capture directory may hold. `vmstat-i-2.txt` is a second
/// `vmstat -i` taken later; `capture.txt` (written by the capture script,
/// [`script::capture_script`]) says when each sample was taken, so the rates between them
/// are measured rather than averaged since boot.
pub const FILES: [&str; 13] = [
    "vmstat-i.txt",
    "vmstat-i-2.txt",
    "capture.txt",
    "netstat-m.txt",
    "sysctl.txt",
    "top.txt",
    "ifconfig.txt",
    "loader.conf",
    "sysctl.conf",
    "rc.conf",
    "dmesg.txt",
    "ipfw-nat.txt",
    "ipfw.txt",
];

/// The texts of a capture, by file name (absent files are simply not in the map).
pub type FreeBsdInputs = BTreeMap<String, String>;

/// Everything read from a FreeBSD capture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FreeBsdSnapshot {
    /// `vmstat -i`; with two samples, the later one with rates measured between them.
    pub interrupts: Option<Vec<VmstatIrq>>,
    /// Seconds between the two `vmstat -i` samples when the rates were measured (None: the
    /// rates are `vmstat -i`'s averages since boot). JSON: `rates_over_s`.
    #[serde(rename = "rates_over_s")]
    pub rates_over_secs: Option<u64>,
    /// Seconds since boot, from the first `vmstat -i` (a source's total over its average).
    /// JSON: `uptime_s`.
    #[serde(rename = "uptime_s")]
    pub uptime_secs: Option<f64>,
    /// `netstat -m` (`netstat-m.txt`); `None` when not captured.
    pub mbufs: Option<MbufStats>,
    /// Runtime values from `sysctl -a`.
    pub sysctl: BTreeMap<String, String>,
    /// `/boot/loader.conf` (boot-time tunables); empty when not captured.
    pub loader_conf: BTreeMap<String, String>,
    /// `/etc/sysctl.conf` (values set at boot); empty when not captured.
    pub sysctl_conf: BTreeMap<String, String>,
    /// `/etc/rc.conf` (interface and firewall configuration); empty when not captured.
    pub rc_conf: BTreeMap<String, String>,
    /// Per-CPU shares of the last `top -SIP` display; `None` when not captured.
    pub cpus: Option<Vec<TopCpu>>,
    /// Process lines of `top -SIP` (`intr`, `kernel`, ...).
    pub processes: Vec<TopProcess>,
    /// ipfw's in-kernel NAT instances and the rules using them.
    pub nat: IpfwNat,
    /// The capture script's record (`capture.txt`): commands, exit statuses, times.
    pub capture: BTreeMap<String, String>,
    /// `ifconfig -a` (`ifconfig.txt`); `None` when not captured.
    pub interfaces: Option<Vec<IfInfo>>,
    /// Facts from `dmesg` (`dmesg.txt`); empty when not captured.
    pub dmesg: DmesgFacts,
    /// SMT sibling sets from `kern.sched.topology_spec` (empty when not captured).
    pub smt_groups: Vec<crate::cpuset::CpuSet>,
    /// Files that were absent.
    pub missing: Vec<String>,
}

impl FreeBsdSnapshot {
    /// A setting's value: the running value (`sysctl -a`) first, then `sysctl.conf`, then
    /// `loader.conf` — the order in which a booted system ends up with it.
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.sysctl
            .get(key)
            .or_else(|| self.sysctl_conf.get(key))
            .or_else(|| self.loader_conf.get(key))
            .map(String::as_str)
    }

    /// A setting parsed as an integer: `None` only when it is not set, for [`snapshot`] has
    /// checked every value of a key it reads as a number is an integer within its range.
    pub fn setting_i64(&self, key: &str) -> Option<i64> {
        debug_assert!(
            numeric_range(key).is_some(),
            "{key} is read as an integer but not listed in NUMERIC"
        );
        self.setting(key)?.trim().parse().ok()
    }

    /// The hardware threads sharing `cpu`'s core (itself included).
    pub fn siblings(&self, cpu: u32) -> crate::cpuset::CpuSet {
        self.smt_groups
            .iter()
            .find(|g| g.contains(cpu))
            .cloned()
            .unwrap_or_else(|| [cpu].into_iter().collect())
    }

    /// Number of CPUs: `hw.ncpu`, else the `top` lines; [`snapshot`] has checked both are
    /// within 1..=[`input::MAX_CPUS`].
    pub fn ncpu(&self) -> Option<u32> {
        let top = || self.cpus.as_ref().map(|c| c.len() as u32);
        self.setting_i64("hw.ncpu")
            .and_then(|n| u32::try_from(n).ok())
            .or_else(top)
            .filter(|n| u64::from(*n) <= input::MAX_CPUS)
    }
}

/// C `int`'s largest value: most FreeBSD tunables are `int` sysctls.
const INT_MAX: i128 = i32::MAX as i128;

/// The settings read as integers ([`FreeBsdSnapshot::setting_i64`]), each with the range it
/// may hold; `*` stands for one dot-separated part (`hw.igb.rxd`, `dev.igb.0.…`). A value
/// outside its range or not a number at all stops [`snapshot`] naming file, line and key:
/// read as unset it would size the doctor's fixes by defaults (`hw.igb.rxd=abc` once hid
/// loader.conf's 4096 behind the default 1024 and undersized kern.ipc.nmbclusters).
const NUMERIC: [(&str, i128, i128); 12] = [
    ("hw.ncpu", 1, input::MAX_CPUS as i128),
    ("kern.hz", 1, INT_MAX),
    ("kern.ipc.nmbclusters", 0, INT_MAX),
    ("kern.polling.burst", 0, INT_MAX),
    ("kern.polling.burst_max", 0, INT_MAX),
    ("kern.polling.idle_poll", 0, INT_MAX),
    ("kern.polling.lost_polls", 0, i64::MAX as i128),
    ("kern.polling.stalled", 0, i64::MAX as i128),
    ("hw.*.rxd", 0, INT_MAX),
    ("hw.*.num_queues", 0, input::MAX_QUEUES as i128 - 1),
    ("hw.*.rx_process_limit", -1, INT_MAX),
    ("dev.*.*.rx_processing_limit", -1, INT_MAX),
];

/// Counters read as integers, unbounded but for `u64`'s range.
const NUMERIC_COUNTERS: [&str; 1] = ["dev.*.*.mac_stats.good_pkts_recvd"];

/// The range a setting read as an integer may hold; `None` for a setting not read as one.
fn numeric_range(key: &str) -> Option<(i128, i128)> {
    let matches = |pattern: &str| {
        let (mut p, mut k) = (pattern.split('.'), key.split('.'));
        loop {
            match (p.next(), k.next()) {
                (None, None) => return true,
                (Some(a), Some(b)) if a == "*" || a == b => {}
                _ => return false,
            }
        }
    };
    NUMERIC
        .iter()
        .find(|(p, ..)| matches(p))
        .map(|(_, lo, hi)| (*lo, *hi))
        .or_else(|| {
            NUMERIC_COUNTERS
                .iter()
                .any(|p| matches(p))
                .then_some((0, i64::MAX as i128))
        })
}

/// Every value read as an integer must be one within its range ([`NUMERIC`]), and the CPU
/// count the doctor sizes its work by sane (`hw.ncpu: -1` once meant 4 billion CPUs).
fn check_numbers(inputs: &FreeBsdInputs, snap: &FreeBsdSnapshot) -> Result<(), ParseError> {
    for file in ["sysctl.txt", "sysctl.conf", "loader.conf"] {
        let Some((name, text)) = inputs.get_key_value(file) else {
            continue;
        };
        let file: &'static str = FILES.iter().find(|f| **f == name).copied().unwrap_or("?");
        // Later lines win, as when the system reads the file: check the line that counts.
        let mut last: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
        for (line, key, value) in kv_lines(text) {
            last.insert(key, (line, value));
        }
        for (key, (line, value)) in last {
            let Some((lo, hi)) = numeric_range(key) else {
                continue;
            };
            let n = value.trim().parse::<i128>().ok();
            if n.is_some_and(|n| (lo..=hi).contains(&n)) {
                continue;
            }
            let what = if n.is_some() {
                "is out of range"
            } else {
                "is not an integer"
            };
            return Err(ParseError::new(
                file,
                line,
                format!("{key} = {value:?} {what}; allowed: an integer from {lo} to {hi}"),
            ));
        }
    }
    if let Some(cpus) = &snap.cpus {
        input::in_range("CPU lines", cpus.len() as i128, 0, input::MAX_CPUS)
            .map_err(|e| ParseError::new("top -SIP", 0, e.to_string()))?;
    }
    Ok(())
}

/// Seconds since boot: `vmstat -i` prints each source's total and its average rate.
fn uptime(first: &[VmstatIrq]) -> Option<f64> {
    first
        .iter()
        .filter(|v| v.rate > 0)
        .map(|v| v.total as f64 / v.rate as f64)
        .max_by(f64::total_cmp)
}

/// The later sample with each source's rate measured since the earlier one; None unless
/// `capture.txt` dates both samples at least a second apart.
fn measured(
    first: &[VmstatIrq],
    later: &[VmstatIrq],
    capture: &BTreeMap<String, String>,
) -> Option<(Vec<VmstatIrq>, u64)> {
    let at = |k: &str| capture.get(k)?.trim().parse::<u64>().ok();
    let secs = at("vmstat_i_2_at")?.checked_sub(at("vmstat_i_1_at")?)?;
    if secs == 0 {
        return None;
    }
    let rated = later
        .iter()
        .map(|v| {
            let before = first.iter().find(|b| b.irq == v.irq && b.name == v.name);
            let rate = before.map_or(v.rate, |b| v.total.saturating_sub(b.total) / secs);
            VmstatIrq { rate, ..v.clone() }
        })
        .collect();
    Some((rated, secs))
}

/// Parses whatever files are present.
pub fn snapshot(inputs: &FreeBsdInputs) -> Result<FreeBsdSnapshot, ParseError> {
    let get = |name: &str| inputs.get(name).map(String::as_str);
    let kv = |name: &str| get(name).map(parse_kv).unwrap_or_default();
    let first = get("vmstat-i.txt").map(parse_vmstat_i).transpose()?;
    let later = get("vmstat-i-2.txt").map(parse_vmstat_i).transpose()?;
    let capture = kv("capture.txt");
    let uptime_secs = first.as_deref().and_then(uptime);
    let (interrupts, rates_over_secs) = match (&first, &later) {
        (Some(f), Some(l)) => match measured(f, l, &capture) {
            Some((rated, secs)) => (Some(rated), Some(secs)),
            None => (first.clone(), None),
        },
        _ => (first.clone().or(later), None),
    };
    let snap = FreeBsdSnapshot {
        uptime_secs,
        interrupts,
        rates_over_secs,
        mbufs: get("netstat-m.txt").map(parse_netstat_m).transpose()?,
        sysctl: kv("sysctl.txt"),
        loader_conf: kv("loader.conf"),
        sysctl_conf: kv("sysctl.conf"),
        rc_conf: kv("rc.conf"),
        cpus: get("top.txt").map(parse_top).transpose()?,
        processes: get("top.txt").map(parse_top_processes).unwrap_or_default(),
        nat: IpfwNat {
            instances: get("ipfw-nat.txt").map(parse_nat_config),
            rules: get("ipfw.txt").map(parse_rules),
        },
        capture,
        interfaces: get("ifconfig.txt").map(parse_ifconfig),
        dmesg: get("dmesg.txt").map(parse_dmesg).unwrap_or_default(),
        smt_groups: get("sysctl.txt").map(parse_smt_groups).unwrap_or_default(),
        missing: FILES
            .iter()
            .filter(|f| !inputs.contains_key(**f))
            .map(|f| f.to_string())
            .collect(),
    };
    check_numbers(inputs, &snap)?;
    Ok(snap)
}
