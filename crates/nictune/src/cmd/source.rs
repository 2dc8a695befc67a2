//! Where `show`, `doctor` and `capture` read the host from: the shared `--netns`, `--root`
//! and `--os` options and `--interval`, checked without touching the system, then resolved
//! into a live Linux host, a Linux capture or a FreeBSD capture.

use crate::output::{Ctx, HintExt};
use anyhow::{Context, Result};
use nictune_core::error::InvalidInput;
use nictune_core::units::Nanos;
use nictune_core::{input, names};
use nictune_host::freebsd::{self, FreeBsdInputs, FreeBsdSnapshot};
use nictune_host::rates::{self, Rates};
use nictune_host::read::HostRead;
use nictune_host::snapshot::{self, Counters, HostSnapshot};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Which operating system a `--root` capture comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Os {
    Linux,
    Freebsd,
}

/// Where the host's inputs come from: shared by show, capture and doctor.
#[derive(Debug, clap::Args)]
pub struct SourceArgs {
    /// Read inside network namespace NAME (as `ip -n NAME`; needs root).
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
    /// Read a capture directory instead of the live system (`nictune capture` output, or
    /// FreeBSD command outputs with --os freebsd).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Operating system of the host or capture.
    #[arg(long, value_enum, default_value = "linux")]
    pub os: Os,
}

/// A resolved source.
pub enum Host {
    /// The live system (inside `--netns`) or a `nictune capture` directory.
    Linux(Box<dyn HostRead>),
    /// FreeBSD command output captured in a directory.
    Freebsd(Box<FreeBsdSnapshot>),
}

/// Checks the source flags and `--interval` together, without touching the system.
/// `capture_hint` is the hint for `--interval` with `--root`.
pub fn check(
    source: &SourceArgs,
    interval: Option<Nanos>,
    capture_hint: &str,
) -> Result<Option<Nanos>> {
    let interval = interval.map(check_interval).transpose()?;
    check_source(source)?;
    if interval.is_some() && source.root.is_some() {
        return Err(InvalidInput::new(
            "--interval",
            "with --root",
            "live hosts only",
        ))
        .hint(capture_hint.to_string());
    }
    Ok(interval)
}

/// Checks the source flags against each other, without touching the system.
pub fn check_source(source: &SourceArgs) -> Result<()> {
    if let Some(name) = &source.netns {
        check_netns_name(name)?;
        if source.root.is_some() {
            return Err(InvalidInput::new(
                "--netns",
                name,
                "not together with --root",
            ))
            .hint("a capture already belongs to one namespace; drop --netns");
        }
    }
    if source.os == Os::Freebsd && source.root.is_none() {
        return freebsd_needs_root();
    }
    Ok(())
}

/// Resolves checked flags into the host to read.
pub fn open(source: &SourceArgs) -> Result<Host> {
    match (source.os, &source.root) {
        (Os::Freebsd, Some(dir)) => Ok(Host::Freebsd(Box::new(read_freebsd(dir)?))),
        (Os::Freebsd, None) => freebsd_needs_root(),
        (Os::Linux, _) => open_linux(source).map(Host::Linux),
    }
}

/// The Linux host to read: a capture with `--root`, else the live system (inside `--netns`).
pub fn open_linux(source: &SourceArgs) -> Result<Box<dyn HostRead>> {
    if let Some(dir) = &source.root {
        let (host, _manifest) = nictune_linux::capture::load(dir)
            .hint("point --root at a directory written by `nictune capture`")
            .with_context(|| format!("reading capture {}", dir.display()))?;
        return Ok(Box::new(host));
    }
    if let Some(name) = &source.netns {
        nictune_linux::netns::enter(name).hint(format!(
            "check `ip netns list` shows {name:?} and run as root"
        ))?;
    }
    Ok(Box::new(nictune_linux::LinuxHost::live()))
}

/// Waits `wait`, reads the counters again and returns the rates since `first`.
pub fn sample_rates(host: &dyn HostRead, first: &Counters, wait: Nanos, ctx: &Ctx) -> Rates {
    let progress = ctx.progress();
    progress.start(1, "sampling");
    let started = Instant::now();
    std::thread::sleep(std::time::Duration::from_nanos(wait.0));
    let second = snapshot::build_counters(host);
    progress.finish();
    let elapsed = Nanos(started.elapsed().as_nanos() as u64);
    rates::between(first, &second, elapsed)
}

/// Every interface asked for must be in the snapshot; the error lists the ones there are.
pub fn check_ifaces(ifaces: &[String], host: &dyn HostRead, snap: &HostSnapshot) -> Result<()> {
    let missing: Vec<&str> = ifaces
        .iter()
        .filter(|i| snap.nic(i).is_none())
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let here = host.dir("/sys/class/net").unwrap_or_default().join(", ");
    Err(InvalidInput::new(
        "interface",
        missing.join(", "),
        "an existing interface",
    ))
    .hint(format!("interfaces here: {here}"))
}

