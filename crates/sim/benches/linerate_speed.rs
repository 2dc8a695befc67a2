//! Speed of the engine on `linerate-10g-64b` (issue 14 §6): simulated seconds per wall second
//! on one core, the figure `nictune sim linerate-10g-64b --json` reports as
//! `engine.sim_s / engine.wall_s`. Run with
//! `cargo bench -p nictune-sim --bench linerate_speed`.
//!
//! Each measured run is a fresh process doing what the CLI does between reading its
//! arguments and printing: look the built-in up, then time `Scenario::run` (which builds the
//! run from its parameters, loading the settings catalog the first time, runs it and
//! collects the metrics) with the wall clock around it, as `nictune sim` fills in `wall_s`.
//! The bench re-runs its own executable for that, so a run never profits from a catalog, an
//! allocator or caches warmed by the run before.
//!
//! The clocks are read here, outside the simulation, only to report the figure. On a shared
//! machine the wall figure understates the speed; the bench also prints simulated seconds per
//! second of CPU time the run actually got (Linux `/proc/thread-self/schedstat`), the CPU
//! time per frame, and the child's peak resident memory (`VmHWM` in `/proc/self/status`).

use nictune_sim::scenario::builtin;
use std::process::Command;
use std::time::Instant;

/// Runs measured; best and median are printed.
const RUNS: usize = 9;
/// Set in the environment of the child processes that do one measured run each.
const CHILD: &str = "NICTUNE_LINERATE_SPEED_CHILD";
const SCENARIO: &str = "linerate-10g-64b";

/// CPU time this thread has run, in seconds, where the kernel exposes it.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// This process's peak resident set (kB), where the kernel exposes it.
fn peak_rss_kb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// One run as the CLI does it, printed as `sim packets events wall cpu rss` (`-` where the
/// kernel does not say).
fn child() {
    let scenario = builtin::get(SCENARIO).expect("built-in scenario");
    let (start, cpu0) = (Instant::now(), cpu_seconds());
    let r = scenario.run().expect("the built-in runs");
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    println!(
        "{} {} {} {wall} {} {}",
        r.engine.sim_seconds,
        r.engine.packets,
        r.engine.events,
        opt(cpu.map(|c| c.to_string())),
        opt(peak_rss_kb().map(|k| k.to_string())),
    );
}

/// One measured run's figures.
struct Run {
    sim: f64,
    packets: f64,
    events: u64,
    wall: f64,
    cpu: Option<f64>,
    rss_kb: Option<u64>,
}

fn measure() -> Run {
    let exe = std::env::current_exe().expect("the bench's own path");
    let out = Command::new(exe)
        .env(CHILD, "1")
        .output()
        .expect("the bench re-runs itself");
    assert!(out.status.success(), "child run failed: {out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(f.len(), 6, "child printed {text:?}");
    Run {
        sim: f[0].parse().expect("sim seconds"),
        packets: f[1].parse().expect("packets"),
        events: f[2].parse().expect("events"),
        wall: f[3].parse().expect("wall seconds"),
        cpu: f[4].parse().ok(),
        rss_kb: f[5].parse().ok(),
    }
}

fn best_and_median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v.last().copied().unwrap_or(0.0), v[v.len() / 2])
}

fn main() {
    if std::env::var_os(CHILD).is_some() {
        return child();
    }
    let runs: Vec<Run> = (0..RUNS).map(|_| measure()).collect();
    for r in &runs {
        println!(
            "linerate_speed: {} simulated s, {} packets, {} events in {:.3} wall s{}{}",
            r.sim,
            r.packets,
            r.events,
            r.wall,
            r.cpu.map_or(String::new(), |c| format!(
                " ({c:.3} CPU s, {:.1} ns/frame)",
                c * 1e9 / r.packets
            )),
            r.rss_kb.map_or(String::new(), |k| format!(
                ", peak RSS {:.1} MB",
                k as f64 / 1024.0
            )),
        );
    }
    let (best, median) = best_and_median(runs.iter().map(|r| r.sim / r.wall).collect());
    println!(
        "linerate_speed: {best:.2} simulated s per wall s best, {median:.2} median ({RUNS} runs, one core, a fresh process each, as `nictune sim {SCENARIO} --json` reports it)"
    );
    let cpu: Vec<(f64, f64)> = runs
        .iter()
        .filter_map(|r| r.cpu.map(|c| (r.sim / c, c * 1e9 / r.packets)))
        .collect();
    if !cpu.is_empty() {
        let (best, median) = best_and_median(cpu.iter().map(|c| c.0).collect());
        let (_, ns) = best_and_median(cpu.iter().map(|c| c.1).collect());
        println!(
            "linerate_speed: {best:.2} simulated s per CPU s best, {median:.2} median; {ns:.1} ns of CPU per frame (median)"
        );
    }
}
