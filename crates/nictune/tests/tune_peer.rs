//! A real `nictune tune --iface --peer`: two namespaces this test creates and joins with a
//! veth pair, `nictune serve` inside one, and the tune of the other end against it. Needs
//! root, `ip` and ethtool; elsewhere it prints `skipped: <reason>`.
//!
//! What is checked independently of the tune's own read-back: the veth end's settings read
//! with sysfs and ethtool before and after, the journals through `nictune status --json --all`
//! (the candidates' moved to `<out>/journal`, the applied recommendation in the state directory,
//! every one in the tuned namespace and reverted completely), and that neither the
//! namespaces nor the server are left.

mod common;

use serde_json::Value as Json;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::lab::{ip, Lab, BIN, PORT, TOKEN};

/// What these tests read and write on the lab's ends, without nictune.
impl Lab {
    /// Writes tp-a's sysfs attribute `file`, without nictune.
    fn write_a(&self, file: &str, value: &str) {
        let path = format!("/sys/class/net/tp-a/{file}");
        let script = format!("echo {value} > {path}");
        ip(&["netns", "exec", &self.a, "sh", "-c", &script]);
    }

    /// What the tune may change on tp-a, read without nictune.
    fn settings_of_a(&self) -> String {
        settings_of(&self.a, "tp-a")
    }

    /// What a tune of both ends may change on tp-b, read without nictune.
    fn settings_of_b(&self) -> String {
        settings_of(&self.b, "tp-b")
    }
}

/// The NAPI timers and ethtool's coalescing and channels of `dev` in `ns`, read with cat and
/// ethtool.
fn settings_of(ns: &str, dev: &str) -> String {
    let mut all = String::new();
    for file in ["gro_flush_timeout", "napi_defer_hard_irqs"] {
        let out = Command::new("ip")
            .args(["netns", "exec", ns, "cat"])
            .arg(format!("/sys/class/net/{dev}/{file}"))
            .output()
            .unwrap();
        all += &format!("{file}: {}", String::from_utf8_lossy(&out.stdout));
    }
    for flag in ["-c", "-l"] {
        let out = Command::new("ip")
            .args(["netns", "exec", ns, "ethtool", flag, dev])
            .output()
            .unwrap();
        all += &String::from_utf8_lossy(&out.stdout);
    }
    all
}

fn nictune(state: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("NICTUNE_STATE_DIR", state)
        .env("NICTUNE_TOKEN", TOKEN)
        .output()
        .unwrap()
}

fn namespaces_left(pid: u32) -> Vec<String> {
    common::namespaces_with_prefix(&format!("nictune-tp-{pid}-"))
}

