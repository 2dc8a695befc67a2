//! Closed-loop TCP request/response, like `netperf -t TCP_RR`.
//!
//! `outstanding` transactions circulate on one connection. The client application sends a
//! request (segments of at most one MSS), the server's softirq receives it and wakes the
//! server application, which sends the response; the client's softirq wakes the client
//! application, which counts the transaction and sends the next request. A receiver ACKs every
//! second full segment from its softirq (Linux quick-ACK behaviour for a multi-segment
//! message); the final segment's ACK rides on the reply, which leaves well within the 40 ms
//! delayed-ACK timer. Transmit completions come from the NIC (TXDW) and are cleaned in the
//! poll. A transaction's latency runs from the request leaving the client application to the
//! client application having processed the response.
//!
//! Each direction is a byte stream with sequence numbers. A message is complete, and its
//! application job runs, only when every byte of it has arrived in order; its bytes are
//! credited to throughput only then. Segments are lost where the simulator drops them (at the
//! receiving NIC) and recovered as TCP does: the receiver keeps out-of-order segments and
//! ACKs at once a segment that is out of order, a duplicate, or fills a hole (RFC 5681 §4.2);
//! every data segment carries the cumulative ACK of the other direction; the sender
//! retransmits the first unacknowledged segment on the third duplicate ACK (fast retransmit)
//! or when its retransmission timer expires (200 ms, Linux `TCP_RTO_MIN` in
//! `include/net/tcp.h`, doubled per expiry as RFC 6298 §5.5), and after either the next hole
//! on every partial ACK until all data sent before the loss is acknowledged (NewReno, RFC 6582
//! §3.2). Simplifications: no SACK and no congestion window (a message goes out whole, as
//! before the loss model), so a burst of losses costs one round trip per lost segment — slower
//! than Linux's SACK recovery, never faster; retransmissions on the timer are not charged CPU.

use super::{Action, HostId, Rx, CLIENT, SERVER};
use crate::host::costs::Costs;
use crate::metrics::recorder::Recorder;
use crate::nic::frame::{Frame, Payload};
use std::collections::{BTreeMap, VecDeque};

/// IPv4 (20) + TCP with timestamps (32) — Linux enables TCP timestamps by default.
pub const TCP_HEADERS: u32 = 52;

const TAG_FIRST: u64 = 0;
const TAG_RESPONSE: u64 = 1;
const TAG_SERVE: u64 = 2;

/// Linux `TCP_RTO_MIN` (HZ/5, `include/net/tcp.h`): on a LAN the smoothed RTT is far below
/// it, so it is the timeout.
const RTO_NS: u64 = 200_000_000;
/// Expiries doubling the timeout before it stops growing: 200 ms · 2⁹ ≈ 102 s, under Linux
/// `TCP_RTO_MAX` (120 s).
const RTO_MAX_BACKOFF: u32 = 9;

/// TCP_RR parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RrConfig {
    /// Request size (bytes), netperf `-r req,…`.
    pub request: u32,
    /// Response size (bytes).
    pub response: u32,
    /// Transactions in flight (netperf burst + 1).
    pub outstanding: u32,
    /// TCP maximum segment size (payload bytes per segment).
    pub mss: u32,
}

/// The sending end of one direction.
#[derive(Debug, Default)]
struct Sender {
    /// First unacknowledged byte.
    una: u64,
    /// Next byte to send.
    nxt: u64,
    dupacks: u32,
    /// In loss recovery until this byte is acknowledged.
    recover: Option<u64>,
    /// When the retransmission timer expires (None: not running).
    rto_at: Option<u64>,
    /// A timer event is queued (it re-queues itself while `rto_at` lies later).
    timer_queued: bool,
    backoff: u32,
    retransmits: u64,
}

/// The receiving end of one direction.
#[derive(Debug, Default)]
struct Receiver {
    /// Every byte below has arrived.
    nxt: u64,
    /// Out-of-order segments kept: start → end.
    ooo: BTreeMap<u64, u64>,
    /// Ends of the messages sent but not yet complete here.
    ends: VecDeque<u64>,
    /// In-order segments since the last ACK.
    unacked: u32,
}

/// TCP_RR state: both ends of both directions (direction 0 carries requests from the client,
/// direction 1 responses from the server; host `h` sends direction `h`).
#[derive(Debug)]
pub struct Rr {
    cfg: RrConfig,
    started: VecDeque<u64>,
    tx: [Sender; 2],
    rx: [Receiver; 2],
}

