//! The real-driver testbed end to end: a QEMU guest running Linux's own e1000/e1000e driver,
//! driven through its agent. Needs root, QEMU and the guest directory
//! (`scripts/install-guest`); without them each test says why it skipped.

mod common;

use nictune_bench::changes::ChangeClient;
use nictune_bench::{BenchSpec, ServerSide, TestKind};
use nictune_core::progress::NoProgress;
use nictune_linux::write::privilege;
use nictune_vm::far::SERVE_STATE_DIR;
use nictune_vm::{BedOptions, Nic, VmBed};
use std::path::PathBuf;
use std::time::Duration;

/// One guest at a time: two TCG guests on a 2-core machine would slow each other's boot
/// past its bounds and disturb each other's measurements.
static ONE_GUEST: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds the one-guest lock for a test (a failed test's poisoned lock is still a lock).
fn one_guest() -> std::sync::MutexGuard<'static, ()> {
    ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner())
}

/// The one-guest lock for a test, or `None` (the reason printed) where this machine cannot
/// boot a guest.
fn guest_slot() -> Option<std::sync::MutexGuard<'static, ()>> {
    if let Some(why) = skip_reason() {
        nictune_core::live::skip(&why);
        return None;
    }
    Some(one_guest())
}

/// The one-guest lock and a booted guest running `nic`'s driver, or `None` (the reason
/// printed) where this machine cannot boot one.
fn boot(nic: Nic) -> Option<(std::sync::MutexGuard<'static, ()>, VmBed)> {
    let slot = guest_slot()?;
    Some((
        slot,
        VmBed::create(&options(nic), privilege()).expect("guest boots"),
    ))
}

/// Why this machine cannot boot a testbed guest, if it cannot.
fn skip_reason() -> Option<String> {
    if !privilege().is_root() {
        return Some("needs root".into());
    }
    if let Err(e) = nictune_vm::GuestDir::locate() {
        return Some(format!("{e}; run scripts/install-guest"));
    }
    if let Err(e) = nictune_vm::guest::qemu_program() {
        return Some(e.to_string());
    }
    None
}

fn options(nic: Nic) -> BedOptions {
    BedOptions::new(
        nic,
        PathBuf::from(env!("CARGO_BIN_EXE_nictune")),
        Duration::from_secs(300),
    )
}

#[test]
fn an_e1000_guest_boots_runs_the_real_driver_and_leaves_nothing_behind() {
    let Some((_one, mut bed)) = boot(Nic::E1000) else {
        return;
    };
    let names = bed.names().clone();
    let info = bed.boot_info().unwrap().clone();
    eprintln!(
        "boot {:.1} s with {:?} ({:?})",
        info.boot_seconds, info.accel, info.accel_note
    );
    let driver = bed
        .run_ok(
            &["readlink", "/sys/class/net/eth0/device/driver"],
            Duration::from_secs(10),
        )
        .unwrap();
    assert!(driver.trim().ends_with("/e1000"), "{driver}");
    let irqs = bed.read("/proc/interrupts").unwrap();
    assert!(
        irqs.lines().any(|l| l.trim_end().ends_with("eth0")),
        "{irqs}"
    );
    let ping = bed
        .run_ok(
            &["ping", "-c", "3", "-i", "0.2", "198.18.1.1"],
            Duration::from_secs(10),
        )
        .unwrap();
    assert!(ping.contains("3 packets received"), "{ping}");
    bed.destroy().unwrap();
    assert!(!names.dir.exists());
    assert!(common::namespaces_with_prefix(&names.netns).is_empty());
}

/// `nictune apply` of a module parameter in the guest: the driver reloads with it, the
/// port comes back addressed, the journal reverts it, and `show` reads the real driver.
#[test]
fn module_parameters_apply_by_reload_and_revert_in_the_guest() {
    let Some((_one, mut bed)) = boot(Nic::E1000) else {
        return;
    };
    let t = Duration::from_secs(60);
    let applied = apply_under_ping(
        &mut bed,
        &["e1000.InterruptThrottleRate=500", "e1000.TxIntDelay=0"],
    );
    // Verified by effect on the one port the reload took down and brought back.
    let effect = &applied["effect"].as_array().unwrap()[..];
    assert_eq!(effect.len(), 1, "{applied}");
    assert_eq!(effect[0]["iface"], "eth0");
    assert_eq!(effect[0]["verdict"], "in_effect", "{applied}");
    let fired = effect[0]["vectors_per_sec"].as_object().unwrap();
    assert!(
        fired.values().any(|r| r.as_f64().unwrap() > 100.0),
        "the ping reached the NIC: {applied}"
    );
    let record = bed.read("/run/nictune/module-params/e1000").unwrap();
    assert_eq!(record, "InterruptThrottleRate=500\nTxIntDelay=0\n");
    let ping = bed
        .run_ok(&["ping", "-c", "2", "-i", "0.2", "198.18.1.1"], t)
        .expect("the port is back with its address after the reload");
    assert!(ping.contains("2 packets received"), "{ping}");
    let show = bed.run_ok(&["nictune", "show", "--json"], t).unwrap();
    let show: serde_json::Value = serde_json::from_str(&show).unwrap();
    let nic = &show["nics"].as_array().unwrap()[0];
    assert_eq!(nic["driver"]["value"], "e1000", "{nic}");
    assert_eq!(
        nic["coalesce"]["value"]["rx_usecs"], 2000,
        "ITR 500 reads back as 10^6/500 µs: {nic}"
    );
    let revert = bed
        .run(&["nictune", "revert", "--state-dir", "/run/st"], t)
        .unwrap();
    assert_eq!(revert.code, Some(0), "{}\n{}", revert.stdout, revert.stderr);
    let record = bed.read("/run/nictune/module-params/e1000").unwrap();
    assert_eq!(record, "", "reverted to the driver's defaults");
    let ping = bed
        .run_ok(&["ping", "-c", "2", "-i", "0.2", "198.18.1.1"], t)
        .unwrap();
    assert!(ping.contains("2 packets received"), "{ping}");

    // `--no-effect-check` (what a tune in the guest passes): no count afterwards. Without it
    // this idle port would be waited for and reported "not verified by effect".
    let argv = [
        "nictune",
        "apply",
        "--json",
        "--no-effect-check",
        "--state-dir",
        "/run/st",
        "e1000.InterruptThrottleRate=300",
    ];
    let quick = bed.run(&argv, t).unwrap();
    assert_eq!(quick.code, Some(0), "{}\n{}", quick.stdout, quick.stderr);
    let quick: serde_json::Value = serde_json::from_str(&quick.stdout).unwrap();
    assert_eq!(quick["effect"], serde_json::json!([]), "{quick}");
    let record = bed.read("/run/nictune/module-params/e1000").unwrap();
    assert_eq!(
        record, "InterruptThrottleRate=300\n",
        "applied all the same"
    );
    assert!(
        bed.read("/run/nictune/module-params/e1000.ports").is_err(),
        "the ports' state kept for a reload cut short is gone once they are back"
    );
    // A reload cut short between unload and load leaves no driver: the revert loads it
    // (unloading a module that is not loaded used to fail the revert for good).
    bed.run_ok(&["rmmod", "e1000"], t).unwrap();
    let revert = bed
        .run(&["nictune", "revert", "--state-dir", "/run/st"], t)
        .unwrap();
    assert_eq!(revert.code, Some(0), "{}\n{}", revert.stdout, revert.stderr);
    assert!(
        bed.read("/sys/module/e1000/initstate").is_ok(),
        "loaded again"
    );
    bed.destroy().unwrap();
}

