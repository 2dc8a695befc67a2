//! `nictune`: see, predict, measure, change safely, persist and tune NIC interrupt moderation.
//!
//! The binary is thin: clap parses the arguments ([`cli`]), each subcommand module in [`cmd`]
//! checks what was typed without touching the system, then makes one call into the library
//! crates. [`output`] owns the conventions every command shares: JSON envelope, exit codes,
//! error rendering with hints, broken pipes, progress bars.
//!
//! The doc comments on clap's argument structs are the `--help` text, printed as written
//! (`[settings]`, `HOST[:PORT]`, `nictune.<command>/v1`), not rustdoc markup.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod cli;
mod cmd;
mod output;

use clap::Parser as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let cli = <cli::Cli as clap::CommandFactory>::command();
            return output::usage_error(err, &cli, std::env::args_os());
        }
    };
    // The one read of the effective uid; every root check is given this value.
    let privilege = nictune_linux::write::privilege();
    let ctx = output::Ctx::new(cli.global.json, cli.global.quiet, privilege);
    let result = cmd::dispatch(cli.command, &ctx);
    output::finish(&ctx, result)
}
