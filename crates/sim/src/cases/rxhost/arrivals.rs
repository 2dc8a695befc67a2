//! Where the receiving host's frames come from.
//!
//! - **Open loop** (`Arrivals::poisson`): a Poisson stream at the senders' rate; nothing the
//!   host does changes it (the DIM bulk check).
//! - **TCP senders** ([`TcpSenders`]): `connections` connections, each an application writing
//!   `write` bytes at a time with Nagle off. The writes of all connections together are one
//!   Poisson stream whose marks pick the connection uniformly — exactly the superposition of
//!   independent per-connection Poisson writers. A write leaves at once as its own segment
//!   (`TCP_NODELAY`, `tcp_push` on every `sendmsg`) while fewer segments than the congestion
//!   window are unacknowledged; otherwise its bytes join the one unsent segment at the tail of
//!   the send queue (`tcp_sendmsg` copies into the tail skb while it is unsent and below the
//!   MSS), which leaves when the next ACK for that connection reaches the sender (ACK
//!   clocking); writes made before it leaves join it. The window starts at `init_cwnd`
//!   segments and grows by one each time an ACK releases a window-limited segment (slow
//!   start; no losses on this path). A coalesced segment is not split at the MSS: at the
//!   rates modelled it holds a few writes, far below it.
//!
//! The host's ACKs close the loop: `Arrivals::acked` is told when the host took a segment;
//! its ACK leaves the host `ack_after` later (the reader's wake-up, `read` and the ACK that
//! `tcp_cleanup_rbuf` sends) and reaches the sender `one_way` after that.
//!
//! Causality: a write's window is decided when the write is generated, which is at most one
//! arrival ahead of the simulation clock. Segments the host has not taken yet count as
//! unacknowledged; their ACKs could reach the sender before the write only if the write lay
//! more than `ack_after + one_way` ahead of the clock, which the one-arrival look-ahead does
//! not reach for the models that use TCP senders (their moderation is a throttle, whose only
//! look-ahead is the next arrival). A coalesced segment never leaves before its first write.

use crate::engine::rng::Rng;
use nictune_core::units::{Bytes, Nanos};
use std::collections::VecDeque;

/// A frame on its way to, or in, the host's ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Frame {
    /// The TCP connection it belongs to (`None` for the open-loop stream and probes).
    pub conn: Option<u32>,
    /// TCP payload bytes.
    pub payload: u32,
}

impl Frame {
    /// An echo probe.
    pub const PROBE: Frame = Frame {
        conn: None,
        payload: 0,
    };
}

/// TCP senders feeding the host (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TcpSenders {
    /// Connections (150 for Case 3: 15 hosts × `iperf -P 10`).
    pub connections: u32,
    /// Bytes per application write (`iperf -l`).
    pub write: Bytes,
    /// Initial congestion window, segments.
    pub init_cwnd: u32,
    /// One-way network delay between a sender and the host.
    pub one_way: Nanos,
    /// From the host taking a segment to its ACK leaving the host.
    pub ack_after: Nanos,
}

/// What the senders did, for the outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpStats {
    /// Application writes.
    pub writes: u64,
    /// Writes that found the congestion window full and were coalesced.
    pub coalesced_writes: u64,
    /// Segments sent.
    pub segments: u64,
}

#[derive(Debug, Clone)]
struct Conn {
    /// Arrival times at the sender of ACKs already known, oldest first.
    acks: VecDeque<u64>,
    /// Segments sent whose ACK time is not known yet (not taken by the host).
    untaken: u32,
    cwnd: u32,
    /// Bytes waiting for an ACK not known yet (0: none), and when the first was written.
    queued: u32,
    queued_since: u64,
    /// When the last coalesced segment leaves: writes before then join it.
    tail: Option<u64>,
}

/// What a write did.
enum Write {
    /// Left at once as its own segment.
    Now(Frame),
    /// Opened a coalesced segment that leaves at the given time (a known ACK frees the slot).
    Later(u64, Frame),
    /// Joined the coalesced segment leaving at the given time.
    Joined(u64),
    /// Waits for an ACK the host has not sent yet.
    Held,
}

#[derive(Debug)]
struct Tcp {
    cfg: TcpSenders,
    conns: Vec<Conn>,
    stats: TcpStats,
}

/// The host's arrival stream (see the module doc).
#[derive(Debug)]
pub(super) struct Arrivals {
    rng: Rng,
    mean_gap: f64,
    /// One frame's time on the host's link.
    wire_ns: u64,
    /// The latest write (or open-loop send) and the latest arrival off the wire.
    last_send: u64,
    last_gen: u64,
    future: VecDeque<(u64, Frame)>,
    tcp: Option<Tcp>,
    /// Payload of an open-loop frame.
    open_payload: u32,
}

