//! Case 3: ixgbevf `InterruptThrottleRate` on an EC2 SR-IOV virtual function
//! (`seed-ixgbevf-sriov`).
//!
//! 150 iperf connections with Nagle off write 40-byte segments (≈21 Mbit/s in all settings,
//! so the senders set the rate); every queue interrupt lands on CPU0 of the 4-vCPU receiver.
//! The receiver is [`super::rxhost`] in interrupt mode with the ixgbevf legacy moderation
//! ([`crate::moderation::ixgbe_legacy`], in-tree VF variant, fixed rates through the
//! out-of-tree driver's `InterruptThrottleRate` arithmetic), the softirq rules of Linux
//! 2.6.32 (CentOS 6) and TCP senders whose windows are clocked by the receiver's ACKs; each
//! ACK's transmit completion is a cause on the VF's one vector. The iperf threads run on the
//! other vCPUs, so CPU0 does only receive work. Ping probes every 200 ms go through the same
//! queue.

use super::rxhost::{
    run as run_host, HostCosts, Linux2632, RxHostExtras, RxHostOutcome, RxHostParams, RxMode,
    TcpSenders, TxCauses,
};
use crate::moderation::ixgbe_legacy::{
    LegacyItr, LegacySetting, LegacyVariant, MAX_RATE, MIN_RATE,
};
use nictune_core::units::{Bytes, Nanos};

/// Application writes per second: 21 Mbit/s of 40-byte writes (the report's throughput; the
/// senders set the rate).
pub const WRITES_PER_SEC: f64 = 21e6 / 8.0 / 40.0;
/// Frame bytes of a one-write segment as the driver counts them: 40 payload + 32 TCP
/// (timestamps) + 20 IP + 14.
pub const FRAME: Bytes = Bytes(106);

/// The 150 senders (15 hosts × `iperf -c … -N -l 40 -P 10`, CentOS 6).
pub fn senders() -> TcpSenders {
    TcpSenders {
        connections: 150,
        write: Bytes(40),
        // tcp_init_cwnd of 2.6.32 for a 1448-byte MSS (RFC 3390: 3 segments).
        init_cwnd: 3,
        one_way: Nanos(PROBE_BASE.0 / 2),
        // The reader's wake-up on another vCPU, its read and the ACK tcp_cleanup_rbuf sends
        // for a small pushed segment (ICSK_ACK_PUSHED, not pingpong): assumed 30 µs. It only
        // places the ACK's completion cause between the vector's interrupts.
        ack_after: Nanos::from_micros(30),
    }
}

