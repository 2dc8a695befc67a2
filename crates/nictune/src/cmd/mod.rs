//! One module per subcommand. Each has an `Args` struct (clap) and a `run` function that
//! checks the arguments, makes one call into the library crates and renders the result.

pub mod apply;
pub mod bench;
pub mod capture;
pub mod check;
pub mod completion;
pub mod doctor;
pub mod explain;
pub mod export;
pub mod meta;
pub mod serve;
pub mod show;
pub mod sim;
pub mod sim_cases;
mod source;
pub mod testbed;
pub mod tune;
pub mod vm_agent;

use crate::cli::Command;
use crate::output::{Ctx, Outcome};
use anyhow::Result;

/// Runs the chosen subcommand.
pub fn dispatch(command: Command, ctx: &Ctx) -> Result<Outcome> {
    // A journal left by a crash is reported by every command; the change commands check
    // their own --state-dir and refuse or recover on their own.
    if !matches!(
        command,
        Command::Apply(_)
            | Command::Confirm(_)
            | Command::Revert(_)
            | Command::Status(_)
            | Command::VmAgent(_)
    ) {
        apply::warn_on_leftover_journal();
    }
    match command {
        Command::Explain(a) => explain::run(a, ctx),
        Command::Check(a) => check::run(a, ctx),
        Command::Sim(a) => sim::run(a, ctx),
        Command::Show(a) => show::run(a, ctx),
        Command::Capture(a) => capture::run(a, ctx),
        Command::Doctor(a) => doctor::run(a, ctx),
        Command::Bench(a) => bench::run(a, ctx),
        Command::Serve(a) => serve::run(a, ctx),
        Command::Apply(a) => apply::run(a, ctx),
        Command::Confirm(a) => apply::confirm(a, ctx),
        Command::Revert(a) => apply::revert(a, ctx),
        Command::Status(a) => apply::status(a, ctx),
        Command::Export(a) => export::run(a, ctx),
        Command::Tune(a) => tune::run(a, ctx),
        Command::Completions(a) => meta::completions(a, ctx),
        Command::Manpage(a) => meta::manpage(a, ctx),
        Command::VmAgent(a) => vm_agent::run(a, ctx),
    }
}
