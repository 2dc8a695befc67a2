//! What the workloads record while a run goes: transactions, latencies, delivered bytes.

use super::histogram::Histogram;

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

    /// A stream frame released at `sent` with `bytes` of payload reached the sink at `end`:
    /// [`Recorder::sample`] and [`Recorder::delivered`] in one horizon check.
    #[inline]
    pub fn stream_frame(&mut self, sent: u64, bytes: u32, end: u64) {
        if end <= self.horizon {
            self.latency.record(end.saturating_sub(sent));
            self.payload_bytes += bytes as u64;
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
