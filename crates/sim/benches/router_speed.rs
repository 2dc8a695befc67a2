//! Speed of the multi-queue router scenario (issue 4 §9): simulated packets per wall second
//! on one core. Run with `cargo bench -p nictune-sim --bench router_speed`.
//!
//! The clocks are read here, outside the simulation, only to report the figure. On a shared
//! machine the wall figure understates the speed; the bench also prints packets per second of
//! CPU time this thread actually got (Linux `/proc/thread-self/schedstat`).

use nictune_core::units::Nanos;
use nictune_sim::cases::router::{run, RouterParams};
use nictune_sim::multiqueue::binding::Binding;
use std::time::Instant;

/// CPU time this thread has run, in seconds, where the kernel exposes it.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

fn main() {
    // The report's final state: 206 kpps in + 206 kpps out, spread binding, 8 NAT instances.
    let params = RouterParams {
        binding: Binding::Spread,
        nat_instances: 8,
        duration: Nanos::from_secs(20),
        ..RouterParams::default()
    };
    let (mut best_wall, mut best_cpu) = (0.0f64, 0.0f64);
    for _ in 0..3 {
        let (start, cpu0) = (Instant::now(), cpu_seconds());
        let out = run(&params);
        let wall = start.elapsed().as_secs_f64();
        let cpu = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
        let per_wall = out.forwarded as f64 / wall;
        best_wall = best_wall.max(per_wall);
        let per_cpu = cpu.map(|c| out.forwarded as f64 / c);
        best_cpu = best_cpu.max(per_cpu.unwrap_or(0.0));
        println!(
            "router_speed: {} packets ({:.0} simulated s) in {:.3} wall s: {:.2} M packets/wall s{}",
            out.forwarded,
            params.duration.as_secs_f64(),
            wall,
            per_wall / 1e6,
            per_cpu.map_or(String::new(), |r| format!(", {:.2} M packets/CPU s", r / 1e6)),
        );
    }
    println!(
        "router_speed best: {:.2} M packets per wall second on one core",
        best_wall / 1e6
    );
    if best_cpu > 0.0 {
        println!(
            "router_speed best: {:.2} M packets per second of CPU time",
            best_cpu / 1e6
        );
    }
}
