//! `nictune show`: every NIC, queue, NAPI instance, IRQ and CPU with the moderation settings,
//! and with `--interval` the rates between two samples. Also the shared host-source options
//! (`--root`, `--netns`, `--os`) that `capture` and `doctor` use.

use crate::output::{Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use nictune_core::error::InvalidInput;
use nictune_core::units::Nanos;
use nictune_host::rates::{self, Rates};
use nictune_host::read::HostRead;
use nictune_host::snapshot::{self, Counters, HostSnapshot};
use serde::Serialize;
use std::path::PathBuf;
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

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Interfaces to show (default: all).
    #[arg(value_name = "IFACE")]
    pub ifaces: Vec<String>,
    /// Sample the counters twice, SECONDS apart, and show interrupt, softirq, packet, drop
    /// and squeeze rates.
    #[arg(long, value_name = "SECONDS")]
    pub interval: Option<f64>,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// `nictune.show/v1`: the snapshot, plus rates with `--interval`.
#[derive(Debug, Serialize)]
struct ShowBody<'a> {
    os: &'static str,
    #[serde(flatten)]
    snapshot: &'a HostSnapshot,
    rates: Option<&'a Rates>,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    let interval = args.interval.map(check_interval).transpose()?;
    check_source(&args.source)?;
    if args.source.os == Os::Freebsd {
        return super::doctor::show_freebsd(&args.source, ctx);
    }
    if interval.is_some() && args.source.root.is_some() {
        return Err(invalid("--interval", "with --root", "live hosts only"))
            .hint("a capture holds one sample; run `show --interval` on the host itself");
    }
    let host = open_host(&args.source)?;
    let snap = snapshot::build(host.as_ref(), &args.ifaces);
    check_ifaces(&args.ifaces, host.as_ref(), &snap)?;
    let rates = interval.map(|wait| sample_rates(host.as_ref(), &snap.counters, wait, ctx));
    let body = ShowBody {
        os: "linux",
        snapshot: &snap,
        rates: rates.as_ref(),
    };
    ctx.emit("show", &body, |b| {
        nictune_host::view::render_show(b.snapshot, b.rates)
    })?;
    Ok(Outcome::Success)
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

/// The host to read: a capture with `--root`, else the live system (inside `--netns`).
pub fn open_host(source: &SourceArgs) -> Result<Box<dyn HostRead>> {
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

/// Checks the source flags against each other, without touching the system.
pub fn check_source(source: &SourceArgs) -> Result<()> {
    if let Some(name) = &source.netns {
        check_netns_name(name)?;
        if source.root.is_some() {
            return Err(invalid("--netns", name, "not together with --root"))
                .hint("a capture already belongs to one namespace; drop --netns");
        }
    }
    if source.os == Os::Freebsd && source.root.is_none() {
        return Err(invalid("--os", "freebsd", "only with --root DIR"))
            .hint("FreeBSD is read from captured command output: --os freebsd --root DIR");
    }
    Ok(())
}

fn check_netns_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok {
        return Ok(());
    }
    Err(invalid(
        "--netns",
        name,
        "a namespace name: letters, digits, - _ .",
    ))
    .hint("list namespaces with `ip netns list`")
}

/// `--interval`: more than 0 and at most an hour.
pub fn check_interval(seconds: f64) -> Result<Nanos> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0 {
        return Ok(Nanos::from_secs_f64(seconds));
    }
    Err(invalid(
        "--interval",
        &seconds.to_string(),
        "a number of seconds above 0 and at most 3600",
    ))
    .hint("try --interval 1")
}

fn check_ifaces(ifaces: &[String], host: &dyn HostRead, snap: &HostSnapshot) -> Result<()> {
    let missing: Vec<&str> = ifaces
        .iter()
        .filter(|i| snap.nic(i).is_none())
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let here = host.dir("/sys/class/net").unwrap_or_default().join(", ");
    Err(invalid(
        "interface",
        &missing.join(", "),
        "an existing interface",
    ))
    .hint(format!("interfaces here: {here}"))
}

pub fn invalid(what: &str, value: &str, allowed: &str) -> InvalidInput {
    InvalidInput {
        what: what.to_string(),
        value: value.to_string(),
        allowed: allowed.to_string(),
    }
}
