//! Case 2: FreeBSD 7.2 DEVICE_POLLING versus interrupts on an em interface
//! (`seed-freebsd-polling`).
//!
//! The host is [`super::rxhost`]: in `interrupts` mode the em driver of FreeBSD 7 with its
//! fixed throttle (`hw.em.max_interrupt_rate` 8000 → ITR 488, 125 µs) and a receive task
//! taking up to `rx_process_limit` (100) frames per pass; in `polling` mode kern_poll with the
//! `kern.polling.*` knobs. The application (iperf) consumes frames in the CPU time left.
//!
//! Host assumption (the report does not state it): a small x86 appliance of the kind sites
//! used for 10 Mbit/s WAN links in 2009, an AMD Geode-class CPU at ≈266 MHz. Costs scaled from
//! modern figures by ≈10× (sim-notes §4.3) \[assumed\]: 30 µs per interrupt (filter, taskqueue
//! wake-up and switch), 3 µs per receive pass or polling chunk (a handler call and a descriptor
//! status read; kern_poll calls the handler burst/each_burst times per tick even when idle), 40 µs per received frame through
//! em, IP and TCP (including the transmit work of the symmetric reverse direction, which
//! iperf -d generates frame for frame), 60 µs of iperf time per frame.
//!
//! Load: `iperf -d` over 10 Mbit/s sends ≈812 full frames/s each way plus ACKs; the host
//! receives ≈1218 frames/s. `offered_pps` raises the load to show the mechanisms at
//! saturation (the HZ × burst_max cap, the user_frac share).

use super::rxhost::{run as run_host, HostCosts, RxHostOutcome, RxHostParams, RxMode, TxCauses};
use crate::freebsd::polling::PollingConfig;
use crate::moderation::{rate_to_256ns_throttle, Fixed};
use nictune_core::units::{Bytes, Nanos};

/// The seed the scenario runs with unless `--set seed=` says otherwise.
pub const DEFAULT_SEED: u64 = 2;

/// Frames per second the host receives under `iperf -d` on 10 Mbit/s: 812 data + 406 ACKs.
/// The test is symmetric, so the host sends as many.
pub const IPERF_D_PPS: f64 = 1218.0;

/// em's transmit interrupt delay: `hw.em.tx_int_delay` default 64 ticks of 1.024 µs = 66 µs
/// (EM_TIDV; moderation-algorithms.md §8). The driver sets IDE on every packet when it is
/// non-zero, so each sent frame raises TXDW 66 µs later (TADV, also 66 µs, never shortens
/// that for frames spaced wider than the delay).
pub const EM_TIDV: Nanos = Nanos(66_000);

/// How the interface receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `ifconfig em0 polling`.
    Polling(PollingConfig),
    /// Interrupts at `hw.em.max_interrupt_rate`.
    Interrupts {
        /// Interrupts per second at most.
        max_interrupt_rate: u32,
    },
}

/// The host's costs (see the module doc for the assumption behind them).
pub fn costs() -> HostCosts {
    HostCosts {
        irq: Nanos::from_micros(30),
        poll: Nanos::from_micros(3),
        per_frame: Nanos::from_micros(40),
        app_per_frame: Nanos::from_micros(60),
    }
}

/// Runs `mode` receiving `offered_pps` (mean frame `frame`) and sending `tx_pps` for
/// `duration` with `seed` (the arrival process). In interrupts mode every sent frame raises a transmit-done cause (TXDW after
/// TIDV) that interrupts through the same throttle as received frames; in polling mode
/// `em_poll` cleans the transmit ring (`em_txeof`) with no interrupt at all.
pub fn run(
    mode: Mode,
    offered_pps: f64,
    tx_pps: f64,
    frame: Bytes,
    duration: Nanos,
    seed: u64,
) -> RxHostOutcome {
    let mode = match mode {
        Mode::Polling(cfg) => RxMode::Polling(cfg),
        Mode::Interrupts { max_interrupt_rate } => RxMode::Interrupts {
            policy: Box::new(Fixed(rate_to_256ns_throttle(max_interrupt_rate))),
            weight: 100, // hw.em.rx_process_limit
        },
    };
    run_host(RxHostParams {
        link_bps: 10e6, // the 10 Mbit/s metro Ethernet circuit (seed-cases.md Case 2)
        offered_pps,
        frame,
        ring: 256, // em default rx descriptors
        socket_frames: 256,
        mode,
        costs: costs(),
        probe_every: None,
        probe_base: Nanos::ZERO,
        busy_poll: None,
        tx: (tx_pps > 0.0).then_some(TxCauses::Poisson {
            pps: tx_pps,
            delay: EM_TIDV,
        }),
        tcp: None,
        linux: None,
        duration,
        seed,
    })
}

