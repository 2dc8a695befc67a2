//! TCP_RR under receive-ring loss: a message completes only when all its bytes arrived, and
//! the bytes credited are the bytes delivered.

use nictune_sim::scenario::builtin;

/// The client takes 50 µs per frame and has 48 descriptors, so most of a 1 MB response's 691
/// segments are dropped on arrival; the transactions that complete must have waited for the
/// lost segments to be sent again and cannot beat the client's own CPU.
#[test]
fn lost_segments_hold_the_message_until_retransmitted() {
    let mut s = builtin::get("seed-e1000-rr").unwrap();
    for a in [
        "duration=1",
        "workload.response_bytes=1000000",
        "client.rx_ring=48",
        "client.cost.rx_pkt_ns=50000",
    ] {
        s.assign(a).unwrap();
    }
    let m = s.run().unwrap().metrics;
    eprintln!(
        "{:?} {:?} {:?} {:?}",
        m.transactions_per_sec, m.throughput_bps, m.latency_us, m.hosts["client"].drops
    );
    let client = &m.hosts["client"];
    assert!(
        client.drops.values().sum::<u64>() > 1_000,
        "{:?}",
        client.drops
    );
    // 691 segments at 50 µs each: no response can be processed faster than this.
    let floor_us = 691.0 * 50.0;
    let lat = m.latency_us.expect("some transactions complete");
    assert!(
        lat.min >= floor_us,
        "{} µs < CPU floor {floor_us} µs",
        lat.min
    );
    // At most 20,000 frames/s reach the client's stack, each with ≤ 1448 payload bytes.
    let cap = 20_000.0 * 1448.0 * 8.0;
    let bps = m.throughput_bps.unwrap();
    assert!(bps <= cap, "{bps} b/s > {cap}");
    let tps = m.transactions_per_sec.unwrap();
    assert!(
        tps * 1_000_001.0 * 8.0 <= bps + 1.0,
        "{tps} trans/s vs {bps} b/s"
    );
}
