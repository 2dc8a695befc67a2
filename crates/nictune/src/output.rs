//! Conventions every command shares: the JSON envelope on stdout, human text otherwise,
//! exit codes, error rendering with the cause chain and a hint, broken pipes, progress bars.

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use nictune_core::envelope::Envelope;
use nictune_core::error::Hinted;
use nictune_core::progress::{NoProgress, Progress};
use serde::Serialize;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

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

/// The exit code of a failed command: the first [`ExitWith`] along the chain, else
/// [`EXIT_ERROR`].
pub(crate) fn exit_code(err: &anyhow::Error) -> u8 {
    err.chain()
        .find_map(|e| e.downcast_ref::<ExitWith>())
        .map_or(EXIT_ERROR, |e| e.code)
}

/// Output settings shared by all commands.
#[derive(Debug)]
pub struct Ctx {
    /// `--json`: one JSON document on stdout.
    pub json: bool,
    /// `--quiet`: no progress bars.
    pub quiet: bool,
}

impl Ctx {
    pub fn new(json: bool, quiet: bool) -> Ctx {
        Ctx { json, quiet }
    }

    /// Prints `body` inside the `nictune.<command>/v<version>` envelope on stdout.
    pub fn print_json<T: Serialize>(&self, command: &str, version: u32, body: &T) -> Result<()> {
        let text = Envelope::versioned(command, version, body).to_json()?;
        self.print(&text)
    }

    /// Prints human text on stdout, adding a final newline if missing.
    pub fn print(&self, text: &str) -> Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(text.as_bytes())?;
        if !text.ends_with('\n') {
            out.write_all(b"\n")?;
        }
        out.flush()?;
        Ok(())
    }

    /// Prints `body` as JSON with `--json`, else the text `human` renders.
    pub fn emit<T: Serialize>(
        &self,
        command: &str,
        body: &T,
        human: impl FnOnce(&T) -> String,
    ) -> Result<()> {
        self.emit_versioned(command, 1, body, human)
    }

    /// [`Ctx::emit`] for a schema past version 1.
    pub fn emit_versioned<T: Serialize>(
        &self,
        command: &str,
        version: u32,
        body: &T,
        human: impl FnOnce(&T) -> String,
    ) -> Result<()> {
        if self.json {
            self.print_json(command, version, body)
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
            Box::new(Bar::new())
        }
    }
}

/// An indicatif bar with an ETA, drawn on stderr.
struct Bar(ProgressBar);

impl Bar {
    fn new() -> Bar {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(200));
        Bar(bar)
    }
}

impl Progress for Bar {
    fn start(&self, total: u64, label: &str) {
        let style =
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg} (ETA {eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
        self.0.set_style(style);
        self.0.set_prefix(label.to_string());
        self.0.set_length(total);
        self.0.set_position(0);
    }
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
    fn message(&self, msg: &str) {
        self.0.set_message(msg.to_string());
    }
    fn finish(&self) {
        self.0.finish_and_clear();
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

/// The first hint found along the cause chain.
fn find_hint(err: &anyhow::Error) -> Option<&str> {
    err.chain()
        .find_map(|e| e.downcast_ref::<Hinted>())
        .map(Hinted::hint)
}

/// The error and its causes, outermost first, without repeats.
fn causes(err: &anyhow::Error) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in err.chain() {
        let text = e.to_string();
        if out.last() != Some(&text) {
            out.push(text);
        }
    }
    out
}

/// Renders an error on stderr: human text, or a `nictune.error/v1` document with `--json`.
fn report_error(ctx: &Ctx, err: &anyhow::Error) {
    let chain = causes(err);
    let hint = find_hint(err);
    let mut stderr = io::stderr().lock();
    if ctx.json {
        let doc = serde_json::json!({
            "schema": "nictune.error/v1",
            "error": chain.first(),
            "causes": chain.get(1..).unwrap_or(&[]),
            "hint": hint,
            "exit_code": exit_code(err),
        });
        let _ = writeln!(stderr, "{doc}");
        return;
    }
    let _ = writeln!(stderr, "error: {}", chain[0]);
    for cause in &chain[1..] {
        let _ = writeln!(stderr, "  caused by: {cause}");
    }
    if let Some(hint) = hint {
        let _ = writeln!(stderr, "  hint: {hint}");
    }
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
        assert_eq!(find_hint(&err), Some("do this"));
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
        assert_eq!(find_hint(&err), Some("every value is back as it was"));
        assert_eq!(exit_code(&anyhow::anyhow!("plain")), EXIT_ERROR);
    }
}
