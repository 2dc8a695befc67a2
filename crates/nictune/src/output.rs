//! Conventions every command shares: the JSON envelope on stdout, human text otherwise,
//! exit codes, error rendering with the cause chain and a hint, broken pipes, progress bars.

use anyhow::Result;
use nictune_core::envelope::Envelope;
use nictune_core::error::Hinted;
use nictune_core::privilege::Privilege;
use nictune_core::progress::{NoProgress, Progress, TerminalBar};
use serde::Serialize;
use std::borrow::Cow;
use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// How a command that ran to the end went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0: done, nothing wrong found.
    Success,
    /// Exit 1: the command ran and found problems (failed checks, findings, missed thresholds).
    Problems,
}

/// Exit code for usage errors, bad input and runtime errors.
pub const EXIT_ERROR: u8 = 2;
/// Exit code when a change failed part-way and every value written was put back.
pub const EXIT_PARTIAL_ROLLED_BACK: u8 = 3;
/// Exit code when a change failed part-way and some values could not be put back: the host
/// needs attention (`nictune revert`).
pub const EXIT_PARTIAL_NOT_ROLLED_BACK: u8 = 4;
/// Exit code when the command needs root (`EX_NOPERM` of sysexits.h).
pub const EXIT_NEEDS_ROOT: u8 = 77;

/// An error that ends the process with `code` instead of [`EXIT_ERROR`]. It reads as the
/// error it wraps (the printed cause chain shows that error once, hint included).
#[derive(Debug)]
pub struct ExitWith {
    code: u8,
    error: anyhow::Error,
}

impl ExitWith {
    /// `error`, ending the process with `code`.
    pub fn wrap(error: anyhow::Error, code: u8) -> anyhow::Error {
        anyhow::Error::new(ExitWith { code, error })
    }
}

impl std::fmt::Display for ExitWith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.error, f)
    }
}

impl std::error::Error for ExitWith {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.error.as_ref())
    }
}

/// Refuses, with exit [`EXIT_NEEDS_ROOT`], unless `privilege` (read once in `main`) is root:
/// `what` says what needs root and why, `hint` what to do instead. The one root check of
/// every command.
pub fn require_root(privilege: Privilege, what: &str, hint: &str) -> Result<()> {
    if privilege.is_root() {
        return Ok(());
    }
    let refusal = anyhow::Error::new(Hinted::new(what.to_string(), hint));
    Err(ExitWith::wrap(refusal, EXIT_NEEDS_ROOT))
}

/// The exit code of a failed command: the first [`ExitWith`] along the chain, else
/// [`EXIT_ERROR`].
pub(crate) fn exit_code(err: &anyhow::Error) -> u8 {
    err.chain()
        .find_map(|e| e.downcast_ref::<ExitWith>())
        .map_or(EXIT_ERROR, |e| e.code)
}

/// The version of each command's JSON schema; a change that renames, retypes or removes a
/// field, or makes a missing field present, bumps it (docs/cli.md lists the history).
pub fn schema_version(command: &str) -> u32 {
    match command {
        // v2: `note` and `unrecorded` are `null` instead of missing; v3: `also_reverted`
        // and `killed_tune_pid` (a killed tune's changes go back together); v4: each restored
        // entry's `renumbered` and `left_out`, and `identity_recorded` (device identities);
        // v5: each restored entry's `drifted` (found changed since the apply); v6: each
        // restored entry's `renamed` (written under the device's new name).
        "revert" => 6,
        // v2: each change's `revert_notes` (what its revert left out or renumbered); v3:
        // `revert_notes.drifted`; v4: `revert_notes.renamed`.
        "status" => 4,
        // v2: the engine block's `sim_seconds`/`wall_seconds` are `sim_s`/`wall_s`; v3:
        // `--keys` entries name their case scenario (`scenario`, `null` for engine keys), an
        // engine run and sweep point has `notes` and an engine sweep point `scenario`.
        "sim" => 3,
        // v2: a point's setting values are numbers and booleans, not strings.
        "tune" => nictune_tune::results::SCHEMA_VERSION,
        // v2: interrupt lines and interface drops are lists of objects (`nic_vectors`,
        // `device_irqs`, `interface_drops`) instead of maps keyed `"IRQ:NAME"`/`"IFACE:rx"`.
        "bench" => 2,
        // v2: each interface's link (operstate, MTU, speed, qdisc, txqlen) and the link kind
        // as the driver of a virtual device.
        // v3: FreeBSD's `uptime_s`, `rates_over_s` and `interrupts[].rate_per_sec` (were
        // `uptime_secs`, `rates_over_secs`, `rate`).
        "show" => 3,
        // v2: one shape written or refused (`written`, `path`, `text` always present) and
        // `format` the command-line name (`sysctl.d`, not `sysctl-d`).
        "export" => 2,
        _ => 1,
    }
}

