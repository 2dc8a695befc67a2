//! A log-linear latency histogram (HDR-style): 512 linear sub-buckets per power of two, so any
//! recorded value is reported within 0.2 %. Recording is a few integer operations; min, max,
//! mean and standard deviation are kept exactly beside it.

use nictune_core::metrics::LatencySummary;

/// log2 of the sub-buckets per octave.
const SUB_BITS: u32 = 9;
const SUB: usize = 1 << SUB_BITS;
/// Octaves covered: values up to 2^48 ns (about 3 days).
const OCTAVES: usize = 48 - SUB_BITS as usize + 1;

/// Latency histogram over nanoseconds.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    /// The bucket of the latest values and how many of them in a row went there, not yet
    /// added to `counts`: consecutive samples mostly fall in one bucket, and a counter in a
    /// register is cheaper than a read-modify-write of memory per value.
    run_idx: usize,
    run_len: u64,
    n: u64,
    min: u64,
    max: u64,
    sum: u128,
    sum_sq: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

/// The bucket index of `v`.
fn index(v: u64) -> usize {
    let v = v.min((1 << 48) - 1);
    if v < SUB as u64 {
        return v as usize;
    }
    let top = 63 - v.leading_zeros();
    let shift = top - SUB_BITS + 1;
    let octave = shift as usize;
    let sub = (v >> shift) as usize - SUB / 2;
    SUB + (octave - 1) * (SUB / 2) + sub
}

/// The midpoint of bucket `i`'s range (the value reported for it).
fn value_of(i: usize) -> f64 {
    if i < SUB {
        return i as f64;
    }
    let octave = (i - SUB) / (SUB / 2) + 1;
    let sub = (i - SUB) % (SUB / 2) + SUB / 2;
    let low = (sub as u64) << octave;
    low as f64 + ((1u64 << octave) as f64 - 1.0) / 2.0
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Histogram {
        Histogram {
            counts: vec![0; SUB + OCTAVES * (SUB / 2)],
            run_idx: 0,
            run_len: 0,
            n: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0.0,
        }
    }

    /// Records one value in nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let i = index(ns);
        if i == self.run_idx {
            self.run_len += 1;
        } else {
            self.counts[self.run_idx] += self.run_len;
            self.run_idx = i;
            self.run_len = 1;
        }
        self.n += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += ns as u128;
        // Simulated latencies are far below 2^63 ns, where the signed conversion gives the
        // same f64 in one instruction (the unsigned one takes several).
        let x = ns as i64 as f64;
        self.sum_sq += x * x;
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The value at quantile `q` (0–1) in nanoseconds, clamped to the exact min and max.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c + if i == self.run_idx { self.run_len } else { 0 };
            if seen >= rank {
                return value_of(i).clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }

    /// Mean in nanoseconds.
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// The summary in microseconds, or `None` when nothing was recorded.
    pub fn summary_us(&self) -> Option<LatencySummary> {
        if self.n == 0 {
            return None;
        }
        let mean = self.mean();
        let var = (self.sum_sq / self.n as f64 - mean * mean).max(0.0);
        let us = |ns: f64| ns / 1e3;
        Some(LatencySummary {
            min: us(self.min as f64),
            mean: us(mean),
            p50: us(self.quantile(0.5)),
            p90: us(self.quantile(0.9)),
            p99: us(self.quantile(0.99)),
            p999: us(self.quantile(0.999)),
            max: us(self.max as f64),
            stddev: us(var.sqrt()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_tight() {
        let mut last = 0;
        for v in (0..2_000_000u64).step_by(37) {
            let i = index(v);
            assert!(i >= last);
            last = i;
            let back = value_of(i);
            assert!(
                (back - v as f64).abs() <= v as f64 / 128.0 + 1.0,
                "{v} -> {back}"
            );
        }
    }

    #[test]
    fn quantiles_of_a_uniform_ramp() {
        let mut h = Histogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        let p50 = h.quantile(0.5);
        let p99 = h.quantile(0.99);
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.002, "p50 {p50}");
        assert!((p99 - 990_000.0).abs() / 990_000.0 < 0.002, "p99 {p99}");
        let s = h.summary_us().unwrap();
        assert_eq!(s.min, 0.01);
        assert_eq!(s.max, 1000.0);
        assert!((s.mean - 500.005).abs() < 1e-6);
        assert!(Histogram::new().summary_us().is_none());
    }

    #[test]
    fn repeated_values_count_before_and_after_a_change_of_bucket() {
        let mut h = Histogram::new();
        for _ in 0..5 {
            h.record(7);
        }
        // Nothing has left the pending run yet.
        assert_eq!((h.quantile(0.5), h.quantile(1.0), h.count()), (7.0, 7.0, 5));
        for _ in 0..1000 {
            h.record(10);
        }
        h.record(300);
        assert_eq!(h.count(), 1006);
        assert_eq!(h.quantile(0.004), 7.0);
        assert_eq!(h.quantile(0.5), 10.0);
        assert_eq!(h.quantile(1.0), 300.0);
    }
}
