//! `nictune apply`, `confirm`, `revert`, `status`: not built yet.

use crate::output::{Ctx, Outcome};
use anyhow::Result;

#[derive(Debug, clap::Args)]
pub struct Args {}

#[derive(Debug, clap::Args)]
pub struct ConfirmArgs {}

#[derive(Debug, clap::Args)]
pub struct RevertArgs {}

#[derive(Debug, clap::Args)]
pub struct StatusArgs {}

pub fn run(_args: Args, _ctx: &Ctx) -> Result<Outcome> {
    super::not_yet("apply")
}

pub fn confirm(_args: ConfirmArgs, _ctx: &Ctx) -> Result<Outcome> {
    super::not_yet("confirm")
}

pub fn revert(_args: RevertArgs, _ctx: &Ctx) -> Result<Outcome> {
    super::not_yet("revert")
}

pub fn status(_args: StatusArgs, _ctx: &Ctx) -> Result<Outcome> {
    super::not_yet("status")
}
