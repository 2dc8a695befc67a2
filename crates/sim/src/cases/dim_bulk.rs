//! The DIM check of issue 4 §8: on a bulk stream, Linux DIM should reach the same throughput
//! as a fixed 8 µs coalescing setting with fewer interrupts.
//!
//! Host: [`super::rxhost`] in interrupt mode; 10 Gbit/s of full-size frames (812 kpps);
//! modern per-packet costs (sim-notes §4.3: ≈1–2 µs per interrupt, ≈0.3–1 µs per poll, a few
//! hundred ns per GRO'd TCP frame). The fixed setting programs the same timer semantics DIM
//! uses (EQE: the timer starts at the first completion) with DIM's own frame count.

use super::rxhost::{
    run as run_host, HostCosts, RxHostExtras, RxHostOutcome, RxHostParams, RxMode,
};
use crate::moderation::dim::{Dim, Direction};
use crate::moderation::{Coalescing, Fixed, ModerationPolicy, TimerStart};
use nictune_core::units::{Bytes, Nanos};

/// The seed the scenario runs with unless `--set seed=` says otherwise.
pub const DEFAULT_SEED: u64 = 3;

/// Frames per second of 1514-byte frames at 10 Gbit/s (1538 bytes on the wire).
pub const BULK_PPS: f64 = 10e9 / 8.0 / 1538.0;

fn costs() -> HostCosts {
    HostCosts {
        irq: Nanos(1_500),
        poll: Nanos(500),
        per_frame: Nanos(300),
        app_per_frame: Nanos::ZERO,
    }
}

/// Runs the bulk stream with `policy` for `duration` with `seed` (the arrival process).
pub fn run(policy: Box<dyn ModerationPolicy>, duration: Nanos, seed: u64) -> RxHostOutcome {
    run_host(RxHostParams {
        link_bps: 10e9, // 10 Gbit/s
        offered_pps: BULK_PPS,
        frame: Bytes(1514),
        ring: 1024,
        socket_frames: 1 << 20,
        mode: RxMode::Interrupts { policy, weight: 64 },
        costs: costs(),
        extras: RxHostExtras::default(),
        duration,
        seed,
    })
}

/// DIM on the receive queue (EQE profiles, the mlx5 default for rx).
pub fn dim() -> Box<dyn ModerationPolicy> {
    Box::new(Dim::new(Direction::Rx, TimerStart::AtFirstEvent))
}

/// A fixed rx-usecs 8 with DIM's frame count for that period.
pub fn fixed_8us() -> Box<dyn ModerationPolicy> {
    Box::new(Fixed(Coalescing::timer(
        Nanos::from_micros(8),
        256,
        TimerStart::AtFirstEvent,
    )))
}

#[cfg(test)]
mod validation {
    use super::*;

    #[test]
    fn dim_lowers_interrupts_at_equal_throughput() {
        let d = Nanos::from_millis(500);
        let fixed = run(fixed_8us(), d, DEFAULT_SEED);
        let dim = run(dim(), d, DEFAULT_SEED);
        assert!(
            dim.interrupts_per_sec < 0.5 * fixed.interrupts_per_sec,
            "{} vs {}",
            dim.interrupts_per_sec,
            fixed.interrupts_per_sec
        );
        let (a, b) = (dim.received as f64, fixed.received as f64);
        assert!((a - b).abs() / b < 0.01, "{a} vs {b}");
        assert_eq!(dim.ring_drops, 0);
    }
}
