//! A real `nictune tune` on the built-in testbed, short enough for every CI run (about 30 s
//! on two cores), and a tune killed with SIGKILL in the middle of a busy-polling candidate
//! that `nictune revert` must clean up after (a new tune refuses to start until it has), and a
//! `--predict` tune of a few seconds ranked by the simulator's veth model. Needs root, `ip` and
//! namespace support;
//! elsewhere each test prints `skipped: <reason>`.
//!
//! What is checked independently of the tune's own read-back: the host-wide sysctls
//! (`/proc/sys/net/core/busy_read`, `busy_poll`) before and after, the journals through
//! `nictune status --json --all` (moved to `<out>/journal`, every transaction on both veth
//! ends and on the host reverted, completely; none left in the state directory), and that no
//! `nictune-tb-<pid>-…` namespace is left.
//!
//! The tests change host-wide sysctls, so they take turns (a file-wide mutex).

mod common;

use serde_json::Value as Json;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_nictune");
const BUSY: [&str; 2] = [
    "/proc/sys/net/core/busy_read",
    "/proc/sys/net/core/busy_poll",
];

/// The two tests both change busy_read/busy_poll: one at a time.
static HOST_WIDE: Mutex<()> = Mutex::new(());

fn busy_values() -> Vec<String> {
    BUSY.iter()
        .map(|p| std::fs::read_to_string(p).unwrap().trim().to_string())
        .collect()
}

fn nictune(state: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("NICTUNE_STATE_DIR", state)
        .output()
        .unwrap()
}

/// Testbed namespaces created by process `pid`.
fn namespaces_of(pid: u32) -> Vec<String> {
    common::namespaces_with_prefix(&format!("nictune-tb-{pid}-"))
}

/// Puts back what a failed test may leave: the sysctls as found and a killed tune's
/// namespaces.
struct Cleanup {
    busy: Vec<String>,
    pid: Option<u32>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for (path, value) in BUSY.iter().zip(&self.busy) {
            let _ = std::fs::write(path, value);
        }
        if let Some(pid) = self.pid {
            for ns in namespaces_of(pid) {
                let _ = Command::new("ip").args(["netns", "del", &ns]).output();
            }
        }
    }
}

/// Every journaled change in a state directory, from `nictune status --json --all`.
fn changes(state: &Path) -> Vec<Json> {
    let out = nictune(state, &["status", "--json", "--all"]);
    let status: Json = serde_json::from_slice(&out.stdout).unwrap();
    status["changes"].as_array().unwrap().clone()
}

/// A finished tune's journals: moved from the state directory to `<out>/journal`, with
/// nothing of the tune left behind in the state directory.
fn moved_journals(state: &Path, out: &Path) -> Vec<Json> {
    let left = changes(state);
    assert!(
        left.is_empty(),
        "journals left in the state directory: {left:?}"
    );
    changes(&out.join("journal"))
}

/// A finished tune on the testbed, with what the tests check afterwards. Holding it keeps the
/// host-wide turn and the clean-up guard alive until the test's assertions are done.
struct TuneRun {
    _turn: std::sync::MutexGuard<'static, ()>,
    _cleanup: Cleanup,
    before: Vec<String>,
    state: tempfile::TempDir,
    out_dir: tempfile::TempDir,
    results: Json,
    /// How long the tune itself ran (not the wait for the host-wide turn before it).
    took: Duration,
}

