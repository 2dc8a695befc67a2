//! The two ends of the transfer: the ideal peer, iperf's reader and writer on the host, and
//! the host's delayed-ACK callout.

use super::super::cpu::{Class, Ctx};
use super::super::tcp::{OnData, Segment, SND_LOWAT};
use super::{Conn, Dir, Effect, Event, Frame, Sim, DELACK_NS, IPERF_LEN};

impl Sim<'_> {
    // --- the peer (ideal) -------------------------------------------------------------

    pub(super) fn peer_receives(&mut self, f: Frame) {
        match f.conn {
            Conn::Up => {
                let act = self.up_rx.on_data(f.seg.len);
                self.up_rx.read(u32::MAX);
                match act {
                    OnData::AckNow => {
                        self.peer_delack_at = None;
                        self.peer_ack();
                    }
                    OnData::Delay => {
                        self.peer_delack_at = Some(self.now + DELACK_NS);
                        self.q.schedule(self.now + DELACK_NS, Event::PeerDelack);
                    }
                }
            }
            Conn::Down => {
                self.down_tx.on_ack(f.seg.ack, f.seg.win);
                self.peer_send();
            }
        }
    }

    pub(super) fn peer_ack(&mut self) {
        let seg = self.up_rx.ack();
        self.transmit(
            Dir::Down,
            Frame {
                conn: Conn::Up,
                seg,
            },
        );
    }

    pub(super) fn peer_delack_fires(&mut self) {
        if self.peer_delack_at.is_some_and(|at| at <= self.now) && self.up_rx.delack {
            self.peer_delack_at = None;
            self.peer_ack();
        }
    }

    /// The peer's writer always has data.
    pub(super) fn peer_send(&mut self) {
        self.down_tx.write(u32::MAX);
        for (seq, len) in self.down_tx.output() {
            let seg = Segment {
                seq,
                len,
                ack: 0,
                win: 0,
            };
            self.transmit(
                Dir::Down,
                Frame {
                    conn: Conn::Down,
                    seg,
                },
            );
        }
    }

    // --- callouts ---------------------------------------------------------------------

    /// A's delayed ACK, sent by `tcp_timer_delack` from the softclock thread.
    pub(super) fn delack_fires(&mut self) {
        let due = self.delack_at.is_some_and(|at| at <= self.now);
        if !due || !self.down_rx.delack || self.cpu.busy(Ctx::Softclock) {
            return;
        }
        self.delack_at = None;
        let seg = self.down_rx.ack();
        let f = Frame {
            conn: Conn::Down,
            seg,
        };
        self.start(
            Ctx::Softclock,
            self.c.tcp_out,
            Class::Net,
            vec![Effect::Send(f)],
        );
    }

    // --- iperf ------------------------------------------------------------------------

    pub(super) fn wake_reader(&mut self) {
        if self.reader_awake || self.down_rx.unread == 0 {
            return;
        }
        self.reader_awake = true;
        self.read_step();
    }

    /// One `read(8192)`: what is there, copied out; a window update if it opened enough.
    pub(super) fn read_step(&mut self) {
        let (n, update) = self.down_rx.read(IPERF_LEN);
        self.read_bytes += n as u64;
        let mut ns = self.c.syscall + self.c.user_per_call + n as u64 * self.c.copy_per_kb / 1024;
        let mut fx = Vec::new();
        if update {
            ns += self.c.tcp_out;
            let seg = self.down_rx.ack();
            fx.push(Effect::Send(Frame {
                conn: Conn::Down,
                seg,
            }));
        }
        self.start(Ctx::Reader, ns, Class::System, fx);
    }

    pub(super) fn reader_next(&mut self) {
        if self.down_rx.unread > 0 {
            return self.read_step();
        }
        self.reader_awake = false;
    }

    pub(super) fn wake_writer(&mut self) {
        if self.writer_awake {
            return;
        }
        self.writer_awake = true;
        self.write_step();
    }

    /// `sosend` of iperf's 8 KB buffer: a new `write` if the last one is done, then what
    /// fits copied in and sent as the window allows.
    pub(super) fn write_step(&mut self) {
        let mut ns = 0;
        if self.writer_resid == 0 {
            self.writer_resid = IPERF_LEN;
            ns += self.c.syscall + self.c.user_per_call;
        }
        let n = self.up_tx.write(self.writer_resid);
        self.writer_resid -= n;
        ns += n as u64 * self.c.copy_per_kb / 1024;
        let mut fx = Vec::new();
        ns += self.up_output(&mut fx);
        self.start(Ctx::Writer, ns, Class::System, fx);
    }

    /// `tcp_output` of the host's connection: the segments the window allows go out; returns
    /// their cost.
    pub(super) fn up_output(&mut self, fx: &mut Vec<Effect>) -> u64 {
        let segments = self.up_tx.output();
        for &(seq, len) in &segments {
            let seg = Segment {
                seq,
                len,
                ack: 0,
                win: 0,
            };
            fx.push(Effect::Send(Frame {
                conn: Conn::Up,
                seg,
            }));
        }
        segments.len() as u64 * self.c.tcp_out
    }

    pub(super) fn writer_next(&mut self) {
        let space = self.up_tx.space();
        if self.writer_resid == 0 || space >= SND_LOWAT.min(self.writer_resid) {
            return self.write_step();
        }
        self.writer_awake = false;
    }
}
