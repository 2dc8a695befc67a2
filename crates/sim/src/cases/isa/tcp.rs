//! The two TCP ends of the TTCP transfer, as 1990s stacks implemented them.
//!
//! Sender (the fast peer): 4.3BSD-Reno congestion control as RFC 2001 (Stevens, 1997) describes
//! it — slow start from one segment, congestion avoidance above `ssthresh`, fast retransmit on
//! the third duplicate ACK (`tcprexmtthresh = 3` in BSD `tcp_input.c`; introduced in
//! 4.3BSD-Tahoe) and fast recovery (4.3BSD-Reno): `ssthresh` = half the flight (at least two
//! segments), the missing segment resent, `cwnd` = `ssthresh` + 3 and one more per further
//! duplicate ACK, deflated to `ssthresh` by the ACK of new data; `cwnd` grows by one segment
//! per ACK in slow start and by 1/`cwnd` above it (Reno's extra 1/8 segment left out). A retransmission timeout sets
//! `ssthresh` the same way, `cwnd` to one segment, and goes back to the first unacknowledged
//! segment. The timeout runs on BSD's 500 ms slow timer: armed at the minimum of two ticks
//! (`TCPTV_MIN = 1*PR_SLOWHZ`, BSD `tcp_timer.h`; a LAN round trip rounds to zero ticks), so
//! it fires at the second tick after it was armed — 0.5 to 1 s — and doubles on each
//! consecutive timeout (`tcp_backoff`). Segments are counted in MSS units.
//!
//! Receiver (Linux 1.2/1.3 `net/inet/tcp.c#tcp_data` on the 486): out-of-order segments are
//! kept in sequence on the receive queue and each one is answered at once with an ACK for the
//! first missing byte ("If we've missed a packet, send an ack"); when the missing segment
//! arrives the queued ones are acknowledged with it, at once. In order, it ACKs every second
//! full segment (or when nothing more is waiting).

use std::collections::BTreeSet;

/// BSD's slow timer period (`PR_SLOWHZ` = 2).
pub const SLOW_TICK_NS: u64 = 500_000_000;
/// The retransmission timer's minimum, in slow ticks (`TCPTV_MIN`).
const RTO_MIN_TICKS: u64 = 2;
/// Duplicate ACKs that trigger a fast retransmit.
const REXMT_THRESH: u32 = 3;
/// Largest backoff multiplier (`tcp_backoff` tops out at 64).
const MAX_BACKOFF: u64 = 64;

/// What the sender does with an ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckOutcome {
    /// Nothing new: an old or a duplicate ACK below the threshold.
    Nothing,
    /// New data acknowledged.
    Advanced,
    /// The third duplicate: resend the segment at `snd_una`.
    FastRetransmit,
}

/// The sender's congestion state (in segments).
#[derive(Debug, Clone)]
pub struct Reno {
    /// First unacknowledged segment.
    pub snd_una: u64,
    /// Next segment to send.
    pub snd_nxt: u64,
    /// Highest segment sent + 1.
    pub snd_max: u64,
    /// The receiver's buffer in segments (the most it ever offers).
    window: u64,
    /// The window the last ACK offered beyond `snd_una`.
    snd_wnd: u64,
    cwnd: f64,
    ssthresh: f64,
    dupacks: u32,
    backoff: u64,
    /// Fast retransmits so far.
    pub fast_retransmits: u64,
    /// Retransmission timeouts so far.
    pub timeouts: u64,
}

impl Reno {
    /// A connection whose receiver offers `window` segments.
    pub fn new(window: u64) -> Reno {
        let window = window.max(1);
        Reno {
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            window,
            snd_wnd: window,
            cwnd: 1.0,
            ssthresh: window as f64,
            dupacks: 0,
            backoff: 1,
            fast_retransmits: 0,
            timeouts: 0,
        }
    }

    /// The next segment to send now, if the windows allow one.
    pub fn next_to_send(&mut self) -> Option<u64> {
        let limit = self.window.min(self.snd_wnd).min(self.cwnd as u64);
        (self.snd_nxt < self.snd_una + limit).then(|| {
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            self.snd_max = self.snd_max.max(self.snd_nxt);
            seq
        })
    }

