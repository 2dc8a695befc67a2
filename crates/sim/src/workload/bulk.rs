//! A window-limited bulk TCP-like transfer from client to server with simple loss recovery.
//!
//! Sender: slow start from an initial window of 10 segments (RFC 6928), congestion avoidance
//! above ssthresh, the window capped by the receiver window; three duplicate ACKs trigger a
//! fast retransmit and NewReno-style recovery (partial ACKs retransmit the next hole); a
//! 200 ms retransmission timeout (Linux TCP_RTO_MIN) falls back to one segment and resends
//! from the first unacknowledged byte. New data is sent from the softirq that processes the
//! ACK, as Linux does. Receiver: cumulative ACK every second in-order segment, an immediate
//! duplicate ACK for out-of-order data and an immediate ACK for a segment that fills a hole
//! (RFC 5681 §4.2), a 40 ms delayed ACK otherwise (TCP_DELACK_MIN).
//! Segments are lost where the simulator drops them: at the receiving NIC. There is no SACK:
//! a burst of losses costs one round trip per lost segment, so throughput under heavy ring
//! overflow is pessimistic next to Linux's SACK-based recovery.

use super::rr::TCP_HEADERS;
use super::{Action, HostId, Rx, CLIENT, SERVER};
use crate::host::costs::Costs;
use crate::metrics::recorder::Recorder;
use crate::nic::frame::{Frame, Payload};
use std::collections::BTreeSet;

const RTO_NS: u64 = 200_000_000;
const DELACK_NS: u64 = 40_000_000;
const INIT_CWND_SEGS: u64 = 10;
const TAG_KICK: u64 = 0;
const TAG_RTO: u64 = 1 << 62;
const TAG_DELACK: u64 = 2 << 62;
const TAG_MASK: u64 = 3 << 62;

/// Bulk transfer parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkConfig {
    /// Receiver window (bytes): the most data in flight.
    pub window: u64,
    /// Segment payload size.
    pub mss: u32,
}

/// Bulk transfer state (sender on the client, receiver on the server).
#[derive(Debug)]
pub struct Bulk {
    cfg: BulkConfig,
    snd_una: u64,
    snd_nxt: u64,
    cwnd: u64,
    ssthresh: u64,
    dupacks: u32,
    recover: Option<u64>,
    rto_gen: u64,
    rcv_nxt: u64,
    out_of_order: BTreeSet<u64>,
    unacked_segs: u32,
    delack_gen: u64,
}

impl Bulk {
    /// A connection before the first byte.
    pub fn new(cfg: BulkConfig) -> Bulk {
        Bulk {
            cfg,
            snd_una: 0,
            snd_nxt: 0,
            cwnd: INIT_CWND_SEGS * cfg.mss as u64,
            ssthresh: u64::MAX,
            dupacks: 0,
            recover: None,
            rto_gen: 0,
            rcv_nxt: 0,
            out_of_order: BTreeSet::new(),
            unacked_segs: 0,
            delack_gen: 0,
        }
    }

    fn mss(&self) -> u64 {
        self.cfg.mss as u64
    }

    /// The sending application starts writing at time 0.
    pub fn start(&mut self, _costs: &[Costs], out: &mut Vec<Action>) {
        out.push(Action::Timer {
            at: 0,
            tag: TAG_KICK,
        });
    }

    fn segment(&self, seq: u64, at: u64) -> Frame {
        Frame::with_payload(self.cfg.mss, TCP_HEADERS, at, Payload::Bulk { seq })
    }

    /// Sends what the window allows from `at`, `tx_ns` apart; returns how many.
    fn fill_window(&mut self, at: u64, tx_ns: u64, out: &mut Vec<Action>) -> u64 {
        let limit = self.cwnd.min(self.cfg.window);
        let mut n = 0;
        while self.snd_nxt + self.mss() - self.snd_una <= limit {
            n += 1;
            let t = at + n * tx_ns;
            out.push(Action::Send {
                host: CLIENT,
                at: t,
                frame: self.segment(self.snd_nxt, t),
            });
            self.snd_nxt += self.mss();
        }
        n
    }

    fn arm_rto(&mut self, now: u64, out: &mut Vec<Action>) {
        self.rto_gen += 1;
        out.push(Action::Timer {
            at: now + RTO_NS,
            tag: TAG_RTO | self.rto_gen,
        });
    }

