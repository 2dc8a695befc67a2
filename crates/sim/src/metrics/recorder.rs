//! What the workloads record while a run goes: transactions, latencies, delivered bytes.

use super::histogram::{Batch, Histogram};
use crate::nic::frame::FrameRun;

/// Interim bin width: one second, like `netperf -D 1`.
pub const INTERIM_NS: u64 = 1_000_000_000;

/// Per-run measurements owned by the workload side.
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Latency of each transaction, probe or stream frame (ns).
    pub latency: Histogram,
    /// Completed transactions.
    pub transactions: u64,
    /// Transactions completed in each interim bin.
    pub interim: Vec<u64>,
    /// Application payload bytes delivered.
    pub payload_bytes: u64,
    horizon: u64,
}

impl Recorder {
    /// A recorder for a run of `horizon` ns.
    pub fn new(horizon: u64) -> Recorder {
        Recorder {
            latency: Histogram::new(),
            transactions: 0,
            interim: vec![0; horizon.div_ceil(INTERIM_NS) as usize],
            payload_bytes: 0,
            horizon,
        }
    }

    /// A transaction that started at `start` completed at `end`.
    pub fn transaction(&mut self, start: u64, end: u64) {
        if end > self.horizon {
            return;
        }
        self.transactions += 1;
        self.latency.record(end - start);
        if let Some(bin) = self.interim.get_mut((end / INTERIM_NS) as usize) {
            *bin += 1;
        }
    }

    /// A latency sample that is not a transaction (probe, stream frame).
    #[inline]
    pub fn sample(&mut self, start: u64, end: u64) {
        if end <= self.horizon {
            self.latency.record(end.saturating_sub(start));
        }
    }

    /// A [`StreamBatch`] for many stream frames in a row.
    #[inline]
    pub fn stream_batch(&mut self) -> StreamBatch<'_> {
        StreamBatch {
            latency: self.latency.batch(),
            payload_bytes: self.payload_bytes,
            home: &mut self.payload_bytes,
            horizon: self.horizon,
        }
    }

    /// `bytes` of payload reached the application at `at`.
    #[inline]
    pub fn delivered(&mut self, bytes: u32, at: u64) {
        if at <= self.horizon {
            self.payload_bytes += bytes as u64;
        }
    }

    /// Interim rates per second; a last partial bin is scaled by its length.
    pub fn interim_rates(&self) -> Vec<f64> {
        self.interim
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let start = i as u64 * INTERIM_NS;
                let len = (self.horizon - start).min(INTERIM_NS);
                n as f64 * 1e9 / len as f64
            })
            .collect()
    }
}

/// Stream frames reaching the sink, recorded in a row with the running sums held here
/// (latencies through a histogram [`Batch`]) and written back when dropped.
#[derive(Debug)]
pub struct StreamBatch<'a> {
    latency: Batch<'a>,
    payload_bytes: u64,
    home: &'a mut u64,
    horizon: u64,
}

impl StreamBatch<'_> {
    /// A stream frame released at `sent` with `bytes` of payload reached the sink at `end`:
    /// [`Recorder::sample`] and [`Recorder::delivered`] in one horizon check.
    #[inline(always)]
    pub fn frame(&mut self, sent: u64, bytes: u32, end: u64) {
        if end <= self.horizon {
            self.latency.record(end.saturating_sub(sent));
            self.payload_bytes += bytes as u64;
        }
    }

    /// [`StreamBatch::frame`] for every frame of `run`, frame `j` reaching the sink at
    /// `t + (j + 1)·rx_ns`; returns when the last one did. Those ends rise with `j`, so the
    /// frames within the horizon are the first `⌊(horizon − t) / rx_ns⌋`: they are recorded
    /// with no test each, their payload added at once. (Not inlined: on its own the loop
    /// keeps every running sum in a register.)
    #[inline(never)]
    pub fn run(&mut self, run: &FrameRun, t: u64, rx_ns: u64) -> u64 {
        let within = match self.horizon.checked_sub(t) {
            None => 0,
            Some(_) if rx_ns == 0 => run.count,
            Some(room) => (room / rx_ns).min(run.count),
        };
        if within == 0 {
            return t + run.count * rx_ns;
        }
        let latency = |j: u64| (t + (j + 1) * rx_ns).checked_sub(run.start_of(j) / 1000);
        let (mut end, mut start_ps) = (t, run.start_ps);
        let values = (0..within).map(move |_| {
            end += rx_ns;
            let sent = start_ps / 1000;
            start_ps += run.step_ps;
            end.wrapping_sub(sent)
        });
        match (latency(0), latency(within - 1)) {
            // The latencies are monotone in j: each sent time is ⌊step / 1000⌋ or
            // ⌈step / 1000⌉ after the one before and each end rx_ns, so consecutive
            // differences are two adjacent integers, never of opposite signs. With both ends
            // ≥ 0 no latency saturates and the ends are the extremes.
            (Some(a), Some(b)) => self.latency.record_between(values, a.min(b), a.max(b)),
            _ => self
                .latency
                .record_all((0..within).map(|j| latency(j).unwrap_or(0))),
        }
        self.payload_bytes += within * run.payload as u64;
        t + run.count * rx_ns
    }
}

impl Drop for StreamBatch<'_> {
    fn drop(&mut self) {
        *self.home = self.payload_bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_records_as_its_frames_one_by_one() {
        let run = FrameRun::ten_gig_64b;
        // (run, processing start, per-frame cost): falling and rising latencies, a run cut
        // by the horizon, one past it, free processing, and ends before the release times
        // (latencies saturating at 0).
        let cases = [
            (run(1_000_123, 67_200, 40), 1_100_000, 50),
            (run(2_000_000, 67_200, 40), 2_050_000, 90),
            (run(9_990_000_000, 67_200, 300), 9_990_010, 50),
            (run(9_999_000_000, 67_200, 5), 10_000_001, 50),
            (run(3_000_000, 1_230_400, 7), 3_100_000, 0),
            (run(4_000_000_000, 67_200, 20), 3_999_000, 50),
            (run(4_000_000_000, 67_200, 40), 3_999_500, 90),
        ];
        let horizon = 10_000_000;
        let (mut one, mut all) = (Recorder::new(horizon), Recorder::new(horizon));
        for (r, t, rx_ns) in cases {
            let mut end = t;
            for j in 0..r.count {
                end += rx_ns;
                one.stream_batch().frame(r.frame(j).sent, r.payload, end);
            }
            assert_eq!(all.stream_batch().run(&r, t, rx_ns), end);
        }
        assert_eq!(one.payload_bytes, all.payload_bytes);
        assert_eq!(one.latency.count(), all.latency.count());
        assert_eq!(one.latency.summary_us(), all.latency.summary_us());
        for q in [0.0, 0.1, 0.5, 0.9, 0.999, 1.0] {
            assert_eq!(one.latency.quantile(q), all.latency.quantile(q));
        }
    }
}