/// The model's assumptions.
pub const EXPLAIN: &str = "\
seed-freebsd-polling — Case 2: FreeBSD 7.2 em, DEVICE_POLLING vs interrupts, iperf -d on 10 Mbit/s.

Polling: HZ=1000, burst_max 150, each_burst 5, user_frac 50, reg_frac 20, idle_poll 0; no
receive interrupts; per tick up to `burst` frames in chunks of each_burst, burst ±1 per tick
against user_frac, −1/8 after missed ticks; excess frames wait in the 256-descriptor ring and
are dropped there. Interrupts: fixed throttle from hw.em.max_interrupt_rate (8000/s), receive
task of up to 100 frames per pass.

Host (not stated in the report; assumed): a ≈266 MHz Geode-class appliance; 30 µs per
interrupt, 3 µs per receive pass/polling chunk, 40 µs per received frame including the reverse
direction's transmit work, 60 µs of iperf per frame. Load: iperf -d receives ≈1218 frames/s
(812 data + 406 ACKs) and sends as many (tx_pps); offered_pps raises the load, which the
10 Mbit/s link caps: a frame arrives no sooner than one wire time after the previous one.

Bidirectional traffic in interrupts mode: em sets IDE on every transmit descriptor
(hw.em.tx_int_delay 66 µs), so each sent frame raises TXDW 66 µs later and interrupts through
the same 8000/s throttle as received frames; polling cleans the transmit ring in em_poll with
no interrupt. kern_poll calls the handler burst/each_burst times per tick whether or not it
finds work (netisr_poll ignores what the handler did), and burst climbs to burst_max when ticks
are short: 30 calls, 90 µs per tick on this host. Hence the crossover: at iperf -d with
full-size frames (1218 frames/s each way) polling costs 13.8 % kernel time vs 12.2 % with
interrupts; at ≈1500 frames/s each way they meet; at 3900 frames/s each way (300-byte frames)
polling takes 24.6 % vs 33.4 % and delivers the same. Polling delivers more only where
interrupts saturate the CPU (livelock), e.g. offered_pps=50000 with 64-byte frames.
";

#[cfg(test)]
mod validation {
    //! issue 4 §8, Case 2.
    use super::*;

    fn busy(o: &RxHostOutcome) -> f64 {
        o.metrics.hosts["receiver"].cpu.per_core[0].busy()
    }

    fn kernel(o: &RxHostOutcome) -> f64 {
        let c = &o.metrics.hosts["receiver"].cpu.per_core[0];
        c.irq + c.softirq
    }

    const INTERRUPTS: Mode = Mode::Interrupts {
        max_interrupt_rate: 8000,
    };

    #[test]
    fn heavy_load_polling_uses_less_cpu_and_delivers_as_much() {
        // Heavy and bidirectional: 10 Mbit/s of 300-byte frames each way. In interrupts mode
        // every received frame and every transmit completion is an interrupt cause (≈5.4 k
        // interrupts/s through the 8000/s throttle); polling takes both in its ticks.
        let (pps, frame, d) = (3_900.0, Bytes(300), Nanos::from_secs(5));
        let poll = run(
            Mode::Polling(PollingConfig::default()),
            pps,
            pps,
            frame,
            d,
            DEFAULT_SEED,
        );
        let intr = run(INTERRUPTS, pps, pps, frame, d, DEFAULT_SEED);
        assert!(intr.interrupts_per_sec > pps, "{}", intr.interrupts_per_sec);
        assert!(
            kernel(&poll) < 0.8 * kernel(&intr),
            "{} vs {}",
            kernel(&poll),
            kernel(&intr)
        );
        assert!(
            poll.consumed as f64 >= 0.999 * intr.consumed as f64,
            "{} vs {}",
            poll.consumed,
            intr.consumed
        );
        assert!(busy(&poll) < busy(&intr));
    }

