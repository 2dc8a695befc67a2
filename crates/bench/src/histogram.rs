//! Latency statistics: an HDR histogram of nanosecond round trips, summarised in µs.
//!
//! Three significant digits: every recorded value is kept within 0.1 % (neper's log-linear
//! histogram is about 1.6 %, netperf's decade buckets up to 10 %), and a record is a few
//! nanoseconds, so it does not disturb a 10 µs round trip.

use hdrhistogram::Histogram;
use nictune_core::metrics::LatencySummary;
use nictune_core::units::Nanos;

/// Highest value tracked: 60 s. Larger values are clamped and counted in `clamped`.
const HIGHEST_NS: u64 = 60_000_000_000;
const SIGNIFICANT_DIGITS: u8 = 3;

/// Round-trip times of one run (or one connection of it).
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
    clamped: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram covering 1 ns to 60 s.
    pub fn new() -> LatencyHistogram {
        let hist = Histogram::new_with_bounds(1, HIGHEST_NS, SIGNIFICANT_DIGITS)
            .expect("static histogram bounds are valid");
        LatencyHistogram { hist, clamped: 0 }
    }

    /// Records one round trip (0 is recorded as 1 ns, above 60 s as 60 s).
    pub fn record(&mut self, rtt: Nanos) {
        if rtt.0 > HIGHEST_NS {
            self.clamped += 1;
        }
        self.hist.saturating_record(rtt.0.max(1));
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.hist
            .add(&other.hist)
            .expect("histograms share the same bounds");
        self.clamped += other.clamped;
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// The value at quantile `q` (0–1), nearest rank, in ns.
    pub fn quantile(&self, q: f64) -> Nanos {
        Nanos(self.hist.value_at_quantile(q))
    }

    /// min/mean/p50/p90/p99/p99.9/max/stddev in µs; `None` when empty.
    pub fn summary(&self) -> Option<LatencySummary> {
        if self.hist.is_empty() {
            return None;
        }
        let us = |ns: u64| ns as f64 / 1e3;
        let q = |p: f64| us(self.hist.value_at_quantile(p));
        Some(LatencySummary {
            min: us(self.hist.min()),
            mean: self.hist.mean() / 1e3,
            p50: q(0.50),
            p90: q(0.90),
            p99: q(0.99),
            p999: q(0.999),
            max: us(self.hist.max()),
            stddev: self.hist.stdev() / 1e3,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within(got: f64, want: f64, rel: f64) -> bool {
        (got - want).abs() <= want * rel
    }

    #[test]
    fn uniform_distribution_percentiles_are_exact_to_a_tenth_of_a_percent() {
        // 1..=100_000 ns: the p-quantile of a uniform sample is p · 100 000 ns.
        let mut h = LatencyHistogram::new();
        for ns in 1..=100_000u64 {
            h.record(Nanos(ns));
        }
        let s = h.summary().unwrap();
        assert!(within(s.p50, 50.0, 0.001), "p50 {}", s.p50);
        assert!(within(s.p90, 90.0, 0.001), "p90 {}", s.p90);
        assert!(within(s.p99, 99.0, 0.001), "p99 {}", s.p99);
        assert!(within(s.p999, 99.9, 0.001), "p99.9 {}", s.p999);
        assert!(within(s.mean, 50.0005, 0.001), "mean {}", s.mean);
        // Population stddev of 1..N is N/√12.
        assert!(
            within(s.stddev, 100.0 / 12f64.sqrt(), 0.002),
            "sd {}",
            s.stddev
        );
        assert_eq!(s.min, 0.001);
        assert!(within(s.max, 100.0, 0.001));
    }

    #[test]
    fn exponential_distribution_quantiles_match_the_closed_form() {
        // Deterministic inverse-CDF sample of Exp(mean 20 µs): q-quantile = −20 ln(1−q) µs.
        let mut h = LatencyHistogram::new();
        let n = 200_000;
        for i in 0..n {
            let u = (i as f64 + 0.5) / n as f64;
            h.record(Nanos((-20_000.0 * (1.0 - u).ln()) as u64));
        }
        let s = h.summary().unwrap();
        for (got, q) in [(s.p50, 0.5), (s.p90, 0.9), (s.p99, 0.99), (s.p999, 0.999)] {
            let want = -20.0 * (1.0f64 - q).ln();
            assert!(within(got, want, 0.002), "q{q}: {got} vs {want}");
        }
        assert!(within(s.mean, 20.0, 0.01), "mean {}", s.mean);
    }

    #[test]
    fn bimodal_tail_shows_in_p99_not_p50() {
        let mut h = LatencyHistogram::new();
        (0..980).for_each(|_| h.record(Nanos::from_micros(15)));
        (0..20).for_each(|_| h.record(Nanos::from_micros(400)));
        let s = h.summary().unwrap();
        assert!(within(s.p50, 15.0, 0.001));
        assert!(within(s.p99, 400.0, 0.001));
    }

    #[test]
    fn merge_adds_counts_and_empty_has_no_summary() {
        let mut a = LatencyHistogram::new();
        assert!(a.summary().is_none());
        let mut b = LatencyHistogram::new();
        a.record(Nanos(1_000));
        b.record(Nanos(3_000));
        b.record(Nanos(0));
        b.record(Nanos(100_000_000_000));
        a.merge(&b);
        assert_eq!(a.count(), 4);
        assert_eq!(a.clamped, 1);
        assert_eq!(a.quantile(0.0), Nanos(1));
    }
}