/// What every command is given: output settings, and the process's privilege.
#[derive(Debug)]
pub struct Ctx {
    /// The process's privilege, read once at start: what [`require_root`] checks.
    pub privilege: Privilege,
    /// `--json`: one JSON document on stdout.
    pub json: bool,
    /// `--quiet`: no progress bars.
    pub quiet: bool,
    /// A JSON document went to stdout: an error after it goes to stderr, so stdout still
    /// holds exactly one document.
    printed_json: AtomicBool,
}

impl Ctx {
    pub fn new(json: bool, quiet: bool, privilege: Privilege) -> Ctx {
        Ctx {
            privilege,
            json,
            quiet,
            printed_json: AtomicBool::new(false),
        }
    }

    /// Prints `body` inside the `nictune.<command>/v<N>` envelope on stdout (N from
    /// [`schema_version`]).
    pub fn print_json<T: Serialize>(&self, command: &str, body: &T) -> Result<()> {
        let text = Envelope::versioned(command, schema_version(command), body).to_json()?;
        self.printed_json.store(true, Ordering::Relaxed);
        self.print(&text)
    }

    /// Prints human text on stdout, adding a final newline if missing.
    pub fn print(&self, text: &str) -> Result<()> {
        let mut out = io::stdout().lock();
        let mut write = || {
            out.write_all(text.as_bytes())?;
            if !text.ends_with('\n') {
                out.write_all(b"\n")?;
            }
            out.flush()
        };
        write().map_err(|e| OutputError(e).into())
    }

    /// Prints `body` as JSON with `--json`, else the text `human` renders.
    pub fn emit<T: Serialize>(
        &self,
        command: &str,
        body: &T,
        human: impl FnOnce(&T) -> String,
    ) -> Result<()> {
        if self.json {
            self.print_json(command, body)
        } else {
            self.print(&human(body))
        }
    }

    /// A progress bar on stderr when stderr is a terminal and `--quiet` is off; otherwise one
    /// that draws nothing.
    pub fn progress(&self) -> Box<dyn Progress> {
        if self.quiet || !io::stderr().is_terminal() {
            Box::new(NoProgress)
        } else {
            Box::new(TerminalBar::new())
        }
    }
}

/// Turns a command's result into the process exit code, printing errors on stderr.
pub fn finish(ctx: &Ctx, result: Result<Outcome>) -> ExitCode {
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Problems) => ExitCode::from(1),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            report_error(ctx, &err);
            ExitCode::from(exit_code(&err))
        }
    }
}

/// `| head` closing stdout early is a normal end, not an error.
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|e| e.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

/// The first hint found along the cause chain; else the one a bounded read or a write of
/// the output carries (`--profile /tmp`, `explain > /dev/full`), so no error goes out
/// without one.
fn find_hint(err: &anyhow::Error) -> Option<Cow<'_, str>> {
    err.chain()
        .find_map(|e| e.downcast_ref::<Hinted>())
        .map(|h| Cow::Borrowed(h.hint()))
        .or_else(|| {
            err.chain()
                .find_map(|e| e.downcast_ref::<nictune_core::input::ReadError>())
                .map(|e| Cow::Owned(e.hint()))
        })
        .or_else(|| {
            err.chain()
                .find_map(|e| e.downcast_ref::<OutputError>())
                .map(|_| Cow::Borrowed(OUTPUT_HINT))
        })
        .or_else(|| {
            let io = err.chain().find_map(|e| e.downcast_ref::<io::Error>())?;
            let hint = match io.kind() {
                io::ErrorKind::NotADirectory => {
                    "a path given as a directory (--state-dir, --root, --out) names a file: give a directory"
                }
                io::ErrorKind::IsADirectory => "a path given as a file names a directory: give a file",
                io::ErrorKind::NotFound => "check the path named above",
                io::ErrorKind::PermissionDenied => "check the permissions of the path named above, or run as root",
                _ => return None,
            };
            Some(Cow::Borrowed(hint))
        })
}