/// The journal once nothing is pending any more (at most 15 s: the watchdog of an applied
/// recommendation reverts it after its 1 s).
fn wait_until_all_reverted(state: &Path) -> Vec<Json> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let status = nictune(state, &["status", "--json", "--all"]);
        let status: Json = serde_json::from_slice(&status.stdout).unwrap();
        let changes = status["changes"].as_array().unwrap().clone();
        let pending = changes.iter().any(|c| c["phase"] != "reverted");
        if !pending || Instant::now() > deadline {
            return changes;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_tune_of_a_veth_end_against_a_serve_peer_writes_three_files_and_restores_it() {
    if let Some(why) = common::netns_skip_reason("tp") {
        nictune_core::live::skip(&why);
        return;
    }
    let _turn = one_tune_at_a_time();
    let state = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let lab = Lab::create("tp");
    let server_pid = lab.server.as_ref().unwrap().id();
    // Start from the slow corner of testbed-notes §6 (gro-flush-timeout 100 µs with
    // defer-hard-irqs 2), so there is usually something better for --apply to apply.
    lab.write_a("gro_flush_timeout", "100000");
    lab.write_a("napi_defer_hard_irqs", "2");
    let before = lab.settings_of_a();
    let started = Instant::now();
    let peer = format!("198.18.77.2:{PORT}");
    let out = nictune(
        state.path(),
        &[
            "tune",
            "--netns",
            &lab.a,
            "--iface",
            "tp-a",
            "--peer",
            &peer,
            "--budget",
            "26",
            "--duration",
            "300ms",
            "--warmup",
            "100ms",
            "--apply",
            "--confirm-within",
            "1s",
            "--json",
            "--out",
            out_dir.path().to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tune failed: {stderr}");
    eprintln!("peer tune took {:.1} s", started.elapsed().as_secs_f64());

    let results: Json = serde_json::from_str(
        &std::fs::read_to_string(out_dir.path().join("results.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(results["environment"]["target"], "interface");
    eprintln!("verdict: {}", results["recommendation"]["headline"]);
    let name = results["environment"]["target_name"].as_str().unwrap();
    assert!(name.contains("tp-a") && name.contains(&peer), "{name}");
    let points = results["points"].as_array().unwrap();
    assert!(
        points.len() > 1,
        "candidates beyond the baseline: {points:?}"
    );
    assert!(points.iter().all(|p| p["summary"].is_object()));
    let ids: Vec<&str> = points.iter().filter_map(|p| p["id"].as_str()).collect();
    assert!(
        ids.iter().any(|id| id.contains("gro-flush=")),
        "per-NAPI candidates from what veth in NAPI mode reports: {ids:?}"
    );
    let profile = std::fs::read_to_string(out_dir.path().join("recommended.toml")).unwrap();
    assert!(profile.contains("[settings]"), "{profile}");
    let html = std::fs::read_to_string(out_dir.path().join("report.html")).unwrap();
    assert!(html.trim_end().ends_with("</html>") && html.contains("<svg"));

    // --apply: the recommendation went on as a change the watchdog reverts after 1 s, or
    // there was nothing to apply.
    let applied = stderr.contains("--apply: applied");
    assert!(
        applied || stderr.contains("--apply: nothing to apply"),
        "{stderr}"
    );
    if applied {
        // As `apply --confirm-within`: the watchdog was running before the first write.
        let journals = std::fs::read_dir(state.path().join("changes")).unwrap();
        let lines: Vec<String> = journals
            .flat_map(|f| {
                std::fs::read_to_string(f.unwrap().path())
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        let at = |record: &str| {
            let tag = format!("\"record\":\"{record}\"");
            lines.iter().position(|l| l.contains(&tag))
        };
        let (watchdog, intent) = (at("watchdog"), at("intent"));
        assert!(
            watchdog.is_some() && watchdog < intent,
            "the watchdog's record before the first intent: {lines:#?}"
        );
    }
    let changes = wait_until_all_reverted(state.path());
    eprintln!(
        "--apply {}; {} journaled changes",
        if applied {
            "applied, reverted by the watchdog"
        } else {
            "had nothing to apply"
        },
        changes.len()
    );

    assert_eq!(lab.settings_of_a(), before, "tp-a's settings as found");
    // The state directory keeps only the applied recommendation; the candidates' journals
    // moved to <out>/journal.
    assert_eq!(changes.len(), usize::from(applied), "{changes:?}");
    let candidates = wait_until_all_reverted(&out_dir.path().join("journal"));
    assert!(!candidates.is_empty(), "the candidates were journaled");
    for c in changes.into_iter().chain(candidates) {
        assert_eq!(c["netns"], lab.a.as_str(), "{c}");
        assert_eq!(c["phase"], "reverted", "{c}");
        assert_eq!(c["complete"], true, "{c}");
    }

    let pid = std::process::id();
    drop(lab);
    assert!(
        namespaces_left(pid).is_empty(),
        "{:?}",
        namespaces_left(pid)
    );
    assert!(
        !Path::new("/proc").join(server_pid.to_string()).exists(),
        "nictune serve (pid {server_pid}) is gone"
    );
}

/// `tune --iface tp-a --peer … --both-ends` over gro-flush-timeout 20 µs × defer-hard-irqs,
/// with the output directory and the peer's state directory.
fn both_ends_tune(lab: &Lab, state: &Path, out: &Path, budget: &str) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(["tune", "--netns", &lab.a, "--iface", "tp-a", "--peer"])
        .arg(format!("198.18.77.2:{PORT}"))
        .args([
            "--both-ends",
            "--only",
            "napi.gro-flush-timeout=20000",
            "--budget",
            budget,
        ])
        .args([
            "--duration",
            "300ms",
            "--warmup",
            "100ms",
            "--json",
            "--out",
        ])
        .arg(out)
        .env("NICTUNE_STATE_DIR", state)
        .env("NICTUNE_TOKEN", TOKEN);
    cmd
}

/// Tunes take the machine-wide change lock: the tests of this file take turns.
fn one_tune_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Whether a change journaled in `state` is in place (not reverted).
fn in_place(state: &Path) -> bool {
    let status = nictune(state, &["status", "--json", "--all"]);
    let status: Json = serde_json::from_slice(&status.stdout).unwrap();
    status["changes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["phase"] != "reverted")
}

/// The peer's journal once nothing of the change session is in place (at most 10 s).
fn peer_changes_reverted(peer_state: &Path) -> Vec<Json> {
    wait_until_all_reverted(peer_state)
}

#[test]
fn a_tune_of_both_ends_changes_the_peer_through_serve_and_both_are_restored() {
    if let Some(why) = common::netns_skip_reason("tp") {
        nictune_core::live::skip(&why);
        return;
    }
    let _turn = one_tune_at_a_time();
    let (state, peer_state, out_dir) = (tempdir(), tempdir(), tempdir());
    let lab = Lab::taking_changes("tp", peer_state.path());
    let (before_a, before_b) = (lab.settings_of_a(), lab.settings_of_b());
    let out = both_ends_tune(&lab, state.path(), out_dir.path(), "30")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tune failed: {stderr}");

    let results: Json = serde_json::from_str(
        &std::fs::read_to_string(out_dir.path().join("results.json")).unwrap(),
    )
    .unwrap();
    let ids: Vec<&str> = results["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["id"].as_str())
        .collect();
    for wanted in [
        "defer=2 gro-flush=20µs @unpinned",
        "peer:defer=2 peer:gro-flush=20µs @unpinned",
        "defer=2 gro-flush=20µs peer:defer=2 peer:gro-flush=20µs @unpinned",
    ] {
        assert!(ids.contains(&wanted), "{wanted} not in {ids:?}");
    }
    let notes = results["environment"]["notes"].to_string();
    assert!(
        notes.contains("Both ends were tuned") && notes.contains("tp-b"),
        "{notes}"
    );
    let rec = &results["recommendation"];
    let peer_profile = out_dir.path().join("recommended-peer.toml");
    assert_eq!(
        peer_profile.exists(),
        !rec["peer_settings"].as_array().unwrap().is_empty(),
        "recommended-peer.toml exactly when the peer should change: {rec}"
    );
    eprintln!(
        "recommendation: {} / peer {}",
        rec["settings"], rec["peer_settings"]
    );

    // The peer journaled every change in its own state directory and put each back.
    let peer_changes = peer_changes_reverted(peer_state.path());
    assert!(!peer_changes.is_empty(), "the peer journaled its changes");
    for c in &peer_changes {
        assert_eq!(c["iface"], "tp-b", "{c}");
        assert_eq!(
            (&c["phase"], &c["complete"]),
            (&Json::from("reverted"), &Json::from(true)),
            "{c}"
        );
    }
    assert_eq!(lab.settings_of_a(), before_a, "tp-a as found");
    assert_eq!(lab.settings_of_b(), before_b, "tp-b as found");
}

#[test]
fn a_killed_tune_of_both_ends_leaves_the_peer_as_found() {
    if let Some(why) = common::netns_skip_reason("tp") {
        nictune_core::live::skip(&why);
        return;
    }
    let _turn = one_tune_at_a_time();
    let (state, peer_state, out_dir) = (tempdir(), tempdir(), tempdir());
    let lab = Lab::taking_changes("tp", peer_state.path());
    let (before_a, before_b) = (lab.settings_of_a(), lab.settings_of_b());
    let mut tune = both_ends_tune(&lab, state.path(), out_dir.path(), "60")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Kill it once the peer has a change in place (per-NAPI values set over netlink do not
    // show in the device's sysfs files, so the peer's journal says when).
    let deadline = Instant::now() + Duration::from_secs(30);
    while !in_place(peer_state.path()) {
        if let Some(status) = tune.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut tune.stderr.take().unwrap(), &mut err).unwrap();
            panic!("the tune ended ({status}) before it changed the peer: {err}");
        }
        assert!(Instant::now() < deadline, "the tune never changed the peer");
        std::thread::sleep(Duration::from_millis(20));
    }
    tune.kill().unwrap();
    tune.wait().unwrap();
    // The connection closed with the process: the peer puts everything back at once.
    let deadline = Instant::now() + Duration::from_secs(5);
    while lab.settings_of_b() != before_b {
        assert!(
            Instant::now() < deadline,
            "the peer kept the killed tune's settings"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for c in peer_changes_reverted(peer_state.path()) {
        assert_eq!(
            (&c["phase"], &c["complete"]),
            (&Json::from("reverted"), &Json::from(true)),
            "{c}"
        );
    }
    // This end: one `nictune revert` puts back everything the killed tune left on tp-a.
    let out = nictune(state.path(), &["revert"]);
    assert!(out.status.success(), "{out:?}");
    assert!(!in_place(state.path()), "one revert closed every change");
    assert_eq!(lab.settings_of_a(), before_a, "tp-a as found");
}

/// `nictune ARGS` inside namespace `ns` with the state directory `state`, as an operator
/// who started the server with `ip netns exec` runs it.
fn nictune_in(ns: &str, state: &Path, args: &[&str]) -> Output {
    Command::new("ip")
        .args(["netns", "exec", ns, BIN])
        .args(args)
        .env("NICTUNE_STATE_DIR", state)
        .env("NICTUNE_TOKEN", TOKEN)
        .output()
        .unwrap()
}

/// A server killed outright with a client's change in place: nothing can put it back by
/// itself, so the journal and the session's mark make the next `nictune apply` and the next
/// `serve --allow-changes` there refuse until `nictune revert` has restored it. The server
/// was started with `ip netns exec` (no `--netns`), and its journal names that namespace:
/// the revert runs from the host and still restores the server's interface.
#[test]
fn a_killed_server_leaves_a_journal_that_blocks_new_changes_until_revert() {
    if let Some(why) = common::netns_skip_reason("tp") {
        nictune_core::live::skip(&why);
        return;
    }
    let _turn = one_tune_at_a_time();
    let peer_state = tempdir();
    let mut lab = Lab::taking_changes("tp", peer_state.path());
    let before = lab.settings_of_b();
    let target = nictune_bench::PeerTarget {
        addr: format!("198.18.77.2:{PORT}").parse().unwrap(),
        token: nictune_bench::Token::parse(TOKEN, "test").unwrap(),
        client_netns: Some(Path::new("/run/netns").join(&lab.a)),
    };
    let mut client = nictune_bench::changes::ChangeClient::open(&target).unwrap();
    client
        .change(&[
            "napi.defer-hard-irqs=3".into(),
            "napi.gro-flush-timeout=50000".into(),
        ])
        .unwrap();
    assert!(in_place(peer_state.path()));
    let mut server = lab.server.take().unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    drop(client);
    assert!(
        in_place(peer_state.path()),
        "nothing was left to put it back"
    );

    let state = peer_state.path();
    let apply = nictune_in(
        &lab.b,
        state,
        &["apply", "--iface", "tp-b", "napi.defer-hard-irqs=1"],
    );
    let err = String::from_utf8_lossy(&apply.stderr);
    assert_eq!(apply.status.code(), Some(2), "{err}");
    assert!(err.contains("must be reverted first"), "{err}");
    let serve = nictune_in(
        &lab.b,
        state,
        &[
            "serve",
            "--bind",
            "198.18.77.2:12878",
            "--allow-changes",
            "tp-b",
        ],
    );
    let err = String::from_utf8_lossy(&serve.stderr);
    assert_eq!(serve.status.code(), Some(2), "{err}");
    assert!(err.contains("must be reverted first"), "{err}");

    let status = nictune(state, &["status", "--json", "--all"]);
    let status: Json = serde_json::from_slice(&status.stdout).unwrap();
    for c in status["changes"].as_array().unwrap() {
        assert_eq!(
            c["netns"],
            lab.b.as_str(),
            "journaled where the server runs: {c}"
        );
    }
    let revert = nictune(state, &["revert"]);
    assert!(revert.status.success(), "{revert:?}");
    for c in peer_changes_reverted(state) {
        let done = (&c["phase"], &c["complete"]);
        assert_eq!(done, (&Json::from("reverted"), &Json::from(true)), "{c}");
    }
    assert_eq!(lab.settings_of_b(), before, "tp-b as found");
}
