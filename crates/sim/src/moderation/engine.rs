//! The Simulator II moderation families on the engine's seam
//! ([`crate::driver::policy::ModerationPolicy`]).
//!
//! [`EnginePolicy`] wraps any [`super::ModerationPolicy`] so the engine's NIC runs it: the
//! traffic window the engine reports at each NAPI completion is fed to `observe`, and a
//! returned [`super::Coalescing`] becomes the NIC's registers — a throttle interval, or for a
//! DIM timer the 8254x-style timer pair: EQE (timer from the first completion) as an absolute
//! timer with the packet timer set one tick longer (absolute-only behaviour,
//! moderation-algorithms.md §1), CQE (restarted by each completion) as a packet timer; the
//! frame count as the rx frame threshold. Transmit timers are left as they were.

use super::{Coalescing, ModerationPolicy, TimerStart, Traffic};
use crate::driver::policy::{ModerationCtx, ModerationPolicy as EngineSeam, PollWindow};
use crate::nic::Coalescing as Registers;
use nictune_core::units::Nanos;

/// A Simulator II policy as an engine policy.
#[derive(Debug)]
pub struct EnginePolicy<P> {
    inner: P,
    base: Registers,
}

impl<P: ModerationPolicy> EnginePolicy<P> {
    /// Wraps `inner`; `base` supplies the registers the policy does not set (tx timers).
    pub fn new(inner: P, base: Registers) -> EnginePolicy<P> {
        EnginePolicy { inner, base }
    }

    /// The wrapped policy.
    pub fn inner(&self) -> &P {
        &self.inner
    }
}

/// `c` written over `base`.
pub fn registers(base: Registers, c: Coalescing) -> Registers {
    let rx_off = Registers {
        interval_ns: 0,
        rx_pkt_ns: 0,
        rx_abs_ns: 0,
        rx_frames: 0,
        ..base
    };
    match c {
        Coalescing::Off => rx_off,
        Coalescing::Throttle(gap) => Registers {
            interval_ns: gap.0,
            ..rx_off
        },
        Coalescing::Timer {
            usecs,
            frames,
            start: TimerStart::AtFirstEvent,
        } => Registers {
            rx_pkt_ns: usecs.0 + 1,
            rx_abs_ns: usecs.0,
            rx_frames: frames,
            ..rx_off
        },
        Coalescing::Timer {
            usecs,
            frames,
            start: TimerStart::PerCompletion,
        } => Registers {
            rx_pkt_ns: usecs.0,
            rx_frames: frames,
            ..rx_off
        },
    }
}

impl<P: ModerationPolicy + Send> EngineSeam for EnginePolicy<P> {
    fn initial(&mut self) -> Registers {
        registers(self.base, self.inner.current())
    }

    fn on_interrupt(&mut self, ctx: &ModerationCtx) -> Option<Registers> {
        self.inner
            .on_interrupt(Nanos(ctx.now))
            .map(|c| registers(ctx.regs, c))
    }

    fn on_poll_complete(&mut self, ctx: &ModerationCtx, w: &PollWindow) -> Option<Registers> {
        self.inner.observe(Traffic {
            rx_packets: w.rx_packets,
            rx_bytes: w.rx_bytes,
            tx_packets: w.tx_packets,
            tx_bytes: w.tx_bytes,
        });
        self.inner
            .on_complete(Nanos(ctx.now))
            .map(|c| registers(ctx.regs, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::Sim;
    use crate::moderation::dim::{Dim, Direction};
    use crate::moderation::Fixed;
    use crate::scenario::{build, builtin};

    #[test]
    fn timers_map_to_the_8254x_pair() {
        let base = Registers {
            tx_pkt_ns: 8192,
            ..Registers::default()
        };
        let eqe = registers(
            base,
            Coalescing::Timer {
                usecs: Nanos(8_000),
                frames: 256,
                start: TimerStart::AtFirstEvent,
            },
        );
        assert_eq!(
            (eqe.rx_abs_ns, eqe.rx_pkt_ns, eqe.rx_frames, eqe.tx_pkt_ns),
            (8_000, 8_001, 256, 8192)
        );
        let cqe = registers(
            base,
            Coalescing::Timer {
                usecs: Nanos(8_000),
                frames: 128,
                start: TimerStart::PerCompletion,
            },
        );
        assert_eq!(
            (cqe.rx_abs_ns, cqe.rx_pkt_ns, cqe.rx_frames),
            (0, 8_000, 128)
        );
        assert_eq!(
            registers(base, Coalescing::Throttle(Nanos(50_000))).interval_ns,
            50_000
        );
    }

    /// The engine's 10 GbE stream with the server's policy replaced; interrupts and frames.
    fn engine_run(policy: Box<dyn EngineSeam>) -> (u64, u64) {
        let mut s = builtin::get("linerate-10g-64b").unwrap();
        s.set("workload.frame_bytes", "1514").unwrap();
        s.set("duration", "0.2").unwrap();
        let mut spec = build::spec(&s.resolved()).unwrap();
        let server = spec.hosts.iter_mut().find(|h| h.name == "server").unwrap();
        server.policy = policy;
        let out = Sim::new(spec).run();
        let h = out.hosts.iter().find(|h| h.name == "server").unwrap();
        (h.counters.interrupts, h.stats.rx_processed)
    }

    #[test]
    fn dim_runs_in_the_engine_and_lowers_interrupts_at_equal_throughput() {
        let base = Registers::default();
        let fixed = Fixed(Coalescing::Timer {
            usecs: Nanos::from_micros(8),
            frames: 256,
            start: TimerStart::AtFirstEvent,
        });
        let (fixed_irqs, fixed_rx) = engine_run(Box::new(EnginePolicy::new(fixed, base)));
        let dim = Dim::new(Direction::Rx, TimerStart::AtFirstEvent);
        let (dim_irqs, dim_rx) = engine_run(Box::new(EnginePolicy::new(dim, base)));
        assert!(dim_irqs * 2 < fixed_irqs, "{dim_irqs} vs {fixed_irqs}");
        assert!(
            (dim_rx as f64 - fixed_rx as f64).abs() / (fixed_rx as f64) < 0.01,
            "{dim_rx} vs {fixed_rx}"
        );
    }
}
