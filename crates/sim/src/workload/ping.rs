//! ICMP echo like `ping -i INTERVAL -s 56`.
//!
//! The client's ping process wakes on its interval timer and sends an echo request; the
//! server answers from its softirq (no application involved); the client's softirq
//! timestamps the reply as it starts processing it (SO_TIMESTAMP is taken on receive, so the
//! socket wake-up is outside the measured time) and then wakes the ping process. The round
//! trip recorded is request send → reply receive timestamp.

use super::{Action, HostId, Rx, CLIENT, SERVER};
use crate::host::costs::Costs;
use crate::metrics::recorder::Recorder;
use crate::nic::frame::{Frame, Payload};

/// IPv4 (20) + ICMP (8) headers.
pub const ICMP_HEADERS: u32 = 28;
const TAG_SEND: u64 = 0;
const TAG_READ: u64 = 1;

/// Ping parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PingConfig {
    /// Interval between requests (ns).
    pub interval_ns: u64,
    /// ICMP payload bytes (`-s`, 56 by default).
    pub payload: u32,
}

/// Ping state.
#[derive(Debug)]
pub struct Ping {
    cfg: PingConfig,
    seq: u32,
}

impl Ping {
    /// A ping that has sent nothing yet.
    pub fn new(cfg: PingConfig) -> Ping {
        Ping { cfg, seq: 0 }
    }

    /// The first probe goes out at once.
    pub fn start(&mut self, out: &mut Vec<Action>) {
        out.push(Action::Timer { at: 0, tag: 0 });
    }

    /// The interval timer: wake the ping process to send.
    pub fn on_timer(&mut self, now: u64, costs: &[Costs], out: &mut Vec<Action>) {
        let c = &costs[CLIENT];
        out.push(Action::Job {
            host: CLIENT,
            ready: now,
            work: c.app_ns + c.tx_pkt_ns,
            tag: TAG_SEND,
        });
        out.push(Action::Timer {
            at: now + self.cfg.interval_ns,
            tag: 0,
        });
    }

    /// The ping process finished a job.
    pub fn on_job_done(&mut self, host: HostId, tag: u64, now: u64, out: &mut Vec<Action>) {
        if host != CLIENT || tag != TAG_SEND {
            return;
        }
        let what = Payload::Echo {
            seq: self.seq,
            reply: false,
        };
        self.seq += 1;
        let frame = Frame::with_payload(self.cfg.payload, ICMP_HEADERS, now, what);
        out.push(Action::Send {
            host: CLIENT,
            at: now,
            frame,
        });
    }

    /// An echo request or reply reached a stack.
    pub fn on_rx(
        &mut self,
        rx: Rx<'_>,
        frame: &Frame,
        rec: &mut Recorder,
        out: &mut Vec<Action>,
    ) -> u64 {
        let Payload::Echo { seq, reply } = frame.what else {
            return 0;
        };
        if !reply && rx.host == SERVER {
            let at = rx.end + rx.costs.tx_pkt_ns;
            let mut back = *frame;
            back.what = Payload::Echo { seq, reply: true };
            out.push(Action::Send {
                host: SERVER,
                at,
                frame: back,
            });
            return rx.costs.tx_pkt_ns;
        }
        if reply && rx.host == CLIENT {
            rec.sample(frame.sent, rx.start);
            rec.delivered(self.cfg.payload, rx.end);
            out.push(Action::Job {
                host: CLIENT,
                ready: rx.end,
                work: rx.costs.app_ns,
                tag: TAG_READ,
            });
        }
        0
    }
}
