//! ICMP echo like `ping -i INTERVAL -s 56`.
//!
//! The client's ping process wakes on its interval timer and sends an echo request; the
//! server answers from its softirq (no application involved); the client's softirq
//! timestamps the reply as it starts processing it (SO_TIMESTAMP is taken on receive, so the
//! socket wake-up is outside the measured time) and then wakes the ping process. The round
//! trip recorded is request send → reply receive timestamp.
//!
//! An echo larger than the 1500-byte Ethernet MTU (`-s` above 1472) goes out as IP fragments
//! of at most 1480 data bytes each (`ip_fragment`: a multiple of 8 under MTU − 20), each its
//! own frame; the receiver reassembles them before the echo is answered or timed, and the
//! reply is fragmented the same way. The receive timestamp is the last fragment's (Linux
//! `ip_frag_queue` stamps the queue with each fragment, `ip_frag_reasm` hands it on). A lost
//! fragment loses the probe; an incomplete reassembly is dropped after 30 s
//! (`net.ipv4.ipfrag_time`). The engine's links have no jumbo MTU, so 1500 always applies.

use super::{Action, HostId, Rx, CLIENT, SERVER};
use crate::host::costs::Costs;
use crate::metrics::recorder::Recorder;
use crate::nic::frame::{Frame, Payload};
use std::collections::BTreeMap;

/// IPv4 (20) + ICMP (8) headers.
pub const ICMP_HEADERS: u32 = 28;
/// IPv4 header of every fragment.
const IP_HEADER: u32 = 20;
/// IP data bytes per fragment at the 1500-byte Ethernet MTU: 1480, a multiple of 8.
const FRAG_DATA: u32 = 1480;
/// `net.ipv4.ipfrag_time`: an incomplete reassembly is dropped after 30 s.
const IPFRAG_TIME_NS: u64 = 30_000_000_000;
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
    /// Per receiving host: echoes being reassembled, seq → (fragments so far, first arrival).
    reasm: [BTreeMap<(u32, bool), (u32, u64)>; 2],
    /// When each request still unanswered left.
    sent: BTreeMap<u32, u64>,
}

/// The frames of one echo of `payload` ICMP payload bytes sent at `at`: IP fragments of at
/// most 1480 data bytes, the first carrying the ICMP header.
pub fn fragments(payload: u32, at: u64, what: Payload) -> impl Iterator<Item = Frame> {
    let data = payload + ICMP_HEADERS - IP_HEADER;
    let n = data.div_ceil(FRAG_DATA).max(1);
    (0..n).map(move |i| {
        let chunk = (data - i * FRAG_DATA).min(FRAG_DATA);
        if i == 0 {
            Frame::with_payload(chunk - (ICMP_HEADERS - IP_HEADER), ICMP_HEADERS, at, what)
        } else {
            Frame::with_payload(chunk, IP_HEADER, at, what)
        }
    })
}

impl Ping {
    /// A ping that has sent nothing yet.
    pub fn new(cfg: PingConfig) -> Ping {
        Ping {
            cfg,
            seq: 0,
            reasm: Default::default(),
            sent: BTreeMap::new(),
        }
    }

    fn fragment_count(&self) -> u32 {
        (self.cfg.payload + ICMP_HEADERS - IP_HEADER)
            .div_ceil(FRAG_DATA)
            .max(1)
    }

    /// A fragment of echo `seq` reached `host` at `now`: whether the echo is now complete.
    fn reassemble(&mut self, host: HostId, seq: u32, reply: bool, now: u64) -> bool {
        let n = self.fragment_count();
        let q = &mut self.reasm[host];
        q.retain(|_, &mut (_, first)| now < first + IPFRAG_TIME_NS);
        let e = q.entry((seq, reply)).or_insert((0, now));
        e.0 += 1;
        if e.0 < n {
            return false;
        }
        q.remove(&(seq, reply));
        true
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
            work: c.app_ns + self.fragment_count() as u64 * c.tx_pkt_ns,
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
        self.sent.insert(self.seq, now);
        self.seq += 1;
        for frame in fragments(self.cfg.payload, now, what) {
            out.push(Action::Send {
                host: CLIENT,
                at: now,
                frame,
            });
        }
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
        if (reply != (rx.host == CLIENT)) || !self.reassemble(rx.host, seq, reply, rx.start) {
            return 0;
        }
        if !reply {
            // Throughput counts both directions: the request's payload here, the reply's
            // when the client has it.
            rec.delivered(self.cfg.payload, rx.end);
            let tx = rx.costs.tx_pkt_ns;
            let what = Payload::Echo { seq, reply: true };
            let mut at = rx.end;
            for mut back in fragments(self.cfg.payload, at, what) {
                at += tx;
                back.sent = at;
                out.push(Action::Send {
                    host: SERVER,
                    at,
                    frame: back,
                });
            }
            return at - rx.end;
        }
        // Requests left in order: those before this one are lost.
        let Some(sent) = self.sent.remove(&seq) else {
            return 0;
        };
        self.sent.retain(|&s, _| s > seq);
        rec.sample(sent, rx.start);
        rec.delivered(self.cfg.payload, rx.end);
        out.push(Action::Job {
            host: CLIENT,
            ready: rx.end,
            work: rx.costs.app_ns,
            tag: TAG_READ,
        });
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_echo_above_the_mtu_goes_as_ip_fragments() {
        let what = Payload::Echo {
            seq: 0,
            reply: false,
        };
        let one: Vec<Frame> = fragments(1472, 0, what).collect();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].bytes, 1518);
        // 65,507 + 8 ICMP = 65,515 IP data bytes: 44 fragments of 1480 and one of 395.
        let big: Vec<Frame> = fragments(65_507, 0, what).collect();
        assert_eq!(big.len(), 45);
        assert!(big.iter().all(|f| f.bytes <= 1518));
        assert_eq!(big[44].bytes, 395 + 20 + 18);
        assert_eq!(big.iter().map(|f| f.payload).sum::<u32>(), 65_507);
    }
}
