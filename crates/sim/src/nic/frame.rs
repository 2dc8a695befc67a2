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
    /// A TCP segment of request/response message `msg`; `last` ends the message.
    Message {
        /// Message number, counting up (wrapping) per workload.
        msg: u32,
        /// This segment is the message's last: its arrival completes the message.
        last: bool,
        /// A request (client to server, answered by the server's job); false for the
        /// response.
        request: bool,
    },
    /// A pure TCP ACK (no data).
    Ack,
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
