//! FreeBSD, offline: parsers for captured command output and config files, and the
//! [`FreeBsdSnapshot`] the doctor reads. A capture directory holds any of
//! [`FILES`]; missing ones are reported, not fatal.

mod dmesg;
mod ifconfig;
mod kv;
mod netstat_m;
mod top;
mod topology;
mod vmstat_i;

pub use dmesg::{parse_dmesg, DmesgFacts};
pub use ifconfig::{parse_ifconfig, IfInfo};
pub use kv::parse_kv;
pub use netstat_m::{parse_netstat_m, MbufStats};
pub use top::{parse_top, TopCpu};
pub use topology::parse_smt_groups;
pub use vmstat_i::{parse_vmstat_i, VmstatIrq};

use crate::error::ParseError;
use nictune_core::input;
use serde::Serialize;
use std::collections::BTreeMap;

/// The file names a FreeBSD capture directory may hold.
pub const FILES: [&str; 9] = [
    "vmstat-i.txt",
    "netstat-m.txt",
    "sysctl.txt",
    "top.txt",
    "ifconfig.txt",
    "loader.conf",
    "sysctl.conf",
    "rc.conf",
    "dmesg.txt",
];

/// The texts of a capture, by file name (absent files are simply not in the map).
pub type FreeBsdInputs = BTreeMap<String, String>;

/// Everything read from a FreeBSD capture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FreeBsdSnapshot {
    pub interrupts: Option<Vec<VmstatIrq>>,
    pub mbufs: Option<MbufStats>,
    /// Runtime values from `sysctl -a`.
    pub sysctl: BTreeMap<String, String>,
    pub loader_conf: BTreeMap<String, String>,
    pub sysctl_conf: BTreeMap<String, String>,
    pub rc_conf: BTreeMap<String, String>,
    pub cpus: Option<Vec<TopCpu>>,
    pub interfaces: Option<Vec<IfInfo>>,
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

    /// A setting parsed as an integer.
    pub fn setting_i64(&self, key: &str) -> Option<i64> {
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

/// Counts the doctor sizes its work by must be sane: `hw.ncpu: -1` once meant 4 billion CPUs.
fn check_counts(snap: &FreeBsdSnapshot) -> Result<(), ParseError> {
    let sources = [
        (&snap.sysctl, "sysctl -a"),
        (&snap.sysctl_conf, "sysctl.conf"),
        (&snap.loader_conf, "loader.conf"),
    ];
    for (map, input_name) in sources {
        let Some(n) = map
            .get("hw.ncpu")
            .and_then(|v| v.trim().parse::<i128>().ok())
        else {
            continue;
        };
        input::in_range("hw.ncpu", n, 1, input::MAX_CPUS)
            .map_err(|e| ParseError::new(input_name, 0, e.to_string()))?;
    }
    if let Some(cpus) = &snap.cpus {
        input::in_range("CPU lines", cpus.len() as i128, 0, input::MAX_CPUS)
            .map_err(|e| ParseError::new("top -SIP", 0, e.to_string()))?;
    }
    Ok(())
}

/// Parses whatever files are present.
pub fn snapshot(inputs: &FreeBsdInputs) -> Result<FreeBsdSnapshot, ParseError> {
    let get = |name: &str| inputs.get(name).map(String::as_str);
    let kv = |name: &str| get(name).map(parse_kv).unwrap_or_default();
    let snap = FreeBsdSnapshot {
        interrupts: get("vmstat-i.txt").map(parse_vmstat_i).transpose()?,
        mbufs: get("netstat-m.txt").map(parse_netstat_m).transpose()?,
        sysctl: kv("sysctl.txt"),
        loader_conf: kv("loader.conf"),
        sysctl_conf: kv("sysctl.conf"),
        rc_conf: kv("rc.conf"),
        cpus: get("top.txt").map(parse_top).transpose()?,
        interfaces: get("ifconfig.txt").map(parse_ifconfig),
        dmesg: get("dmesg.txt").map(parse_dmesg).unwrap_or_default(),
        smt_groups: get("sysctl.txt").map(parse_smt_groups).unwrap_or_default(),
        missing: FILES
            .iter()
            .filter(|f| !inputs.contains_key(**f))
            .map(|f| f.to_string())
            .collect(),
    };
    check_counts(&snap)?;
    Ok(snap)
}