/// Writing the command's output to stdout failed (`> /dev/full`).
#[derive(Debug, thiserror::Error)]
#[error("writing the output to stdout")]
struct OutputError(#[source] io::Error);

const OUTPUT_HINT: &str =
    "stdout could not take the output: check the file or device it is redirected to (space left, permissions)";

/// The error and its causes, outermost first, without repeats: a cause the message before it
/// already ends with (`listing DIR: Not a directory (os error 20)`) is not printed again.
fn causes(err: &anyhow::Error) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in err.chain() {
        let text = e.to_string();
        let repeated = out
            .last()
            .is_some_and(|last| *last == text || last.ends_with(&format!(": {text}")));
        if !repeated {
            out.push(text);
        }
    }
    out
}

/// The `nictune.error/v1` document: the message, its causes, a hint or `null`, the exit code.
fn error_doc(chain: &[String], hint: Option<&str>, code: u8) -> serde_json::Value {
    serde_json::json!({
        "schema": "nictune.error/v1",
        "error": chain.first(),
        "causes": chain.get(1..).unwrap_or(&[]),
        "hint": hint,
        "exit_code": code,
    })
}

/// Renders an error as human text on stderr. With `--json` the `nictune.error/v1` document
/// goes to stdout too, so stdout holds exactly one JSON document whatever happened — unless
/// the command already printed its own (`revert` that restored the values but could not
/// record it), when the error document goes to stderr before the text.
fn report_error(ctx: &Ctx, err: &anyhow::Error) {
    let chain = causes(err);
    let hint = find_hint(err);
    if ctx.json {
        let doc = error_doc(&chain, hint.as_deref(), exit_code(err));
        if ctx.printed_json.load(Ordering::Relaxed) {
            let _ = writeln!(io::stderr().lock(), "{doc}");
        } else {
            let _ = writeln!(io::stdout().lock(), "{doc}");
        }
    }
    let mut stderr = io::stderr().lock();
    let _ = writeln!(stderr, "error: {}", chain[0]);
    for cause in &chain[1..] {
        let _ = writeln!(stderr, "  caused by: {cause}");
    }
    if let Some(hint) = hint {
        let _ = writeln!(stderr, "  hint: {hint}");
    }
}

/// A command line clap refused (or `--help`/`--version`, which print as usual). A refusal
/// reads like every other error — `error: …` and `  hint: …` on stderr, exit 2 — and with
/// `--json` anywhere before a `--` the `nictune.error/v1` document goes to stdout as well.
pub fn usage_error(
    err: clap::Error,
    cli: &clap::Command,
    argv: impl IntoIterator<Item = OsString>,
) -> ExitCode {
    use clap::error::ErrorKind;
    let args: Vec<OsString> = argv.into_iter().skip(1).take_while(|a| a != "--").collect();
    let json = args.iter().any(|a| a == "--json");
    // `nictune SUB` when the first word is a subcommand, for the hint.
    let command = args
        .iter()
        .find(|a| !a.to_string_lossy().starts_with('-'))
        .and_then(|a| cli.find_subcommand(a))
        .map_or("nictune".to_string(), |sub| {
            format!("nictune {}", sub.get_name())
        });
    let informational = matches!(
        err.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if informational {
        err.exit();
    }
    let (message, hint) = usage_parts(&err, &command);
    let message = without_hidden(&message, cli);
    if json {
        let doc = error_doc(std::slice::from_ref(&message), Some(&hint), EXIT_ERROR);
        let _ = writeln!(io::stdout().lock(), "{doc}");
    }
    let _ = writeln!(io::stderr().lock(), "error: {message}\n  hint: {hint}");
    ExitCode::from(EXIT_ERROR)
}

/// clap's message without its `error: ` prefix (on one line), and its tip — else where to
/// read the usage — as the hint.
fn usage_parts(err: &clap::Error, command: &str) -> (String, String) {
    let text = err.render().to_string();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let message = lines
        .iter()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("tip:"))
        .filter(|l| !l.starts_with("For more information"))
        .map(|l| l.trim_start_matches("error: "))
        .collect::<Vec<_>>()
        .join(" ");
    let tip = lines.iter().find_map(|l| l.strip_prefix("tip: "));
    let hint = match tip {
        Some(tip) => format!("{tip}; `{command} --help` lists every option"),
        None => format!("`{command} --help` lists every option and its values"),
    };
    (message, hint)
}

/// clap's `[subcommands: …]` list names hidden commands too (`vm-agent`, run inside the
/// testbed guests): they are left out, as `--help` leaves them out.
fn without_hidden(message: &str, cli: &clap::Command) -> String {
    let mut out = message.to_string();
    for hidden in cli.get_subcommands().filter(|c| c.is_hide_set()) {
        out = out.replace(&format!(", {}", hidden.get_name()), "");
    }
    out
}