/// Runs `nictune tune ARGS` on the testbed with short runs (300 ms after 100 ms of warm-up),
/// `--json --out DIR`, and asserts it succeeded; `None` (after printing why) when this machine
/// cannot run live tunes.
fn run_tune(args: &[&str]) -> Option<TuneRun> {
    let turn = HOST_WIDE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = common::netns_skip_reason("tl") {
        nictune_core::live::skip(&why);
        return None;
    }
    let before = busy_values();
    let cleanup = Cleanup {
        busy: before.clone(),
        pid: None,
    };
    let state = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut all = vec!["tune"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--duration", "300ms", "--warmup", "100ms"]);
    all.extend_from_slice(&["--json", "--out", out_dir.path().to_str().unwrap()]);
    let out = nictune(state.path(), &all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tune {args:?} failed: {stderr}");
    let took = started.elapsed();
    eprintln!("live tune {args:?} took {:.1} s", took.as_secs_f64());
    let results = serde_json::from_str(
        &std::fs::read_to_string(out_dir.path().join("results.json")).unwrap(),
    )
    .unwrap();
    Some(TuneRun {
        _turn: turn,
        _cleanup: cleanup,
        before,
        state,
        out_dir,
        results,
        took,
    })
}

#[test]
fn a_short_live_tune_writes_three_files_and_leaves_every_setting_as_found() {
    let Some(run) = run_tune(&["--budget", "60"]) else {
        return;
    };
    let TuneRun {
        before,
        state,
        out_dir,
        results,
        ..
    } = &run;

    // The three files, measured on the testbed.
    assert_eq!(results["environment"]["target"], "testbed");
    let points = results["points"].as_array().unwrap();
    assert_eq!(points.len(), 25, "every candidate measured at least once");
    assert!(points.iter().all(|p| p["summary"].is_object()));
    let profile = std::fs::read_to_string(out_dir.path().join("recommended.toml")).unwrap();
    assert!(profile.contains("[settings]"), "{profile}");
    assert!(!profile.contains("SYNTHETIC"), "{profile}");
    let html = std::fs::read_to_string(out_dir.path().join("report.html")).unwrap();
    assert!(html.trim_start().starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    assert!(html.matches("<svg").count() >= 3, "the plots are there");
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    assert!(!html.contains("SYNTHETIC"));

    // Every setting back as found: the host-wide sysctls read directly, the veth ends
    // through their journals (the testbed itself is gone).
    assert_eq!(&busy_values(), before, "busy_read/busy_poll restored");
    let all = moved_journals(state.path(), out_dir.path());
    let notes = results["environment"]["notes"].to_string();
    assert!(notes.contains("journal/"), "{notes}");
    // Transactions in the client namespace, the server namespace, and on the host.
    let on = |end: Option<&str>| {
        let here = |c: &&Json| match (c["netns"].as_str(), end) {
            (None, None) => true,
            (Some(ns), Some(side)) => ns.starts_with("nictune-tb-") && ns.ends_with(side),
            _ => false,
        };
        all.iter().filter(here).count()
    };
    assert!(
        on(Some("-c")) > 0 && on(Some("-s")) > 0 && on(None) > 0,
        "{all:?}"
    );
    for c in &all {
        assert_eq!(c["phase"], "reverted", "{c}");
        assert_eq!(c["complete"], true, "{c}");
    }
    let left = list_testbeds_left();
    assert!(left.is_empty(), "testbed namespaces left: {left:?}");
}

/// Issue #16: a time budget too short for one run per candidate is fitted, live: a subset
/// in which every level appears is measured, the results say so, and the tune takes about
/// the budget (its runs; building and removing the testbed come on top).
#[test]
fn a_time_budget_below_one_run_per_candidate_measures_a_subset_in_about_that_time() {
    let Some(run) = run_tune(&["--budget", "8s"]) else {
        return;
    };
    // The tune's own time: the other tests of this file take the host-wide turn before it.
    let took = run.took.as_secs_f64();
    let search = &run.results["search"];
    let (measured, space) = (
        search["measured"].as_u64().unwrap(),
        search["space_size"].as_u64().unwrap(),
    );
    assert!(measured >= 3 && measured < space, "{search}");
    let notes = run.results["environment"]["notes"].to_string();
    assert!(notes.contains("candidates fit the budget"), "{notes}");
    let planned = search["plan"]["budget"].as_f64().unwrap();
    assert!(planned * 0.4 <= 8.0, "{planned} runs of 0.4 s");
    // Each run also applies and reverts its settings through the journal (tens of ms);
    // the testbed takes a second or two to build and remove.
    assert!(took < 8.0 * 1.5 + 5.0, "took {took:.1} s for an 8 s budget");
    assert_eq!(busy_values(), run.before, "busy_read/busy_poll restored");
}

/// Testbed namespaces whose creating process is gone or is a tune this file started.
fn list_testbeds_left() -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with("nictune-tb-"))
        .filter(|n| {
            let pid = n["nictune-tb-".len()..].split('-').next().unwrap_or("");
            !Path::new("/proc").join(pid).exists()
        })
        .map(str::to_string)
        .collect()
}

/// Kills `child` when dropped (a failed assertion must not leave a tune running).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `nictune tune ARGS --quiet --out OUT` with its journals in `state` (output piped)
/// and waits up to 90 s until a busy-polling candidate is in place (`before` being the
/// values as found). The guards kill the tune and put back what it left when dropped.
fn tune_until_busy_polling(
    args: &[&str],
    state: &Path,
    out: &Path,
    before: &[String],
) -> (Running, Cleanup) {
    let child = common::command_with_default_signals()
        .arg("tune")
        .args(args)
        .args(["--quiet", "--out"])
        .arg(out)
        .env("NICTUNE_STATE_DIR", state)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let cleanup = Cleanup {
        busy: before.to_vec(),
        pid: Some(child.id()),
    };
    let mut tune = Running(child);
    let deadline = Instant::now() + Duration::from_secs(90);
    while busy_values() == before {
        assert!(
            Instant::now() < deadline,
            "no busy-polling candidate within 90 s"
        );
        assert!(tune.0.try_wait().unwrap().is_none(), "the tune ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    (tune, cleanup)
}

#[test]
fn after_kill_9_mid_tune_revert_restores_the_host_wide_sysctls() {
    let _turn = HOST_WIDE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = common::netns_skip_reason("tl") {
        nictune_core::live::skip(&why);
        return;
    }
    let before = busy_values();
    let state = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    // Long runs: a busy-polling candidate stays in place for seconds, time to catch it.
    // Deferral on every candidate: each end keeps a change of its own in place too.
    let args = [
        "--budget",
        "60",
        "--duration",
        "2s",
        "--warmup",
        "100ms",
        "--only",
        "defer-hard-irqs=2",
    ];
    let (mut tune, _cleanup) =
        tune_until_busy_polling(&args, state.path(), out_dir.path(), &before);
    let pid = tune.0.id();
    tune.0.kill().unwrap(); // SIGKILL: no destructor runs
    tune.0.wait().unwrap();
    assert_ne!(busy_values(), before, "killed while busy polling was on");

    // Issue #12.2: `status` said a plain "applied" (exit 0). It must be loud: which
    // machine-wide values are still in place, and the exact command that undoes them.
    let status = nictune(state.path(), &["status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(1), "{text}");
    assert!(
        text.contains("LEFT BY A KILLED TUNE") || text.contains("INTERRUPTED"),
        "{text}"
    );
    assert!(
        text.contains("MACHINE-WIDE CHANGE STILL IN PLACE: sysctl.net.core.busy_"),
        "{text}"
    );
    let undo = format!(
        "Undo with: nictune revert --state-dir {}",
        state.path().display()
    );
    assert!(text.contains(&undo), "{text}");
    let testbed = format!("still there: nictune-tb-{pid}-");
    assert!(
        text.contains(&testbed),
        "the killed tune's namespaces: {text}"
    );

    // A new tune would take the killed one's values for the settings as found: refused.
    let again = nictune(
        state.path(),
        &[
            "tune",
            "--budget",
            "60",
            "--out",
            out_dir.path().to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{err}");
    // "was killed" when it died between transactions, "interrupted" when it died inside one.
    let refused = err.contains("was killed") || err.contains("is interrupted");
    assert!(refused && err.contains("nictune revert"), "{err}");

    // One revert restores everything the killed tune left: the host-wide sysctls and the
    // testbed's ends, one candidate's transactions.
    let open_before = changes(state.path())
        .into_iter()
        .filter(|c| c["phase"] != "reverted" && c["phase"] != "rolled-back")
        .count();
    let out = nictune(state.path(), &["revert", "--json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        busy_values(),
        before,
        "busy_read/busy_poll restored by one revert"
    );
    let body: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(body["schema"], "nictune.revert/v6", "{body}");
    assert_eq!(body["killed_tune_pid"], pid, "{body}");
    let reverted = 1 + body["also_reverted"].as_array().unwrap().len();
    assert_eq!(
        reverted, open_before,
        "every open change in one run: {body}"
    );
    assert!(
        reverted >= 3,
        "the host-wide settings and both ends: {body}"
    );
    let again = nictune(state.path(), &["revert"]);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("Nothing to revert"),
        "{again:?}"
    );
    let open: Vec<Json> = changes(state.path())
        .into_iter()
        .filter(|c| c["phase"] != "reverted" && c["phase"] != "rolled-back")
        .collect();
    assert!(open.is_empty(), "{open:?}");
}

#[test]
fn a_live_tune_with_predict_ranks_by_the_veth_model_and_reports_every_prediction() {
    let Some(run) = run_tune(&["--predict", "--budget", "12"]) else {
        return;
    };
    let TuneRun {
        before,
        state,
        out_dir,
        results,
        ..
    } = &run;
    let points = results["points"].as_array().unwrap();
    assert!(
        points.len() < 25,
        "a budget of 12 runs prunes the space by prediction"
    );
    for p in points {
        let predicted = p["predicted"]["transactions_per_sec"].as_f64();
        assert!(predicted.is_some_and(|r| r > 0.0), "no prediction: {p}");
        eprintln!(
            "{}: predicted {:.0} trans/s, measured {:.0}",
            p["id"],
            predicted.unwrap(),
            p["summary"]["rate"]["mean"]
        );
    }
    // The model puts busy polling across CPUs first for latency: it is measured.
    let ids: Vec<&str> = points.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert!(
        ids.iter()
            .any(|id| id.ends_with("@cross-cpu") && id.contains("busy_read=50µs")),
        "{ids:?}"
    );
    let html = std::fs::read_to_string(out_dir.path().join("report.html")).unwrap();
    assert!(html.contains(r#"id="plot-predicted""#));
    assert_eq!(&busy_values(), before, "busy_read/busy_poll restored");
    let all = moved_journals(state.path(), out_dir.path());
    assert!(!all.is_empty());
    for c in &all {
        assert_eq!(c["phase"], "reverted", "{c}");
    }
}

/// Issue #12.2/#12.7: INT, TERM or HUP (the terminal or SSH session closed; its pipes are
/// closed first) while a busy-polling candidate is in place: the tune restores
/// busy_read/busy_poll, removes its testbed namespaces, leaves no change open and exits 2.
#[test]
fn a_signal_mid_tune_restores_the_host_wide_sysctls_and_removes_the_testbed() {
    let _turn = HOST_WIDE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = common::netns_skip_reason("tl") {
        nictune_core::live::skip(&why);
        return;
    }
    let before = busy_values();
    for signal in ["INT", "TERM", "HUP"] {
        let started = Instant::now();
        let state = tempfile::tempdir().unwrap();
        let out_dir = tempfile::tempdir().unwrap();
        // --predict ranks busy polling across CPUs first: it is in place within seconds.
        let args = [
            "--predict",
            "--budget",
            "12",
            "--duration",
            "1s",
            "--warmup",
            "100ms",
        ];
        let (mut tune, _cleanup) =
            tune_until_busy_polling(&args, state.path(), out_dir.path(), &before);
        let pid = tune.0.id();
        if signal == "INT" {
            second_tune_is_refused_naming(pid, out_dir.path());
        }
        if signal == "HUP" {
            drop(tune.0.stdout.take());
            drop(tune.0.stderr.take());
        }
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let code = loop {
            if let Some(status) = tune.0.try_wait().unwrap() {
                break status.code();
            }
            assert!(
                Instant::now() < deadline,
                "{signal}: still running after 30 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(code, Some(2), "{signal}: a stopped tune exits 2");
        assert_eq!(
            busy_values(),
            before,
            "{signal}: busy_read/busy_poll restored"
        );
        assert!(
            namespaces_of(pid).is_empty(),
            "{signal}: testbed left behind"
        );
        let status = nictune(state.path(), &["status"]);
        assert_eq!(
            status.status.code(),
            Some(0),
            "{signal}: a change left open"
        );
        let open: Vec<Json> = changes(state.path())
            .into_iter()
            .filter(|c| c["phase"] != "reverted" && c["phase"] != "rolled-back")
            .collect();
        assert!(open.is_empty(), "{signal}: {open:?}");
        eprintln!("{signal}: {:.1} s", started.elapsed().as_secs_f64());
    }
}

/// Issue #12.5: two tunes with different state directories both wrote the host-wide
/// busy-poll sysctls, and reverting both left the wrong value. A second tune now stops at
/// the machine-wide lock, naming the first.
fn second_tune_is_refused_naming(first: u32, out: &Path) {
    let other = tempfile::tempdir().unwrap();
    let out = out.join("second");
    let args = [
        "tune",
        "--budget",
        "60",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    let second = nictune(other.path(), &args);
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("held by pid {first}")), "{err}");
    assert!(err.contains("/run/nictune/change.lock"), "{err}");
}
