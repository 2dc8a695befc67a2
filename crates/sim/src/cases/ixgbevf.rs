//! Case 3: ixgbevf `InterruptThrottleRate` on an EC2 SR-IOV virtual function
//! (`seed-ixgbevf-sriov`).
//!
//! 150 iperf connections with Nagle off write 40-byte segments (≈21 Mbit/s in all settings,
//! so the senders set the rate); every queue interrupt lands on CPU0 of the 4-vCPU receiver.
//! The receiver is [`super::rxhost`] in interrupt mode with the ixgbevf legacy moderation
//! ([`crate::moderation::ixgbe_legacy`], in-tree VF variant, fixed rates through the
//! out-of-tree driver's `InterruptThrottleRate` arithmetic). The iperf threads run on the
//! other vCPUs, so CPU0 does only receive work. Ping probes every 200 ms go through the same
//! queue.

use super::rxhost::{run as run_host, HostCosts, RxHostOutcome, RxHostParams, RxMode};
use crate::moderation::ixgbe_legacy::{
    LegacyItr, LegacySetting, LegacyVariant, MAX_RATE, MIN_RATE,
};
use nictune_core::units::{Bytes, Nanos};

/// Segments per second: 21 Mbit/s of 40-byte payloads.
pub const OFFERED_PPS: f64 = 21e6 / 8.0 / 40.0;
/// Frame bytes as the driver counts them: 40 payload + 32 TCP (timestamps) + 20 IP + 14.
pub const FRAME: Bytes = Bytes(106);

/// CPU0 costs. Calibrated on the report's two dev-visible points (itr=1 → softirq ≈59 %,
/// itr=1000 → ≈7.6 %): with the model's own poll and frame counts at those settings
/// (47.0 k and 1.46 k polls/s, 65.6 k frames/s; solved and re-run to a fixed point) the two
/// equations give 11.29 µs per NAPI poll (a VF poll in a 2014 Xen HVM guest: the doorbell and
/// unmask MMIO writes trap to the hypervisor) and 0.907 µs per 40-byte segment (TCP receive
/// plus the delayed ACK); the hard
/// interrupt is assumed 2 µs (virtual interrupt injection and EOI, irq time, not softirq).
pub fn costs() -> HostCosts {
    HostCosts {
        irq: Nanos::from_micros(2),
        poll: Nanos(11_290),
        per_frame: Nanos(907),
        app_per_frame: Nanos::ZERO,
    }
}

/// The driver option value: 0, 1, 3 or a rate (956–488281 in the code).
pub fn setting(itr: i64) -> Result<LegacySetting, String> {
    match itr {
        0 => Ok(LegacySetting::Off),
        1 => Ok(LegacySetting::Dynamic),
        3 => Ok(LegacySetting::Conservative),
        r if (MIN_RATE as i64..=MAX_RATE as i64).contains(&r) => Ok(LegacySetting::Rate(r as u32)),
        other => Err(format!(
            "itr={other} is not accepted by ixgbevf: allowed 0 (off), 1 (dynamic), 3 (dynamic conservative) or {MIN_RATE}–{MAX_RATE} interrupts/s (the guides' 100–100000 is not what the code checks)"
        )),
    }
}

/// A probe's round trip outside the receiver's interrupt path: the report's minimum (0.080 ms
/// in mode 1, where the EITR wait is a few µs).
pub const PROBE_BASE: Nanos = Nanos(80_000);

/// Runs the scenario for `itr` for `duration`.
pub fn run(itr: LegacySetting, duration: Nanos, seed: u64) -> RxHostOutcome {
    run_host(RxHostParams {
        link_bps: 10e9, // the VF of an 82599 10 GbE port (c3.xlarge, assumed)
        offered_pps: OFFERED_PPS,
        frame: FRAME,
        ring: 512,
        socket_frames: 1 << 20,
        mode: RxMode::Interrupts {
            policy: Box::new(LegacyItr::new(LegacyVariant::Vf, itr)),
            weight: 64,
        },
        costs: costs(),
        probe_every: Some(Nanos::from_millis(200)),
        probe_base: PROBE_BASE,
        busy_poll: None,
        tx: None,
        duration,
        seed,
    })
}

/// The model's assumptions.
pub const EXPLAIN: &str = "\
seed-ixgbevf-sriov — Case 3: ixgbevf InterruptThrottleRate on an EC2 c3.xlarge VF (2014).

Traffic: 150 connections × 40-byte writes, Nagle off, ≈21 Mbit/s in every setting (the senders
set the rate): 65.6 k segments/s of 106-byte frames, Poisson. One rx queue, its interrupt on
CPU0; iperf runs on the other vCPUs. ixgbevf legacy adaptive moderation: bytes per µs of the
last ITR slice (thresholds 10/20) → 100 K / 20 K / 12 K ints/s, 90/10 rate smoothing; mode 3 is
assumed to cap at 20 K like the same-numbered e1000/igb mode; fixed rates use the driver's
1e9/(rate·256) arithmetic with 2 µs EITR granularity. NAPI weight 64.

