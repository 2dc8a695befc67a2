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
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_nictune");
const TOKEN: &str = "tune-peer-test-token-0123";
const PORT: &str = "12877";

fn ip(args: &[&str]) -> Output {
    let out = Command::new("ip").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The two namespaces and the server; all removed when dropped, also on a failed assertion.
struct Lab {
    a: String,
    b: String,
    server: Option<Child>,
}

impl Lab {
    fn create() -> Lab {
        let pid = std::process::id();
        let mut lab = Lab {
            a: format!("nictune-tp-{pid}-a"),
            b: format!("nictune-tp-{pid}-b"),
            server: None,
        };
        ip(&["netns", "add", &lab.a]);
        ip(&["netns", "add", &lab.b]);
        ip(&[
            "-n", &lab.a, "link", "add", "tp-a", "type", "veth", "peer", "name", "tp-b", "netns",
            &lab.b,
        ]);
        for (ns, dev, addr) in [
            (&lab.a, "tp-a", "198.18.77.1/24"),
            (&lab.b, "tp-b", "198.18.77.2/24"),
        ] {
            ip(&["-n", ns, "addr", "add", addr, "dev", dev]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
            // NAPI mode, so the per-NAPI settings have instances to act on.
            ip(&[
                "netns", "exec", ns, "ethtool", "-K", dev, "gro", "on", "tso", "off",
            ]);
        }
        let server = Command::new("ip")
            .args(["netns", "exec", &lab.b, BIN, "serve", "--bind"])
            .arg(format!("198.18.77.2:{PORT}"))
            .env("NICTUNE_TOKEN", TOKEN)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        lab.server = Some(server);
        lab.wait_for_listener();
        lab
    }

    /// Waits (at most 10 s) until the server listens.
    fn wait_for_listener(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let out = Command::new("ip")
                .args(["netns", "exec", &self.b, "ss", "-ltnH"])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&out.stdout).contains(&format!(":{PORT}")) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("nictune serve did not start listening in {}", self.b);
    }

    /// Writes tp-a's sysfs attribute `file`, without nictune.
    fn write_a(&self, file: &str, value: &str) {
        let path = format!("/sys/class/net/tp-a/{file}");
        let script = format!("echo {value} > {path}");
        ip(&["netns", "exec", &self.a, "sh", "-c", &script]);
    }

    /// What the tune may change on tp-a, read without nictune.
    fn settings_of_a(&self) -> String {
        let mut all = String::new();
        for file in ["gro_flush_timeout", "napi_defer_hard_irqs"] {
            let out = Command::new("ip")
                .args(["netns", "exec", &self.a, "cat"])
                .arg(format!("/sys/class/net/tp-a/{file}"))
                .output()
                .unwrap();
            all += &format!("{file}: {}", String::from_utf8_lossy(&out.stdout));
        }
        for flag in ["-c", "-l"] {
            let out = Command::new("ip")
                .args(["netns", "exec", &self.a, "ethtool", flag, "tp-a"])
                .output()
                .unwrap();
            all += &String::from_utf8_lossy(&out.stdout);
        }
        all
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(mut server) = self.server.take() {
            let _ = server.kill();
            let _ = server.wait();
        }
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
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
        eprintln!("skipped: {why}");
        return;
    }
    let state = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let lab = Lab::create();
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
            "--warm-up",
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
