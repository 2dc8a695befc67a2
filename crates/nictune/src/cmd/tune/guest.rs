//! `nictune tune --testbed e1000|e1000e`: the workload checked, then one call into
//! [`nictune_live::tune::guest`] (boot the guest, or two with `--both-ends`, run the loop
//! with the guest's module parameters as the target — or with `--runtime` its ethtool and
//! NAPI settings through its own change session — remove the guests whatever happens), and
//! the results written and shown. The host's own settings are never touched.

use super::live::test_kind;
use super::{finish, session_error, Checked};
use crate::cmd::testbed;
use crate::output::{Ctx, Outcome};
use anyhow::{Context, Result};
use nictune_live::tune::guest::{tune_guest, GuestError, GuestTune};
use nictune_tune::knob::Driver;
use nictune_tune::session::TuneConfig;

/// Runs a tune against a fresh guest running `driver`.
pub fn run_guest(c: &Checked, config: &TuneConfig, driver: Driver, ctx: &Ctx) -> Result<Outcome> {
    let t = GuestTune {
        config,
        test: test_kind(&c.workload)?,
        driver,
        both_ends: c.both_ends,
        runtime: c.runtime,
        privilege: ctx.privilege,
        nictune: &testbed::nictune_exe()?,
        out: &c.out,
    };
    let progress = ctx.progress();
    let end = tune_guest(&t, progress.as_ref()).map_err(guest_error)?;
    let shown = finish(c, &end.outcome.map_err(guest_error)?, ctx)?;
    if let Some(released) = end.released {
        released.context(match c.both_ends {
            true => "the tune finished, but a guest did not confirm it put its settings back",
            false => "the tune finished, but the guest did not confirm it put its settings back",
        })?;
    }
    end.removed.context(match c.both_ends {
        true => "the tune finished but its guests could not be removed",
        false => "the tune finished but its guest could not be removed",
    })?;
    Ok(shown)
}

/// A failed guest tune with what to do next.
fn guest_error(e: GuestError) -> anyhow::Error {
    match e {
        GuestError::Boot(e) => testbed::guest_hint(e),
        GuestError::Session(e) => session_error(e),
        e => anyhow::Error::new(e),
    }
}
