//! `nictune doctor`: not built yet.

use crate::output::{Ctx, Outcome};
use anyhow::Result;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<Outcome> {
    super::not_yet("doctor")
}
