//! The main job needs nothing but the program: `nictune bench rr` and a very short
//! `nictune tune` on the built-in testbed with PATH set to an empty directory, so `ip`,
//! `ethtool` and `sysctl` cannot be found. The testbed must still be in NAPI mode (GRO on,
//! TSO off on both veth ends), as the sockets' SO_INCOMING_NAPI_ID shows.
//!
//! Needs root and namespace support; elsewhere each test prints `skipped: <reason>`. The
//! tune changes the host-wide busy-poll sysctls while it runs (journaled, restored at its
//! end, as in `tune_live.rs`); a guard puts them back as found even if the test fails, and
//! the two tests take turns.

mod common;

use common::{assert_exit, json, stderr};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

/// One at a time: the tune changes host-wide sysctls, and both build testbeds.
static TURN: Mutex<()> = Mutex::new(());

const BUSY: [&str; 2] = [
    "/proc/sys/net/core/busy_read",
    "/proc/sys/net/core/busy_poll",
];

/// Runs `nictune ARGS` with PATH holding only an empty directory and its state in `state`.
fn without_tools(empty: &Path, state: &Path, args: &[&str]) -> Output {
    let out = common::command()
        .args(args)
        .env_clear()
        .env("PATH", empty)
        .env("NICTUNE_STATE_DIR", state)
        .output()
        .unwrap();
    for tool in ["ip", "ethtool", "sysctl"] {
        let found = Command::new(tool).env("PATH", empty).output();
        assert!(found.is_err(), "{tool} must not be on the test's PATH");
    }
    out
}

/// This test's turn, or `None` (after printing why) when this machine cannot build
/// testbeds.
fn turn(test: &str) -> Option<MutexGuard<'static, ()>> {
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    match common::netns_skip_reason("nt") {
        Some(why) => {
            nictune_core::live::skip(&format!("{test}: {why}"));
            None
        }
        None => Some(turn),
    }
}

/// Testbed namespaces whose creating process is gone (a finished run must leave none).
fn stale_testbeds() -> Vec<String> {
    common::namespaces_with_prefix("nictune-tb-")
        .into_iter()
        .filter(|n| {
            let pid = n["nictune-tb-".len()..].split('-').next().unwrap_or("");
            !Path::new("/proc").join(pid).exists()
        })
        .collect()
}

#[test]
fn bench_rr_on_the_testbed_needs_no_ip_ethtool_or_sysctl() {
    let Some(_turn) = turn("bench_rr_without_tools") else {
        return;
    };
    let (empty, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let args = [
        "bench",
        "rr",
        "--duration",
        "1",
        "--warmup",
        "0.3",
        "--json",
    ];
    let out = without_tools(empty.path(), state.path(), &args);
    assert_exit(&out, 0);
    let doc = json(&out);
    assert_eq!(doc["target"], "testbed", "{doc}");
    assert_eq!(doc["napi"]["verified"], true, "NAPI mode: {}", doc["napi"]);
    let warnings = doc["warnings"].to_string();
    assert!(!warnings.contains("NAPI mode not enabled"), "{warnings}");
    assert!(doc["metrics"]["transactions_per_sec"].as_f64().unwrap() > 0.0);
    assert!(stale_testbeds().is_empty(), "{:?}", stale_testbeds());
}

/// Puts the host-wide busy-poll sysctls back as found.
struct Restore(Vec<String>);

impl Drop for Restore {
    fn drop(&mut self) {
        for (path, value) in BUSY.iter().zip(&self.0) {
            let _ = std::fs::write(path, value);
        }
    }
}

fn busy_values() -> Vec<String> {
    BUSY.iter()
        .map(|p| std::fs::read_to_string(p).unwrap().trim().to_string())
        .collect()
}

#[test]
fn a_short_tune_on_the_testbed_needs_no_ip_ethtool_or_sysctl() {
    let Some(_turn) = turn("tune_without_tools") else {
        return;
    };
    let before = busy_values();
    let _restore = Restore(before.clone());
    let (empty, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let out_dir = tempfile::tempdir().unwrap();
    let out_arg = out_dir.path().to_str().unwrap();
    let args = [
        "tune",
        "--predict",
        "--budget",
        "8",
        "--duration",
        "300ms",
        "--warmup",
        "100ms",
        "--quiet",
        "--out",
        out_arg,
    ];
    let out = without_tools(empty.path(), state.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.path().join("results.json")).unwrap(),
    )
    .unwrap();
    let env = &results["environment"];
    assert_eq!(env["target"], "testbed");
    let notes = env["notes"].to_string();
    assert!(notes.contains("veth in NAPI mode"), "{notes}");
    assert!(!notes.contains("NOT in NAPI mode"), "{notes}");
    assert_eq!(busy_values(), before, "busy_read/busy_poll restored");
    assert!(stale_testbeds().is_empty(), "{:?}", stale_testbeds());
}