Costs on CPU0: 11.29 µs per NAPI poll and 0.907 µs per segment (softirq), calibrated on the two
dev-visible points (itr=1 → 59 %, itr=1000 → 7.6 %); 2 µs per hard interrupt (irq time,
assumed). Ping: 80 µs outside the receive path (the report's minimum), plus the wait for the
interrupt and the queue ahead of the probe.

Ping (`ping -i 0.2` × 50 from another host): the probe lands on a busy vector in every setting —
on one queue it shares the vector with all 150 flows; with the VF's RSS (two queues on 82599
VFs) ICMP hashes on the address pair alone and still shares a queue with about half the flows,
≈33 segments per ms. At itr=1000 a busy vector always has a cause pending, so the probe waits
for the next interrupt, uniformly up to the 1 ms interval, then behind the segments ahead of
it in that poll: the model gives mean 0.61 ms and max 1.11 ms (300 probes); the report 0.469
and 1.043 ms from 50 probes. The report's max and min (0.084) put its base plus queue at
≈45–65 µs and its mean wait at ≈0.41 ms (2 standard errors of a 50-probe mean below the
uniform 0.5 ms); the model's 80 µs base (the mode-1 minimum) and ≈35 µs queue make it ≈0.14 ms
high. In mode 1 the vector runs at ≈47 K interrupts/s, the EITR wait is ≤ 21 µs and the model gives
≈0.10 ms; the report's 0.456 ms average and 1.9 ms maximum are NOT reproduced. No mechanism in
the moderation accounts for them: the extra ≈0.37 ms appears only at the high interrupt rate,
which points at costs outside this model — Xen's delivery of each VF interrupt to the HVM guest
(event channel injection, EOI trap), and the 2.6.32 softirq hand-off to ksoftirqd competing
with 150 iperf threads on CPU0 — for which the report gives no figures. The hand-off fits the
shape best: once __do_softirq has restarted 10 times it leaves NET_RX to ksoftirqd, the VF
vector stays masked while its NAPI waits there, and the poll runs when ksoftirqd gets the CPU
or at the next 1 ms timer tick (HZ=1000) — a wait of up to one or two ticks, like the 1.9 ms
maximum. How often that happens depends on how bursty the 150 senders are, which the report
does not say; with Poisson arrivals at 59 % softirq, chains of 10 restarts are rare. Modelling
it would mean fitting that burstiness to the ping figure itself. “Ping average barely moves
across the settings” is therefore met by the measurement but not by the model (0.10 vs
0.61 ms).
";

#[cfg(test)]
mod validation {
    //! issue 4 §8, Case 3.
    use super::*;

    fn softirq(o: &RxHostOutcome) -> f64 {
        o.metrics.hosts["receiver"].cpu.per_core[0].softirq
    }

    #[test]
    fn calibration_points() {
        // The two costs were solved from these two figures: this re-checks the fit.
        let d = Nanos::from_secs(5);
        let dynamic = run(LegacySetting::Dynamic, d, 1);
        let rate = run(LegacySetting::Rate(1000), d, 1);
        assert!(
            (softirq(&dynamic) - 0.59).abs() < 0.03,
            "itr=1: {}",
            softirq(&dynamic)
        );
        assert!(
            (softirq(&rate) - 0.076).abs() < 0.01,
            "itr=1000: {}",
            softirq(&rate)
        );
    }

    #[test]
    fn mode_3_lies_between_and_throughput_stays_one_to_one() {
        let d = Nanos::from_secs(5);
        let dynamic = run(LegacySetting::Dynamic, d, 1);
        let rate = run(LegacySetting::Rate(1000), d, 1);
        let conservative = run(LegacySetting::Conservative, d, 1);
        let c = softirq(&conservative);
        assert!(c > softirq(&rate) && c < softirq(&dynamic), "itr=3: {c}");
        // Throughput 1:1 in every setting: the report's ≈21 Mbit/s of iperf payload.
        for o in [&dynamic, &rate, &conservative] {
            assert_eq!(o.ring_drops, 0);
            let mbps = o.metrics.throughput_bps.unwrap() / 1e6;
            assert!((mbps - 21.0).abs() < 0.5, "{mbps} Mbit/s");
        }
    }

    #[test]
    fn ping_at_itr_1000_waits_for_the_busy_vectors_next_interrupt() {
        // The probe shares the vector with ~65 segments per millisecond, so something is always
        // pending: it waits for the next EITR interrupt, uniformly up to the 1 ms interval,
        // then behind the segments that came before it in that interval's poll (≈30 on
        // average at 0.907 µs each, plus the 11.29 µs poll). 300 probes (60 s at 5/s).
        let o = run(LegacySetting::Rate(1000), Nanos::from_secs(60), 1);
        let l = o.metrics.latency_us.expect("probes");
        let wait = l.mean - costs_probe_base_us();
        assert!((500.0..600.0).contains(&wait), "mean wait {wait} µs");
        // Report: max 1.043 ms, one whole interval plus a short base.
        assert!((l.max - 1043.0).abs() < 0.1 * 1043.0, "max {}", l.max);
    }

    fn costs_probe_base_us() -> f64 {
        PROBE_BASE.as_secs_f64() * 1e6
    }

    #[test]
    fn out_of_range_rates_are_rejected_with_the_code_range() {
        let e = setting(100).unwrap_err();
        assert!(e.contains("956") && e.contains("488281"), "{e}");
        assert_eq!(setting(1000), Ok(LegacySetting::Rate(1000)));
    }
}
