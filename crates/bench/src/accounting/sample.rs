//! One moment's counters: host-wide files (/proc/stat, interrupts, softirqs, softnet) and
//! the files that belong to a network namespace (/proc/net/dev, /proc/net/netstat).
//!
//! Reading is split from parsing: [`ProcTexts`] is what a reader returned, [`Sample`] is it
//! parsed, so tests feed captured files and the live path reads `/proc`.

use crate::error::{BenchError, Result};
use nictune_core::input;
use nictune_host::procfs::{
    parse_interrupts, parse_net_dev, parse_softirqs, parse_softnet_stat, parse_stat,
    NetDevCounters, ProcInterrupts, ProcSoftirqs, ProcStat, SoftnetRow,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The raw text of every file one sample needs.
#[derive(Debug, Clone, Default)]
pub struct ProcTexts {
    /// `/proc/stat`: per-CPU time split.
    pub stat: String,
    /// `/proc/interrupts`: per-CPU counts of each interrupt line.
    pub interrupts: String,
    /// `/proc/softirqs`: per-CPU counts of each softirq kind.
    pub softirqs: String,
    /// `/proc/net/softnet_stat`: per-CPU NAPI/backlog counters.
    pub softnet: String,
    /// `/proc/net/dev` of the side's namespace.
    pub net_dev: String,
    /// `/proc/net/netstat` of the side's namespace (may be empty: not every kernel has it).
    pub netstat: String,
    /// Each interface of the namespace that hangs below a device, with that device's sysfs
    /// name (`("eth0", "virtio2")`): how a virtio-net queue's interrupt line, which names its
    /// device and not the interface, is told apart from another virtio NIC's.
    pub parents: Vec<(String, String)>,
}

/// The parsed counters.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Parsed [`ProcTexts::stat`].
    pub stat: ProcStat,
    /// Parsed [`ProcTexts::interrupts`].
    pub interrupts: ProcInterrupts,
    /// Parsed [`ProcTexts::softirqs`].
    pub softirqs: ProcSoftirqs,
    /// Parsed [`ProcTexts::softnet`], one row per CPU.
    pub softnet: Vec<SoftnetRow>,
    /// Parsed [`ProcTexts::net_dev`], one entry per interface.
    pub net_dev: Vec<NetDevCounters>,
    /// `BusyPollRxPackets` from [`ProcTexts::netstat`]; `None` when the file or the counter is
    /// missing.
    pub busy_poll_rx: Option<u64>,
    /// [`ProcTexts::parents`]: interface name to its device's sysfs name.
    pub parents: BTreeMap<String, String>,
}

impl Sample {
    /// Parses `texts`; a file that does not parse names itself in the error.
    pub fn parse(t: &ProcTexts) -> Result<Sample> {
        let bad = |e: nictune_host::ParseError| {
            BenchError::system(
                "parsing",
                e.input,
                std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
            )
        };
        Ok(Sample {
            stat: parse_stat(&t.stat).map_err(bad)?,
            interrupts: parse_interrupts(&t.interrupts).map_err(bad)?,
            softirqs: parse_softirqs(&t.softirqs).map_err(bad)?,
            softnet: parse_softnet_stat(&t.softnet).map_err(bad)?,
            net_dev: parse_net_dev(&t.net_dev).map_err(bad)?,
            busy_poll_rx: nictune_host::procfs::netstat::busy_poll_rx_packets(&t.netstat),
            parents: t.parents.iter().cloned().collect(),
        })
    }
}

fn read(path: &Path) -> Result<String> {
    input::read_file(path, input::KERNEL_FILE).map_err(|e| BenchError::read("reading", e))
}

/// Reads the host-wide files from `/proc`, and the namespace files of `netns` (the calling
/// thread's own namespace when `None`, through `/proc/thread-self/net`).
pub fn read_live(netns: Option<&PathBuf>) -> Result<ProcTexts> {
    let (net_dev, netstat, parents) = read_netns_files(netns)?;
    Ok(ProcTexts {
        stat: read(Path::new("/proc/stat"))?,
        interrupts: read(Path::new("/proc/interrupts"))?,
        softirqs: read(Path::new("/proc/softirqs"))?,
        softnet: read(Path::new("/proc/net/softnet_stat"))?,
        net_dev,
        netstat,
        parents,
    })
}

/// What [`read_netns_files`] returns: `/proc/net/dev`, `/proc/net/netstat` and
/// [`ProcTexts::parents`].
type NetnsTexts = (String, String, Vec<(String, String)>);

/// `/proc/net/{dev,netstat}` and the interfaces' parent devices as seen from inside `netns`
/// (read by a short-lived thread that enters it, so the caller stays where it is).
fn read_netns_files(netns: Option<&PathBuf>) -> Result<NetnsTexts> {
    let netns = netns.cloned();
    let reader = move || -> Result<NetnsTexts> {
        crate::net::server::enter(&netns, None)?;
        let dev = read(Path::new("/proc/thread-self/net/dev"))?;
        let netstat = read(Path::new("/proc/thread-self/net/netstat")).unwrap_or_default();
        let names: Vec<String> = parse_net_dev(&dev)
            .map(|d| d.into_iter().map(|d| d.name).collect())
            .unwrap_or_default();
        let parents = parents(&names, netns.is_none());
        Ok((dev, netstat, parents))
    };
    std::thread::spawn(reader)
        .join()
        .map_err(|_| BenchError::Worker("procfs reader".into()))?
}

/// The parent device of each of `names` that has one, as rtnetlink reports it in the
/// calling thread's namespace (IFLA_PARENT_DEV_NAME, Linux 5.14 and later). Older kernels do
/// not send it; there, in the caller's own namespace (`own_netns`), the device is read from
/// sysfs (`/sys/class/net/IF/device`), trusted only when sysfs shows the same ifindex, since
/// sysfs shows the namespace it was mounted in. A name that cannot be resolved is left out:
/// its device's lines are then not counted as the measured NIC's.
fn parents(names: &[String], own_netns: bool) -> Vec<(String, String)> {
    let Ok(sock) = nictune_linux::rtnetlink::RouteSocket::open() else {
        return Vec::new();
    };
    names
        .iter()
        .filter(|n| n.as_str() != "lo")
        .filter_map(|name| {
            let link = nictune_linux::rtnetlink::link::request::get(&sock, name).ok()?;
            let parent = link.parent_device().or_else(|| {
                own_netns
                    .then(|| sysfs_parent(name, link.index()))
                    .flatten()
            })?;
            Some((name.clone(), parent))
        })
        .collect()
}

/// The last component of `/sys/class/net/NAME/device`, when sysfs's NAME has `ifindex`.
fn sysfs_parent(name: &str, ifindex: u32) -> Option<String> {
    let base = Path::new("/sys/class/net").join(name);
    let shown = std::fs::read_to_string(base.join("ifindex")).ok()?;
    if shown.trim().parse::<u32>().ok()? != ifindex {
        return None;
    }
    let target = std::fs::read_link(base.join("device")).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}