    #[test]
    fn the_10_mbit_link_caps_whatever_is_offered() {
        // 70,000 frames/s of 1046 bytes would be 586 Mbit/s; the circuit carries 10.
        let d = Nanos::from_secs(1);
        for mode in [Mode::Polling(PollingConfig::default()), INTERRUPTS] {
            let o = run(mode, 70_000.0, 0.0, Bytes(1046), d, DEFAULT_SEED);
            let line_fps = 10e6 / ((1046 + 24) * 8) as f64;
            let arrived = (o.received + o.ring_drops) as f64;
            assert!(arrived <= line_fps + 1.0, "{arrived} frames/s");
            assert!(o.metrics.throughput_bps.unwrap() < 10e6);
        }
    }

    #[test]
    fn at_light_load_the_idle_chunks_make_polling_dearer() {
        // kern_poll calls the handler burst/each_burst times per tick whatever it finds, and
        // burst climbs to burst_max when the ticks are short: 30 calls per tick.
        let d = Nanos::from_secs(2);
        let poll = run(
            Mode::Polling(PollingConfig::default()),
            200.0,
            200.0,
            Bytes(1000),
            d,
            DEFAULT_SEED,
        );
        let intr = run(INTERRUPTS, 200.0, 200.0, Bytes(1000), d, DEFAULT_SEED);
        assert_eq!(poll.final_burst, Some(150));
        assert!(
            kernel(&poll) > kernel(&intr),
            "{} vs {}",
            kernel(&poll),
            kernel(&intr)
        );
    }

    #[test]
    fn polling_caps_at_hz_times_burst_max_and_keeps_the_user_share() {
        let cfg = PollingConfig::default();
        let cheap = super::super::rxhost::HostCosts {
            irq: Nanos(0),
            poll: Nanos(100),
            per_frame: Nanos(100),
            app_per_frame: Nanos(100),
        };
        let o = run_host(RxHostParams {
            link_bps: 1e9,
            offered_pps: 400_000.0,
            frame: Bytes(64),
            ring: 256,
            socket_frames: 256,
            mode: RxMode::Polling(cfg),
            costs: cheap,
            probe_every: None,
            probe_base: Nanos::ZERO,
            busy_poll: None,
            tx: None,
            tcp: None,
            linux: None,
            duration: Nanos::from_secs(2),
            seed: 1,
        });
        let per_sec = o.received as f64 / 2.0;
        assert!(
            per_sec <= cfg.max_pps_per_interface() as f64 * 1.001,
            "{per_sec}"
        );
        assert!(
            per_sec > 0.9 * cfg.max_pps_per_interface() as f64,
            "{per_sec}"
        );
        assert!(
            o.ring_drops > 0,
            "excess stays in the ring and is dropped there"
        );
        // Overloaded with expensive frames: the kernel keeps to about (100 − user_frac) %.
        let heavy = run(
            Mode::Polling(cfg),
            50_000.0,
            0.0,
            Bytes(64),
            Nanos::from_secs(2),
            DEFAULT_SEED,
        );
        let k = kernel(&heavy);
        assert!((0.40..0.60).contains(&k), "kernel share {k}");
        let intr = run(
            INTERRUPTS,
            50_000.0,
            0.0,
            Bytes(64),
            Nanos::from_secs(2),
            DEFAULT_SEED,
        );
        assert!(
            heavy.consumed > intr.consumed,
            "{} vs {}",
            heavy.consumed,
            intr.consumed
        );
    }
}
