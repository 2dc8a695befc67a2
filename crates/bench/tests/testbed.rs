//! Live runs in the namespace testbed (root only; elsewhere each test prints `skipped:`),
//! and proof that no namespace outlives its run — including a client killed mid-run.

mod common;

use common::{assert_sane, short, skip_testbed};
use nictune_bench::cancel::Cancel;
use nictune_bench::testbed::{self, Testbed};
use nictune_bench::{run, run_cancellable, BenchError, ServerSide, TestKind};
use nictune_core::progress::NoProgress;
use nictune_core::units::Nanos;
use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Testbed tests run one at a time: a testbed's creation sweeps stale namespaces, which
/// would race with the killed-client test's own check.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Namespaces created by process `pid`.
fn namespaces_of(pid: u32) -> Vec<String> {
    testbed::list()
        .into_iter()
        .filter(|n| testbed::owner_of(n) == Some(pid))
        .collect()
}

#[test]
fn one_testbed_serves_many_runs_and_is_gone_afterwards() {
    if skip_testbed("one_testbed_serves_many_runs") {
        return;
    }
    let _serial = serial();
    let bed = Testbed::create(nictune_linux::write::privilege()).unwrap();
    let names = bed.names().clone();
    let mut rr = short(TestKind::Rr, 1_000);
    rr.client_cpu = Some(0);
    rr.server_cpu =
        Some(1.min(std::thread::available_parallelism().map_or(1, |n| n.get()) as u32 - 1));
    let r = run(&rr, ServerSide::Testbed(&bed), &NoProgress).unwrap();
    assert_sane(&r);
    assert_eq!(r.target, "testbed");
    // A veth has no device and no interrupt line: whatever this machine's own NICs (on a
    // virtual machine, virtio queues) did meanwhile is not the testbed's.
    for (side, acc) in &r.accounting {
        assert!(acc.nic_vectors.is_empty(), "{side}: {:?}", acc.nic_vectors);
        assert_eq!(acc.host.interrupts_per_sec, Some(0.0), "{side}");
    }
    assert_eq!(r.placement.client.cpus_seen, [0]);
    assert!(bed.napi_mode(), "{:?}", bed.warnings());
    assert_eq!(r.napi.verified, Some(true), "{:?}", r.napi);
    for test in [TestKind::UdpRr, TestKind::Stream, TestKind::Ping] {
        let r = run(&short(test, 500), ServerSide::Testbed(&bed), &NoProgress).unwrap();
        assert_sane(&r);
        let client = &r.accounting["client"];
        assert!(client.host.drops.contains_key("interface_rx"));
        assert!(
            client
                .interface_drops
                .iter()
                .any(|d| d.iface == names.client_if),
            "{:?}",
            client.interface_drops
        );
        // Every kind proves NAPI on both ends (a stream's server ids were once left empty,
        // so "verified" rested on the client's alone).
        assert!(!r.napi.server_ids.is_empty(), "{test:?}: {:?}", r.napi);
        assert_eq!(r.napi.verified, Some(true), "{test:?}: {:?}", r.napi);
    }
    // The veth ends are in NAPI mode as configured, read back through ethtool netlink and,
    // where the tools exist, through `ip netns exec … ethtool -k` as a cross-check.
    for side in [testbed::Side::Client, testbed::Side::Server] {
        let (ns, dev) = (bed.netns(side), bed.iface(side));
        let active = nictune_linux::lab::active_features(ns, dev).unwrap();
        assert!(active.get("rx-gro") == Some(&true), "{active:?}");
        let tso_on: Vec<_> = active
            .iter()
            .filter(|(name, on)| {
                **on && nictune_linux::ethtool::features::attr::names::is_tso(name)
            })
            .collect();
        assert!(tso_on.is_empty(), "{tso_on:?}");
        let ethtool = Command::new("ip")
            .args(["netns", "exec", ns, "ethtool", "-k", dev])
            .output();
        if let Ok(out) = ethtool.as_ref().map(|o| String::from_utf8_lossy(&o.stdout)) {
            if out.contains("generic-receive-offload") {
                assert!(out.contains("generic-receive-offload: on"), "{out}");
                assert!(out.contains("tcp-segmentation-offload: off"), "{out}");
            }
        }
    }
    let mut icmp = short(TestKind::Ping, 500);
    icmp.icmp = true;
    let r = run(&icmp, ServerSide::Testbed(&bed), &NoProgress).unwrap();
    assert!(r.completed > 50, "{}", r.completed);
    bed.destroy().unwrap();
    let left: Vec<_> = testbed::list()
        .into_iter()
        .filter(|n| *n == names.client_ns || *n == names.server_ns)
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn cancelling_a_run_returns_quickly_and_the_guard_cleans_up() {
    if skip_testbed("cancelling_a_run") {
        return;
    }
    let _serial = serial();
    let names;
    {
        let bed = Testbed::create(nictune_linux::write::privilege()).unwrap();
        names = bed.names().clone();
        let cancel = Cancel::new();
        let c = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(700));
            c.cancel();
        });
        let mut spec = short(TestKind::Rr, 1_000);
        spec.duration = Nanos::from_secs(30);
        let t = Instant::now();
        let err =
            run_cancellable(&spec, ServerSide::Testbed(&bed), &NoProgress, &cancel).unwrap_err();
        assert!(matches!(err, BenchError::Interrupted), "{err}");
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    }
    assert!(!testbed::list().contains(&names.client_ns));
}