/// Reads the FreeBSD capture files that exist in `dir`.
fn read_freebsd(dir: &Path) -> Result<FreeBsdSnapshot> {
    if !dir.is_dir() {
        return Err(InvalidInput::new("--root", dir.display(), "a directory")).hint(
            "point --root at a directory holding vmstat-i.txt, netstat-m.txt, sysctl.txt, ...",
        );
    }
    let mut inputs = FreeBsdInputs::new();
    for name in freebsd::FILES {
        let path = dir.join(name);
        if path.is_file() {
            let text = input::read_file(&path, input::CAPTURE_FILE)?;
            inputs.insert(name.to_string(), text);
        }
    }
    if inputs.is_empty() {
        return Err(InvalidInput::new(
            "--root",
            dir.display(),
            "a directory with FreeBSD captures",
        ))
        .hint(format!("expected any of: {}", freebsd::FILES.join(", ")));
    }
    freebsd::snapshot(&inputs)
        .hint(
            "the files hold FreeBSD command output as captured; correct or remove the value named",
        )
        .with_context(|| format!("parsing the capture in {}", dir.display()))
}

fn freebsd_needs_root<T>() -> Result<T> {
    Err(InvalidInput::new("--os", "freebsd", "only with --root DIR"))
        .hint("FreeBSD is read from captured command output: --os freebsd --root DIR")
}

/// A network-namespace name, by the one rule in `nictune_core::names`.
pub fn check_netns_name(name: &str) -> Result<()> {
    names::check_netns(name).hint("list namespaces with `ip netns list`")
}

/// An interface name, by the one rule in `nictune_core::names`.
pub fn check_iface_name(name: &str) -> Result<()> {
    names::check_iface(name)
        .hint("give the name as `ip link` lists it (eth0, enp3s0f1); `nictune show` lists the interfaces here")
}

/// Every interface name of `ifaces` by the same rule.
pub fn check_iface_names(ifaces: &[String]) -> Result<Vec<String>> {
    ifaces.iter().try_for_each(|i| check_iface_name(i))?;
    // `show eth0 eth0` shows eth0 once.
    let mut unique: Vec<String> = Vec::new();
    for i in ifaces {
        if !unique.contains(i) {
            unique.push(i.clone());
        }
    }
    Ok(unique)
}

/// The interfaces a FreeBSD capture knows: those of `ifconfig -a` and of `vmstat -i`'s
/// sources (`igb0:que 0`).
fn freebsd_ifaces(snap: &FreeBsdSnapshot) -> Vec<String> {
    let mut known: Vec<String> = Vec::new();
    let from_ifconfig = snap.interfaces.iter().flatten().map(|i| i.name.clone());
    let from_vmstat = snap.interrupts.iter().flatten().filter_map(|v| {
        let (dev, _) = v.name.split_once(':')?;
        dev.ends_with(|c: char| c.is_ascii_digit())
            .then(|| dev.to_string())
            .filter(|d| !d.starts_with("cpu"))
    });
    for name in from_ifconfig.chain(from_vmstat) {
        if !known.contains(&name) {
            known.push(name);
        }
    }
    known
}

/// Interfaces named on the command line must be in the FreeBSD capture, as they must exist
/// on a Linux host ([`check_ifaces`]).
pub fn check_freebsd_ifaces(ifaces: &[String], snap: &FreeBsdSnapshot) -> Result<()> {
    let known = freebsd_ifaces(snap);
    let missing: Vec<&str> = ifaces
        .iter()
        .filter(|i| !known.contains(i))
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let hint = if known.is_empty() {
        "the capture lists no interfaces (no ifconfig.txt or vmstat-i.txt): drop the names"
            .to_string()
    } else {
        format!("interfaces in the capture: {}", known.join(", "))
    };
    Err(InvalidInput::new(
        "interface",
        missing.join(", "),
        "an interface of the capture",
    ))
    .hint(hint)
}

/// The capture narrowed to `ifaces` (all of it when none are named): their `ifconfig`
/// entries and interrupt sources; host-wide values stay.
pub fn freebsd_only(snap: &FreeBsdSnapshot, ifaces: &[String]) -> FreeBsdSnapshot {
    let mut snap = snap.clone();
    if ifaces.is_empty() {
        return snap;
    }
    let ours = |name: &str| {
        ifaces
            .iter()
            .any(|i| name.split_once(':').map_or(name, |(d, _)| d) == i)
    };
    if let Some(list) = &mut snap.interfaces {
        list.retain(|i| ours(&i.name));
    }
    if let Some(list) = &mut snap.interrupts {
        list.retain(|v| ours(&v.name));
    }
    snap
}

/// `--interval`: at least a millisecond and at most an hour.
fn check_interval(interval: Nanos) -> Result<Nanos> {
    let (min, max) = (Nanos::from_millis(1), Nanos::from_secs(3600));
    nictune_core::duration::in_range("--interval", interval, min, max).hint("try --interval 1s")
}
