//! `nictune doctor`: not built yet.

use super::show::SourceArgs;
use crate::output::{Ctx, Outcome};
use anyhow::Result;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<Outcome> {
    super::not_yet("doctor")
}

/// `show --os freebsd`.
pub fn show_freebsd(_source: &SourceArgs, _ctx: &Ctx) -> Result<Outcome> {
    super::not_yet("show --os freebsd")
}
