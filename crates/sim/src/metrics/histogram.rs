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
    acc: Acc,
}

/// Everything a value updates besides the bucket counts.
#[derive(Debug, Clone, Copy)]
struct Acc {
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

impl Acc {
    #[inline(always)]
    fn record(&mut self, counts: &mut [u64], ns: u64) {
        self.count(counts, index(ns));
        self.n += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.add(ns);
    }

    /// One more value in bucket `i`.
    #[inline(always)]
    fn count(&mut self, counts: &mut [u64], i: usize) {
        if i == self.run_idx {
            self.run_len += 1;
        } else {
            counts[self.run_idx] += self.run_len;
            self.run_idx = i;
            self.run_len = 1;
        }
    }

    /// The sums of values and squares.
    #[inline(always)]
    fn add(&mut self, ns: u64) {
        self.sum += ns as u128;
        // Simulated latencies are far below 2^63 ns, where the signed conversion gives the
        // same f64 in one instruction (the unsigned one takes several).
        let x = ns as i64 as f64;
        self.sum_sq += x * x;
    }

    /// [`Acc::record`] of each of `values`, which lie between `low` and `high` and include
    /// both: the minimum and maximum are theirs, so they are taken once, as is the count.
    #[inline(always)]
    fn record_between(
        &mut self,
        counts: &mut [u64],
        values: impl Iterator<Item = u64>,
        (low, high): (u64, u64),
        bucket: impl Fn(u64) -> usize,
    ) {
        let mut n = 0;
        for ns in values {
            self.count(counts, bucket(ns));
            self.add(ns);
            n += 1;
        }
        self.n += n;
        self.min = self.min.min(low);
        self.max = self.max.max(high);
    }
}

/// Values recorded into a [`Histogram`] one after another with its running sums held here
/// (in registers, in a loop) and written back when the batch is dropped: the same operations
/// in the same order as [`Histogram::record`], so the same result to the last bit.
#[derive(Debug)]
pub struct Batch<'a> {
    counts: &'a mut [u64],
    acc: Acc,
    home: &'a mut Acc,
}

impl Batch<'_> {
    /// Records one value in nanoseconds.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        self.acc.record(self.counts, ns);
    }

    /// Records each of `values` in order, as [`Batch::record`] does one by one. The running
    /// sums stay in a local for the whole loop (where the compiler cannot tell that the
    /// bucket counts do not overlap them).
    #[inline(always)]
    pub fn record_all(&mut self, values: impl Iterator<Item = u64>) {
        let mut acc = self.acc;
        for ns in values {
            acc.record(self.counts, ns);
        }
        self.acc = acc;
    }

    /// [`Batch::record_all`] for values known to lie between `low` and `high`, both among
    /// them (the two ends of a monotone sequence): the minimum, maximum and count are taken
    /// once, and within `[512, 2^48)` each bucket is found without `index`'s range checks.
    /// The same result as recording them one by one.
    #[inline(always)]
    pub fn record_between(&mut self, values: impl Iterator<Item = u64>, low: u64, high: u64) {
        let mut acc = self.acc;
        if low >= SUB as u64 && high < 1 << 48 {
            acc.record_between(self.counts, values, (low, high), index_wide);
        } else {
            acc.record_between(self.counts, values, (low, high), index);
        }
        self.acc = acc;
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        *self.home = self.acc;
    }
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

/// [`index`] of a `v` in `[SUB, 2^48)`: `SUB + (octave - 1)·SUB/2 + (v >> octave) - SUB/2`.
#[inline(always)]
fn index_wide(v: u64) -> usize {
    let octave = 63 - v.leading_zeros() - SUB_BITS + 1;
    (v >> octave) as usize + octave as usize * (SUB / 2)
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
            acc: Acc {
                run_idx: 0,
                run_len: 0,
                n: 0,
                min: u64::MAX,
                max: 0,
                sum: 0,
                sum_sq: 0.0,
            },
        }
    }

    /// Records one value in nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.acc.record(&mut self.counts, ns);
    }

    /// A [`Batch`] for recording many values in a row.
    #[inline]
    pub fn batch(&mut self) -> Batch<'_> {
        Batch {
            acc: self.acc,
            counts: &mut self.counts,
            home: &mut self.acc,
        }
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.acc.n
    }

    /// The value at quantile `q` (0–1) in nanoseconds, clamped to the exact min and max.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.acc.n == 0 {
            return 0.0;
        }
        let rank = ((q * self.acc.n as f64).ceil() as u64).clamp(1, self.acc.n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c + if i == self.acc.run_idx {
                self.acc.run_len
            } else {
                0
            };
            if seen >= rank {
                return value_of(i).clamp(self.acc.min as f64, self.acc.max as f64);
            }
        }
        self.acc.max as f64
    }

    /// Mean in nanoseconds.
    pub fn mean(&self) -> f64 {
        if self.acc.n == 0 {
            0.0
        } else {
            self.acc.sum as f64 / self.acc.n as f64
        }
    }

    /// The summary in microseconds, or `None` when nothing was recorded.
    pub fn summary_us(&self) -> Option<LatencySummary> {
        if self.acc.n == 0 {
            return None;
        }
        let mean = self.mean();
        let var = (self.acc.sum_sq / self.acc.n as f64 - mean * mean).max(0.0);
        let us = |ns: f64| ns / 1e3;
        Some(LatencySummary {
            min: us(self.acc.min as f64),
            mean: us(mean),
            p50: us(self.quantile(0.5)),
            p90: us(self.quantile(0.9)),
            p99: us(self.quantile(0.99)),
            p999: us(self.quantile(0.999)),
            max: us(self.acc.max as f64),
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
    fn the_wide_index_is_the_index_in_its_range() {
        let edges = (SUB_BITS..48).flat_map(|b| {
            let p = 1u64 << b;
            [p, p + 1, p + p / 3, 2 * p - 1]
        });
        for v in edges {
            assert_eq!(index_wide(v), index(v), "{v}");
        }
    }

    #[test]
    fn recording_a_monotone_run_between_its_ends_equals_one_by_one() {
        // Falling and rising runs, inside [512, 2^48), below 512, and across both edges.
        let runs: [(u64, i64); 6] = [
            (40_000, -17),
            (600, -1),
            (100, 3),
            (520, -2),
            ((1 << 48) - 40, 7),
            (5_000, 0),
        ];
        let (mut one, mut between) = (Histogram::new(), Histogram::new());
        for (first, step) in runs {
            let values: Vec<u64> = (0..64)
                .map(|j| first.saturating_add_signed(step * j))
                .collect();
            values.iter().for_each(|&v| one.record(v));
            let (a, b) = (values[0], values[63]);
            between
                .batch()
                .record_between(values.iter().copied(), a.min(b), a.max(b));
        }
        assert_eq!(one.counts, between.counts);
        assert_eq!(format!("{:?}", one.acc), format!("{:?}", between.acc));
    }

    #[test]
    fn recording_all_at_once_equals_one_by_one() {
        let mut x = 7u64;
        let values: Vec<u64> = (0..20_000)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                match i % 4 {
                    0 => x >> 40,
                    1 => 40_000 - i / 3,
                    2 => x >> 54,
                    _ => 300 + i % 7,
                }
            })
            .collect();
        let (mut one, mut all) = (Histogram::new(), Histogram::new());
        for chunk in values.chunks(37) {
            chunk.iter().for_each(|&v| one.record(v));
            all.batch().record_all(chunk.iter().copied());
        }
        assert_eq!(one.counts, all.counts);
        assert_eq!(format!("{:?}", one.acc), format!("{:?}", all.acc));
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
