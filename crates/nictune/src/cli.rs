//! Command-line definition. `--help`, the man page and shell completions all come from here.

use crate::cmd;
use clap::{Args, Parser, Subcommand};

/// Exit codes: shown at the end of `--help` and as EXIT STATUS in the man pages.
pub const EXIT_STATUS: [(u8, &str); 6] = [
    (0, "success (including \"already in the desired state\")"),
    (
        1,
        "the command ran and found problems: failed checks, doctor findings, thresholds missed",
    ),
    (
        2,
        "usage error, bad input, or runtime error (the message names the cause and a hint)",
    ),
    (
        3,
        "a change failed part-way and every value written was put back",
    ),
    (
        4,
        "a change failed part-way and some values could not be put back: run `nictune revert`",
    ),
    (77, "the command needs root"),
];

fn exit_codes_help() -> String {
    let mut text = "Exit codes:".to_string();
    for (code, meaning) in EXIT_STATUS {
        text.push_str(&format!("\n {code:>2}  {meaning}"));
    }
    text
}

/// See, predict, measure, change safely, persist and tune NIC interrupt moderation.
#[derive(Debug, Parser)]
#[command(name = "nictune", version, about, long_about = None, after_help = exit_codes_help())]
#[command(propagate_version = true, arg_required_else_help = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every subcommand accepts.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Print one JSON document on stdout ({"schema": "nictune.<command>/v1", ...}).
    #[arg(long, global = true)]
    pub json: bool,
    /// No progress bars (they only ever appear on a terminal, on stderr).
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Explain a setting: names, unit, range, defaults per driver, caveats, how to set it.
    Explain(cmd::explain::Args),
    /// Validate KEY=VALUE settings against the catalog and show their conversions.
    Check(cmd::check::Args),
    /// Simulate a scenario: predict latency, throughput, CPU and drops for given settings.
    Sim(cmd::sim::Args),
    /// Show every NIC, queue, NAPI instance, IRQ and CPU with moderation settings and rates.
    Show(cmd::show::Args),
    /// Write every raw input `show` and `doctor` read into a directory (a support bundle).
    Capture(cmd::capture::Args),
    /// Diagnose moderation, binding, ring and buffer problems, with evidence and fixes.
    Doctor(cmd::doctor::Args),
    /// Measure request/response, stream or ping-like traffic with CPU and interrupt accounting.
    Bench(cmd::bench::Args),
    /// Serve bounded benchmark tests to a `nictune bench --peer` client.
    Serve(cmd::serve::Args),
    /// Apply settings as a journaled, verified transaction with optional auto-revert.
    Apply(cmd::apply::Args),
    /// Confirm a pending `apply --confirm-within` change so it is kept.
    Confirm(cmd::apply::ConfirmArgs),
    /// Restore the settings from before the last apply.
    Revert(cmd::apply::RevertArgs),
    /// Show pending, confirmed and interrupted changes.
    Status(cmd::apply::StatusArgs),
    /// Write a profile as native configuration (systemd .link, NetworkManager, tuned, ...).
    Export(cmd::export::Args),
    /// Search for the best moderation settings for an objective, measured, with a report.
    Tune(cmd::tune::Args),
    /// Print a shell completion script.
    Completions(cmd::meta::CompletionsArgs),
    /// Print the man page (roff).
    Manpage(cmd::meta::ManpageArgs),
    /// Inside a real-driver testbed guest: answer the host's control requests.
    #[command(name = "vm-agent", hide = true)]
    VmAgent(cmd::vm_agent::Args),
}
