//! Live tests of `apply`/`confirm`/`revert`/`status` on a veth pair inside network namespaces
//! this test creates (`nictune-apply-<pid>-<n>`, removed on drop, also on failure). Needs
//! root, `ip` and namespace support; elsewhere each test prints `skipped: <reason>`.
//!
//! Values are read back independently of the apply path with `nictune show --json` (the
//! inspection code) and `cat` of sysfs/procfs inside the namespace. Nothing outside the
//! namespaces is touched: the only sysctl written, net.core.somaxconn, is per-namespace, and
//! the state directory is a temp dir.
//!
//! Every change of the live host also takes the machine-wide lock (/run/nictune/change.lock),
//! so the tests take turns (a file-wide mutex) instead of refusing each other.

mod common;

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// One test at a time: they all take the machine-wide change lock.
static MACHINE: Mutex<()> = Mutex::new(());

/// A namespace with a veth pair v0/v1 (4 queues each, up, GRO on v0 so NAPIs exist).
struct Testbed {
    ns: String,
    state: tempfile::TempDir,
    _turn: MutexGuard<'static, ()>,
}

impl Testbed {
    fn new() -> Option<Testbed> {
        // First: the namespace probe below has one name per process, so it takes turns too.
        let turn = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(why) = skip_reason() {
            nictune_core::live::skip(&why);
            return None;
        }
        static N: AtomicU32 = AtomicU32::new(0);
        let ns = format!(
            "nictune-apply-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        let bed = Testbed {
            ns,
            state: tempfile::tempdir().unwrap(),
            _turn: turn,
        };
        bed.ip(&["netns", "add", &bed.ns]);
        let q = ["numrxqueues", "4", "numtxqueues", "4"];
        let mut add = vec!["-n", &bed.ns, "link", "add", "v0"];
        add.extend(q);
        add.extend(["type", "veth", "peer", "name", "v1"]);
        add.extend(q);
        bed.ip(&add);
        bed.ip(&["-n", &bed.ns, "link", "set", "v0", "up"]);
        bed.ip(&["-n", &bed.ns, "link", "set", "v1", "up"]);
        bed.ns_exec(&["ethtool", "-K", "v0", "gro", "on"]);
        Some(bed)
    }

    fn ip(&self, args: &[&str]) {
        let out = Command::new("ip").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "ip {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn ns_exec(&self, args: &[&str]) -> String {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.ns])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn nictune(&self, args: &[&str]) -> Output {
        common::command()
            .args(args)
            .env("NICTUNE_STATE_DIR", self.state.path())
            .env_remove("SSH_CONNECTION")
            .output()
            .unwrap()
    }

    fn apply(&self, settings: &[&str], extra: &[&str]) -> Output {
        let mut args = vec!["apply", "--netns", &self.ns, "--iface", "v0"];
        args.extend(settings);
        args.extend(extra);
        self.nictune(&args)
    }

    /// Starts `apply SETTINGS EXTRA` with every write slowed to 150 ms, so a test can act in
    /// the middle of it; stdout and stderr piped.
    fn spawn_apply(&self, settings: &[&str], extra: &[&str]) -> Child {
        common::command_with_default_signals()
            .args(["apply", "--netns", &self.ns, "--iface", "v0"])
            .args(settings)
            .args(extra)
            .env("NICTUNE_STATE_DIR", self.state.path())
            .env("NICTUNE_TEST_WRITE_DELAY_MS", "150")
            .env_remove("SSH_CONNECTION")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// The state directory's `changes/` and the one journal in it.
    fn only_journal(&self) -> (PathBuf, PathBuf) {
        let changes = self.state.path().join("changes");
        let mut all: Vec<PathBuf> = std::fs::read_dir(&changes)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(all.len(), 1, "{all:?}");
        (changes, all.remove(0))
    }

    /// Every value this test changes, read without the apply code: `nictune show` for the
    /// device, its NAPIs (ids dropped: they change when queues are recreated) and queues,
    /// and the sysctl file.
    fn state(&self) -> Json {
        let nic = self.v0();
        let mut napis: Vec<Json> = nic["napis"]["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                serde_json::json!([
                    n["defer_hard_irqs"],
                    n["gro_flush_timeout_ns"],
                    n["irq_suspend_timeout_ns"],
                    n["threaded"]
                ])
            })
            .collect();
        napis.sort_by_key(|n| n.to_string());
        // Keyed by name: the listing order follows the directory, which is not sorted.
        let queues: serde_json::Map<String, Json> = nic["queues"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| {
                (
                    format!("{}-{}", q["kind"].as_str().unwrap(), q["index"]),
                    q["steering_cpus"].clone(),
                )
            })
            .collect();
        serde_json::json!({
            "channels": nic["channels"], "features": nic["features"],
            "sysfs": [nic["napi_defer_hard_irqs"], nic["gro_flush_timeout_ns"], nic["threaded"]],
            "napis": napis, "queues": queues,
            "somaxconn": self.ns_exec(&["cat", "/proc/sys/net/core/somaxconn"]),
        })
    }

    fn napi_field(&self, field: &str) -> Vec<Json> {
        let nic = self.v0();
        nic["napis"]["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n[field].clone())
            .collect()
    }

    /// v0 as `nictune show --json` reports it.
    fn v0(&self) -> Json {
        let out = self.nictune(&["show", "--json", "--netns", &self.ns]);
        assert!(
            out.status.success(),
            "show: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Json = serde_json::from_slice(&out.stdout).unwrap();
        let nics = doc["nics"].as_array().unwrap();
        nics.iter().find(|n| n["name"] == "v0").unwrap().clone()
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).status();
    }
}

