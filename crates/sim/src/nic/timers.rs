//! The 8254x delay-timer pairs: a packet timer (RDTR / TIDV) and an absolute timer
//! (RADV / TADV), plus an optional frame-count threshold for count-based coalescing.
//!
//! Rules (moderation-algorithms.md §1, SDM §3.2.7.1):
//! - the packet timer is (re)loaded by every packet and expires when no packet came for its
//!   delay; a delay of 0 signals every packet at once;
//! - the absolute timer starts with the first packet only if it is not running and is never
//!   restarted by later packets; 0 disables it, and so does a packet delay of 0;
//! - an absolute expiry cancels the pending packet timer (reloaded but halted until the next
//!   packet); a packet-timer expiry re-initialises the absolute timer without starting it;
//! - `frames` > 0 signals once that many packets arrived since the last signal (the
//!   count half of DIM-style `(usecs, frames)` profiles; the 8254x has none, so 0 there).
//!
//! Delays are real nanoseconds (already scaled by the host oscillator).

/// A deadline that is not running.
const NEVER: u64 = u64::MAX;

/// One packet-timer / absolute-timer pair.
#[derive(Debug, Clone)]
pub struct DelayPair {
    pkt_delay: u64,
    abs_delay: u64,
    frames: u32,
    /// Running deadlines, [`NEVER`] when stopped (plain integers: the card asks for the
    /// earliest at every step of its replay).
    pkt_deadline: u64,
    abs_deadline: u64,
    since_signal: u32,
}

impl Default for DelayPair {
    fn default() -> Self {
        DelayPair::new(0, 0, 0)
    }
}

impl DelayPair {
    /// A pair with the given delays (real ns) and frame threshold (0 = none).
    pub fn new(pkt_delay: u64, abs_delay: u64, frames: u32) -> DelayPair {
        DelayPair {
            pkt_delay,
            abs_delay,
            frames,
            pkt_deadline: NEVER,
            abs_deadline: NEVER,
            since_signal: 0,
        }
    }

    /// Reprograms the delays; running timers keep their deadlines.
    pub fn reprogram(&mut self, pkt_delay: u64, abs_delay: u64, frames: u32) {
        self.pkt_delay = pkt_delay;
        self.abs_delay = abs_delay;
        self.frames = frames;
    }

    /// A packet completed at `t`; returns true when that signals the cause at once.
    pub fn on_packet(&mut self, t: u64) -> bool {
        self.since_signal += 1;
        if self.pkt_delay == 0 || (self.frames > 0 && self.since_signal >= self.frames) {
            self.signalled();
            return true;
        }
        self.pkt_deadline = t + self.pkt_delay;
        if self.abs_delay > 0 && self.abs_deadline == NEVER {
            self.abs_deadline = t + self.abs_delay;
        }
        false
    }

    /// True when every packet signals at once (a packet delay of 0): a packet then leaves
    /// no deadline running.
    #[inline]
    pub fn signals_every_packet(&self) -> bool {
        self.pkt_delay == 0
    }

    /// The earliest running deadline.
    pub fn next_deadline(&self) -> Option<u64> {
        let d = self.earliest();
        (d != NEVER).then_some(d)
    }

    /// The earliest running deadline, `u64::MAX` when none runs.
    #[inline]
    pub fn earliest(&self) -> u64 {
        self.pkt_deadline.min(self.abs_deadline)
    }

    /// Fires the deadline due at or before `t`, if any; true when the cause is signalled.
    pub fn expire(&mut self, t: u64) -> bool {
        match self.next_deadline() {
            Some(d) if d <= t => {
                self.signalled();
                true
            }
            _ => false,
        }
    }

    /// Both timers stop after a signal (packet expiry re-initialises the absolute timer
    /// without starting it; absolute expiry halts the packet timer until the next packet).
    fn signalled(&mut self) {
        self.pkt_deadline = NEVER;
        self.abs_deadline = NEVER;
        self.since_signal = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_packet_delay_signals_every_packet() {
        let mut p = DelayPair::new(0, 8_192, 0);
        assert!(p.on_packet(10));
        assert_eq!(p.next_deadline(), None);
    }

    #[test]
    fn packet_timer_restarts_and_absolute_bounds_the_delay() {
        // RDTR 10 µs, RADV 25 µs, packets every 5 µs: the packet timer never expires, the
        // absolute one fires 25 µs after the first packet.
        let mut p = DelayPair::new(10_000, 25_000, 0);
        for t in (0..=20_000).step_by(5_000) {
            assert!(!p.expire(t));
            assert!(!p.on_packet(t));
        }
        assert_eq!(p.next_deadline(), Some(25_000));
        assert!(p.expire(25_000));
        assert_eq!(
            p.next_deadline(),
            None,
            "absolute expiry halts the packet timer"
        );
    }

    #[test]
    fn packet_timer_expiry_when_traffic_stops() {
        let mut p = DelayPair::new(10_000, 50_000, 0);
        p.on_packet(0);
        p.on_packet(4_000);
        assert_eq!(p.next_deadline(), Some(14_000));
        assert!(p.expire(14_000));
        // The absolute timer was re-initialised, not started: the next packet starts it anew.
        p.on_packet(20_000);
        assert_eq!(p.next_deadline(), Some(30_000));
    }

    #[test]
    fn frame_threshold_signals_on_the_nth_packet() {
        let mut p = DelayPair::new(100_000, 0, 3);
        assert!(!p.on_packet(1));
        assert!(!p.on_packet(2));
        assert!(p.on_packet(3));
    }
}