impl Rr {
    /// A fresh connection.
    pub fn new(cfg: RrConfig) -> Rr {
        Rr {
            cfg,
            started: VecDeque::new(),
            tx: Default::default(),
            rx: Default::default(),
        }
    }

    fn segments(&self, bytes: u32) -> u32 {
        bytes.div_ceil(self.cfg.mss).max(1)
    }

    fn job_work(&self, costs: &Costs, reply_bytes: u32) -> u64 {
        costs.app_ns + self.segments(reply_bytes) as u64 * costs.tx_pkt_ns
    }

    /// Message size of direction `d`.
    fn message_bytes(&self, d: usize) -> u32 {
        if d == CLIENT {
            self.cfg.request
        } else {
            self.cfg.response
        }
    }

    /// Segments retransmitted so far (both directions).
    pub fn retransmits(&self) -> u64 {
        self.tx[0].retransmits + self.tx[1].retransmits
    }

    /// The client application sends its first `outstanding` requests.
    pub fn start(&mut self, costs: &[Costs], out: &mut Vec<Action>) {
        for _ in 0..self.cfg.outstanding {
            out.push(Action::Job {
                host: CLIENT,
                ready: 0,
                work: self.job_work(&costs[CLIENT], self.cfg.request),
                tag: TAG_FIRST,
            });
        }
    }

    /// Segment of direction `host` starting at `seq` (a segment boundary), sent at `at`.
    fn segment(&self, host: HostId, seq: u64, at: u64) -> Frame {
        let bytes = self.message_bytes(host) as u64;
        let len = (bytes - seq % bytes).min(self.cfg.mss as u64) as u32;
        let what = Payload::Message {
            seq,
            ack: self.rx[1 - host].nxt,
            request: host == CLIENT,
        };
        Frame::with_payload(len, TCP_HEADERS, at, what)
    }

    fn send_message(&mut self, host: HostId, now: u64, out: &mut Vec<Action>) {
        let bytes = self.message_bytes(host);
        let mut seq = self.tx[host].nxt;
        let end = seq + bytes as u64;
        self.rx[host].ends.push_back(end);
        while seq < end {
            let frame = self.segment(host, seq, now);
            seq += frame.payload as u64;
            out.push(Action::Send {
                host,
                at: now,
                frame,
            });
        }
        self.tx[host].nxt = end;
        if self.tx[host].rto_at.is_none() {
            self.arm(host, now, out);
        }
    }

    /// (Re)starts the retransmission timer of direction `host` from `now` (RFC 6298 §5.1, §5.3).
    fn arm(&mut self, host: HostId, now: u64, out: &mut Vec<Action>) {
        let s = &mut self.tx[host];
        let at = now + (RTO_NS << s.backoff);
        s.rto_at = Some(at);
        if !s.timer_queued {
            s.timer_queued = true;
            out.push(Action::Timer {
                at,
                tag: host as u64,
            });
        }
    }

    /// Resends the first unacknowledged segment of direction `host` at `at`.
    fn retransmit(&mut self, host: HostId, at: u64, out: &mut Vec<Action>) {
        let frame = self.segment(host, self.tx[host].una, at);
        self.tx[host].retransmits += 1;
        out.push(Action::Send { host, at, frame });
    }

    /// The retransmission timer of direction `tag`.
    pub fn on_timer(&mut self, tag: u64, now: u64, out: &mut Vec<Action>) {
        let h = tag as usize;
        let s = &mut self.tx[h];
        s.timer_queued = false;
        match s.rto_at {
            Some(at) if at > now => {
                s.timer_queued = true;
                out.push(Action::Timer { at, tag });
            }
            Some(_) if s.una < s.nxt => {
                s.backoff = (s.backoff + 1).min(RTO_MAX_BACKOFF);
                s.recover = Some(s.nxt);
                s.dupacks = 0;
                self.retransmit(h, now, out);
                self.arm(h, now, out);
            }
            _ => s.rto_at = None,
        }
    }

    /// Host `h` learnt that the peer has every byte below `ack` of the direction `h` sends;
    /// returns softirq ns spent retransmitting.
    fn acked(&mut self, rx: Rx<'_>, ack: u64, pure: bool, out: &mut Vec<Action>) -> u64 {
        let h = rx.host;
        let at = rx.end + rx.costs.tx_pkt_ns;
        let s = &mut self.tx[h];
        if ack > s.una {
            s.una = ack;
            s.dupacks = 0;
            s.backoff = 0;
            let partial = s.recover.is_some_and(|r| ack < r);
            if !partial {
                s.recover = None;
            }
            if s.una < s.nxt {
                self.arm(h, rx.end, out);
            } else {
                self.tx[h].rto_at = None;
            }
            if partial {
                self.retransmit(h, at, out);
                return rx.costs.tx_pkt_ns;
            }
        } else if pure && ack == s.una && s.una < s.nxt {
            s.dupacks += 1;
            if s.dupacks == 3 && s.recover.is_none() {
                s.recover = Some(s.nxt);
                self.retransmit(h, at, out);
                return rx.costs.tx_pkt_ns;
            }
        }
        0
    }