/// Why this machine cannot run the tests, if it cannot.
fn skip_reason() -> Option<String> {
    if !nictune_linux::write::privilege().is_root() {
        return Some("live apply tests need root".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("`ip` (iproute2) is not installed".into());
    }
    if Command::new("ethtool").arg("--version").output().is_err() {
        return Some("`ethtool` is not installed (needed to turn GRO on in the testbed)".into());
    }
    let probe = format!("nictune-apply-probe-{}", std::process::id());
    let ok = Command::new("ip")
        .args(["netns", "add", &probe])
        .status()
        .is_ok_and(|s| s.success());
    let _ = Command::new("ip").args(["netns", "del", &probe]).status();
    (!ok).then(|| "cannot create network namespaces here".into())
}

fn ok(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {text}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Device-wide settings: a channel change recreates queues and NAPIs, so per-queue and
/// per-NAPI settings go in a second change (the plan refuses to mix them).
const DEVICE: [&str; 4] = [
    "channels.rx=2",
    "channels.tx=3",
    "feature.rx-gro-list=on",
    "sysctl.net.core.somaxconn=1024",
];

/// Every per-NAPI and per-queue kind veth supports, changed from its default.
const PER_QUEUE: [&str; 6] = [
    "sysfs.napi_defer_hard_irqs=1",
    "napi.defer-hard-irqs=2",
    "napi.gro-flush-timeout=20000",
    "napi.irq-suspend-timeout=1000000",
    "napi.threaded=1",
    "rps.cpus@0=1",
];

#[test]
fn every_kind_applies_reads_back_and_reverts() {
    let Some(bed) = Testbed::new() else { return };
    let before = bed.state();
    let refused = bed.apply(&["channels.rx=2", "napi.threaded=1"], &[]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "channels and per-NAPI in one change"
    );
    ok(&bed.apply(&DEVICE, &[]));
    let middle = bed.state();
    let text = ok(&bed.apply(&PER_QUEUE, &[]));
    assert!(text.contains("written and read back"), "{text}");
    let after = bed.state();
    assert_eq!(after["channels"]["value"]["rx"], 2);
    assert_eq!(after["channels"]["value"]["tx"], 3);
    assert_eq!(after["features"]["value"]["rx-gro-list"], true);
    assert_eq!(after["somaxconn"], "1024");
    assert_eq!(after["sysfs"][0]["value"], 1, "sysfs napi_defer_hard_irqs");
    for napi in after["napis"].as_array().unwrap() {
        let want = serde_json::json!([2, 20000, 1_000_000, 1]);
        assert_eq!(
            napi, &want,
            "per-NAPI values win over the sysfs file written first"
        );
    }
    assert_eq!(
        after["queues"]["rx-0"]["value"], "0",
        "rps_cpus of rx-0 holds CPU 0 (mask 1): {after:#}"
    );
    // Applying the same again is a no-op with exit 0.
    let again = ok(&bed.apply(&PER_QUEUE, &[]));
    assert!(again.starts_with("Already in place"), "{again}");
    // Revert steps back one change at a time.
    ok(&bed.nictune(&["revert"]));
    assert_eq!(bed.state(), middle);
    ok(&bed.nictune(&["revert"]));
    assert_eq!(bed.state(), before);
}

/// A value someone changed since the apply (here a sysctl written behind nictune's back) is
/// put back by `revert` all the same and named, in its text, its JSON and `status`.
#[test]
fn a_value_changed_since_the_apply_is_reverted_and_named() {
    let Some(bed) = Testbed::new() else { return };
    let before = bed.state();
    ok(&bed.apply(&["sysctl.net.core.somaxconn=1024", "rps.cpus@0=1"], &[]));
    bed.ns_exec(&["sh", "-c", "echo 2048 > /proc/sys/net/core/somaxconn"]);
    let out = bed.nictune(&["revert", "--json"]);
    let doc: Json = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(bed.state(), before, "put back all the same");
    let restored = doc["reverted"]["restored"].as_array().unwrap();
    for r in restored {
        let want = match r["setting"].to_string().contains("somaxconn") {
            // A sysctl's value is text, as its file holds it.
            true => serde_json::json!({"left": {"text": "1024"}, "found": {"text": "2048"}}),
            false => Json::Null,
        };
        assert_eq!(r["drifted"], want, "{r}");
    }
    let status = ok(&bed.nictune(&["status"]));
    assert!(
        status.contains("changed since the apply (put back all the same):")
            && status.contains("somaxconn: 2048 since, not 1024"),
        "{status}"
    );
}

#[test]
fn unconfirmed_change_reverts_itself_and_confirmed_one_stays() {
    let Some(bed) = Testbed::new() else { return };
    let settings = ["napi.gro-flush-timeout=20000", "napi.defer-hard-irqs=2"];
    let before = bed.napi_field("gro_flush_timeout_ns");
    ok(&bed.apply(&settings, &["--confirm-within", "3s"]));
    assert!(bed
        .napi_field("gro_flush_timeout_ns")
        .iter()
        .all(|v| v == 20000));
    sleep(Duration::from_secs(5));
    assert_eq!(
        bed.napi_field("gro_flush_timeout_ns"),
        before,
        "the watchdog restored the values"
    );
    assert!(bed.napi_field("defer_hard_irqs").iter().all(|v| v == 0));
    let status = ok(&bed.nictune(&["status"]));
    assert!(status.contains("reverted by the watchdog"), "{status}");
    // Its log says where it runs (no systemd as PID 1 here or in CI: the caller's group).
    let log = std::fs::read_to_string(bed.state.path().join("watchdog.log")).unwrap();
    let placed = [
        "in its own systemd scope",
        "in the control group of the apply",
    ];
    assert!(
        log.contains("nictune watchdog for change ") && placed.iter().any(|p| log.contains(p)),
        "{log}"
    );

    ok(&bed.apply(&settings, &["--confirm-within", "3s"]));
    let confirmed = ok(&bed.nictune(&["confirm"]));
    assert!(confirmed.starts_with("Confirmed change"), "{confirmed}");
    sleep(Duration::from_secs(5));
    assert!(bed
        .napi_field("gro_flush_timeout_ns")
        .iter()
        .all(|v| v == 20000));
    assert!(bed.napi_field("defer_hard_irqs").iter().all(|v| v == 2));
}

/// A watchdog whose change's journal is gone (its state directory removed) has nothing left
/// to do and ends; it used to take that for a passing read error and wait for ever.
#[test]
fn a_watchdog_whose_journal_is_gone_ends() {
    let Some(bed) = Testbed::new() else { return };
    let out = ok(&bed.apply(
        &["napi.gro-flush-timeout=20000"],
        &["--json", "--confirm-within", "30s"],
    ));
    let doc: Json = serde_json::from_str(&out).unwrap();
    let pid = doc["watchdog_pid"].as_u64().expect("a watchdog") as u32;
    let proc = PathBuf::from(format!("/proc/{pid}"));
    assert!(proc.exists(), "the watchdog runs");
    std::fs::remove_dir_all(bed.state.path().join("changes")).unwrap();
    let end = Instant::now() + Duration::from_secs(5);
    while proc.exists() && Instant::now() < end {
        sleep(Duration::from_millis(50));
    }
    assert!(!proc.exists(), "watchdog {pid} ended");
}

/// The watchdog reads only its own change's journal: another journal it cannot read (bytes
/// that are not UTF-8 here) used to end it at its first look, and the change stayed.
#[test]
fn the_watchdog_reverts_even_when_another_journal_is_unreadable() {
    let Some(bed) = Testbed::new() else { return };
    let before = bed.napi_field("gro_flush_timeout_ns");
    ok(&bed.apply(
        &["napi.gro-flush-timeout=20000"],
        &["--confirm-within", "2s"],
    ));
    // Damaged while the change waits for its confirmation (apply itself would refuse it).
    let changes = bed.state.path().join("changes");
    std::fs::write(changes.join("1-1.jsonl"), b"\xff\xfe not a journal\n").unwrap();
    assert!(bed
        .napi_field("gro_flush_timeout_ns")
        .iter()
        .all(|v| v == 20000));
    sleep(Duration::from_secs(4));
    assert_eq!(
        bed.napi_field("gro_flush_timeout_ns"),
        before,
        "the watchdog restored the values"
    );
}

/// A change journaled in another boot is closed by revert without a write: the reboot reset
/// what it set, and its IRQ numbers and interface names may now be other devices'. The reboot
/// is stood in for by the journal's boot id; the value it set stays as it is.
#[test]
fn a_change_from_before_a_reboot_is_closed_without_writing() {
    let Some(bed) = Testbed::new() else { return };
    ok(&bed.apply(&["napi.defer-hard-irqs=2"], &["--confirm-within", "30s"]));
    let (_, journal) = bed.only_journal();
    let text = std::fs::read_to_string(&journal).unwrap();
    let now = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    assert!(text.contains(now.trim()), "the boot is journaled: {text}");
    let other = text.replace(now.trim(), "00000000-0000-4000-8000-000000000000");
    std::fs::write(&journal, other).unwrap();
    // A pending change from another boot: its watchdog died with that boot, and nothing of
    // it is in place; `status` says so instead of "waiting for confirmation".
    let status = bed.nictune(&["status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(1), "{text}");
    assert!(text.contains("MADE BEFORE THE LAST REBOOT"), "{text}");
    let reverted = ok(&bed.nictune(&["revert"]));
    assert!(
        reverted.contains("made before the machine last booted"),
        "{reverted}"
    );
    assert!(
        bed.napi_field("defer_hard_irqs").iter().all(|v| v == 2),
        "nothing written"
    );
    let status = bed.nictune(&["status"]);
    assert_eq!(status.status.code(), Some(0), "nothing left open");
}

/// The change's interface removed since (a VF or USB NIC gone, a veth deleted): its settings
/// went with it. The revert restores the rest (the sysctl), says why it left those out and
/// closes the change; it used to fail on them at every try and keep every later apply refused.
#[test]
fn a_change_whose_interface_is_gone_reverts_the_rest_and_closes() {
    let Some(bed) = Testbed::new() else { return };
    let somaxconn = || bed.ns_exec(&["cat", "/proc/sys/net/core/somaxconn"]);
    let before = somaxconn();
    ok(&bed.apply(
        &["napi.defer-hard-irqs=2", "sysctl.net.core.somaxconn=1024"],
        &[],
    ));
    bed.ip(&["-n", &bed.ns, "link", "del", "v0"]);
    let reverted = ok(&bed.nictune(&["revert"]));
    assert!(reverted.contains("interface v0 is gone"), "{reverted}");
    assert_ne!(before.trim(), "1024", "the test changes it");
    assert_eq!(somaxconn(), before, "the sysctl is back");
    let status = bed.nictune(&["status"]);
    assert_eq!(
        status.status.code(),
        Some(0),
        "nothing left open: {}",
        String::from_utf8_lossy(&status.stdout)
    );
}

/// `iface`'s rx-0 RPS mask in the testbed's namespace, as sysfs prints it.
fn rx0_rps(bed: &Testbed, iface: &str) -> String {
    let file = format!("/sys/class/net/{iface}/queues/rx-0/rps_cpus");
    bed.ns_exec(&["cat", &file])
}

/// Steers v0's rx-0 to CPU 0 before a change, so the old value a journal keeps is not the
/// default and a write of it shows.
fn steer_v0_rx0_to_cpu0(bed: &Testbed) {
    bed.ns_exec(&[
        "sh",
        "-c",
        "echo 1 > /sys/class/net/v0/queues/rx-0/rps_cpus",
    ]);
}

/// A veth renamed after the apply (`ip link set name`, as a udev rule or a container runtime
/// does) is the same device under another name, which its ifindex tells: the revert puts its
/// value back under the new name, says so, and closes the change. `also_recreated`: a new veth
/// then takes the old name, and keeps its own value.
fn a_renamed_interface_is_followed(also_recreated: bool) {
    let Some(bed) = Testbed::new() else { return };
    let rps = |iface: &str| rx0_rps(&bed, iface);
    steer_v0_rx0_to_cpu0(&bed);
    ok(&bed.apply(&["rps.cpus@0=2"], &[]));
    let changed = rps("v0");
    bed.ip(&["-n", &bed.ns, "link", "set", "v0", "down"]);
    bed.ip(&["-n", &bed.ns, "link", "set", "v0", "name", "up0"]);
    assert_eq!(rps("up0"), changed, "a rename keeps the value");
    if also_recreated {
        bed.ip(&[
            "-n", &bed.ns, "link", "add", "v0", "type", "veth", "peer", "name", "v2",
        ]);
    }
    let default = also_recreated.then(|| rps("v0"));
    let reverted = ok(&bed.nictune(&["revert"]));
    assert_eq!(
        rps("up0").trim_start_matches('0'),
        "1",
        "the old value, under the new name: {reverted}"
    );
    assert!(
        reverted.contains("Renamed: v0 rx-0 rps.cpus went to up0"),
        "{reverted}"
    );
    assert!(!reverted.contains("left out"), "{reverted}");
    if let Some(default) = default {
        assert_eq!(rps("v0"), default, "the new v0 is not written: {reverted}");
    }
    let status = bed.nictune(&["status"]);
    let listed = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(0), "nothing left open: {listed}");
    assert!(
        listed.contains("renamed interface: v0 rx-0 rps.cpus → up0"),
        "{listed}"
    );
}

#[test]
fn a_change_whose_interface_was_renamed_reverts_under_the_new_name() {
    a_renamed_interface_is_followed(false);
}

#[test]
fn a_renamed_interface_is_followed_and_the_new_device_under_its_old_name_left_alone() {
    a_renamed_interface_is_followed(true);
}

/// A veth deleted and made again under the same name (as a VF re-created or a udev rename
/// gives a name to another device) is another device: its ifindex differs from the one the
/// change recorded. The revert leaves it at its own defaults instead of writing the change's
/// old values to it, restores the rest (the sysctl), says why, and closes the change.
#[test]
fn a_change_whose_interface_was_re_created_under_its_name_leaves_the_new_device_alone() {
    let Some(bed) = Testbed::new() else { return };
    let somaxconn = || bed.ns_exec(&["cat", "/proc/sys/net/core/somaxconn"]);
    let rps = || rx0_rps(&bed, "v0");
    let before = somaxconn();
    steer_v0_rx0_to_cpu0(&bed);
    let old_ifindex = bed.ns_exec(&["cat", "/sys/class/net/v0/ifindex"]);
    ok(&bed.apply(&["rps.cpus@0=2", "sysctl.net.core.somaxconn=1024"], &[]));
    bed.ip(&["-n", &bed.ns, "link", "del", "v0"]);
    bed.ip(&[
        "-n", &bed.ns, "link", "add", "v0", "type", "veth", "peer", "name", "v1",
    ]);
    assert_ne!(
        bed.ns_exec(&["cat", "/sys/class/net/v0/ifindex"]),
        old_ifindex
    );
    let default = rps();
    assert_eq!(
        default.trim_start_matches('0'),
        "",
        "a new veth steers nothing: {default}"
    );
    let reverted = ok(&bed.nictune(&["revert"]));
    assert_eq!(rps(), default, "the new device is not written: {reverted}");
    assert!(
        reverted.contains("v0 is now another device (ifindex"),
        "{reverted}"
    );
    assert!(reverted.contains("1 left out"), "{reverted}");
    assert_ne!(before.trim(), "1024", "the test changes it");
    assert_eq!(somaxconn(), before, "the rest is restored");
    let status = bed.nictune(&["status"]);
    let listed = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(0), "nothing left open: {listed}");
    assert!(listed.contains("(1 left out)"), "{listed}");
    assert!(
        listed.contains("left out (not written): v0 rx-0 rps.cpus: v0 is now another device"),
        "{listed}"
    );
}

#[test]
fn kill_9_mid_apply_then_revert_restores_every_value() {
    kill_9_mid_apply(&[]);
}

/// The same with the auto-revert watchdog asked for: it starts before the first write, so
/// when the apply is killed part-way it puts back what was written by itself, within a poll
/// — the safety net holds even if the person has lost the machine.
#[test]
fn kill_9_mid_apply_confirm_within_is_put_back_by_the_watchdog() {
    let Some(bed) = Testbed::new() else { return };
    let before = bed.state();
    let mut child = bed.spawn_apply(&PER_QUEUE, &["--confirm-within", "30s"]);
    let journal_dir = bed.state.path().join("changes");
    wait_for_intents(&journal_dir, 4);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    while bed.state() != before && Instant::now() < end {
        sleep(Duration::from_millis(100));
    }
    assert_eq!(bed.state(), before, "the watchdog put every value back");
    let status = ok(&bed.nictune(&["status"]));
    assert!(status.contains("reverted by the watchdog"), "{status}");
}

fn kill_9_mid_apply(extra: &[&str]) {
    let Some(bed) = Testbed::new() else { return };
    let before = bed.state();
    let mut settings = PER_QUEUE.to_vec();
    settings.push("sysctl.net.core.somaxconn=1024");
    let mut child = bed.spawn_apply(&settings, extra);
    // Wait until a few writes are journaled, then kill nictune without warning.
    let journal_dir = bed.state.path().join("changes");
    wait_for_intents(&journal_dir, 4);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let written = intents(&journal_dir);
    // 4 NAPIs x 4 keys + sysfs + rps + sysctl = 19 steps; the kill lands well before the end.
    assert!(
        (4..19).contains(&written),
        "killed mid-apply after {written} intents"
    );
    assert_ne!(
        bed.state(),
        before,
        "some values were changed before the kill"
    );

    let status = bed.nictune(&["status"]);
    assert_eq!(status.status.code(), Some(1), "status reports a problem");
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("INTERRUPTED"), "{text}");
    assert!(
        text.contains("Undo with: nictune revert --state-dir"),
        "{text}"
    );
    let other = bed.nictune(&["completions", "bash"]);
    assert!(
        String::from_utf8_lossy(&other.stderr).contains("run `nictune revert`"),
        "every command warns"
    );
    let refused = bed.apply(&["napi.threaded=0"], &[]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "no new change on top of an interrupted one"
    );

    ok(&bed.nictune(&["revert"]));
    assert_eq!(bed.state(), before);
    assert_eq!(bed.nictune(&["status"]).status.code(), Some(0));
}

/// Waits (up to 20 s) until `n` intents are journaled in `dir`.
fn wait_for_intents(dir: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while intents(dir) < n && Instant::now() < deadline {
        sleep(Duration::from_millis(10));
    }
}

/// `intent` lines across the journals in `dir`.
fn intents(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .map(|t| t.matches("\"record\":\"intent\"").count())
        .sum()
}

#[test]
fn unsupported_settings_on_veth_fail_clearly_and_change_nothing() {
    let Some(bed) = Testbed::new() else { return };
    let before = bed.state();
    for setting in ["coalesce.rx-usecs=10", "ring.rx=512"] {
        let out = bed.apply(&["napi.defer-hard-irqs=2", setting], &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("not supported here"), "{err}");
        assert!(err.contains("nothing was changed"), "{err}");
    }
    assert_eq!(bed.state(), before);
    let journals = std::fs::read_dir(bed.state.path().join("changes")).map_or(0, |d| d.count());
    assert_eq!(journals, 0, "no journal: nothing was attempted");
}

/// A state directory other users can write could hold a planted journal that a root
/// revert would obey: refused before any lock or write, naming the mode, with a way out.
#[test]
fn a_state_directory_other_users_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let Some(bed) = Testbed::new() else { return };
    let before = bed.state();
    let shared = tempfile::tempdir().unwrap();
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let dir = shared.path().to_str().unwrap();
    let out = bed.apply(&["napi.defer-hard-irqs=2"], &["--state-dir", dir]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is writable by other users (mode 0777)"),
        "{err}"
    );
    assert!(err.contains("hint: give a directory only you"), "{err}");
    assert_eq!(bed.state(), before, "nothing changed");
    assert!(std::fs::read_dir(shared.path()).unwrap().next().is_none());
}