/// The far end of a tune of both ends, on a real driver: a client on the host changes the
/// guest's e1000 module parameters through `serve --allow-changes eth0 --allow-reload`. The
/// reload takes down the very link the change session runs over; the session survives it,
/// the interrupts measured afterwards show the new throttle rate, and the release puts the
/// driver's defaults back (journaled in the guest).
#[test]
fn a_host_client_changes_the_guests_driver_through_serve_and_gets_it_back() {
    let Some((_one, mut bed)) = boot(Nic::E1000) else {
        return;
    };
    let peer = bed.peer_taking_changes().unwrap();
    let mut client = ChangeClient::open(&peer).unwrap();
    let grant = client.grant().clone();
    assert_eq!(
        (grant.iface.as_str(), grant.driver.as_deref(), grant.reload),
        ("eth0", Some("e1000"), true)
    );
    let itr = "e1000.InterruptThrottleRate";
    let found = client.read(&[itr.to_string()]).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    let changed = client
        .change(&[format!("{itr}=300"), "e1000.TxIntDelay=0".into()])
        .unwrap();
    assert_eq!(changed.lines.len(), 2, "{changed:?}");
    assert!(changed.read_back.is_empty(), "{changed:?}");
    let record = bed.read("/run/nictune/module-params/e1000").unwrap();
    assert_eq!(record, "InterruptThrottleRate=300\nTxIntDelay=0\n");
    // Verify by effect: the guest's NIC now interrupts at most ~300 times a second.
    let mut spec = BenchSpec::new(TestKind::Rr);
    spec.duration = nictune_core::units::Nanos::from_secs(2);
    let r = nictune_bench::run(&spec, ServerSide::Peer(&peer), &NoProgress).unwrap();
    let server = &r.accounting["server"];
    let total: f64 = server.nic_vectors.iter().map(|v| v.per_sec).sum();
    assert!(
        total > 50.0 && total < 300.0 * 1.3,
        "ITR 300 caps the NIC's interrupts: {:?}",
        server.nic_vectors
    );
    let restored = client.release().unwrap();
    assert_eq!(restored.len(), 2, "{restored:?}");
    let record = bed.read("/run/nictune/module-params/e1000").unwrap();
    assert_eq!(record, "", "the driver's defaults are back");
    let status = bed
        .run_ok(
            &[
                "nictune",
                "status",
                "--json",
                "--all",
                "--state-dir",
                SERVE_STATE_DIR,
            ],
            Duration::from_secs(20),
        )
        .unwrap();
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    let changes = status["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{status}");
    assert_eq!(changes[0]["phase"], "reverted", "{status}");
    assert_eq!(changes[0]["complete"], true, "{status}");
    bed.destroy().unwrap();
}

/// Runs `nictune tune --testbed TESTBED` with `args` and 1 s runs after a 0.3 s warm-up into a
/// fresh output directory, checks it exits 0 and leaves no testbed namespace of any owner
/// (guest tests take turns, so none of this run's other tests has one now), and returns its
/// JSON result and the directory (for the caller to remove).
fn guest_tune(name: &str, testbed: &str, args: &[&str]) -> (serde_json::Value, PathBuf) {
    let out_dir = std::env::temp_dir().join(format!("nictune-{name}-{}", std::process::id()));
    let mut argv = vec!["tune", "--testbed", testbed];
    argv.extend(args);
    argv.extend(["--duration", "1s", "--warmup", "300ms", "--json", "--out"]);
    argv.push(out_dir.to_str().unwrap());
    let out = common::nictune(&argv);
    common::assert_exit(&out, 0);
    assert_eq!(
        common::namespaces_with_prefix("nictune-vm-"),
        Vec::<String>::new()
    );
    (common::json(&out), out_dir)
}

