//! A point-to-point link direction: serialisation at the bit rate (frame + preamble + gap)
//! and a propagation delay. Time on the wire is kept in picoseconds so that line rates whose
//! frame times are not whole nanoseconds (64 B at 10 Gb/s = 67.2 ns) add up exactly.

use super::frame::WIRE_OVERHEAD;

/// One direction of a link.
#[derive(Debug, Clone)]
pub struct Link {
    ps_per_byte: u64,
    propagation: u64,
    busy_until_ps: u64,
}

impl Link {
    /// A link of `bits_per_sec` with `propagation` ns of delay.
    pub fn new(bits_per_sec: f64, propagation: u64) -> Link {
        Link {
            ps_per_byte: (8e12 / bits_per_sec).round() as u64,
            propagation,
            busy_until_ps: 0,
        }
    }

    /// Puts a `bytes` frame on the wire no earlier than `ready` ns; returns when its last
    /// bit arrives at the far end (ns, rounded up).
    pub fn send(&mut self, ready: u64, bytes: u32) -> u64 {
        let start = (ready * 1000).max(self.busy_until_ps);
        let end = start + (bytes + WIRE_OVERHEAD) as u64 * self.ps_per_byte;
        self.busy_until_ps = end;
        end.div_ceil(1000) + self.propagation
    }

    /// Like [`Link::send`] with the ready time in picoseconds; returns the end of
    /// transmission in picoseconds (propagation not included).
    pub fn send_ps(&mut self, ready_ps: u64, bytes: u32) -> u64 {
        let start = ready_ps.max(self.busy_until_ps);
        self.busy_until_ps = start + (bytes + WIRE_OVERHEAD) as u64 * self.ps_per_byte;
        self.busy_until_ps
    }

    /// Picoseconds one frame of `bytes` occupies the wire.
    pub fn frame_ps(&self, bytes: u32) -> u64 {
        (bytes + WIRE_OVERHEAD) as u64 * self.ps_per_byte
    }

    /// When the wire is next free (ps).
    pub fn busy_until_ps(&self) -> u64 {
        self.busy_until_ps
    }

    /// The propagation delay (ns).
    pub fn propagation(&self) -> u64 {
        self.propagation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_gig_line_rate_is_exact() {
        // 64-byte frames back to back at 10 Gb/s: 14,880,952 per second (sim-notes §4.1).
        let mut link = Link::new(10e9, 0);
        let mut n = 0u64;
        while link.send(0, 64) <= 1_000_000_000 {
            n += 1;
        }
        assert_eq!(n, 14_880_952);
    }

    #[test]
    fn gigabit_full_frame_with_propagation() {
        let mut link = Link::new(1e9, 10);
        assert_eq!(link.send(100, 1518), 100 + 12_304 + 10);
    }
}