#[test]
fn the_default_route_interface_needs_force() {
    let Some(bed) = Testbed::new() else { return };
    bed.ip(&["-n", &bed.ns, "addr", "add", "198.18.0.1/24", "dev", "v0"]);
    bed.ip(&[
        "-n",
        &bed.ns,
        "route",
        "add",
        "default",
        "via",
        "198.18.0.2",
        "dev",
        "v0",
    ]);
    // A dry run shows the plan and says the real one would be refused.
    let dry = ok(&bed.apply(&["napi.defer-hard-irqs=2"], &["--dry-run"]));
    assert!(
        dry.contains("without --dry-run this change would be refused")
            && dry.contains("v0 carries the default route"),
        "{dry}"
    );
    let refused = bed.apply(&["napi.defer-hard-irqs=2"], &[]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(err.contains("v0 carries the default route"), "{err}");
    assert!(
        bed.napi_field("defer_hard_irqs").iter().all(|v| v == 0),
        "nothing changed"
    );
    ok(&bed.apply(&["napi.defer-hard-irqs=2"], &["--force"]));
    assert!(bed.napi_field("defer_hard_irqs").iter().all(|v| v == 2));
}

#[test]
fn a_change_whose_namespace_is_gone_is_closed_without_writes() {
    let Some(bed) = Testbed::new() else { return };
    ok(&bed.apply(&["napi.defer-hard-irqs=2"], &["--confirm-within", "60s"]));
    bed.ip(&["netns", "del", &bed.ns]);
    let text = ok(&bed.nictune(&["revert"]));
    assert!(text.contains("is gone, and its settings with it"), "{text}");
    assert_eq!(
        bed.nictune(&["status"]).status.code(),
        Some(0),
        "nothing left to recover"
    );
}

/// `nictune ARGS` run the way `ip netns exec NS nictune …` runs it: inside the namespace,
/// without `--netns`.
fn nictune_in(bed: &Testbed, ns: &str, args: &[&str]) -> Output {
    Command::new("ip")
        .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_nictune")])
        .args(args)
        .env("NICTUNE_STATE_DIR", bed.state.path())
        .env_remove("SSH_CONNECTION")
        .output()
        .unwrap()
}

/// A change made by a process started inside a named namespace (`ip netns exec`, no
/// `--netns`) is journaled with that namespace, so `nictune revert` from the host restores
/// it there — not on a host interface of the same name.
#[test]
fn a_change_made_inside_a_named_namespace_is_journaled_there_and_reverted_there() {
    let Some(bed) = Testbed::new() else { return };
    let before = bed.state();
    ok(&nictune_in(
        &bed,
        &bed.ns,
        &[
            "apply",
            "--iface",
            "v0",
            "sysctl.net.core.somaxconn=1000",
            "napi.defer-hard-irqs=3",
        ],
    ));
    let (_, journal) = bed.only_journal();
    let text = std::fs::read_to_string(&journal).unwrap();
    let begin: Json = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(begin["netns"], bed.ns.as_str(), "{begin}");
    assert_eq!(
        bed.ns_exec(&["cat", "/proc/sys/net/core/somaxconn"]),
        "1000"
    );
    let status = ok(&bed.nictune(&["status"]));
    assert!(
        status.contains(&bed.ns),
        "status names the namespace: {status}"
    );
    ok(&bed.nictune(&["revert"]));
    assert_eq!(
        bed.state(),
        before,
        "reverted from the host, inside the namespace"
    );
}

/// A process in a namespace with no name refuses to change anything: its journal could not
/// lead a revert back there.
#[test]
fn a_change_from_an_unnamed_namespace_is_refused_before_any_write() {
    let Some(bed) = Testbed::new() else { return };
    let out = Command::new("unshare")
        .args(["--net", env!("CARGO_BIN_EXE_nictune")])
        .args(["apply", "sysctl.net.core.somaxconn=1000"])
        .env("NICTUNE_STATE_DIR", bed.state.path())
        .env_remove("SSH_CONNECTION")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no name under /run/netns"), "{stderr}");
    assert!(stderr.contains("ip netns exec"), "the hint: {stderr}");
    let changes = bed.state.path().join("changes");
    let journals = std::fs::read_dir(&changes).map_or(0, |d| d.count());
    assert_eq!(journals, 0, "nothing journaled");
}

/// Sends `signal` (a name for kill(1): INT, TERM, HUP) to a process this test started.
fn send(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {}", child.id());
}

/// Issue #12.2/#12.7: INT, TERM or HUP (a closed terminal or SSH session) in the middle of
/// `apply --confirm-within` rolls back every value written (exit 3) and leaves no change
/// open; for HUP the output pipes are closed first, as a vanished terminal would be.
#[test]
fn a_signal_mid_apply_confirm_within_rolls_back_every_value() {
    let Some(bed) = Testbed::new() else { return };
    let before = bed.state();
    for signal in ["INT", "TERM", "HUP"] {
        let mut child = bed.spawn_apply(&PER_QUEUE, &["--confirm-within", "30s"]);
        let started = intents(&bed.state.path().join("changes"));
        wait_for_intents(&bed.state.path().join("changes"), started + 3);
        if signal == "HUP" {
            drop(child.stdout.take());
            drop(child.stderr.take());
        }
        send(&child, signal);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{signal}: {err}");
        if signal != "HUP" {
            assert!(err.contains("interrupted by a signal"), "{signal}: {err}");
            assert!(
                err.contains("every value is back as it was"),
                "{signal}: {err}"
            );
        }
        assert_eq!(bed.state(), before, "{signal}: every value rolled back");
        let status = bed.nictune(&["status"]);
        assert_eq!(status.status.code(), Some(0), "{signal}: nothing left open");
    }
}

/// Issue #12.1: with the journal's writes failing (ENOSPC injected by strace at the Nth
/// write), apply said "nothing was changed" (exit 2) and left values changed that `revert`
/// could not restore. Now at every N: exit 0 with the change in place, or 2/3 with every
/// value as before; and `revert` always gets back to the values as found.
#[test]
fn journal_enospc_at_any_write_never_leaves_values_changed_behind_an_error() {
    let Some(bed) = Testbed::new() else { return };
    if Command::new("strace").arg("-V").output().is_err() {
        nictune_core::live::skip("strace is not installed (scripts/install-deps installs it)");
        return;
    }
    let settings = ["napi.gro-flush-timeout@0=20000", "napi.defer-hard-irqs@0=2"];
    let before = bed.state();
    let mut seen = std::collections::BTreeSet::new();
    let confirm: [&[&str]; 2] = [&[], &["--confirm-within", "60s"]];
    for (n, extra) in (1..=12).flat_map(|n| confirm.map(|e| (n, e))) {
        let state = tempfile::tempdir().unwrap();
        let state_dir = state.path().to_str().unwrap();
        let inject = format!("inject=write:error=ENOSPC:when={n}");
        let out = Command::new("strace")
            // Not -f: the journal is written by the main thread, and a traced watchdog
            // would keep strace (and this test) waiting until its deadline.
            .args(["-o", "/dev/null", "-e", &inject])
            .arg(env!("CARGO_BIN_EXE_nictune"))
            .args(["apply", "--netns", &bed.ns, "--iface", "v0"])
            .args(settings)
            .args(extra)
            .args(["--state-dir", state_dir])
            .env_remove("SSH_CONNECTION")
            .output()
            .unwrap();
        let code = out.status.code();
        let err = String::from_utf8_lossy(&out.stderr);
        match code {
            Some(0) => assert_ne!(
                bed.state(),
                before,
                "write {n} {extra:?}: exit 0, no change"
            ),
            Some(2 | 3) => assert_eq!(bed.state(), before, "write {n} {extra:?}: {code:?}: {err}"),
            other => panic!("write {n} {extra:?}: exit {other:?}: {err}"),
        }
        seen.insert(code);
        for _ in 0..3 {
            ok(&bed.nictune(&["revert", "--state-dir", state_dir]));
        }
        assert_eq!(bed.state(), before, "write {n}: revert restores");
        let status = bed.nictune(&["status", "--state-dir", state_dir]);
        assert_eq!(
            status.status.code(),
            Some(0),
            "write {n}: nothing left open"
        );
    }
    assert!(seen.len() >= 3, "exits 0, 2 and 3 all reached: {seen:?}");
}

/// Issue #12.5: two applies through different state directories on the same interface
/// interleaved; the machine-wide lock makes the second wait its turn, naming the first.
#[test]
fn a_second_apply_with_another_state_dir_is_refused_naming_the_first() {
    let Some(bed) = Testbed::new() else { return };
    let before = bed.state();
    let first = bed.spawn_apply(&PER_QUEUE, &[]);
    wait_for_intents(&bed.state.path().join("changes"), 2);
    let other = tempfile::tempdir().unwrap();
    let other_dir = other.path().to_str().unwrap();
    let second = bed.apply(&["napi.defer-hard-irqs=5"], &["--state-dir", other_dir]);
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(err.contains("/run/nictune/change.lock"), "{err}");
    assert!(
        err.contains(&format!("held by pid {}", first.id())),
        "{err}"
    );
    let out = first.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!other.path().join("changes").exists() || intents(&other.path().join("changes")) == 0);
    ok(&bed.nictune(&["revert"]));
    assert_eq!(bed.state(), before);
}