/// Runs in a child process: builds a testbed and measures for 20 s unless stopped.
#[test]
fn child_holds_a_testbed() {
    if std::env::var_os("NICTUNE_BENCH_CHILD").is_none() {
        return; // only meaningful as the child of the two tests below
    }
    let cancel = Cancel::new();
    cancel.on_signals().unwrap();
    let bed = Testbed::create(nictune_linux::write::privilege()).unwrap();
    let mut spec = short(TestKind::Rr, 1_000);
    spec.duration = Nanos::from_secs(20);
    let _ = run_cancellable(&spec, ServerSide::Testbed(&bed), &NoProgress, &cancel);
}

/// Whether `env --default-signal` (coreutils 8.31 and later) is here to start the child with
/// SIGINT at its default action even where this test runs as a background job.
fn env_default_signal() -> bool {
    Command::new("env")
        .args(["--default-signal=HUP,INT,TERM", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

fn spawn_child() -> Child {
    let exe = std::env::current_exe().unwrap();
    let mut child = match env_default_signal() {
        true => {
            let mut c = Command::new("env");
            c.arg("--default-signal=HUP,INT,TERM").arg(exe);
            c
        }
        false => Command::new(exe),
    };
    child
        .args(["--exact", "child_holds_a_testbed", "--test-threads=1"])
        .env("NICTUNE_BENCH_CHILD", "1")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits (at most 10 s) until the child's testbed exists and it is measuring.
fn wait_for_testbed(child: &Child) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        let ns = namespaces_of(child.id());
        if ns.len() == 2 {
            std::thread::sleep(Duration::from_millis(800)); // into the run
            return ns;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("child {} built no testbed", child.id());
}

#[test]
fn a_killed_client_leaves_a_stale_testbed_that_the_next_start_removes() {
    if skip_testbed("a_killed_client") {
        return;
    }
    let _serial = serial();
    let mut child = spawn_child();
    let ns = wait_for_testbed(&child);
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    assert_eq!(namespaces_of(child.id()), ns, "SIGKILL cannot clean up");
    let removed = testbed::remove_stale().unwrap();
    assert!(ns.iter().all(|n| removed.contains(n)), "{removed:?}");
    assert!(namespaces_of(child.id()).is_empty());
}

#[test]
fn ctrl_c_stops_the_client_and_removes_its_testbed() {
    if skip_testbed("ctrl_c") {
        return;
    }
    let _serial = serial();
    // A shell starts a background job with SIGINT ignored, and a child inherits that; the
    // bench then leaves SIGINT ignored, as a background job should (`Cancel::on_signals`).
    // The child starts with it at its default action (`spawn_child`); where it cannot, and
    // this test runs so, the child is stopped with SIGTERM, which takes the same path.
    let sigint_ignored = nictune_bench::cancel::ignored_at_start(signal_hook::consts::SIGINT);
    let signal = match !env_default_signal() && sigint_ignored {
        true => {
            eprintln!("SIGINT is ignored here (a background job) and `env --default-signal` is missing: sending TERM");
            "TERM"
        }
        false => "INT",
    };
    let mut child = spawn_child();
    wait_for_testbed(&child);
    let t = Instant::now();
    let rc = unsafe_free_kill(child.id(), signal);
    assert!(rc, "kill -{signal} failed");
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let took = t.elapsed();
    assert!(took < Duration::from_secs(5), "{took:?} after SIG{signal}");
    assert!(namespaces_of(child.id()).is_empty());
}

/// Sends a signal to a process this test started, by pid, with kill(1).
fn unsafe_free_kill(pid: u32, signal: &str) -> bool {
    Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success())
}