/// Wraps an error with a hint for the user (see [`Hinted`]).
pub trait HintExt<T> {
    fn hint(self, hint: impl Into<String>) -> Result<T>;
}

impl<T, E> HintExt<T> for std::result::Result<T, E>
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn hint(self, hint: impl Into<String>) -> Result<T> {
        self.map_err(|e| anyhow::Error::new(Hinted::new(e, hint)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_core::error::InvalidInput;

    /// docs/cli.md's table of schema versions is the history users read: its newest row per
    /// command is the version printed, and a command without a row is at v1.
    #[test]
    fn schema_versions_are_the_newest_in_the_documented_history() {
        let doc = include_str!("../../../docs/cli.md");
        let mut newest = std::collections::BTreeMap::new();
        for line in doc.lines() {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let (Some(name), Some(version)) = (cells.get(1), cells.get(2)) else {
                continue;
            };
            let Some(command) = name
                .strip_prefix("`nictune.")
                .and_then(|n| n.split(['`', ' ']).next())
            else {
                continue;
            };
            let Some(v) = version
                .strip_prefix('v')
                .and_then(|v| v.parse::<u32>().ok())
            else {
                continue;
            };
            let at = newest.entry(command.to_string()).or_insert(v);
            *at = (*at).max(v);
        }
        assert!(newest.len() >= 5, "the table was read: {newest:?}");
        for (command, v) in &newest {
            assert_eq!(schema_version(command), *v, "nictune.{command}");
        }
        for command in ["doctor", "check", "capture"] {
            assert!(!newest.contains_key(command), "{command} has a row");
            assert_eq!(schema_version(command), 1, "{command}");
        }
    }

    #[test]
    fn clap_refusals_become_a_message_and_a_hint() {
        use clap::{CommandFactory, Parser};
        let cli = crate::cli::Cli::command();
        let err = crate::cli::Cli::try_parse_from(["nictune", "bench", "rr", "--warmpu", "1"])
            .unwrap_err();
        let (message, hint) = usage_parts(&err, "nictune bench");
        assert_eq!(message, "unexpected argument '--warmpu' found");
        assert!(
            hint.contains("'--warmup'") && hint.contains("`nictune bench --help`"),
            "{hint}"
        );
        let err = crate::cli::Cli::try_parse_from(["nictune", "check"]).unwrap_err();
        let (message, _) = usage_parts(&err, "nictune check");
        assert!(message.ends_with("<KEY=VALUE>..."), "{message}");
        assert!(cli.find_subcommand("check").is_some());
    }

    /// The missing-subcommand error lists the commands `--help` lists, not the hidden ones.
    #[test]
    fn the_missing_subcommand_error_leaves_hidden_commands_out() {
        use clap::{CommandFactory, Parser};
        let cli = crate::cli::Cli::command();
        let err = crate::cli::Cli::try_parse_from(["nictune", "--quiet"]).unwrap_err();
        let (message, _) = usage_parts(&err, "nictune");
        assert!(message.contains(", vm-agent"), "clap lists it: {message}");
        let message = without_hidden(&message, &cli);
        assert!(message.contains("manpage, help]"), "{message}");
        assert!(!message.contains("vm-agent"), "{message}");
    }

    #[test]
    fn broken_pipe_anywhere_in_the_chain_is_recognised() {
        let err =
            anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context("writing table");
        assert!(is_broken_pipe(&err));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }

    #[test]
    fn hint_is_found_under_context() {
        let bad = InvalidInput {
            what: "x".into(),
            value: "y".into(),
            allowed: "z".into(),
        };
        let err = Err::<(), _>(bad)
            .hint("do this")
            .unwrap_err()
            .context("reading settings");
        assert_eq!(find_hint(&err).as_deref(), Some("do this"));
        assert_eq!(causes(&err).len(), 2);
    }

    #[test]
    fn an_exit_code_travels_with_the_error_and_prints_it_once() {
        let rolled_back = Err::<(), _>(io::Error::other("step 2 failed"))
            .hint("every value is back as it was")
            .unwrap_err();
        let err = ExitWith::wrap(rolled_back, EXIT_PARTIAL_ROLLED_BACK).context("applying");
        assert_eq!(exit_code(&err), EXIT_PARTIAL_ROLLED_BACK);
        assert_eq!(causes(&err), ["applying", "step 2 failed"]);
        assert_eq!(
            find_hint(&err).as_deref(),
            Some("every value is back as it was")
        );
        assert_eq!(exit_code(&anyhow::anyhow!("plain")), EXIT_ERROR);
    }
}