/// Issue #12.3: a journal line naming a step the change does not have made `revert` panic
/// after writing its `revert-begin`, and every later revert panicked too.
#[test]
fn a_corrupt_journal_line_is_named_by_revert_which_restores_the_valid_steps() {
    let Some(bed) = Testbed::new() else { return };
    let before = bed.state();
    ok(&bed.apply(&["napi.defer-hard-irqs=2"], &[]));
    let (_, journal) = bed.only_journal();
    let mut text = std::fs::read_to_string(&journal).unwrap();
    let line = text.lines().count() + 1;
    text += "{\"record\":\"intent\",\"step\":99}\n";
    std::fs::write(&journal, text).unwrap();
    let out = bed.nictune(&["revert"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let named = format!(
        "journal {} line {line}: record \"intent\" names step 99",
        journal.display()
    );
    assert!(err.contains(&named), "{err}");
    assert!(err.contains("hint:"), "{err}");
    assert_eq!(bed.state(), before, "the valid steps were restored");
    let again = bed.nictune(&["revert"]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(bed.nictune(&["status"]).status.code(), Some(0));
}

/// Issue #12.4: a crash between the `begin` record and the first `intent` left the change
/// INTERRUPTED for good: `revert` said "Nothing to revert" and apply refused until a file
/// was deleted by hand. Now revert closes it and apply proceeds.
#[test]
fn a_change_interrupted_before_its_first_write_is_closed_by_revert_and_apply_proceeds() {
    let Some(bed) = Testbed::new() else { return };
    ok(&bed.apply(&["napi.defer-hard-irqs=2"], &[]));
    ok(&bed.nictune(&["revert"]));
    // The same change's begin record alone, as a crash right after it leaves it, from a
    // process that is gone.
    let (changes, journal) = bed.only_journal();
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut begin: Json = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    begin["id"] = "1795239660000-4194305".into();
    begin["pid"] = 4_194_305.into(); // above PID_MAX_LIMIT: never alive
    let path = changes.join("1795239660000-4194305.jsonl");
    std::fs::write(path, begin.to_string() + "\n").unwrap();
    let status = bed.nictune(&["status"]);
    assert_eq!(status.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&status.stdout).contains("INTERRUPTED"));
    assert_eq!(
        bed.apply(&["napi.defer-hard-irqs=2"], &[]).status.code(),
        Some(2)
    );
    let text = ok(&bed.nictune(&["revert"]));
    assert!(text.contains("stopped before its first write"), "{text}");
    assert_eq!(bed.nictune(&["status"]).status.code(), Some(0));
    ok(&bed.apply(&["napi.defer-hard-irqs=2"], &[]));
    ok(&bed.nictune(&["revert"]));
}

/// The machine-wide lock must not defeat the auto-revert: a watchdog whose deadline comes
/// while another change (a tune through another state directory, say) holds the lock waits
/// for its turn, however long, and then reverts.
#[test]
fn the_watchdog_waits_for_the_machine_wide_lock_and_then_reverts() {
    let Some(bed) = Testbed::new() else { return };
    let before = bed.napi_field("defer_hard_irqs");
    ok(&bed.apply(&["napi.defer-hard-irqs=2"], &["--confirm-within", "1s"]));
    let lock = std::path::Path::new(nictune_apply::lock::MACHINE_LOCK);
    let held = nictune_apply::lock::MachineLock::try_take(lock).unwrap();
    // Longer than one round of the watchdog's waiting (10 s).
    sleep(Duration::from_secs(12));
    assert!(
        bed.napi_field("defer_hard_irqs").iter().all(|v| v == 2),
        "still held"
    );
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(15);
    while bed.napi_field("defer_hard_irqs") != before && Instant::now() < deadline {
        sleep(Duration::from_millis(100));
    }
    assert_eq!(
        bed.napi_field("defer_hard_irqs"),
        before,
        "the watchdog reverted"
    );
    let status = ok(&bed.nictune(&["status"]));
    assert!(status.contains("reverted by the watchdog"), "{status}");
}