    /// A pure ACK from host `h`'s softirq for what it has of the direction it receives.
    fn ack_now(&mut self, rx: Rx<'_>, out: &mut Vec<Action>) -> u64 {
        let h = rx.host;
        self.rx[1 - h].unacked = 0;
        let at = rx.end + rx.costs.tx_pkt_ns;
        let ack = self.rx[1 - h].nxt;
        let frame = Frame::with_payload(0, TCP_HEADERS, at, Payload::Ack { ack });
        out.push(Action::Send { host: h, at, frame });
        rx.costs.tx_pkt_ns
    }

    /// A data segment of `len` bytes from `seq` reached host `rx.host`.
    fn receive(&mut self, rx: Rx<'_>, seq: u64, len: u32, out: &mut Vec<Action>) -> u64 {
        let h = rx.host;
        let d = 1 - h;
        let r = &mut self.rx[d];
        let end = seq + len as u64;
        if end <= r.nxt {
            // A duplicate (a retransmission of data that had arrived).
            return self.ack_now(rx, out);
        }
        if seq > r.nxt {
            r.ooo.insert(seq, end);
            return self.ack_now(rx, out);
        }
        let filled_a_hole = !r.ooo.is_empty();
        r.nxt = end;
        while let Some((&s, &e)) = r.ooo.first_key_value() {
            if s > r.nxt {
                break;
            }
            r.ooo.pop_first();
            r.nxt = r.nxt.max(e);
        }
        r.unacked += 1;
        let mut completed = 0;
        while r.ends.front().is_some_and(|&e| e <= r.nxt) {
            r.ends.pop_front();
            completed += 1;
        }
        if completed > 0 {
            r.unacked = 0;
        }
        let unacked = r.unacked;
        if completed > 0 {
            let (reply, tag) = if h == SERVER {
                (self.cfg.response, TAG_SERVE)
            } else {
                (self.cfg.request, TAG_RESPONSE)
            };
            for _ in 0..completed {
                out.push(Action::Job {
                    host: h,
                    ready: rx.end,
                    work: self.job_work(rx.costs, reply),
                    tag,
                });
            }
        }
        if filled_a_hole || unacked >= 2 {
            return self.ack_now(rx, out);
        }
        0
    }

    /// A frame reached the stack of `rx.host`.
    pub fn on_rx(&mut self, rx: Rx<'_>, frame: &Frame, out: &mut Vec<Action>) -> u64 {
        match frame.what {
            Payload::Message { seq, ack, .. } => {
                self.acked(rx, ack, false, out) + self.receive(rx, seq, frame.payload, out)
            }
            Payload::Ack { ack } => self.acked(rx, ack, true, out),
            _ => 0,
        }
    }