/// CPU0 costs. Calibrated on the report's two dev-visible points (itr=1 → softirq ≈59 %,
/// itr=1000 → ≈7.6 %): with the model's own poll and frame counts at those settings
/// (70.1 k and 1.46 k polls/s, 65.5 k segments/s; solved and re-run to a fixed point) the two
/// equations give 7.49 µs per NAPI poll (a VF poll in a 2014 Xen HVM guest: the doorbell and
/// unmask MMIO writes trap to the hypervisor) and 0.993 µs per 40-byte segment (TCP receive
/// plus the cleanup of its ACK's descriptor); the hard interrupt is assumed 2 µs (virtual
/// interrupt injection and EOI, irq time, not softirq).
pub fn costs() -> HostCosts {
    HostCosts {
        irq: Nanos::from_micros(2),
        poll: Nanos(7_490),
        per_frame: Nanos(993),
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

/// A probe's round trip outside the receiver's interrupt wait: the published netperf TCP_RR
/// round trip of the C3 family with enhanced networking (SR-IOV) in December 2013, 92 µs for
/// c3.2xlarge, "much higher than" the smaller C3 types (Scalable Logic, "Enhanced Networking
/// in the AWS Cloud", 2013-12-31; the post prints "millisecond" for this figure, which at
/// EC2's intra-zone distances can only be µs). A TCP round trip carries two TCP stacks and
/// two application wake-ups a ping does not, so this bounds the ping's base from above.
pub const PROBE_BASE: Nanos = Nanos(92_000);

/// Runs the scenario for `itr` for `duration`.
pub fn run(itr: LegacySetting, duration: Nanos, seed: u64) -> RxHostOutcome {
    run_host(RxHostParams {
        link_bps: 10e9, // the VF of an 82599 10 GbE port (c3.xlarge, assumed)
        offered_pps: WRITES_PER_SEC,
        frame: FRAME,
        ring: 512,
        socket_frames: 1 << 20,
        mode: RxMode::Interrupts {
            policy: Box::new(LegacyItr::new(LegacyVariant::Vf, itr)),
            weight: 64,
        },
        costs: costs(),
        extras: RxHostExtras {
            probe_every: Some(Nanos::from_millis(200)),
            probe_base: PROBE_BASE,
            tx: Some(TxCauses::Acks),
            tcp: Some(senders()),
            linux: Some(Linux2632 {
                hz: 1000, // CentOS 6 kernels: CONFIG_HZ=1000
                // A context switch in a 2014 Xen HVM guest (Ivy Bridge): assumed 3 µs.
                ksoftirqd_switch: Nanos::from_micros(3),
            }),
            ..RxHostExtras::default()
        },
        duration,
        seed,
    })
}

/// The model's assumptions.
pub const EXPLAIN: &str = "\
seed-ixgbevf-sriov — Case 3: ixgbevf InterruptThrottleRate on an EC2 c3.xlarge VF (2014).

Traffic: 150 TCP connections (15 senders × iperf -P 10), each an application writing 40 bytes
with Nagle off; all writes together 65.6 k/s (the report's ≈21 Mbit/s: the senders set the
rate). A write leaves at once as its own segment while fewer than cwnd segments are
unacknowledged (2.6.32 initial window 3), else it is coalesced into the unsent tail segment,
which leaves when the receiver's next ACK reaches the sender (ACK clocking; one-way network
delay 46 µs). The receiver ACKs every segment its reader takes (a small pushed segment:
tcp_cleanup_rbuf sends the ACK when the reader empties the queue), 30 µs after NAPI took it
(assumed), and the ACK's transmit completion is a cause on the VF's one vector. At this load a
connection has about 0.44 segments in flight per millisecond of round trip: the window almost
never binds (the model counts the coalesced writes, well under 1 %), so the arrivals are the
superposition of 150 independent writers — Poisson — not trains.

Host: one rx queue, its interrupt on CPU0; iperf on the other vCPUs. ixgbevf legacy adaptive
moderation: bytes per µs of the last ITR slice (thresholds 10/20) → 100 K / 20 K / 12 K ints/s,
90/10 rate smoothing; mode 3 is assumed to cap at 20 K like the same-numbered e1000/igb mode;
fixed rates use the driver's 1e9/(rate·256) arithmetic with 2 µs EITR granularity. NAPI weight
64. Linux 2.6.32 softirq rules: the interrupt's exit runs __do_softirq; net_rx_action polls the
NAPI while it is listed (an interrupt already due when a poll unmasks the vector lists it
again in the same pass), stops after 300 packets or past jiffies + 2; anything raised during a
pass restarts it, at most 10 times, then ksoftirqd takes the pending work with the vector still
masked (it runs after a 3 µs switch when CPU0 has nothing else, else at the next 1 ms tick).

Costs on CPU0: 7.49 µs per NAPI poll and 0.993 µs per segment (softirq), calibrated on the two
dev-visible points (itr=1 → 59 %, itr=1000 → 7.6 %) with the ACK completions' extra polls
counted; 2 µs per hard interrupt (irq time, assumed). Ping: 92 µs outside the receive path
(the C3 family's published enhanced-networking TCP round trip, Dec 2013 — an upper bound for a
ping), plus the wait for the interrupt and the queue ahead of the probe. Ping is a prediction.

Predicted ping (mean / max; 10 s = 50 probes as the report, 60 s = 300): itr=1000 0.60 / 1.06 ms
(60 s: 0.62 / 1.13; report 0.469 / 1.043): the probe waits for the busy vector's next
interrupt, uniformly up to the 976 µs interval. itr=3 0.13 / 0.16 ms. itr=1 0.106 / 0.116 ms
(report 0.456 / 1.902): the vector runs at ≈70 K interrupts/s and the wait is a few µs. The
report's claim that ping barely moved is NOT reproduced. The 2.6.32 restart limit does not
explain it: a pass restarts only when something was raised during it, and an interrupt due at
the end of a poll is polled within the same pass, so restarts come one at a time; ten in a row
need net_rx_action to end on its 300-packet budget or 2-jiffy limit ten times running, i.e.
sustained overload. At the report's load the model hands off to ksoftirqd zero times, and a
hand-off would in any case end by the next 1 ms tick (2.6.32's irq_exit runs pending
softirqs). What raises the mode-1 mean by ≈0.35 ms is outside this model (candidates without
figures: Xen's delivery of the VF interrupt at ≈70 K/s, vCPU descheduling, the ping
source's own path).
";

#[cfg(test)]
mod validation {
    //! issue 4 §8 and issue 14, Case 3.
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
        // Throughput 1:1 in every setting: the report's ≈21 Mbit/s of iperf payload, now
        // through a closed loop (a receiver slow to ACK would show here as coalesced writes).
        for o in [&dynamic, &rate, &conservative] {
            assert_eq!(o.ring_drops, 0);
            let mbps = o.metrics.throughput_bps.unwrap() / 1e6;
            assert!((mbps - 21.0).abs() < 0.5, "{mbps} Mbit/s");
        }
    }

    #[test]
    fn tcp_windows_do_not_bind_so_the_150_senders_arrive_as_a_poisson_stream() {
        // ≈437 writes/s per connection against a round trip of well under 1.5 ms: in flight
        // stays far below the initial window of 3 in every setting, so writes are hardly
        // ever coalesced and the arrivals are the writes.
        for itr in [LegacySetting::Dynamic, LegacySetting::Rate(1000)] {
            let o = run(itr, Nanos::from_secs(2), 1);
            let t = o.tcp.expect("TCP senders");
            assert!(
                (t.coalesced_writes as f64) < 0.01 * t.writes as f64,
                "{itr:?}: {t:?}"
            );
        }
    }

    #[test]
    fn the_receivers_acks_add_their_completions_to_the_vector() {
        // Every segment taken sends an ACK whose descriptor write-back is a cause on the one
        // vector: in mode 1 they make the vector interrupt more often than the segments alone.
        let o = run(LegacySetting::Dynamic, Nanos::from_secs(2), 1);
        let segments_per_sec = o.received as f64 / 2.0;
        assert!(
            (o.tx_causes as f64 - o.received as f64).abs() < 100.0,
            "{} ACK causes vs {} segments",
            o.tx_causes,
            o.received
        );
        assert!(
            o.interrupts_per_sec > 0.9 * segments_per_sec,
            "{} ints/s vs {segments_per_sec} segments/s",
            o.interrupts_per_sec
        );
    }

    #[test]
    fn at_the_reports_load_the_2632_restart_limit_is_never_reached() {
        // The mechanism offered for the mode-1 ping: it needs ten restarts in a row, which
        // only sustained overload gives. At 59 % softirq it does not happen.
        let o = run(LegacySetting::Dynamic, Nanos::from_secs(5), 1);
        let s = o.softirq.expect("2.6.32 rules");
        assert!(s.invocations > 100_000, "{s:?}");
        assert_eq!(s.ksoftirqd_wakeups, 0, "{s:?}");
        assert_eq!(s.time_squeezes, 0, "{s:?}");
    }

    #[test]
    fn ping_at_itr_1000_waits_for_the_busy_vectors_next_interrupt() {
        // The probe shares the vector with ~65 segments and ~65 ACK completions per
        // millisecond, so something is always pending: it waits for the next EITR interrupt,
        // uniformly up to the 976 µs interval, then behind the segments ahead of it in that
        // interval's poll. 300 probes (60 s at 5/s). The base is the published C3 round trip.
        let o = run(LegacySetting::Rate(1000), Nanos::from_secs(60), 1);
        let l = o.metrics.latency_us.expect("probes");
        let wait = l.mean - PROBE_BASE.as_secs_f64() * 1e6;
        assert!((450.0..600.0).contains(&wait), "mean wait {wait} µs");
        // Report: max 1.043 ms, one whole interval plus a short base.
        assert!((l.max - 1043.0).abs() < 0.1 * 1043.0, "max {}", l.max);
    }

    #[test]
    fn out_of_range_rates_are_rejected_with_the_code_range() {
        let e = setting(100).unwrap_err();
        assert!(e.contains("956") && e.contains("488281"), "{e}");
        assert_eq!(setting(1000), Ok(LegacySetting::Rate(1000)));
    }
}
