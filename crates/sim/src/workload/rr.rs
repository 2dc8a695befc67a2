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

use super::{Action, HostId, Rx, CLIENT, SERVER};
use crate::host::costs::Costs;
use crate::metrics::recorder::Recorder;
use crate::nic::frame::{Frame, Payload};
use std::collections::VecDeque;

/// IPv4 (20) + TCP with timestamps (32) — Linux enables TCP timestamps by default.
pub const TCP_HEADERS: u32 = 52;

const TAG_FIRST: u64 = 0;
const TAG_RESPONSE: u64 = 1;
const TAG_SERVE: u64 = 2;

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

/// TCP_RR state.
#[derive(Debug)]
pub struct Rr {
    cfg: RrConfig,
    started: VecDeque<u64>,
    unacked: [u32; 2],
    next_msg: u32,
}

impl Rr {
    /// A fresh connection.
    pub fn new(cfg: RrConfig) -> Rr {
        Rr {
            cfg,
            started: VecDeque::new(),
            unacked: [0; 2],
            next_msg: 0,
        }
    }

    fn segments(&self, bytes: u32) -> u32 {
        bytes.div_ceil(self.cfg.mss).max(1)
    }

    fn job_work(&self, costs: &Costs, reply_bytes: u32) -> u64 {
        costs.app_ns + self.segments(reply_bytes) as u64 * costs.tx_pkt_ns
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

    fn send_message(&mut self, host: HostId, now: u64, request: bool, out: &mut Vec<Action>) {
        let bytes = if request {
            self.cfg.request
        } else {
            self.cfg.response
        };
        let msg = self.next_msg;
        self.next_msg = self.next_msg.wrapping_add(1);
        let n = self.segments(bytes);
        let mut left = bytes;
        for i in 0..n {
            let len = left.min(self.cfg.mss);
            left -= len;
            let what = Payload::Message {
                msg,
                last: i + 1 == n,
                request,
            };
            let frame = Frame::with_payload(len, TCP_HEADERS, now, what);
            out.push(Action::Send {
                host,
                at: now,
                frame,
            });
        }
    }

    /// A frame reached the stack of `rx.host`.
    pub fn on_rx(&mut self, rx: Rx<'_>, frame: &Frame, out: &mut Vec<Action>) -> u64 {
        let Payload::Message { last, request, .. } = frame.what else {
            return 0;
        };
        let h = rx.host;
        self.unacked[h] += 1;
        if last {
            self.unacked[h] = 0;
            let (reply, tag) = if request {
                (self.cfg.response, TAG_SERVE)
            } else {
                (self.cfg.request, TAG_RESPONSE)
            };
            out.push(Action::Job {
                host: h,
                ready: rx.end,
                work: self.job_work(rx.costs, reply),
                tag,
            });
            return 0;
        }
        if self.unacked[h] >= 2 {
            self.unacked[h] = 0;
            let at = rx.end + rx.costs.tx_pkt_ns;
            let frame = Frame::with_payload(0, TCP_HEADERS, at, Payload::Ack);
            out.push(Action::Send { host: h, at, frame });
            return rx.costs.tx_pkt_ns;
        }
        0
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
                self.send_message(SERVER, now, false, out)
            }
            (_, TAG_RESPONSE) => {
                if let Some(start) = self.started.pop_front() {
                    rec.transaction(start, now);
                    rec.delivered(self.cfg.response, now);
                }
                self.started.push_back(now);
                self.send_message(CLIENT, now, true, out);
            }
            _ => {
                self.started.push_back(now);
                self.send_message(CLIENT, now, true, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut rr = Rr::new(RrConfig {
            request: 4_000,
            response: 1,
            outstanding: 1,
            mss: 1448,
        });
        let mut out = Vec::new();
        let mut rec = Recorder::new(1_000_000_000);
        rr.on_job_done(CLIENT, TAG_FIRST, 0, &mut rec, &mut out);
        let segs: Vec<Frame> = out
            .iter()
            .filter_map(|a| match a {
                Action::Send { frame, .. } => Some(*frame),
                _ => None,
            })
            .collect();
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
                    what: Payload::Ack,
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
}
