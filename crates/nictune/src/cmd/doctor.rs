//! `nictune doctor`: findings with severity, evidence, a plain explanation and the fix as
//! commands, for a live Linux host, a Linux capture (`--root`) or a FreeBSD capture
//! (`--os freebsd --root DIR`). Exit 0 when nothing is at warning level or above, 1 when
//! something is, 2 on errors.

use super::source::{self, sample_rates, Host, SourceArgs};
use crate::output::{Ctx, Outcome};
use anyhow::Result;
use nictune_core::units::Nanos;
use nictune_host::doctor::{self, Finding};
use nictune_host::read::HostRead;
use nictune_host::snapshot;
use serde::Serialize;

#[derive(Debug, clap::Args)]
// `--connections -5` reaches the flag's own check instead of reading as an unknown flag.
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// Interfaces to examine (default: all).
    #[arg(value_name = "IFACE")]
    pub ifaces: Vec<String>,
    /// Sample counters twice, this far apart, to tell growing drops and rates from old ones
    /// (live Linux only): seconds (1) or with a unit (1s, 500ms).
    #[arg(long, value_name = "DURATION", value_parser = nictune_core::duration::arg)]
    pub interval: Option<Nanos>,
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
    let ifaces = source::check_iface_names(&args.ifaces)?;
    let interval = source::check(
        &args.source,
        args.interval,
        "drop --interval: a capture holds one sample",
    )?;
    let (os, findings) = match source::open(&args.source)? {
        // The FreeBSD rules weigh the whole capture (clusters are shared by every port):
        // named interfaces must be in it, and the diagnosis stays host-wide.
        Host::Freebsd(snap) => {
            source::check_freebsd_ifaces(&ifaces, &snap)?;
            ("freebsd", doctor::freebsd::run(&snap))
        }
        Host::Linux(host) => (
            "linux",
            linux_findings(&ifaces, host.as_ref(), interval, ctx)?,
        ),
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

fn linux_findings(
    ifaces: &[String],
    host: &dyn HostRead,
    interval: Option<Nanos>,
    ctx: &Ctx,
) -> Result<Vec<Finding>> {
    let snap = snapshot::build(host, ifaces);
    source::check_ifaces(ifaces, host, &snap)?;
    let rates = interval.map(|wait| sample_rates(host, &snap.counters, wait, ctx));
    let caveats = doctor::linux::caveats::from_catalog;
    Ok(doctor::linux::run(&snap, rates.as_ref(), &caveats))
}