/// Both ends on real drivers: two e1000 guests on one bridge, the throttle rate 100 tried on
/// the measuring guest, on the peer guest (through its `serve --allow-changes`) and on both.
/// Each end's setting shows in that end's interrupts and nowhere else; results name the
/// ends; nothing is left behind.
///
/// The floor rate, 100/s, because it binds on two guests however slow the emulating host
/// makes them (205–397 transactions/s as found with both host cores busy beside them here;
/// 300/s left the free end at 392 interrupts/s against a 390 bound there). Where it binds,
/// a request/response end takes one interrupt a transaction (the transmit completion
/// waits for the window the next response opens), where the free end, at the driver's
/// default mode and transmit delay, takes one for each (1.8–2.0 here).
#[test]
fn a_tune_of_both_ends_on_two_guests_throttles_each_end_where_it_was_set() {
    let Some(_one) = guest_slot() else {
        return;
    };
    let (r, out_dir) = guest_tune(
        "tune-pair",
        "e1000",
        &[
            "--both-ends",
            "--only",
            "e1000.InterruptThrottleRate=100",
            "--only",
            "e1000.TxIntDelay=0",
            // The smallest budget that measures all four points (finals trimmed to two
            // finalists at three runs): every run here reloads a driver in a TCG guest.
            "--budget",
            "12",
        ],
    );
    assert!(
        r["environment"]["target_name"]
            .as_str()
            .unwrap()
            .contains("guest pair"),
        "{r}"
    );
    let point = |id: &str| point(&r, id);
    let ints = end_ints;
    let cap = 100.0 * 1.3;
    let base = point("as found @unpinned");
    let here = point("ITR=100 TxIntDelay=0 @unpinned");
    let there = point("peer:ITR=100 peer:TxIntDelay=0 @unpinned");
    let both = point("ITR=100 TxIntDelay=0 peer:ITR=100 peer:TxIntDelay=0 @unpinned");
    let each = |p: &serde_json::Value| {
        let a = |end| per_transaction(p, end, "interrupts_per_sec");
        (a("client"), a("server"))
    };
    for p in [&base, &here, &there, &both] {
        let (c, s) = each(p);
        eprintln!("{}: a transaction client {c:.2} server {s:.2}", brief(p));
    }
    assert!(
        ints(&base, "client") > cap && ints(&base, "server") > cap,
        "{}",
        brief(&base)
    );
    let (c, s) = each(&here);
    assert!(
        ints(&here, "client") < cap && s > 1.3 * c,
        "{}: a transaction client {c:.2} server {s:.2}",
        brief(&here)
    );
    let (c, s) = each(&there);
    assert!(
        ints(&there, "server") < cap && c > 1.3 * s,
        "{}: a transaction client {c:.2} server {s:.2}",
        brief(&there)
    );
    assert!(
        ints(&both, "client") < cap && ints(&both, "server") < cap,
        "{}",
        brief(&both)
    );
    let rec = &r["recommendation"];
    let peer_file = out_dir.join("recommended-peer.toml");
    assert_eq!(
        peer_file.exists(),
        !rec["peer_settings"].as_array().unwrap().is_empty(),
        "{rec}"
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// Mean interrupts/s of one end of a point (client = the bench client's side, server = the
/// guest that serves).
fn end_ints(p: &serde_json::Value, end: &str) -> f64 {
    let v = per_run(p, |m| m["hosts"][end]["interrupts_per_sec"].as_f64());
    assert!(!v.is_empty(), "{end} interrupts in {p}");
    v.iter().sum::<f64>() / v.len() as f64
}

/// What `of` reads from each of a point's runs that has it.
fn per_run(p: &serde_json::Value, of: impl Fn(&serde_json::Value) -> Option<f64>) -> Vec<f64> {
    p["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(of)
        .collect()
}

/// A point's predicted transactions/s (`"rate"`) or the serving guest's interrupts/s.
fn predicted(p: &serde_json::Value, what: &str) -> f64 {
    let v = match what {
        "rate" => &p["predicted"]["transactions_per_sec"],
        _ => &p["predicted"]["hosts"]["server"]["interrupts_per_sec"],
    };
    v.as_f64()
        .unwrap_or_else(|| panic!("a prediction for {}", p["id"]))
}

/// A point in one line for a test's output (what CI shows of a failed test is its first
/// lines): its id, then each run's transactions/s and each end's interrupts/s.
fn brief(p: &serde_json::Value) -> String {
    let run = |m: &serde_json::Value| {
        let mut s = format!(
            "{:.0}/s",
            m["transactions_per_sec"].as_f64().unwrap_or(f64::NAN)
        );
        for end in ["client", "server"] {
            if let Some(i) = m["hosts"][end]["interrupts_per_sec"].as_f64() {
                s += &format!(" {end} {i:.0} ints/s");
            }
        }
        s
    };
    let runs: Vec<String> = p["runs"]
        .as_array()
        .map(|runs| runs.iter().map(run).collect())
        .unwrap_or_default();
    format!("{} [{}]", p["id"], runs.join("; "))
}

/// The point with this id in a tune's JSON.
fn point(r: &serde_json::Value, id: &str) -> serde_json::Value {
    let p = r["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id);
    p.unwrap_or_else(|| panic!("no point {id} in {r}")).clone()
}

/// `tune --testbed e1000 --runtime`: the guest's ethtool coalescing and NAPI settings, made
/// through its own `serve --allow-changes eth0` session with the driver left loaded. The
/// guest's 6.1 kernel has no per-NAPI netlink, so the NAPI keys land on the device's sysfs
/// files; NAPI deferral then keeps the real driver's interrupt masked between the timer's
/// polls, which the guest's own interrupt count shows and the QEMU model predicts.
#[test]
fn a_runtime_tune_sets_a_guests_coalescing_and_napi_deferral_without_reloading() {
    let Some(_one) = guest_slot() else {
        return;
    };
    let (r, out_dir) = guest_tune(
        "tune-rt",
        "e1000",
        &[
            "--runtime",
            "--only",
            "rx-usecs=3,500",
            "--only",
            "napi.defer-hard-irqs=0,2",
            "--only",
            "napi.gro-flush-timeout=100000",
            "--budget",
            "14",
        ],
    );
    let notes = r["environment"]["notes"].to_string();
    assert!(notes.contains("driver left loaded"), "{notes}");
    assert_eq!(r["search"]["measured"], 5, "{}", r["search"]);
    let base = point(&r, "as found @unpinned");
    eprintln!("{}", brief(&base));
    assert!(end_ints(&base, "server") > 100.0, "{}", brief(&base));
    // The deferral in effect, at the dynamic mode 3 and at the 500 µs timer: NET_RX softirqs
    // with no interrupt before them, the NAPI timer's polls (see the both-ends test below),
    // where deferral is set and none where it is not; and fewer interrupts a transaction.
    // How many fewer follows the emulating host's speed, not the settings: the deferral
    // holds while the host's next request comes within two timer periods of the guest's
    // poll, which this VM's guest did (80 % fewer or more at both settings, also with both
    // host cores busy beside it; 71 % fewer at 500 µs in one run with one busy core), and a
    // slower guest's less often. Where it runs out, the timer's polls still clean the
    // transmit completions the plain point takes interrupts for (e1000 has one vector), so
    // the deferring point still takes fewer.
    // Mode 3 shows as the bare value ethtool takes, the 500 µs timer with its unit.
    for us in ["3", "500µs"] {
        let masked = point(
            &r,
            &format!("rx-usecs={us} defer=2 gro-flush=100µs @unpinned"),
        );
        let plain = point(
            &r,
            &format!("rx-usecs={us} defer=0 gro-flush=100µs @unpinned"),
        );
        let (mt, pt) = (
            timer_polls(&masked, "server"),
            timer_polls(&plain, "server"),
        );
        let m = per_transaction(&masked, "server", "interrupts_per_sec");
        let p = per_transaction(&plain, "server", "interrupts_per_sec");
        eprintln!(
            "rx-usecs {us}: {} ({m:.2} interrupts, {mt:.2} timer polls a transaction) against \
             {} ({p:.2}, {pt:.2})",
            brief(&masked),
            brief(&plain)
        );
        assert!(
            mt > 0.5 && pt.abs() < 0.3,
            "rx-usecs {us}: timer polls {mt} and {pt}"
        );
        assert!(
            m < 0.9 * p,
            "rx-usecs {us}: defer 2 {m} interrupts a transaction, defer 0 {p}"
        );
    }
    // The QEMU model, calibrated on the settings as found, predicted every point, the NAPI
    // deferral with its timer polls included. How far deferral cuts the predicted interrupts
    // depends on the QEMU timer lateness the baseline calibrates (15–94 µs across runs on
    // this VM): at the low end the model lets the 100 µs deferral run out on a good share of
    // requests (731 against 4,600/s in one run), so only the direction is checked here; the
    // model's own tests check the size at fixed calibrations.
    let masked = point(&r, "rx-usecs=3 defer=2 gro-flush=100µs @unpinned");
    assert!(
        predicted(&masked, "ints") < predicted(&base, "ints"),
        "{masked}"
    );
    for p in r["points"].as_array().unwrap() {
        predicted(p, "ints");
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// `tune --testbed e1000e --runtime`: rx-usecs writes every MSI-X vector's EITR,
/// and the QEMU model, calibrated on the settings as found, reads from their interrupt count
/// whether QEMU 7.2's never-cleared pending flags are set (then every EITR expiry notifies
/// too) and predicts the held-out fixed rate within what the limit allows.
#[test]
fn a_runtime_tune_of_e1000e_is_predicted_from_its_own_baseline() {
    let Some(_one) = guest_slot() else {
        return;
    };
    let (r, out_dir) = guest_tune(
        "tune-rte",
        "e1000e",
        &[
            "--runtime",
            "--only",
            "rx-usecs=500",
            "--only",
            "napi.defer-hard-irqs=0",
            "--only",
            "napi.gro-flush-timeout=0",
            "--budget",
            "8",
        ],
    );
    let near = |got: f64, want: f64, within: f64| (got - want).abs() <= within * want;
    let span = |v: &[f64]| {
        let low = v.iter().copied().fold(f64::INFINITY, f64::min);
        (low, v.iter().copied().fold(low, f64::max))
    };
    // The model takes the emulating host to run the guest at a steady speed, and a point's
    // runs show whether it did. Where the fastest ran more than 1.5× the slowest, a stall
    // also fell inside runs, and the count a transaction took moved with it: with both host
    // cores busy beside the guest here, runs of 1,141, 686 and 2,243/s took 5.3, 3.8 and 3.8
    // interrupts a transaction. There the counts are printed, not judged.
    let steady = |p: &serde_json::Value, what: &str| {
        let rates = run_rates(p);
        let (slowest, fastest) = span(&rates);
        let ok = fastest <= 1.5 * slowest;
        if !ok {
            eprintln!(
                "{what}: the emulating host ran its runs at {rates:.0?}/s, and its interrupt \
                 count is not judged"
            );
        }
        ok
    };
    // The baseline: the calibration takes whichever of QEMU 7.2's two pending-flag states
    // lies nearer its interrupts (3.5–3.75 a transaction in six tunes on this VM: set). A
    // guest whose flags were set during the baseline's runs counts between the states, so
    // the check is that the measured count lies between the two states' counts, each
    // calibrated to the same rate (2 and 4 at 1,500–5,000/s), and that the model took one.
    // Compared a transaction, not a second: a host that slows down for a whole run (3,454,
    // 3,673 and 1,214 transactions/s in one baseline here) moves the mean rate the
    // interrupts per second follow, not the count a transaction takes.
    let base = point(&r, "as found @unpinned");
    let measured = per_transaction(&base, "server", "interrupts_per_sec");
    let model = predicted(&base, "ints") / predicted(&base, "rate");
    // The rate the tune calibrated its model to: the baseline's first two runs (it predicts
    // and prunes before the search), which its prediction of the baseline gives back.
    let rate = predicted(&base, "rate");
    let states = e1000e_flag_states(rate, 500);
    eprintln!(
        "baseline {}: {measured:.2} interrupts a transaction, the model {model:.2}; flag \
         states calibrated to {rate:.0}/s: {states:?}",
        brief(&base)
    );
    let counts: Vec<f64> = states.iter().map(|s| s.per_transaction).collect();
    let (low, high) = span(&counts);
    let alike = states.len() == 2 && high - low < 0.1 * high;
    if alike {
        // A guest so fast (over ≈6,000/s here) that each request comes within about one of
        // QEMU's 128 µs windows: the model's two states count alike there, and it overcounts
        // (3.31 against 2.34 a transaction at 6,153/s in one run) — a known limit of the
        // model (README, "The real-driver testbed"), said here rather than judged.
        eprintln!(
            "baseline at {rate:.0}/s: the model's flag states count alike and its interrupt \
             count is not checked at this speed"
        );
    }
    if steady(&base, "the baseline") && !alike {
        assert!(
            (low * 0.85..=high * 1.15).contains(&measured),
            "{measured} a transaction measured, the states {states:?}: {}",
            brief(&base)
        );
    }
    assert!(
        counts.iter().any(|c| near(model, *c, 0.1)),
        "the model's {model} is one of the states {states:?}"
    );
    // rx-usecs 500 (2,000/s a vector), held out. Whether QEMU 7.2's never-cleared pending
    // flags are set at this point follows the guest's history since QEMU started, which the
    // baseline only hints at, so the model's prediction in each state is computed, each
    // calibrated to the baseline, and the tune's must be one of them. The measurement is
    // judged a transaction, with the model calibrated to the paces the point's own runs ran
    // at: how many interrupts a transaction takes under the limit follows the time between
    // requests, and the emulating host's speed moves that — with both host cores busy beside
    // the guest here, the baseline's runs went 1,080, 2,741 and 1,639/s and the held-out
    // point ran 1,217–1,657/s against 1,887 predicted: 2.13 interrupts a transaction
    // measured, the states 2.75 and 2.83 at the baseline's pace and 2.0 and 3.4 at the
    // point's own. Each run's pace, not their mean: near the 500 µs interval itself the
    // model counts more (2.6 at a mean of 1,859/s, where runs of 1,631–2,177/s took 2.17),
    // and a run's requests come at a spread of gaps around its mean that smooths that
    // out. Whatever the speed, QEMU lets no vector fire more than twice its limit, and a
    // transaction needs an RX interrupt.
    let slow = point(&r, "rx-usecs=500µs defer=0 gro-flush=0µs @unpinned");
    let measured = per_transaction(&slow, "server", "interrupts_per_sec");
    let rate = slow["summary"]["rate"]["mean"].as_f64().unwrap();
    let (tune_rate, tune_ints) = (predicted(&slow, "rate"), predicted(&slow, "ints"));
    let paces = run_rates(&slow);
    let at_its_pace: Vec<f64> = paces
        .iter()
        .flat_map(|pace| e1000e_calibrated(Some(500), *pace, &[Some(500)]))
        .map(|(_, p)| p[0].interrupts_per_sec / p[0].transactions_per_sec)
        .collect();
    let (mut low, high) = span(&at_its_pace);
    eprintln!(
        "rx-usecs 500 {}: {measured:.2} interrupts a transaction, the states at its runs' \
         paces {low:.2}–{high:.2}; the tune predicted {tune_rate:.0}/s and {tune_ints:.0} \
         interrupts/s",
        brief(&slow)
    );
    // A run within a fifth of the limit's own rate (1,600–2,500/s) is where the model
    // overcounts in both states (2.36–2.60 at runs of 1,876–1,983/s, 2.78 and 2.70 at
    // 1,820/s, where runs took 2.17–2.20 here): a known limit (README, "The real-driver
    // testbed"). There the count is held to the fewest a transaction on two vectors takes,
    // one RX and one TX interrupt, instead of the model's lower state.
    if paces.iter().any(|p| (1_600.0..=2_500.0).contains(p)) {
        low = low.min(2.0);
    }
    if steady(&slow, "rx-usecs 500") {
        assert!(
            (0.85 * low..=1.15 * high).contains(&measured),
            "{measured} interrupts a transaction at {paces:.0?}/s, the states {low}–{high}"
        );
    }
    assert!(
        states
            .iter()
            .any(|s| near(tune_rate, s.held_out.0, 0.1) && near(tune_ints, s.held_out.1, 0.1)),
        "the tune's {tune_rate:.0}/s and {tune_ints:.0} interrupts/s are one of {states:?}"
    );
    let limit = 1.1 * 2.0 * 2_000.0;
    assert!(rate <= limit, "{}", brief(&slow));
    // Each run names the guest's MSI-X lines one by one, and they add up to its total.
    for run in slow["runs"].as_array().unwrap() {
        let host = &run["hosts"]["server"];
        let lines = host["vectors"].as_array().expect("the lines");
        let named = |n: &str| lines.iter().any(|l| l["action"].as_str() == Some(n));
        assert!(named("eth0-rx-0") && named("eth0-tx-0"), "{host}");
        for l in lines {
            assert!(l["per_sec"].as_f64().unwrap() <= limit, "{l}");
        }
        let sum: f64 = lines.iter().map(|l| l["per_sec"].as_f64().unwrap()).sum();
        let total = host["interrupts_per_sec"].as_f64().unwrap();
        assert!((sum - total).abs() < 1.0, "{host}");
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// The same on both ends: each guest's settings through its own change session, and the
/// deferral shows on the end where it was set.
///
/// What shows it there, whatever the emulating host's speed, is the deferral's own
/// mechanism: after a poll that did work, `napi_complete_done` (net/core/dev.c, Linux 6.1)
/// leaves the interrupt masked and arms the `gro_flush_timeout` timer, whose polls are
/// NET_RX softirqs with no interrupt before them — up to `defer-hard-irqs` of them after each
/// reply. So the deferring end runs clearly more NET_RX softirqs a transaction than it takes
/// interrupts (3.0–3.7 against 1.2–1.8 on this VM), and the other end as many as it takes
/// interrupts. How many interrupts the deferral saves is not checked here: that depends on
/// whether a reply comes back within the 2 × 100 µs window, which two TCG guests did on a
/// fast emulating host (the deferring end's interrupts halved) and did not on a slow one
/// (200–540 transactions/s, interrupts as found). The one-guest test above checks the saving
/// against the host's quick peer.
#[test]
fn a_runtime_tune_of_both_ends_defers_each_ends_interrupts_where_it_was_set() {
    let Some(_one) = guest_slot() else {
        return;
    };
    let (r, out_dir) = guest_tune(
        "tune-rt2",
        "e1000",
        &[
            "--both-ends",
            "--runtime",
            "--only",
            "rx-usecs=3",
            "--only",
            "napi.defer-hard-irqs=2",
            "--only",
            "napi.gro-flush-timeout=100000",
            // All four points once, then two finalists at three fresh runs.
            "--budget",
            "12",
        ],
    );
    let settings = "rx-usecs=3 defer=2 gro-flush=100µs";
    let peer = "peer:rx-usecs=3 peer:defer=2 peer:gro-flush=100µs";
    let base = point(&r, "as found @unpinned");
    let here = point(&r, &format!("{settings} @unpinned"));
    let there = point(&r, &format!("{peer} @unpinned"));
    assert!(
        end_ints(&base, "client") > 100.0 && end_ints(&base, "server") > 100.0,
        "{base}"
    );
    // Each end's settings read back as asked on its own guest.
    for p in [&here, &there] {
        assert_eq!(p["read_back"], serde_json::json!([]), "{p}");
    }
    for end in ["client", "server"] {
        let polls = timer_polls(&base, end);
        assert!(polls.abs() < 0.3, "as found, {end}: {polls} {base}");
    }
    let (hc, hs) = (timer_polls(&here, "client"), timer_polls(&here, "server"));
    assert!(
        hc > 1.0 && hs.abs() < 0.3,
        "deferred here: {hc} {hs} timer polls a transaction: {here}"
    );
    let (tc, ts) = (timer_polls(&there, "client"), timer_polls(&there, "server"));
    assert!(
        ts > 1.0 && tc.abs() < 0.3,
        "deferred on the peer: {tc} {ts} timer polls a transaction: {there}"
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// One of the e1000e model's two QEMU 7.2 pending-flag states, calibrated to a baseline's
/// rate at the driver's defaults: its interrupts a transaction there, and its prediction at a
/// held-out `rx-usecs`.
struct FlagState {
    flagged: bool,
    /// Interrupts a transaction at the defaults.
    per_transaction: f64,
    /// Transactions/s and interrupts/s at the held-out setting.
    held_out: (f64, f64),
}

impl std::fmt::Debug for FlagState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rate, ints) = self.held_out;
        write!(
            f,
            "flags {}: {:.2} a transaction, held out {rate:.0}/s {ints:.0} ints/s",
            if self.flagged { "set" } else { "clear" },
            self.per_transaction
        )
    }
}

/// The e1000e driver's settings with `rx-usecs` `us` (its defaults with `None`), as the tune
/// predicts its points: after the driver watchdog's pass, no NAPI deferral.
fn e1000e_settings(us: Option<u32>) -> nictune_sim::cases::qemu_nic::QemuNicSettings {
    use nictune_sim::cases::qemu_nic::{QemuNic, QemuNicSettings};
    let mut s = QemuNicSettings::driver_defaults(QemuNic::E1000e);
    s.after_watchdog_pass = true;
    s.rx_usecs = us;
    s
}

/// The e1000e model calibrated to run at `rate` transactions/s with `rx-usecs` `us`, in each
/// QEMU 7.2 pending-flag state (clear, set) that can reach that rate (the flagged one costs
/// the guest its extra interrupts): the state and the model's prediction at `at`.
fn e1000e_calibrated(
    us: Option<u32>,
    rate: f64,
    at: &[Option<u32>],
) -> Vec<(bool, Vec<nictune_sim::cases::qemu_nic::QemuNicPrediction>)> {
    use nictune_sim::cases::qemu_nic::{self, QemuNic, QemuNicCosts};
    let nic = QemuNic::E1000e;
    let run = nictune_core::units::Nanos::from_secs(2);
    let states: Vec<_> = [false, true]
        .into_iter()
        .filter_map(|flagged| {
            let costs =
                QemuNicCosts::calibrate_in_state(nic, &e1000e_settings(us), rate, flagged).ok()?;
            let predict = |us| qemu_nic::predict_rr(nic, &e1000e_settings(us), &costs, 7, run);
            Some((flagged, at.iter().map(|us| predict(*us).unwrap()).collect()))
        })
        .collect();
    assert!(
        !states.is_empty(),
        "neither flag state reaches {rate}/s at {us:?}"
    );
    states
}

/// The e1000e model's pending-flag states calibrated to the baseline's `rate` at the driver's
/// defaults, with their predictions at `rx-usecs` `held_out_us`.
fn e1000e_flag_states(rate: f64, held_out_us: u32) -> Vec<FlagState> {
    e1000e_calibrated(None, rate, &[None, Some(held_out_us)])
        .into_iter()
        .map(|(flagged, p)| FlagState {
            flagged,
            per_transaction: p[0].interrupts_per_sec / p[0].transactions_per_sec,
            held_out: (p[1].transactions_per_sec, p[1].interrupts_per_sec),
        })
        .collect()
}

/// Each run's transactions/s of a point.
fn run_rates(p: &serde_json::Value) -> Vec<f64> {
    per_run(p, |m| m["transactions_per_sec"].as_f64())
}

/// One end's NET_RX softirqs beyond its interrupts, a transaction: the NAPI timer's polls
/// while interrupts are deferred.
fn timer_polls(p: &serde_json::Value, end: &str) -> f64 {
    per_transaction(p, end, "net_rx_softirqs_per_sec")
        - per_transaction(p, end, "interrupts_per_sec")
}

/// One end's `what` (`interrupts_per_sec`, `net_rx_softirqs_per_sec`) per transaction,
/// averaged over a point's runs.
fn per_transaction(p: &serde_json::Value, end: &str, what: &str) -> f64 {
    let v = per_run(p, |m| {
        let count = m["hosts"][end][what].as_f64()?;
        let rate = m["transactions_per_sec"].as_f64().filter(|r| *r > 0.0)?;
        Some(count / rate)
    });
    assert!(!v.is_empty(), "{end} {what} and transactions in {p}");
    v.iter().sum::<f64>() / v.len() as f64
}

/// `tune --iface --reload-driver` on a real driver: inside an e1000 guest, the tune searches
/// its own eth0's module parameters against a `nictune serve` on the host side of the tap.
/// The throttle rate shows in the guest's interrupts, and the driver's defaults are back
/// afterwards.
#[test]
fn a_tune_of_a_real_e1000_interface_searches_its_module_parameters() {
    let Some((_one, mut bed)) = boot(Nic::E1000) else {
        return;
    };
    const TOKEN: &str = "iface-reload-test-token-0123";
    let mut server = std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            &bed.names().netns,
            env!("CARGO_BIN_EXE_nictune"),
        ])
        .args(["serve", "--bind", "198.18.1.1:12899"])
        .env("NICTUNE_TOKEN", TOKEN)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let tune = format!(
        "NICTUNE_TOKEN={TOKEN} nictune tune --iface eth0 --peer 198.18.1.1:12899 \
         --reload-driver --only e1000.InterruptThrottleRate=300 --only e1000.TxIntDelay=0 \
         --budget 12 --duration 1s --warmup 300ms --json --out /run/tune-out --state-dir /run/st"
    );
    let out = bed.run(&["sh", "-c", &tune], Duration::from_secs(600));
    let _ = server.kill();
    let _ = server.wait();
    let out = out.unwrap();
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    let r: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let client_ints = |id: &str| {
        let p = r["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id);
        let p = p.unwrap_or_else(|| panic!("no point {id} in {r}"));
        let v: Vec<f64> = p["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["hosts"]["client"]["interrupts_per_sec"].as_f64())
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    let (base, itr) = (
        client_ints("as found @unpinned"),
        client_ints("ITR=300 TxIntDelay=0 @unpinned"),
    );
    assert!(
        base > 390.0 && itr > 0.0 && itr < 390.0,
        "{base} → {itr}: {r}"
    );
    let record = bed.read("/run/nictune/module-params/e1000").unwrap();
    assert_eq!(record, "", "the driver's defaults are back after the tune");
    bed.destroy().unwrap();
}

/// `bench --testbed e1000e`: the device's MSI-X vectors are counted one by one in the guest.
#[test]
fn bench_on_e1000e_counts_each_msix_vector() {
    let Some(_one) = guest_slot() else {
        return;
    };
    let out = common::nictune(&[
        "bench",
        "rr",
        "--testbed",
        "e1000e",
        "--duration",
        "2",
        "--json",
    ]);
    common::assert_exit(&out, 0);
    let r = common::json(&out);
    assert_eq!(r["testbed"]["kind"], "e1000e", "{r}");
    assert!(r["testbed"]["accel"] == "tcg" || r["testbed"]["accel"] == "kvm");
    let server = &r["accounting"]["server"];
    let vectors = server["nic_vectors"].as_array().unwrap();
    assert!(vectors.len() >= 2, "rx and tx vectors apart: {vectors:?}");
    let rx = vectors
        .iter()
        .find(|v| v["action"].as_str().unwrap().ends_with("-rx-0"))
        .expect("an rx vector");
    assert!(rx["per_sec"].as_f64().unwrap() > 100.0, "{vectors:?}");
    assert!(rx["irq"].as_u64().is_some(), "{rx}");
    assert!(server["host"]["interrupts_per_sec"].as_f64().unwrap() > 100.0);
}

/// The acceptance run, short: every throttle rate of the e1000 space measured once or more,
/// at TxIntDelay 0 (with the default 8, QEMU's transmit-delay windows let interrupts past
/// the rate: README, "The real-driver testbed"; the settings as found run at 8);
/// where the throttle rate is below the testbed's own interrupt rate, interrupts/s and the
/// RR rate fall with it; every point carries the model's prediction.
#[test]
fn tune_on_e1000_measures_the_throttle_rate_and_predicts_it() {
    let Some(_one) = guest_slot() else {
        return;
    };
    let out_dir = std::env::temp_dir().join(format!("nictune-tune-e1000-{}", std::process::id()));
    let out = common::nictune(&[
        "tune",
        "--testbed",
        "e1000",
        "--only",
        "e1000.TxIntDelay=0",
        // The smallest budget that still measures every one of the 13 candidates (finals
        // trimmed): each run reloads the driver in the guest, ≈6 s under TCG.
        "--budget",
        "26",
        "--duration",
        "400ms",
        "--warmup",
        "100ms",
        "--out",
        out_dir.to_str().unwrap(),
        "--json",
        "--quiet",
    ]);
    common::assert_exit(&out, 0);
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("results.json")).unwrap()).unwrap();
    assert!(out_dir.join("report.html").exists() && out_dir.join("recommended.toml").exists());
    let points = results["points"].as_array().unwrap();
    let search = &results["search"];
    assert_eq!(
        search["measured"], search["space_size"],
        "every candidate measured: {search}"
    );
    assert_eq!(points.len() as u64, search["space_size"].as_u64().unwrap());
    let mean = |p: &serde_json::Value, what: &str| p["summary"][what]["mean"].as_f64();
    let base = points.iter().find(|p| p["baseline"] == true).unwrap();
    let base_ints = mean(base, "interrupts_per_sec").expect("device interrupts measured");
    assert!(base_ints > 100.0, "the guest's NIC interrupts: {base_ints}");
    // A rate binds only below what the testbed reaches without it in every run: an
    // emulating host that slows down for one run (baseline runs of 6,800, 5,569 and 2,232/s
    // were seen on one) leaves a rate under the mean but over that run unbinding.
    let slowest = per_run(base, |r| {
        r["hosts"]["server"]["interrupts_per_sec"].as_f64()
    })
    .into_iter()
    .fold(base_ints, f64::min);
    // Every fixed rate with TxIntDelay 0, ascending: (ITR, interrupts/s, transactions/s).
    let mut fixed: Vec<(u64, f64, f64)> = points
        .iter()
        .filter_map(|p| {
            let s = &p["settings"];
            let itr = s["e1000.InterruptThrottleRate"].as_u64()?;
            let tidv = s["e1000.TxIntDelay"].as_u64()?;
            (tidv == 0 && itr >= 100).then(|| {
                (
                    itr,
                    mean(p, "interrupts_per_sec").unwrap(),
                    mean(p, "rate").unwrap(),
                )
            })
        })
        .collect();
    fixed.sort_by_key(|t| t.0);
    eprintln!(
        "baseline {} (slowest run {slowest:.0} interrupts/s); fixed rates {fixed:?}",
        brief(base)
    );
    // Whatever the emulating host's speed, a fixed rate bounds the interrupts: QEMU's e1000
    // opens no window shorter than the ITR register says (15 % for the count's edges).
    for (itr, ints, _) in &fixed {
        assert!(
            *ints <= *itr as f64 * 1.15,
            "ITR {itr} bounds the interrupts: {ints}"
        );
    }
    // Where a rate binds, interrupts and the RR rate follow it. It binds only below what the
    // testbed reaches without it in every run: an emulating host that slows down for one run
    // (baseline runs of 6,800, 5,569 and 2,232/s were seen on one) leaves a rate under the
    // mean but over that run unbinding. And only where it bound in the point's own runs: a
    // point measured once, during a stall of the emulating host, stays under its rate (ITR
    // 2000: 1,310 interrupts/s and 935 transactions/s, below ITR 1000's 947, in one CI run)
    // and shows the host's speed, not the throttle's. How many rates bind follows the host's
    // speed too (100, 300 and 1000 or more here; 100 and 300 alone on a slower CI machine),
    // so two are asked for: 100 and 300 bind on any guest that takes 400 interrupts a second
    // in its slowest run as found.
    let throttled: Vec<(u64, f64, f64)> = fixed
        .iter()
        .copied()
        .filter(|(itr, ints, _)| (*itr as f64) < slowest * 0.8 && *ints >= *itr as f64 * 0.85)
        .collect();
    assert!(throttled.len() >= 2, "{throttled:?}");
    for w in throttled.windows(2) {
        assert!(
            w[0].1 < w[1].1 && w[0].2 < w[1].2,
            "interrupts and rate follow ITR: {throttled:?}"
        );
    }
    assert!(
        points.iter().all(|p| !p["predicted"].is_null()),
        "every point carries its prediction"
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// Killing a guest tune at any moment (here: while the guest boots, and while it measures)
/// leaves no QEMU running once the killed process is gone, and the next run removes every
/// namespace and directory the killed one left.
#[test]
fn a_killed_guest_tune_leaves_nothing_after_the_next_run() {
    let Some(_one) = guest_slot() else {
        return;
    };
    let out_dir = std::env::temp_dir().join(format!("nictune-kill-{}", std::process::id()));
    let mut prefixes = Vec::new();
    for after in [Duration::from_secs(3), Duration::from_secs(25)] {
        let mut child = common::command()
            .args([
                "tune",
                "--testbed",
                "e1000",
                "--budget",
                "52",
                "--duration",
                "1s",
                "--quiet",
            ])
            .arg("--out")
            .arg(&out_dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let prefix = format!("nictune-vm-{}-", child.id());
        std::thread::sleep(after);
        child.kill().unwrap(); // SIGKILL: no destructor runs
        child.wait().unwrap();
        // QEMU dies with its parent thread (PR_SET_PDEATHSIG).
        std::thread::sleep(Duration::from_millis(500));
        assert!(
            qemu_of(&prefix).is_empty(),
            "QEMU outlived its killed owner"
        );
        prefixes.push(prefix);
    }
    let out = common::nictune(&["bench", "rr", "--testbed", "e1000", "--duration", "1"]);
    common::assert_exit(&out, 0);
    for prefix in &prefixes {
        assert!(
            common::namespaces_with_prefix(prefix).is_empty(),
            "namespace left"
        );
        let dirs = std::fs::read_dir(nictune_vm::bed::RUN_DIR)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with(prefix.as_str()))
                    .count()
            })
            .unwrap_or(0);
        assert_eq!(dirs, 0, "run directory left");
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// Processes whose command line names a guest starting with `prefix`.
fn qemu_of(prefix: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                c.split(|&b| b == 0)
                    .any(|a| a.starts_with(prefix.as_bytes()))
            })
        })
        .collect()
}

/// `show` on e1000's legacy INTx line: the IRQ is `device/irq`, it serves both queues, and
/// its affinity is read — the NIC → queue → IRQ → CPU chain is complete.
#[test]
fn show_finds_e1000s_intx_line_for_both_queues() {
    let Some((_one, mut bed)) = boot(Nic::E1000) else {
        return;
    };
    let t = Duration::from_secs(30);
    let line: u64 = bed
        .read("/sys/class/net/eth0/device/irq")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let show = bed
        .run_ok(&["nictune", "show", "--json", "eth0"], t)
        .unwrap();
    let show: serde_json::Value = serde_json::from_str(&show).unwrap();
    let nic = &show["nics"][0];
    assert_eq!(nic["device_irqs"], serde_json::json!([line]), "{nic}");
    assert_eq!(nic["irq_mode"], "intx", "{nic}");
    for q in nic["queues"].as_array().unwrap() {
        assert_eq!(
            (&q["irq"], &q["irq_from"]),
            (&line.into(), &"only-irq".into())
        );
    }
    let irq = show["irqs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["irq"] == line)
        .expect("the line is in the IRQ list");
    assert_eq!(irq["actions"], serde_json::json!(["eth0"]), "{irq}");
    assert_eq!(irq["effective"]["value"], "0", "the guest's one CPU: {irq}");
    bed.destroy().unwrap();
}

/// The e1000e dynamic-mode trap: rx-usecs set from the default dynamic InterruptThrottleRate
/// is named by `doctor --interval` under traffic, with both MSI-X vectors' rates; loading
/// the module with a fixed rate makes it go away.
///
/// The trap is made the way that does not depend on timing: rx-usecs first, then a ring
/// change, whose reset (`e1000e_set_ringparam` → `e1000e_up` → `e1000_configure_msix`, Linux
/// 6.1) writes the driver's stale dynamic rates back into both vectors while rx-usecs still
/// reads back. (The other way in — a classifier change still pending as ethtool runs, then
/// written into the RX vector by its next interrupt — comes or not with the guest's timing.)
/// The limit, 100/s, is far below the pings' replies even on a slow emulating host, and the
/// stale 20,000/s does not hold them back.
#[test]
fn doctor_names_the_e1000e_dynamic_mode_trap_until_the_module_rate_is_fixed() {
    let Some((_one, mut bed)) = boot(Nic::E1000e) else {
        return;
    };
    let t = Duration::from_secs(60);
    let show = bed
        .run_ok(&["nictune", "show", "--json", "eth0"], t)
        .unwrap();
    let show: serde_json::Value = serde_json::from_str(&show).unwrap();
    let nic = &show["nics"][0];
    assert_eq!(nic["irq_mode"], "msix", "{nic}");
    assert_eq!(nic["device_irqs"].as_array().unwrap().len(), 3, "{nic}");
    let ring = nic["rings"]["value"]["rx"]
        .as_u64()
        .expect("the rx ring size");
    let apply = ["nictune", "apply", "--state-dir", "/run/st"];
    let usecs = "coalesce.rx-usecs=10000";
    bed.run_ok(&[&apply[..], &[usecs, "--iface", "eth0"]].concat(), t)
        .unwrap();
    // Verify by effect: the plan only resizes the ring, yet rx-usecs 10000 µs (100/s) is asked
    // for too, so its cap is checked — and both vectors run at the ping's rate.
    let resize = format!("ring.rx={}", if ring == 512 { 256 } else { 512 });
    let applied = apply_under_ping(&mut bed, &[&resize, usecs, "--iface", "eth0"]);
    let effect = &applied["effect"][0];
    assert_eq!(effect["verdict"], "not_in_effect", "{applied}");
    assert_eq!(effect["cap_per_sec"], 100.0, "{effect}");
    let over = effect["over"].to_string();
    assert!(
        over.contains("eth0-rx-0") && over.contains("eth0-tx-0"),
        "{effect}"
    );
    let trap = doctor_under_ping(&mut bed);
    let f = trap.expect("the finding under the default dynamic mode");
    eprintln!("{f:#}");
    assert_eq!(f["severity"], "error", "{f}");
    let ev = |what: &str| -> String {
        let e = f["evidence"].as_array().unwrap().iter();
        let hit = e.clone().find(|e| e["what"] == what);
        hit.map_or(String::new(), |e| e["value"].as_str().unwrap().to_string())
    };
    // The driver keeps the interval in its own units (4000 µs read back as 4032 on QEMU's
    // 82574L), so the read-back is near, not equal to, what was asked.
    let read_back: u64 = ev("rx-usecs (read back)").parse().unwrap();
    assert!((9_700..=10_300).contains(&read_back), "{f}");
    assert!(ev("module InterruptThrottleRate").starts_with("3 (dynamic conservative"));
    assert!(ev("MSI-X vectors").contains("(eth0-rx-0)"), "{f}");
    let rx_rate: f64 = ev("rx vector interrupts/s").parse().unwrap();
    let tx_rate: f64 = ev("tx vector interrupts/s").parse().unwrap();
    assert!(
        rx_rate > 250.0 && tx_rate > 250.0,
        "both vectors stale: {f}"
    );
    let rate = format!("e1000e.InterruptThrottleRate={}", 1_000_000 / read_back);
    assert_eq!(f["fix"][0], format!("nictune apply {rate}"));
    let fixed = [&apply[..], &[rate.as_str()]].concat();
    bed.run_ok(&fixed, t).unwrap();
    assert_eq!(
        doctor_under_ping(&mut bed),
        None,
        "a fixed module rate: no trap"
    );
    bed.destroy().unwrap();
}

/// `nictune apply ARGS --json` in the guest while it pings the host every 2 ms; the apply's
/// JSON document. Each ping runs for at most 1 s (`-w 1`) and the next starts at once: one
/// that lost replies to a reload would otherwise wait up to 10 s for them at its end and
/// leave the NIC idle while the apply verifies the throttle by its effect.
fn apply_under_ping(bed: &mut VmBed, args: &[&str]) -> serde_json::Value {
    let pinger = "while true; do ping -q -i 0.002 -w 1 198.18.1.1; sleep 0.05; done";
    let pid = bed.spawn(&["sh", "-c", pinger]).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let argv = [
        &["nictune", "apply", "--json", "--state-dir", "/run/st"],
        args,
    ]
    .concat();
    let out = bed.run(&argv, Duration::from_secs(90)).unwrap();
    bed.stop(pid).unwrap();
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

/// `nictune doctor --interval 2 --json eth0` in the guest while three pings each send to the
/// host end every 2 ms; the `e1000e-dynamic-itr` finding, if any.
fn doctor_under_ping(bed: &mut VmBed) -> Option<serde_json::Value> {
    // Three at once: one alone brought 214–500 replies a second depending on how busy the
    // emulating host was, too close to the most an honoured 100/s limit lets through on the
    // emulated 82574L (about twice it).
    let ping = ["ping", "-q", "-i", "0.002", "-c", "5000", "198.18.1.1"];
    let pids: Vec<u32> = (0..3).map(|_| bed.spawn(&ping).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(500));
    let argv = ["nictune", "doctor", "--interval", "2", "--json", "eth0"];
    let out = bed.run(&argv, Duration::from_secs(60)).unwrap();
    for pid in pids {
        bed.stop(pid).unwrap();
    }
    assert!(
        matches!(out.code, Some(0 | 1)),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let findings = doc["findings"].as_array().unwrap();
    findings
        .iter()
        .find(|f| f["id"] == "e1000e-dynamic-itr")
        .cloned()
}