    /// An application job finished.
    pub fn on_job_done(
        &mut self,
        host: HostId,
        tag: u64,
        now: u64,
        rec: &mut Recorder,
        out: &mut Vec<Action>,
    ) {
        match (host, tag) {
            (SERVER, _) => {
                // Throughput counts both directions: the request the server just served,
                // and (below) the response when the client's application has it.
                rec.delivered(self.cfg.request, now);
                self.send_message(SERVER, now, out)
            }
            (_, TAG_RESPONSE) => {
                if let Some(start) = self.started.pop_front() {
                    rec.transaction(start, now);
                    rec.delivered(self.cfg.response, now);
                }
                self.started.push_back(now);
                self.send_message(CLIENT, now, out);
            }
            _ => {
                self.started.push_back(now);
                self.send_message(CLIENT, now, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One transaction outstanding, a 1-byte response, `request` bytes sent at MSS 1448.
    fn one_at_a_time(request: u32) -> Rr {
        Rr::new(RrConfig {
            request,
            response: 1,
            outstanding: 1,
            mss: 1448,
        })
    }

    /// The frames `out` sends, in order.
    fn sent(out: &[Action]) -> Vec<Frame> {
        out.iter()
            .filter_map(|a| match a {
                Action::Send { frame, .. } => Some(*frame),
                _ => None,
            })
            .collect()
    }

    fn costs() -> Costs {
        Costs {
            irq_ns: 0,
            poll_ns: 0,
            rx_pkt_ns: 0,
            tx_pkt_ns: 1_000,
            tx_clean_ns: 0,
            app_ns: 5_000,
            hrtimer_ns: 0,
        }
    }

    #[test]
    fn messages_are_segmented_and_acked_every_second_segment() {
        let mut rr = one_at_a_time(4_000);
        let mut out = Vec::new();
        let mut rec = Recorder::new(1_000_000_000);
        rr.on_job_done(CLIENT, TAG_FIRST, 0, &mut rec, &mut out);
        let segs = sent(&out);
        assert_eq!(
            segs.iter().map(|f| f.payload).collect::<Vec<_>>(),
            vec![1448, 1448, 1104]
        );
        assert_eq!(segs[0].bytes, 1448 + 52 + 18);
        out.clear();
        let c = costs();
        let rx = |end| Rx {
            host: SERVER,
            costs: &c,
            start: end,
            end,
        };
        let extra: Vec<u64> = segs
            .iter()
            .enumerate()
            .map(|(i, f)| rr.on_rx(rx(10 + i as u64), f, &mut out))
            .collect();
        // Second segment: a pure ACK from the softirq; last: the server application wakes.
        assert_eq!(extra, vec![0, 1_000, 0]);
        assert!(matches!(
            out[0],
            Action::Send {
                frame: Frame {
                    what: Payload::Ack { ack: 2896 },
                    ..
                },
                ..
            }
        ));
        assert!(matches!(
            out[1],
            Action::Job {
                host: SERVER,
                work: 6_000,
                ..
            }
        ));
    }

    #[test]
    fn a_lost_segment_holds_the_message_until_fast_retransmit_fills_the_hole() {
        let mut rr = one_at_a_time(6 * 1448);
        let mut out = Vec::new();
        let mut rec = Recorder::new(1_000_000_000);
        rr.on_job_done(CLIENT, TAG_FIRST, 0, &mut rec, &mut out);
        let segs = sent(&out);
        assert_eq!(segs.len(), 6);
        let c = costs();
        let at = |host, end| Rx {
            host,
            costs: &c,
            start: end,
            end,
        };
        // Segment 1 is lost; 0, 2–5 arrive: no job; an ACK for byte 1448 (new to the client)
        // and three duplicates.
        let mut acks = Vec::new();
        for (i, f) in segs.iter().enumerate().filter(|&(i, _)| i != 1) {
            out.clear();
            rr.on_rx(at(SERVER, 10 + i as u64), f, &mut out);
            assert!(
                !out.iter().any(|a| matches!(a, Action::Job { .. })),
                "{out:?}"
            );
            acks.extend(sent(&out));
        }
        assert_eq!(
            acks.iter().map(|f| f.what).collect::<Vec<_>>(),
            vec![Payload::Ack { ack: 1448 }; 4]
        );
        // The third duplicate ACK makes the client resend segment 1 …
        let mut resent = Vec::new();
        for f in &acks {
            out.clear();
            rr.on_rx(at(CLIENT, 100), f, &mut out);
            resent.extend(sent(&out));
        }
        assert_eq!(resent.len(), 1);
        assert_eq!((resent[0].what, resent[0].payload), (segs[1].what, 1448));
        assert_eq!(rr.retransmits(), 1);
        // … whose arrival completes the request and wakes the server application.
        out.clear();
        rr.on_rx(at(SERVER, 200), &resent[0], &mut out);
        assert!(out.iter().any(|a| matches!(
            a,
            Action::Job {
                host: SERVER,
                tag: TAG_SERVE,
                ..
            }
        )));
    }

    #[test]
    fn the_retransmission_timer_resends_when_no_ack_comes() {
        let mut rr = one_at_a_time(100);
        let mut out = Vec::new();
        let mut rec = Recorder::new(1_000_000_000);
        rr.on_job_done(CLIENT, TAG_FIRST, 0, &mut rec, &mut out);
        let timer = out
            .iter()
            .find_map(|a| match a {
                Action::Timer { at, tag } => Some((*at, *tag)),
                _ => None,
            })
            .unwrap();
        assert_eq!(timer, (RTO_NS, CLIENT as u64));
        out.clear();
        rr.on_timer(timer.1, timer.0, &mut out);
        let sends = out
            .iter()
            .filter(|a| matches!(a, Action::Send { host: CLIENT, .. }))
            .count();
        assert_eq!(sends, 1);
        // The next expiry is twice as far (RFC 6298 §5.5).
        assert!(out.contains(&Action::Timer {
            at: RTO_NS + 2 * RTO_NS,
            tag: CLIENT as u64
        }));
    }
}