impl Arrivals {
    /// An open-loop Poisson stream of `pps` frames carrying `payload` bytes each.
    pub fn poisson(rng: Rng, pps: f64, wire_ns: u64, payload: Bytes) -> Arrivals {
        Arrivals {
            rng,
            mean_gap: 1e9 / pps.max(1e-9),
            wire_ns,
            last_send: 0,
            last_gen: 0,
            future: VecDeque::new(),
            tcp: None,
            open_payload: payload.0 as u32,
        }
    }

    /// TCP senders whose writes together come at `writes_per_sec`.
    pub fn tcp(rng: Rng, writes_per_sec: f64, wire_ns: u64, cfg: TcpSenders) -> Arrivals {
        let conn = Conn {
            acks: VecDeque::new(),
            untaken: 0,
            cwnd: cfg.init_cwnd.max(1),
            queued: 0,
            queued_since: 0,
            tail: None,
        };
        let mut a = Arrivals::poisson(rng, writes_per_sec, wire_ns, Bytes(0));
        a.tcp = Some(Tcp {
            cfg,
            conns: vec![conn; cfg.connections.max(1) as usize],
            stats: TcpStats::default(),
        });
        a
    }

    /// The `k`-th future arrival time (0-based), generating as needed.
    pub fn peek(&mut self, k: usize) -> u64 {
        while self.future.len() <= k {
            self.generate();
        }
        self.future[k].0
    }

    /// Removes the next arrival.
    pub fn pop(&mut self) -> Frame {
        self.peek(0);
        self.future.pop_front().expect("generated").1
    }

    /// The senders' statistics (TCP only).
    pub fn tcp_stats(&self) -> Option<TcpStats> {
        self.tcp.as_ref().map(|t| t.stats)
    }

    /// One more write (or open-loop frame); a write that only joins a queued segment adds
    /// no arrival.
    fn generate(&mut self) {
        self.last_send += super::super::exp_ns(&mut self.rng, self.mean_gap);
        let at = self.last_send;
        let Some(tcp) = self.tcp.as_mut() else {
            let frame = Frame {
                conn: None,
                payload: self.open_payload,
            };
            return self.on_wire(at, frame);
        };
        let c = self.rng.below(tcp.conns.len() as u64) as u32;
        let one_way = tcp.cfg.one_way.0;
        let write = tcp.cfg.write.0 as u32;
        match tcp.write(c, at) {
            Write::Now(frame) => self.on_wire(at + one_way, frame),
            Write::Later(leave, frame) => self.insert(leave + one_way, frame),
            Write::Joined(leave) => self.join(c, write, leave + one_way),
            Write::Held => {}
        }
    }

    /// A segment that reaches the host's link at `at`, out of the writes' order.
    fn insert(&mut self, at: u64, frame: Frame) {
        let arrival = at + self.wire_ns;
        let i = self.future.partition_point(|&(a, _)| a <= arrival);
        self.future.insert(i, (arrival, frame));
    }

    /// `bytes` join connection `c`'s coalesced segment, which reaches the link at `at`; if
    /// the host already has it (the write was generated after the segment arrived), they
    /// travel as a segment of their own.
    fn join(&mut self, c: u32, bytes: u32, at: u64) {
        let tail = self
            .future
            .iter_mut()
            .rev()
            .find(|(_, f)| f.conn == Some(c));
        match tail {
            Some((_, f)) => f.payload += bytes,
            None => {
                if let Some(t) = self.tcp.as_mut() {
                    t.conns[c as usize].untaken += 1;
                    t.stats.segments += 1;
                }
                let frame = Frame {
                    conn: Some(c),
                    payload: bytes,
                };
                self.insert(at, frame)
            }
        }
    }

    /// A frame that reaches the host's link at `at`: it arrives one wire time after the
    /// later of that and the previous arrival.
    fn on_wire(&mut self, at: u64, frame: Frame) {
        self.last_gen = at.max(self.last_gen) + self.wire_ns;
        self.future.push_back((self.last_gen, frame));
    }

    /// The host took `frame` at `at`: its ACK's effect on the sender (TCP only).
    pub fn acked(&mut self, frame: Frame, at: u64) {
        let (Some(tcp), Some(c)) = (self.tcp.as_mut(), frame.conn) else {
            return;
        };
        let one_way = tcp.cfg.one_way.0;
        if let Some((leave, segment)) = tcp.ack(c, at) {
            self.insert(leave + one_way, segment);
        }
    }
}