    /// Whether data is outstanding (the retransmission timer runs).
    pub fn outstanding(&self) -> bool {
        self.snd_max > self.snd_una
    }

    /// The retransmission timeout's length in slow ticks.
    pub fn rto_ticks(&self) -> u64 {
        RTO_MIN_TICKS * self.backoff
    }

    fn halve(&mut self) {
        let flight = (self.window as f64).min(self.cwnd) / 2.0;
        self.ssthresh = flight.floor().max(2.0);
    }

    /// A cumulative ACK for everything below `ack`, offering `wnd` segments beyond it.
    pub fn on_ack(&mut self, ack: u64, wnd: u64) -> AckOutcome {
        let window_changed = wnd != self.snd_wnd;
        if ack >= self.snd_una {
            self.snd_wnd = wnd;
        }
        if ack > self.snd_una {
            if self.dupacks >= REXMT_THRESH && self.cwnd > self.ssthresh {
                self.cwnd = self.ssthresh;
            }
            self.dupacks = 0;
            self.backoff = 1;
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            // One increment per ACK, as BSD's tcp_input opens the window.
            self.cwnd += if self.cwnd < self.ssthresh {
                1.0
            } else {
                1.0 / self.cwnd
            };
            self.cwnd = self.cwnd.min(self.window as f64);
            return AckOutcome::Advanced;
        }
        // A duplicate ACK is one that repeats `snd_una` with the same window while data is
        // outstanding; a window update resets the count (BSD tcp_input).
        if ack < self.snd_una || !self.outstanding() || window_changed {
            self.dupacks = 0;
            return AckOutcome::Nothing;
        }
        self.dupacks += 1;
        if self.dupacks == REXMT_THRESH {
            self.halve();
            self.fast_retransmits += 1;
            self.cwnd = self.ssthresh + REXMT_THRESH as f64;
            return AckOutcome::FastRetransmit;
        }
        if self.dupacks > REXMT_THRESH {
            self.cwnd += 1.0;
        }
        AckOutcome::Nothing
    }

    /// The retransmission timer fired: halve, restart from one segment at `snd_una`.
    pub fn on_timeout(&mut self) {
        self.halve();
        self.cwnd = 1.0;
        self.dupacks = 0;
        self.snd_nxt = self.snd_una;
        self.timeouts += 1;
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
    }
}

/// What the receiver does with a data segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Segments that became readable in order (this one and any it joined to).
    pub delivered: u64,
    /// Send an ACK now (a hole, a filled hole, or a duplicate).
    pub ack_now: bool,
}

/// The receiver's reassembly queue and socket buffer, in segments.
#[derive(Debug, Clone, Default)]
pub struct Receiver {
    /// Next segment expected in order.
    pub expected: u64,
    held: BTreeSet<u64>,
    /// The socket buffer (`route add … window W`).
    capacity: u64,
    /// In-order segments the application has not read yet.
    unread: u64,
    /// The right edge the last ACK offered (`expected` + window at that time).
    offered_edge: u64,
}

impl Receiver {
    /// A receiver with a buffer of `capacity` segments.
    pub fn new(capacity: u64) -> Receiver {
        Receiver {
            capacity,
            offered_edge: capacity,
            ..Receiver::default()
        }
    }

    fn free(&self) -> u64 {
        self.capacity
            .saturating_sub(self.unread + self.held.len() as u64)
    }

    /// The window to put in an ACK sent now (free buffer space), remembered as offered.
    pub fn advertise(&mut self) -> u64 {
        let w = self.free();
        self.offered_edge = self.expected + w;
        w
    }

    /// Segments an application read takes now (at most `max`), if any are waiting.
    pub fn readable(&self, max: u64) -> Option<u64> {
        (self.unread > 0).then(|| self.unread.min(max))
    }

    /// The application read `n` segments. Returns whether Linux 1.2's `cleanup_rbuf` sends a
    /// window update at once: the free space exceeds what the peer may still send by more
    /// than one frame (an MTU is more than one 1460-byte segment), or the peer was offered
    /// nothing.
    pub fn consume(&mut self, n: u64) -> bool {
        self.unread -= n.min(self.unread);
        let offered = self.offered_edge.saturating_sub(self.expected);
        let free = self.free();
        free >= offered + 2 || (offered == 0 && free > 0)
    }

