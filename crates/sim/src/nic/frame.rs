//! A frame as the simulator moves it: sizes, the times that matter and what it carries.

/// Bytes a frame occupies on the wire beyond the frame itself: preamble + SFD (8) and the
/// minimum inter-frame gap (12) (IEEE 802.3 clause 4; sim-notes §4.1).
pub const WIRE_OVERHEAD: u32 = 20;
/// Smallest Ethernet frame including the FCS.
pub const MIN_FRAME: u32 = 64;
/// Ethernet header (14) plus FCS (4).
pub const ETH_OVERHEAD: u32 = 18;

/// What a frame carries; the workloads give it meaning, the NIC and driver never look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// A frame of an open-loop stream, sunk by the receiving stack.
    Stream,
    /// A TCP segment of a request/response stream, `payload` bytes from byte `seq` of its
    /// direction.
    Message {
        /// Stream offset of the segment's first payload byte in its direction.
        seq: u64,
        /// Cumulative ACK it carries for the other direction: every byte below has arrived.
        ack: u64,
        /// A request segment (client to server); false for the response direction.
        request: bool,
    },
    /// A pure TCP ACK (no data), cumulative up to byte `ack` of the direction it acknowledges.
    Ack {
        /// Every byte below this offset has arrived.
        ack: u64,
    },
    /// ICMP echo request / reply number `seq`.
    Echo {
        /// Echo sequence number, pairing a reply with its request.
        seq: u32,
        /// An echo reply; false for the request.
        reply: bool,
    },
    /// A bulk-TCP data segment starting at byte `seq`.
    Bulk {
        /// Byte offset of the segment's first payload byte in the stream.
        seq: u64,
    },
    /// A bulk-TCP cumulative acknowledgement up to byte `ack`.
    BulkAck {
        /// Bytes acknowledged: every byte below this offset has arrived.
        ack: u64,
    },
}

/// One frame in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Frame length including header and FCS, excluding preamble and gap.
    pub bytes: u32,
    /// Application payload bytes it carries (0 for pure ACKs).
    pub payload: u32,
    /// When the source released it (ns); latency of stream frames is measured from here.
    pub sent: u64,
    /// When its last bit reached the receiving NIC (ns); set by the link.
    pub arrived: u64,
    /// What it carries.
    pub what: Payload,
}

impl Frame {
    /// A frame carrying `payload` bytes behind `headers` bytes of L3/L4 headers, padded to
    /// the Ethernet minimum.
    pub fn with_payload(payload: u32, headers: u32, sent: u64, what: Payload) -> Frame {
        Frame {
            bytes: (payload + headers + ETH_OVERHEAD).max(MIN_FRAME),
            payload,
            sent,
            arrived: 0,
            what,
        }
    }
}

/// Stream frames of one size whose wire starts are evenly spaced, in closed form: frame `j`
/// starts at `start_ps + j·step_ps`, so its release time and its arrival are arithmetic in
/// `j`, and a run of any length costs the same to store and to advance as one frame. A steady
/// generator hands these out ([`crate::workload::stream::Generator::steady_run`]); the NIC
/// lands them in bulk and the driver takes them from the ring one by one, each
/// [`FrameRun::frame`] equal to the frame the generator would have made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRun {
    /// Wire start of the first frame (ps).
    pub start_ps: u64,
    /// Spacing of the wire starts (ps); > 0.
    pub step_ps: u64,
    /// Time one frame occupies the wire (ps).
    pub wire_ps: u64,
    /// Link propagation delay (ns).
    pub propagation_ns: u64,
    /// Frame length of every frame ([`Frame::bytes`]).
    pub bytes: u32,
    /// Payload of every frame ([`Frame::payload`]).
    pub payload: u32,
    /// Frames in the run.
    pub count: u64,
}

impl FrameRun {
    /// Wire start of frame `j` (ps).
    #[inline]
    pub fn start_of(&self, j: u64) -> u64 {
        self.start_ps + j * self.step_ps
    }

    /// Frame `j` of the run, as a generator makes it: released when its first bit goes on
    /// the wire (ns, rounded down), arrived when its last bit reaches the far end (rounded
    /// up) plus the propagation delay.
    #[inline]
    pub fn frame(&self, j: u64) -> Frame {
        let start = self.start_of(j);
        Frame {
            bytes: self.bytes,
            payload: self.payload,
            sent: start / 1000,
            arrived: (start + self.wire_ps).div_ceil(1000) + self.propagation_ns,
            what: Payload::Stream,
        }
    }

    /// Arrival of frame `j` (ns).
    #[inline]
    pub fn arrived(&self, j: u64) -> u64 {
        (self.start_of(j) + self.wire_ps).div_ceil(1000) + self.propagation_ns
    }

    /// How many of the run's frames arrive at or before `t` (ns): the arrivals rise with `j`,
    /// and `ceil(x / 1000) ≤ m` exactly when `x ≤ 1000·m`.
    pub fn arriving_by(&self, t: u64) -> u64 {
        let Some(last_ps) = t
            .checked_sub(self.propagation_ns)
            .map(|m| m.saturating_mul(1000))
        else {
            return 0;
        };
        match last_ps.checked_sub(self.start_ps + self.wire_ps) {
            Some(room) => (room / self.step_ps + 1).min(self.count),
            None => 0,
        }
    }

    /// The smallest gap between two consecutive arrivals (ns): arrivals are ceilings of an
    /// arithmetic sequence, and `ceil(x + y) ≥ ceil(x) + floor(y)`.
    pub fn min_gap_ns(&self) -> u64 {
        self.step_ps / 1000
    }

    /// The first `n` frames (`n ≤ count`).
    pub fn first(&self, n: u64) -> FrameRun {
        FrameRun { count: n, ..*self }
    }

    /// Drops the first `n` frames (`n ≤ count`).
    pub fn advance(&mut self, n: u64) {
        self.start_ps += n * self.step_ps;
        self.count -= n;
    }

    /// For tests: `count` 64-byte stream frames on 10 GbE (67.2 ns on the wire, 10 ns of
    /// propagation), the first starting at `start_ps`, spaced `step_ps`.
    #[cfg(test)]
    pub(crate) fn ten_gig_64b(start_ps: u64, step_ps: u64, count: u64) -> FrameRun {
        FrameRun {
            start_ps,
            step_ps,
            wire_ps: 67_200,
            propagation_ns: 10,
            bytes: 64,
            payload: 18,
            count,
        }
    }
}