    /// The first write, and the retransmission / delayed-ACK timers.
    pub fn on_timer(&mut self, tag: u64, now: u64, costs: &[Costs], out: &mut Vec<Action>) {
        match tag & TAG_MASK {
            TAG_KICK => {
                let n = self.cwnd.min(self.cfg.window) / self.mss();
                out.push(Action::Job {
                    host: CLIENT,
                    ready: now,
                    work: n * costs[CLIENT].tx_pkt_ns,
                    tag: TAG_KICK,
                });
            }
            TAG_RTO if tag & !TAG_MASK == self.rto_gen && self.snd_una < self.snd_nxt => {
                let flight = self.snd_nxt - self.snd_una;
                self.ssthresh = (flight / 2).max(2 * self.mss());
                self.cwnd = self.mss();
                self.snd_nxt = self.snd_una;
                self.recover = None;
                self.dupacks = 0;
                self.fill_window(now, 0, out);
                self.arm_rto(now, out);
            }
            TAG_DELACK if tag & !TAG_MASK == self.delack_gen && self.unacked_segs > 0 => {
                self.unacked_segs = 0;
                out.push(self.ack(now));
            }
            _ => {}
        }
    }

    /// The application's first write finished: the initial window goes out.
    pub fn on_job_done(&mut self, host: HostId, now: u64, out: &mut Vec<Action>) {
        if host == CLIENT && self.snd_nxt == 0 {
            self.fill_window(now, 0, out);
            self.arm_rto(now, out);
        }
    }

    fn ack(&self, at: u64) -> Action {
        Action::Send {
            host: SERVER,
            at,
            frame: Frame::with_payload(0, TCP_HEADERS, at, Payload::BulkAck { ack: self.rcv_nxt }),
        }
    }

    /// A data segment or an ACK reached a stack.
    pub fn on_rx(
        &mut self,
        rx: Rx<'_>,
        frame: &Frame,
        rec: &mut Recorder,
        out: &mut Vec<Action>,
    ) -> u64 {
        match frame.what {
            Payload::Bulk { seq } if rx.host == SERVER => self.receive(rx, seq, rec, out),
            Payload::BulkAck { ack } if rx.host == CLIENT => self.acked(rx, ack, out),
            _ => 0,
        }
    }

    fn receive(&mut self, rx: Rx<'_>, seq: u64, rec: &mut Recorder, out: &mut Vec<Action>) -> u64 {
        let tx = rx.costs.tx_pkt_ns;
        if seq != self.rcv_nxt {
            if seq > self.rcv_nxt {
                self.out_of_order.insert(seq);
            }
            out.push(self.ack(rx.end + tx));
            return tx;
        }
        let filled_a_hole = !self.out_of_order.is_empty();
        self.rcv_nxt += self.mss();
        rec.delivered(self.cfg.mss, rx.end);
        while self.out_of_order.remove(&self.rcv_nxt) {
            self.rcv_nxt += self.mss();
            rec.delivered(self.cfg.mss, rx.end);
        }
        self.unacked_segs += 1;
        if self.unacked_segs >= 2 || filled_a_hole {
            self.unacked_segs = 0;
            out.push(self.ack(rx.end + tx));
            return tx;
        }
        self.delack_gen += 1;
        out.push(Action::Timer {
            at: rx.end + DELACK_NS,
            tag: TAG_DELACK | self.delack_gen,
        });
        0
    }

    fn acked(&mut self, rx: Rx<'_>, ack: u64, out: &mut Vec<Action>) -> u64 {
        let tx = rx.costs.tx_pkt_ns;
        let mss = self.mss();
        let mut sent = 0;
        if ack > self.snd_una {
            let newly = ack - self.snd_una;
            self.snd_una = ack;
            // After a go-back-N retransmission the receiver may already hold data beyond it.
            self.snd_nxt = self.snd_nxt.max(ack);
            self.dupacks = 0;
            match self.recover {
                Some(r) if ack >= r => {
                    self.recover = None;
                    self.cwnd = self.ssthresh;
                }
                Some(_) => {
                    out.push(self.retransmit(rx.end + tx));
                    sent += 1;
                }
                None if self.cwnd < self.ssthresh => self.cwnd += newly,
                None => self.cwnd += (mss * mss / self.cwnd).max(1) * newly.div_ceil(mss),
            }
            self.arm_rto(rx.end, out);
        } else if ack == self.snd_una && self.snd_nxt > self.snd_una {
            self.dupacks += 1;
            if self.dupacks == 3 && self.recover.is_none() {
                let flight = self.snd_nxt - self.snd_una;
                self.ssthresh = (flight / 2).max(2 * mss);
                self.cwnd = self.ssthresh + 3 * mss;
                self.recover = Some(self.snd_nxt);
                out.push(self.retransmit(rx.end + tx));
                sent += 1;
            } else if self.recover.is_some() {
                self.cwnd += mss;
            }
        }
        sent += self.fill_window(rx.end + sent * tx, tx, out);
        sent * tx
    }

    fn retransmit(&self, at: u64) -> Action {
        Action::Send {
            host: CLIENT,
            at,
            frame: self.segment(self.snd_una, at),
        }
    }
}