    /// Segment `seq` reached the protocol.
    pub fn on_segment(&mut self, seq: u64) -> Received {
        if seq < self.expected {
            return Received {
                delivered: 0,
                ack_now: true,
            };
        }
        if seq > self.expected {
            self.held.insert(seq);
            return Received {
                delivered: 0,
                ack_now: true,
            };
        }
        self.expected += 1;
        let mut delivered = 1;
        while self.held.remove(&self.expected) {
            self.expected += 1;
            delivered += 1;
        }
        self.unread += delivered;
        Received {
            delivered,
            ack_now: delivered > 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_all(r: &mut Reno) -> Vec<u64> {
        std::iter::from_fn(|| r.next_to_send()).collect()
    }

    #[test]
    fn slow_start_opens_the_window_by_a_segment_per_ack() {
        let mut r = Reno::new(11);
        assert_eq!(send_all(&mut r), vec![0]);
        r.on_ack(1, 11);
        assert_eq!(send_all(&mut r), vec![1, 2]);
        r.on_ack(3, 11);
        assert_eq!(send_all(&mut r), vec![3, 4, 5]);
    }

    #[test]
    fn the_third_duplicate_ack_resends_and_halves() {
        let mut r = Reno::new(11);
        r.cwnd = 11.0;
        assert_eq!(send_all(&mut r).len(), 11);
        r.on_ack(4, 11); // segment 4 lost
        assert_eq!(r.on_ack(4, 11), AckOutcome::Nothing);
        assert_eq!(r.on_ack(4, 11), AckOutcome::Nothing);
        assert_eq!(r.on_ack(4, 11), AckOutcome::FastRetransmit);
        assert_eq!(r.ssthresh, 5.0);
        assert_eq!(r.on_ack(15, 11), AckOutcome::Advanced);
        assert!(r.cwnd <= 5.0 + 1.0, "deflated to ssthresh: {}", r.cwnd);
    }

    #[test]
    fn a_timeout_goes_back_to_one_segment_and_backs_off() {
        let mut r = Reno::new(11);
        r.cwnd = 8.0;
        send_all(&mut r);
        r.on_timeout();
        assert_eq!(send_all(&mut r), vec![0]);
        assert_eq!(r.rto_ticks(), 4);
        r.on_ack(1, 11);
        assert_eq!(r.rto_ticks(), 2);
    }

    #[test]
    fn a_window_update_is_not_a_duplicate_ack_and_a_closed_window_stops_the_sender() {
        let mut r = Reno::new(11);
        r.cwnd = 11.0;
        send_all(&mut r);
        r.on_ack(4, 0);
        assert!(send_all(&mut r).is_empty(), "zero window");
        for w in [2, 5, 9] {
            assert_eq!(r.on_ack(4, w), AckOutcome::Nothing);
        }
        assert_eq!(r.dupacks, 0);
    }

    #[test]
    fn reading_frees_the_window_and_a_large_enough_opening_is_announced() {
        let mut rx = Receiver::new(4);
        for seq in 0..4 {
            rx.on_segment(seq);
        }
        assert_eq!(rx.advertise(), 0);
        assert_eq!(rx.readable(5), Some(4));
        assert!(!rx.clone().consume(0));
        assert!(rx.consume(1), "the peer was offered nothing");
        rx.advertise();
        assert!(!rx.consume(1), "one more segment is not worth an update");
        assert!(rx.consume(2));
    }

    #[test]
    fn the_receiver_holds_out_of_order_segments_and_acks_each_at_once() {
        let mut rx = Receiver::new(11);
        assert_eq!(rx.on_segment(0).delivered, 1);
        assert!(rx.on_segment(2).ack_now);
        assert!(rx.on_segment(3).ack_now);
        let fill = rx.on_segment(1);
        assert_eq!((fill.delivered, fill.ack_now), (3, true));
        assert_eq!(rx.expected, 4);
        assert!(rx.on_segment(1).ack_now, "a duplicate is acknowledged");
    }
}
