//! What every end-to-end test of the binary needs: run `nictune`, read its output, find the
//! captured fixtures. Each test file uses a part of it, hence the `dead_code` allowance.
#![allow(dead_code)]

pub mod lab;

use std::path::PathBuf;
use std::process::{Command, Output};

/// The `nictune` binary, to add arguments, environment or pipes to.
pub fn command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nictune"))
}

/// The `nictune` binary with SIGHUP, SIGINT and SIGTERM back at their default action, for
/// tests that send them: a test run started in the background or under nohup passes them
/// on ignored, and nictune leaves a signal that was ignored at start ignored. Goes through
/// `env --default-signal` (coreutils 8.31 and later) when it is there.
pub fn command_with_default_signals() -> Command {
    let supported = Command::new("env")
        .args(["--default-signal=HUP,INT,TERM", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !supported {
        return command();
    }
    let mut c = Command::new("env");
    c.args([
        "--default-signal=HUP,INT,TERM",
        env!("CARGO_BIN_EXE_nictune"),
    ]);
    c
}

/// Runs `nictune args...` to completion.
pub fn nictune(args: &[&str]) -> Output {
    command().args(args).output().expect("nictune runs")
}

/// `nictune args...` as an unprivileged user, with `env` added: directly when this process is
/// not root, else as nobody through `setpriv` (util-linux, on every Debian). `None`, after
/// [`nictune_core::live::skip`] says why, when root cannot run it as nobody here (setpriv
/// missing, or a checkout nobody cannot read).
pub fn as_nobody(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Option<Output> {
    let root = nictune_linux::write::privilege().is_root();
    let mut cmd = match root {
        true => {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
            c.arg(env!("CARGO_BIN_EXE_nictune"));
            c
        }
        false => command(),
    };
    let out = cmd.args(args).envs(env.iter().copied()).output();
    let why = match out {
        Ok(out) if !(root && out.stderr.starts_with(b"setpriv:")) => return Some(out),
        Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_string(),
        Err(e) => format!("setpriv: {e}"),
    };
    nictune_core::live::skip(&format!(
        "running as root, cannot run nictune as nobody: {why}"
    ));
    None
}

/// Standard output as text (it must be UTF-8).
pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf-8 stdout")
}

/// Standard error as text (it must be UTF-8).
pub fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("utf-8 stderr")
}

/// Standard output as the one JSON document it must be.
pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("one JSON document on stdout")
}

/// Asserts the exit code, showing standard error when it differs.
#[track_caller]
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(out.status.code(), Some(code), "{}", stderr(out));
}

/// The path of a captured fixture under the repository's `fixtures/`.
pub fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
        .display()
        .to_string()
}

/// Network namespaces whose names start with `prefix` (e.g. a test's `nictune-tb-<pid>-`).
pub fn namespaces_with_prefix(prefix: &str) -> Vec<String> {
    let mut all = nictune_linux::netns::list().unwrap();
    all.retain(|n| n.starts_with(prefix));
    all
}

/// Why this machine cannot run a live test on namespaces it creates, if it cannot: the
/// testbed's needs (root), then an actual namespace created as the testbed does (in-process,
/// no `ip`), named `nictune-<tag>probe-<pid>-<n>` and removed at once.
pub fn netns_skip_reason(tag: &str) -> Option<String> {
    if let Err(why) = nictune_bench::testbed_available(nictune_linux::write::privilege()) {
        return Some(why);
    }
    // One name per call: tests of one binary probe in parallel.
    static PROBES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let probe = format!("nictune-{tag}probe-{}-{n}", std::process::id());
    match nictune_linux::netns::create(&probe) {
        Ok(_) => {
            let _ = nictune_linux::netns::delete(&probe);
            None
        }
        Err(e) => Some(format!("cannot create a network namespace: {e}")),
    }
}
