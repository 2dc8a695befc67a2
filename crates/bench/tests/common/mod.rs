//! Helpers shared by the live tests.
#![allow(dead_code)]

use nictune_bench::result::BenchResult;
use nictune_bench::{BenchSpec, TestKind};
use nictune_core::units::Nanos;

/// A short spec: 0.3 s warm-up, `secs` measured.
pub fn short(test: TestKind, millis: u64) -> BenchSpec {
    let mut s = BenchSpec::new(test);
    s.warmup = Nanos::from_millis(300);
    s.duration = Nanos::from_millis(millis);
    if test == TestKind::Ping {
        s.rate = Some(200.0);
    }
    s
}

/// The checks every live result must pass.
pub fn assert_sane(r: &BenchResult) {
    let m = &r.metrics;
    if let Some(tps) = m.transactions_per_sec {
        assert!(tps > 0.0, "rate {tps}");
        let l = m.latency_us.expect("latency");
        assert!(
            l.min <= l.p50
                && l.p50 <= l.p90
                && l.p90 <= l.p99
                && l.p99 <= l.p999
                && l.p999 <= l.max,
            "{l:?}"
        );
        assert!(!m.interim_transactions_per_sec.is_empty());
    }
    assert!(m.throughput_bps.unwrap() > 0.0);
    for (name, host) in &m.hosts {
        assert!(!host.cpu.per_core.is_empty(), "{name}");
        for c in &host.cpu.per_core {
            let sum = c.irq + c.softirq + c.system.unwrap_or(0.0) + c.user + c.idle;
            assert!((sum - 1.0).abs() < 1e-9, "{name}: {c:?}");
        }
    }
    assert!(m.hosts.contains_key("client"));
    assert!(!r.placement.client.cpus_seen.is_empty());
}

/// True (after printing why) when the testbed cannot run here.
pub fn skip_testbed(test: &str) -> bool {
    match nictune_bench::testbed_available(nictune_linux::write::privilege()) {
        Ok(()) => false,
        Err(reason) => {
            nictune_core::live::skip(&format!("{test}: {reason}"));
            true
        }
    }
}
