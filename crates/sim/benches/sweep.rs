//! Simulator speed, printed as figures (run with `cargo bench -p nictune-sim --bench sweep`).
//!
//! 1. `linerate-10g-64b`: one simulated second of 64-byte frames at 10 GbE line rate
//!    (14.88 Mpps) into one queue; target ≤ 1 wall second on one core.
//! 2. A 1000-point sweep of the same scenario cut to 100,000 frames per point (6.72 ms),
//!    over 1000 fixed interrupt rates, on two threads; target < 60 s.
//!
//! Wall time is read here, around the runs, never inside them.

use nictune_core::progress::NoProgress;
use nictune_sim::scenario::sweep::run_parallel;
use nictune_sim::scenario::{builtin, Scenario};
use std::time::Instant;

/// This process's user + system CPU seconds from /proc/self/stat (Linux; USER_HZ = 100), so
/// the figure stays meaningful on a machine shared with other work.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

fn fmt_cpu(before: Option<f64>, after: Option<f64>) -> String {
    match (before, after) {
        (Some(b), Some(a)) => format!("{:.2} CPU s", a - b),
        _ => "CPU time unavailable".to_string(),
    }
}

fn main() {
    let s = builtin::get("linerate-10g-64b").expect("built-in scenario");
    let cpu = cpu_seconds();
    let t = Instant::now();
    let r = s.run().expect("runs");
    let wall = t.elapsed().as_secs_f64();
    println!(
        "linerate-10g-64b: {} packets, {} events, {:.3} sim s in {wall:.3} wall s ({}) on one \
         core = {:.1} M simulated packets per wall second",
        r.engine.packets,
        r.engine.events,
        r.engine.sim_seconds,
        fmt_cpu(cpu, cpu_seconds()),
        r.engine.packets as f64 / wall / 1e6
    );

    let points: Vec<Scenario> = (0..1000)
        .map(|i| {
            let mut p = s.clone();
            p.set("duration", "0.00672").expect("duration");
            p.set("server.itr", &(100 + i * 99).to_string())
                .expect("itr");
            p
        })
        .collect();
    let threads = 2;
    let cpu = cpu_seconds();
    let t = Instant::now();
    let results = run_parallel(&points, threads, &NoProgress, |p| p.run().expect("runs"));
    let wall = t.elapsed().as_secs_f64();
    let packets: u64 = results.iter().map(|r| r.engine.packets).sum();
    println!(
        "sweep: {} points x {} packets = {packets} packets on {threads} threads in {wall:.2} wall s \
         ({}; {:.1} M packets per wall second)",
        results.len(),
        packets / results.len() as u64,
        fmt_cpu(cpu, cpu_seconds()),
        packets as f64 / wall / 1e6
    );
}