impl Tcp {
    /// A write of connection `c` at `at`.
    fn write(&mut self, c: u32, at: u64) -> Write {
        self.stats.writes += 1;
        let write = self.cfg.write.0 as u32;
        let conn = &mut self.conns[c as usize];
        while conn.acks.front().is_some_and(|&a| a <= at) {
            conn.acks.pop_front();
        }
        match conn.tail {
            Some(leave) if at < leave => {
                self.stats.coalesced_writes += 1;
                return Write::Joined(leave);
            }
            _ => conn.tail = None,
        }
        if conn.queued > 0 {
            conn.queued += write;
            self.stats.coalesced_writes += 1;
            return Write::Held;
        }
        let frame = Frame {
            conn: Some(c),
            payload: write,
        };
        let outstanding = conn.acks.len() as u32 + conn.untaken;
        if outstanding < conn.cwnd {
            conn.untaken += 1;
            self.stats.segments += 1;
            return Write::Now(frame);
        }
        self.stats.coalesced_writes += 1;
        match conn.acks.front() {
            // A known ACK frees a slot (and, window-limited, slow start opens one more).
            Some(&freed) => {
                conn.cwnd += 1;
                conn.untaken += 1;
                conn.tail = Some(freed);
                self.stats.segments += 1;
                Write::Later(freed, frame)
            }
            None => {
                conn.queued = write;
                conn.queued_since = at;
                Write::Held
            }
        }
    }

    /// The host took a segment of `c` at `at`: its ACK reaches the sender; returns the
    /// held segment it releases, if any, with the time it leaves the sender.
    fn ack(&mut self, c: u32, at: u64) -> Option<(u64, Frame)> {
        let arrives = at + self.cfg.ack_after.0 + self.cfg.one_way.0;
        let conn = &mut self.conns[c as usize];
        conn.untaken = conn.untaken.saturating_sub(1);
        conn.acks.push_back(arrives);
        if conn.queued == 0 {
            return None;
        }
        // Held writes waited only for ACKs not yet known, so this first one frees the slot;
        // window-limited, slow start opens one more.
        conn.cwnd += 1;
        let leave = arrives.max(conn.queued_since);
        let payload = std::mem::take(&mut conn.queued);
        conn.untaken += 1;
        conn.tail = Some(leave);
        self.stats.segments += 1;
        Some((
            leave,
            Frame {
                conn: Some(c),
                payload,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn senders(init_cwnd: u32) -> TcpSenders {
        TcpSenders {
            connections: 1,
            write: Bytes(40),
            init_cwnd,
            one_way: Nanos::from_micros(20),
            ack_after: Nanos::from_micros(30),
        }
    }

    #[test]
    fn writes_leave_at_once_while_the_window_has_room_then_coalesce_until_the_next_ack() {
        // One connection, window 2, writes every ~1 µs: the first two leave, the rest wait.
        let mut a = Arrivals::tcp(Rng::new(1, 0), 1e6, 0, senders(2));
        let first = a.pop();
        let second = a.pop();
        assert_eq!((first.payload, second.payload), (40, 40));
        let at = a.last_send;
        for _ in 0..20 {
            a.generate();
        }
        assert!(
            a.future.is_empty(),
            "the window is full: nothing more leaves"
        );
        let s = a.tcp_stats().unwrap();
        assert_eq!(s.segments, 2);
        assert_eq!(s.coalesced_writes, 20);
        // The host takes the first segment: its ACK releases one segment with all 20 writes.
        a.acked(first, at);
        assert_eq!(a.future.len(), 1);
        let (t, f) = a.future[0];
        assert_eq!(f.payload, 20 * 40);
        assert!(
            t >= at + 30_000 + 2 * 20_000,
            "ACK back, then the segment out: {t}"
        );
    }

    #[test]
    fn a_coalesced_segment_never_leaves_before_its_first_write() {
        let mut a = Arrivals::tcp(Rng::new(2, 0), 1e6, 0, senders(1));
        let first = a.pop();
        // A write far in the future finds the window full (the ACK is not known yet).
        a.last_send = 10_000_000;
        a.generate();
        let written = a.last_send;
        assert!(a.future.is_empty());
        // The host took the first segment long before: the ACK came back before the write,
        // so the write leaves when it is made.
        a.acked(first, 0);
        assert_eq!(a.future[0].0, written + 20_000);
    }

    #[test]
    fn open_loop_frames_are_spaced_by_the_wire() {
        let mut a = Arrivals::poisson(Rng::new(3, 0), 1e9, 1_000, Bytes(100));
        let (t0, t1) = (a.peek(0), a.peek(1));
        assert!(t1 - t0 >= 1_000);
        assert_eq!(a.pop().payload, 100);
    }
}
