//! `nictune completions` and `nictune manpage`: generated from the same definitions as `--help`.

use crate::cli::Cli;
use crate::output::{Ctx, Outcome};
use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;
use std::io::Write;

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to generate for.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, clap::Args)]
pub struct ManpageArgs {}

pub fn completions(args: CompletionsArgs, _ctx: &Ctx) -> Result<Outcome> {
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "nictune", &mut buf);
    write_stdout(&buf)
}

pub fn manpage(_args: ManpageArgs, _ctx: &Ctx) -> Result<Outcome> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut buf)?;
    write_stdout(&buf)
}

fn write_stdout(bytes: &[u8]) -> Result<Outcome> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(Outcome::Success)
}
