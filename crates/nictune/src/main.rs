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
    let cli = match cli::Cli::try_parse_from(args()) {
        Ok(cli) => cli,
        Err(err) => {
            let cli = <cli::Cli as clap::CommandFactory>::command();
            return output::usage_error(err, &cli, args());
        }
    };
    // The one read of the effective uid; every root check is given this value.
    let privilege = nictune_linux::write::privilege();
    let ctx = output::Ctx::new(cli.global.json, cli.global.quiet, privilege);
    let result = cmd::dispatch(cli.command, &ctx);
    output::finish(&ctx, result)
}

/// The arguments, with `--json` dropped after `help` (`nictune help apply --json`): `help`
/// prints the same text as `--help`, which prints its text with `--json` too.
fn args() -> Vec<std::ffi::OsString> {
    help_without_json(std::env::args_os().collect())
}

fn help_without_json(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let first_word = args
        .iter()
        .skip(1)
        .position(|a| !a.to_string_lossy().starts_with('-'));
    if first_word.is_some_and(|i| args[i + 1] == "help") {
        args.retain(|a| a != "--json");
    }
    args
}

#[cfg(test)]
mod tests {
    use super::help_without_json;

    #[test]
    fn help_takes_json_as_help_does() {
        let words = |s: &str| s.split(' ').map(Into::into).collect::<Vec<_>>();
        assert_eq!(
            help_without_json(words("nictune --json help apply --json")),
            words("nictune help apply")
        );
        assert_eq!(
            help_without_json(words("nictune --json check help=1")),
            words("nictune --json check help=1")
        );
    }
}
