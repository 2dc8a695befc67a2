//! `nictune vm-agent` (hidden): runs inside a real-driver testbed guest and answers the
//! host's control requests on a virtio-serial port. Not for people: the guest's `/init`
//! starts it.

use crate::output::{Ctx, Outcome};
use anyhow::{Context, Result};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The virtio-serial port's name.
    #[arg(long, default_value = nictune_vm::image::AGENT_PORT)]
    pub port: String,
}

pub fn run(args: Args, _ctx: &Ctx) -> Result<Outcome> {
    nictune_vm::agent::serve(&args.port).context("serving the testbed's control channel")?;
    Ok(Outcome::Success)
}
