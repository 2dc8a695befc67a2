//! `nictune show`: every NIC, queue, NAPI instance, IRQ and CPU with the moderation settings,
//! and with `--interval` the rates between two samples; or a FreeBSD capture.

use super::source::{self, sample_rates, Host, SourceArgs};
use crate::output::{Ctx, Outcome};
use anyhow::Result;
use nictune_core::units::Nanos;
use nictune_host::freebsd::FreeBsdSnapshot;
use nictune_host::rates::Rates;
use nictune_host::read::HostRead;
use nictune_host::snapshot::{self, HostSnapshot};
use serde::Serialize;

#[derive(Debug, clap::Args)]
// `--connections -5` reaches the flag's own check instead of reading as an unknown flag.
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// Interfaces to show (default: all).
    #[arg(value_name = "IFACE")]
    pub ifaces: Vec<String>,
    /// Sample the counters twice, this far apart, and show interrupt, softirq, packet, drop
    /// and squeeze rates: seconds (1) or with a unit (1s, 500ms).
    #[arg(long, value_name = "DURATION", value_parser = nictune_core::duration::arg)]
    pub interval: Option<Nanos>,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// `nictune.show/v3`: the snapshot, plus rates with `--interval`.
#[derive(Debug, Serialize)]
struct ShowBody<'a> {
    os: &'static str,
    #[serde(flatten)]
    snapshot: &'a HostSnapshot,
    rates: Option<&'a Rates>,
}

/// `nictune.show/v3` for a FreeBSD capture.
#[derive(Debug, Serialize)]
struct ShowFreeBsd<'a> {
    os: &'static str,
    #[serde(flatten)]
    snapshot: &'a FreeBsdSnapshot,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    let ifaces = source::check_iface_names(&args.ifaces)?;
    let interval = source::check(
        &args.source,
        args.interval,
        "a capture holds one sample; run `show --interval` on the host itself",
    )?;
    match source::open(&args.source)? {
        Host::Linux(host) => show_linux(&ifaces, host.as_ref(), interval, ctx),
        Host::Freebsd(snap) => {
            source::check_freebsd_ifaces(&ifaces, &snap)?;
            show_freebsd(&source::freebsd_only(&snap, &ifaces), ctx)
        }
    }
}

fn show_linux(
    ifaces: &[String],
    host: &dyn HostRead,
    interval: Option<Nanos>,
    ctx: &Ctx,
) -> Result<Outcome> {
    let snap = snapshot::build(host, ifaces);
    source::check_ifaces(ifaces, host, &snap)?;
    let rates = interval.map(|wait| sample_rates(host, &snap.counters, wait, ctx));
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

fn show_freebsd(snap: &FreeBsdSnapshot, ctx: &Ctx) -> Result<Outcome> {
    let body = ShowFreeBsd {
        os: "freebsd",
        snapshot: snap,
    };
    ctx.emit("show", &body, |b| {
        nictune_host::view::render_freebsd(b.snapshot)
    })?;
    Ok(Outcome::Success)
}
