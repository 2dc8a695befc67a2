//! Deterministic stand-ins for sockets, driven by a [`FakeClock`]: a request/response
//! connection whose round trips follow a script, and a bulk sender with a fixed line rate.
//! Engine tests use them; so can `tune` to test its search without traffic.

use crate::clock::{Clock, FakeClock};
use crate::conn::{Conn, StreamConn, TcpCounters};
use nictune_core::units::Nanos;
use std::collections::VecDeque;
use std::io;

/// Chooses the round trip of the `n`-th request (0-based); `None` = the reply is lost.
pub type RttScript = Box<dyn FnMut(u64) -> Option<Nanos> + Send>;

/// A connection that echoes each request after a scripted round trip.
pub struct FakeConn {
    clock: FakeClock,
    script: RttScript,
    sent: u64,
    /// Replies in flight: when each arrives and its bytes.
    pending: VecDeque<(Nanos, Vec<u8>)>,
}

impl std::fmt::Debug for FakeConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeConn")
            .field("sent", &self.sent)
            .field("pending", &self.pending.len())
            .finish()
    }
}

impl FakeConn {
    /// A connection whose replies follow `script`.
    pub fn new(clock: FakeClock, script: RttScript) -> FakeConn {
        FakeConn {
            clock,
            script,
            sent: 0,
            pending: VecDeque::new(),
        }
    }

    /// Every round trip takes `rtt`.
    pub fn constant(clock: FakeClock, rtt: Nanos) -> FakeConn {
        FakeConn::new(clock, Box::new(move |_| Some(rtt)))
    }

    /// Requests sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }
}

impl Conn for FakeConn {
    fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        let now = self.clock.now();
        if let Some(rtt) = (self.script)(self.sent) {
            // A reply cannot overtake the one before it (one ordered path).
            let after = self.pending.back().map_or(Nanos::ZERO, |p| p.0);
            self.pending
                .push_back(((now + rtt).max(after), msg.to_vec()));
        }
        self.sent += 1;
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Nanos>) -> io::Result<Option<usize>> {
        let limit = deadline.unwrap_or(self.clock.now() + Nanos::from_millis(100));
        match self.pending.front() {
            Some((at, _)) if *at <= limit => {
                self.clock.sleep_until(*at);
                let (_, msg) = self.pending.pop_front().expect("front exists");
                let n = msg.len().min(buf.len());
                buf[..n].copy_from_slice(&msg[..n]);
                Ok(Some(buf.len()))
            }
            _ => {
                self.clock.sleep_until(limit);
                Ok(None)
            }
        }
    }
}

/// A bulk sender that drains at `bytes_per_sec` and retransmits one segment in every
/// `retrans_every` writes (0 = never).
#[derive(Debug)]
pub struct FakeStream {
    clock: FakeClock,
    bytes_per_sec: u64,
    retrans_every: u64,
    writes: u64,
    counters: TcpCounters,
}

impl FakeStream {
    /// A sender at `bytes_per_sec`.
    pub fn new(clock: FakeClock, bytes_per_sec: u64, retrans_every: u64) -> FakeStream {
        FakeStream {
            clock,
            bytes_per_sec,
            retrans_every,
            writes: 0,
            counters: TcpCounters::default(),
        }
    }
}

impl StreamConn for FakeStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let ns = buf.len() as u128 * 1_000_000_000 / self.bytes_per_sec as u128;
        self.clock.advance(Nanos(ns as u64));
        self.writes += 1;
        self.counters.bytes_acked += buf.len() as u64;
        if self.retrans_every > 0 && self.writes.is_multiple_of(self.retrans_every) {
            self.counters.total_retrans += 1;
        }
        Ok(buf.len())
    }

    fn counters(&self) -> io::Result<TcpCounters> {
        Ok(self.counters)
    }
}
