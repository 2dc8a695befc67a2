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

fn main() {
    let s = builtin::get("linerate-10g-64b").expect("built-in scenario");
    let t = Instant::now();
    let r = s.run().expect("runs");
    let wall = t.elapsed().as_secs_f64();
    println!(
        "linerate-10g-64b: {} packets, {} events, {:.3} sim s in {wall:.3} wall s on one core \
         = {:.1} M simulated packets per wall second",
        r.engine.packets,
        r.engine.events,
        r.engine.sim_seconds,
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
    let t = Instant::now();
    let results = run_parallel(&points, threads, &NoProgress, |p| p.run().expect("runs"));
    let wall = t.elapsed().as_secs_f64();
    let packets: u64 = results.iter().map(|r| r.engine.packets).sum();
    println!(
        "sweep: {} points x {} packets = {packets} packets on {threads} threads in {wall:.2} wall s \
         ({:.1} M packets per wall second)",
        results.len(),
        packets / results.len() as u64,
        packets as f64 / wall / 1e6
    );
}
