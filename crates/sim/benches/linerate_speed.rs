//! Speed of the engine on `linerate-10g-64b` (issue 14 §6): simulated seconds per wall second
//! on one core, the figure `nictune sim linerate-10g-64b --json` reports as
//! `engine.sim_seconds / engine.wall_seconds`. Run with
//! `cargo bench -p nictune-sim --bench linerate_speed`.
//!
//! The clocks are read here, outside the simulation, only to report the figure. On a shared
//! machine the wall figure understates the speed; the bench also prints simulated seconds per
//! second of CPU time this thread actually got (Linux `/proc/thread-self/schedstat`).

use nictune_sim::scenario::builtin;
use std::time::Instant;

/// Runs measured; best and median are printed.
const RUNS: usize = 7;

/// CPU time this thread has run, in seconds, where the kernel exposes it.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

fn best_and_median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v.last().copied().unwrap_or(0.0), v[v.len() / 2])
}

fn main() {
    let scenario = builtin::get("linerate-10g-64b").expect("built-in scenario");
    let (mut per_wall, mut per_cpu) = (vec![], vec![]);
    for _ in 0..RUNS {
        let (start, cpu0) = (Instant::now(), cpu_seconds());
        let r = scenario.run().expect("the built-in runs");
        let wall = start.elapsed().as_secs_f64();
        let cpu = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
        let sim = r.engine.sim_seconds;
        per_wall.push(sim / wall);
        if let Some(c) = cpu {
            per_cpu.push(sim / c);
        }
        println!(
            "linerate_speed: {sim} simulated s, {} packets, {} events in {wall:.3} wall s{}",
            r.engine.packets,
            r.engine.events,
            cpu.map_or(String::new(), |c| format!(" ({c:.3} CPU s)")),
        );
    }
    let (best, median) = best_and_median(per_wall);
    println!(
        "linerate_speed: {best:.2} simulated s per wall s best, {median:.2} median ({RUNS} runs, one core)"
    );
    if !per_cpu.is_empty() {
        let (best, median) = best_and_median(per_cpu);
        println!("linerate_speed: {best:.2} simulated s per CPU s best, {median:.2} median");
    }
}
