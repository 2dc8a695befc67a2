//! `nictune doctor`: findings with severity, evidence, a plain explanation and the fix as
//! commands, for a live Linux host, a Linux capture (`--root`) or a FreeBSD capture
//! (`--os freebsd --root DIR`). Exit 0 when nothing is at warning level or above, 1 when
//! something is, 2 on errors.

use super::show::{check_interval, check_source, invalid, open_host, sample_rates, Os, SourceArgs};
use crate::output::{Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use nictune_core::units::Nanos;
use nictune_host::doctor::{self, Finding};
use nictune_host::freebsd::{self, FreeBsdInputs, FreeBsdSnapshot};
use nictune_host::snapshot;
use serde::Serialize;
use std::path::Path;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Interfaces to examine (default: all).
    #[arg(value_name = "IFACE")]
    pub ifaces: Vec<String>,
    /// Sample counters twice, SECONDS apart, to tell growing drops and rates from old ones
    /// (live Linux only).
    #[arg(long, value_name = "SECONDS")]
    pub interval: Option<f64>,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// `nictune.doctor/v1`.
#[derive(Debug, Serialize)]
struct DoctorBody<'a> {
    os: &'static str,
    findings: &'a [Finding],
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    let interval = args.interval.map(check_interval).transpose()?;
    check_source(&args.source)?;
    if interval.is_some() && args.source.root.is_some() {
        return Err(invalid("--interval", "with --root", "live hosts only"))
            .hint("drop --interval: a capture holds one sample");
    }
    let (os, findings) = match args.source.os {
        Os::Freebsd => {
            let dir = args
                .source
                .root
                .as_deref()
                .expect("checked: freebsd needs --root");
            ("freebsd", doctor::freebsd::run(&read_freebsd(dir)?))
        }
        Os::Linux => ("linux", linux_findings(&args, interval, ctx)?),
    };
    let body = DoctorBody {
        os,
        findings: &findings,
    };
    ctx.emit("doctor", &body, |b| doctor::render(b.findings))?;
    Ok(if doctor::has_problems(&findings) {
        Outcome::Problems
    } else {
        Outcome::Success
    })
}

fn linux_findings(args: &Args, interval: Option<Nanos>, ctx: &Ctx) -> Result<Vec<Finding>> {
    let host = open_host(&args.source)?;
    let snap = snapshot::build(host.as_ref(), &args.ifaces);
    let rates = interval.map(|wait| sample_rates(host.as_ref(), &snap.counters, wait, ctx));
    let caveats = doctor::linux::caveats::from_catalog;
    Ok(doctor::linux::run(&snap, rates.as_ref(), &caveats))
}

/// Reads the FreeBSD capture files that exist in `dir`.
pub fn read_freebsd(dir: &Path) -> Result<FreeBsdSnapshot> {
    if !dir.is_dir() {
        return Err(invalid("--root", &dir.display().to_string(), "a directory")).hint(
            "point --root at a directory holding vmstat-i.txt, netstat-m.txt, sysctl.txt, ...",
        );
    }
    let mut inputs = FreeBsdInputs::new();
    for name in freebsd::FILES {
        let path = dir.join(name);
        if path.is_file() {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            inputs.insert(name.to_string(), text);
        }
    }
    if inputs.is_empty() {
        return Err(invalid(
            "--root",
            &dir.display().to_string(),
            "a directory with FreeBSD captures",
        ))
        .hint(format!("expected any of: {}", freebsd::FILES.join(", ")));
    }
    freebsd::snapshot(&inputs).with_context(|| format!("parsing the capture in {}", dir.display()))
}

/// `nictune.show/v1` for a FreeBSD capture.
#[derive(Debug, Serialize)]
struct ShowFreeBsd<'a> {
    os: &'static str,
    #[serde(flatten)]
    snapshot: &'a FreeBsdSnapshot,
}

/// `show --os freebsd --root DIR`.
pub fn show_freebsd(source: &SourceArgs, ctx: &Ctx) -> Result<Outcome> {
    let dir = source
        .root
        .as_deref()
        .expect("checked: freebsd needs --root");
    let snap = read_freebsd(dir)?;
    let body = ShowFreeBsd {
        os: "freebsd",
        snapshot: &snap,
    };
    ctx.emit("show", &body, |b| {
        nictune_host::view::render_freebsd(b.snapshot)
    })?;
    Ok(Outcome::Success)
}
