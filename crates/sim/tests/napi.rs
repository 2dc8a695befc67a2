//! NAPI and throttle signatures from published measurements (sim-notes §1.3, §1.6).

use nictune_sim::engine::sim::SimOutput;
use nictune_sim::scenario::Scenario;

/// One e1000-class host receiving from a generator, ITR off, one core; the per-frame cost
/// gives the ≈0.36 Mpps capacity of Olsson's 2001 forwarding box (sim-notes §1.3).
const OLSSON: &str = r#"
topology = "generator"
driver = "e1000-7.3"
duration = 0.2
[link]
gbps = 1.0
[workload]
kind = "stream"
[server]
itr = 0
cores = 1
rx_ring = 256
[server.cost]
irq_ns = 2000
poll_ns = 1000
rx_pkt_ns = 2800
"#;

fn olsson(frame: u32, pps: f64) -> SimOutput {
    let mut s = Scenario::from_toml("olsson", OLSSON).unwrap();
    s.set("workload.frame_bytes", &frame.to_string()).unwrap();
    s.set("workload.rate_pps", &pps.to_string()).unwrap();
    s.simulate().unwrap()
}

#[test]
fn below_capacity_one_interrupt_per_packet_and_polls_empty_the_ring() {
    // Olsson, 1024 B at 119,061 pps: 872,519 Rx IRQs for 1,000,003 packets, Ndone 0.
    let out = olsson(1024, 119_061.0);
    let h = &out.hosts[0];
    let pkts = h.stats.rx_processed as f64;
    assert!(h.counters.drop_ring_full + h.counters.drop_card_overflow == 0);
    assert!(h.stats.interrupts as f64 > 0.8 * pkts, "{:?}", h.stats);
    assert_eq!(h.stats.polls_not_done, 0);
    // Every interrupt ends in a poll that empties the ring (the last may be cut by the end).
    assert!(
        h.stats.polls_done + 1 >= h.stats.interrupts,
        "{:?}",
        h.stats
    );
}

#[test]
fn above_capacity_interrupts_collapse_and_polls_stop_emptying_the_ring() {
    // Olsson, 60 B at 890,000 pps: 17 Rx IRQs, Done 7, Ndone 6,823; the rest dropped.
    let out = olsson(64, 890_000.0);
    let h = &out.hosts[0];
    let offered = h.counters.arrived as f64;
    let delivered = h.stats.rx_processed as f64;
    assert!(h.stats.interrupts < 50, "interrupts {}", h.stats.interrupts);
    assert!(
        h.stats.polls_not_done > 50 * h.stats.polls_done.max(1),
        "{:?}",
        h.stats
    );
    assert!(h.counters.drop_ring_full > 0);
    assert!(h.stats.time_squeeze > 0, "budget runs out with work left");
    let capacity = 1e9 / 2_800.0 * 0.2;
    assert!(
        delivered > 0.9 * capacity && delivered < capacity,
        "{delivered}"
    );
    assert!(delivered < 0.5 * offered);
}

/// A stream that a fixed interval keeps saturated: every interval has frames waiting.
const SATURATED: &str = r#"
topology = "generator"
driver = "e1000-7.3"
duration = 0.05
[link]
gbps = 10.0
[workload]
kind = "stream"
rate_pps = 2000000.0
[server]
cores = 1
rx_ring = 4096
card_buffer_kb = 512
bus_gbps = 32.0
rx_dma_ns = 20
[server.cost]
irq_ns = 1000
poll_ns = 500
rx_pkt_ns = 50
"#;

#[test]
fn saturated_fixed_interval_gives_a_million_over_usecs() {
    // pktgen.txt: rx-usecs 10/20/30/40/50 → ≈99,157/50,154/33,872/26,197/21,527 irqs/s.
    for usecs in [10u64, 20, 30, 40, 50] {
        let mut s = Scenario::from_toml("sat", SATURATED).unwrap();
        s.set("server.itr", &(1_000_000 / usecs).to_string())
            .unwrap();
        let m = s.run().unwrap().metrics;
        let ints = m.hosts["server"].interrupts_per_sec.unwrap();
        let want = 1e6 / usecs as f64;
        assert!((ints - want).abs() < 0.03 * want, "{usecs} µs: {ints}/s");
    }
}

#[test]
fn deferral_trades_interrupts_for_timer_polls() {
    // §6.1: after a non-empty poll the IRQ stays masked and the NAPI is re-polled every
    // gro_flush_timeout until `napi_defer_hard_irqs` empty polls in a row.
    let run = |defer: &str, gro: &str| {
        let mut s = Scenario::from_toml("defer", OLSSON).unwrap();
        s.set("workload.frame_bytes", "512").unwrap();
        s.set("workload.rate_pps", "100000").unwrap();
        s.set("server.napi.defer_hard_irqs", defer).unwrap();
        s.set("server.napi.gro_flush_timeout_ns", gro).unwrap();
        s.simulate().unwrap()
    };
    let plain = run("0", "0");
    let deferred = run("2", "50000");
    let (p, d) = (&plain.hosts[0].stats, &deferred.hosts[0].stats);
    assert!(p.interrupts > 10 * d.interrupts.max(1), "{p:?} vs {d:?}");
    assert!(d.polls > 2 * d.interrupts, "timer-driven polls: {d:?}");
    let lat = |o: &SimOutput| o.recorder.latency.mean();
    assert!(lat(&deferred) > lat(&plain), "batching costs latency");
    assert!(
        lat(&deferred) < lat(&plain) + 60_000.0,
        "bounded by the flush timeout"
    );
}
