//! Ping with a payload above the MTU: the echo travels as IP fragments.

use nictune_sim::scenario::builtin;

/// `ping -s 65507` sends 45 fragments each way; they fit the 48 KB card buffer as they
/// reach the ring, so no probe is lost, and the round trip holds 45 frames' serialisation
/// each way (45 · 1538 bytes at 1 Gbit/s ≈ 554 µs per direction).
#[test]
fn a_large_echo_is_fragmented_and_answered() {
    let mut s = builtin::get("seed-e1000-ping").unwrap();
    for a in ["duration=2", "workload.payload_bytes=65507", "hosts.itr=0"] {
        s.assign(a).unwrap();
    }
    let m = s.run().unwrap().metrics;
    for (name, h) in &m.hosts {
        assert_eq!(h.drops.values().sum::<u64>(), 0, "{name}: {:?}", h.drops);
    }
    let lat = m.latency_us.expect("replies");
    assert!(lat.min > 2.0 * 44.0 * 1538.0 * 8e-3, "{lat:?}");
    assert!(lat.max < 5_000.0, "{lat:?}");
}
