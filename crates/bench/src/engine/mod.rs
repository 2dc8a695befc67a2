//! The measuring loops, one per test kind, generic over the [`crate::conn`] and
//! [`crate::clock`] seams. Each loop serves one connection and is bounded three ways: the
//! measured window's end, a hard end a little later, and the cancel flag.

pub mod ping;
pub mod rr;
pub mod stream;

use crate::cancel::Cancel;
use crate::histogram::LatencyHistogram;
use crate::window::{Interim, Window};
use nictune_core::units::Nanos;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How long after the window's end a loop may still wait for replies in flight.
pub const GRACE: Nanos = Nanos::from_millis(500);

/// What bounds one connection's loop.
#[derive(Debug, Clone)]
pub struct Bounds {
    /// The measured interval; only events inside it count.
    pub window: Window,
    /// No loop runs past this instant, whatever happens.
    pub hard_end: Nanos,
    /// Set to end the loop early; checked between operations.
    pub cancel: Cancel,
    /// Completions so far inside the window, for live interim figures (one writer).
    pub live: Arc<AtomicU64>,
}

impl Bounds {
    /// `window` with the standard grace period and `cancel`.
    pub fn new(window: Window, cancel: Cancel) -> Bounds {
        Bounds {
            window,
            hard_end: window.end + GRACE,
            cancel,
            live: Arc::default(),
        }
    }

    /// True when the loop must stop now.
    pub fn must_stop(&self, now: Nanos) -> bool {
        now >= self.hard_end || self.cancel.is_cancelled()
    }
}

/// What one connection measured inside the window.
#[derive(Debug, Clone)]
pub struct ConnStats {
    /// Latency of each completion inside the window, ns.
    pub latency: LatencyHistogram,
    /// Completions per 1 s interim interval of the window.
    pub interim: Interim,
    /// Transactions (or probe replies) completed inside the window.
    pub completed: u64,
    /// Requests whose reply never came (UDP and ping only).
    pub lost: u64,
    /// For stream: bytes the peer acknowledged inside the window.
    pub bytes: u64,
    /// For stream: interim throughput samples in bit/s.
    pub interim_bps: Vec<f64>,
    /// For stream: segments retransmitted inside the window.
    pub retransmits: u64,
    /// For stream: the path of the (first) connection.
    pub path: Option<crate::conn::TcpPath>,
}

impl ConnStats {
    /// Empty statistics for `window`.
    pub fn new(window: &Window) -> ConnStats {
        ConnStats {
            latency: LatencyHistogram::new(),
            interim: Interim::new(window),
            completed: 0,
            lost: 0,
            bytes: 0,
            interim_bps: Vec::new(),
            retransmits: 0,
            path: None,
        }
    }

    /// Counts one completion at `at` with round trip `rtt` if `at` is inside the window.
    pub fn complete(&mut self, b: &Bounds, at: Nanos, rtt: Nanos) {
        if b.window.contains(at) {
            self.latency.record(rtt);
            self.interim.add(&b.window, at, 1);
            self.completed += 1;
            b.live.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Adds another connection's figures.
    pub fn merge(&mut self, other: &ConnStats) {
        self.latency.merge(&other.latency);
        self.interim.merge(&other.interim);
        self.completed += other.completed;
        self.lost += other.lost;
        self.bytes += other.bytes;
        self.retransmits += other.retransmits;
        if self.path.is_none() {
            self.path.clone_from(&other.path);
        }
        if self.interim_bps.len() < other.interim_bps.len() {
            self.interim_bps.resize(other.interim_bps.len(), 0.0);
        }
        for (a, b) in self.interim_bps.iter_mut().zip(&other.interim_bps) {
            *a += b;
        }
    }
}
