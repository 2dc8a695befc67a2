//! Host A's em NIC and its network thread: interrupt causes, the filter, the task
//! (`em_handle_rxtx`), the polling netisr's chunks, and the protocol work on each frame.

use super::super::cpu::{Class, Ctx};
use super::super::tcp::{OnData, SND_LOWAT};
use super::super::Mode;
use super::{Conn, Effect, Event, Frame, NetStep, Sim, DELACK_NS, EM_TIDV_NS, RX_RING};
use crate::freebsd::polling::{PollCmd, PollMore};
use nictune_core::units::Nanos;

impl Sim<'_> {
    // --- A's NIC ----------------------------------------------------------------------

    pub(super) fn nic_receives(&mut self, f: Frame) {
        if self.rx_ring.len() >= RX_RING {
            self.rx_drops += 1;
            return;
        }
        self.rx_ring.push_back(f);
        self.rx_arrived += 1;
        self.cause();
    }

    /// A transmit descriptor written back (the frame is in the NIC's FIFO): TXDW follows
    /// after TIDV, the absolute timer (TADV, also 64 ticks) capping a run of write-backs.
    pub(super) fn tx_writeback(&mut self) {
        self.tx_done_dirty += 1;
        if !self.txdw_running && self.polling.is_none() {
            self.txdw_running = true;
            self.q.schedule(self.now + EM_TIDV_NS, Event::Txdw);
        }
    }

    pub(super) fn txdw(&mut self) {
        self.txdw_running = false;
        self.cause();
    }

    /// An interrupt cause is latched in ICR.
    pub(super) fn cause(&mut self) {
        if self.polling.is_some() {
            return;
        }
        self.icr = true;
        self.arm();
    }

    pub(super) fn arm(&mut self) {
        if self.masked || self.irq_scheduled || !self.icr {
            return;
        }
        let gap = match self.p.mode {
            Mode::Interrupts { max_interrupt_rate } => {
                // DEFAULT_ITR = 1e9 / (rate · 256) in 256 ns units.
                (1_000_000_000 / (max_interrupt_rate.max(1) as u64 * 256)) * 256
            }
            Mode::Polling(_) => 0,
        };
        let at = self.now.max(self.last_irq + gap);
        self.irq_scheduled = true;
        self.q.schedule(at, Event::Irq);
    }

    /// The filter (`em_intr_fast`): read ICR, mask, queue the task.
    pub(super) fn irq(&mut self) {
        self.irq_scheduled = false;
        if self.masked {
            return;
        }
        self.last_irq = self.now;
        self.irqs += 1;
        self.icr = false;
        self.masked = true;
        self.intr_step(self.c.intr + self.c.pci_read_ns);
        if self.net.is_none() {
            self.net_begin(NetStep::Frame {
                left: self.rx_limit(),
            });
        } else {
            self.task_again = true;
        }
    }

    // --- the network thread -----------------------------------------------------------

    /// Frames one task pass may take.
    pub(super) fn rx_limit(&self) -> u32 {
        self.p.rx_process_limit.get().unwrap_or(u32::MAX)
    }

    pub(super) fn net_begin(&mut self, s: NetStep) {
        self.net = Some(s);
        let (ns, effects) = self.net_work(s);
        self.start(Ctx::Net, ns, Class::Net, effects);
    }

    /// The cost and the effects of a network step, applying its state changes now.
    pub(super) fn net_work(&mut self, s: NetStep) -> (u64, Vec<Effect>) {
        match s {
            NetStep::Frame { .. } => match self.rx_ring.pop_front() {
                Some(f) => {
                    self.rx_taken += 1;
                    self.protocol(f)
                }
                None => (0, Vec::new()),
            },
            NetStep::Txeof => {
                let n = std::mem::take(&mut self.tx_done_dirty) as u64;
                (n * self.c.txeof, Vec::new())
            }
            NetStep::Enable => (0, Vec::new()),
            NetStep::PollCall { .. } => (self.c.poll_call, Vec::new()),
        }
    }

    /// What the stack does with a received frame.
    pub(super) fn protocol(&mut self, f: Frame) -> (u64, Vec<Effect>) {
        let mut ns = self.c.rx_frame;
        let mut fx = Vec::new();
        match f.conn {
            Conn::Down => {
                ns += self.c.tcp_in_data;
                match self.down_rx.on_data(f.seg.len) {
                    OnData::AckNow => {
                        ns += self.c.tcp_out;
                        self.delack_at = None;
                        let seg = self.down_rx.ack();
                        fx.push(Effect::Send(Frame {
                            conn: Conn::Down,
                            seg,
                        }));
                    }
                    OnData::Delay => {
                        self.delack_at = Some(self.now + DELACK_NS);
                        self.q.schedule(self.now + DELACK_NS, Event::Delack);
                    }
                }
                if !self.reader_awake {
                    fx.push(Effect::WakeReader);
                }
            }
            Conn::Up => {
                ns += self.c.tcp_in_ack;
                self.up_tx.on_ack(f.seg.ack, f.seg.win);
                ns += self.up_output(&mut fx);
                if !self.writer_awake && self.up_tx.space() >= SND_LOWAT {
                    fx.push(Effect::WakeWriter);
                }
            }
        }
        (ns, fx)
    }

    /// The network thread's next step, or its end.
    pub(super) fn net_next(&mut self) {
        let Some(s) = self.net else { return };
        let next = match s {
            NetStep::Frame { left } if left > 1 && !self.rx_ring.is_empty() => {
                Some(NetStep::Frame { left: left - 1 })
            }
            NetStep::Frame { .. } if self.polling.is_none() && !self.rx_ring.is_empty() => {
                // rx_process_limit reached with frames left: em_rxeof says so and the task
                // queues itself again.
                self.task_again = true;
                Some(NetStep::Txeof)
            }
            NetStep::Frame { .. } | NetStep::PollCall { cycles: 0 } => Some(NetStep::Txeof),
            NetStep::PollCall { cycles } if !self.rx_ring.is_empty() => {
                Some(NetStep::Frame { left: cycles })
            }
            NetStep::PollCall { .. } => Some(NetStep::Txeof),
            NetStep::Txeof if self.polling.is_some() => return self.poll_more(),
            NetStep::Txeof => Some(NetStep::Enable),
            NetStep::Enable => return self.task_end(),
        };
        if let Some(n) = next {
            self.net_begin(n);
        }
    }

    /// `em_enable_intr` ran: the task is over unless queued again meanwhile.
    pub(super) fn task_end(&mut self) {
        self.net = None;
        self.masked = false;
        if std::mem::take(&mut self.task_again) {
            return self.net_begin(NetStep::Frame {
                left: self.rx_limit(),
            });
        }
        self.arm();
    }

    /// `netisr_poll`: the next chunk of this tick, if any.
    pub(super) fn chunk(&mut self) {
        let now = Nanos(self.now);
        let Some(c) = self.polling.as_mut().and_then(|p| p.netisr_poll(now)) else {
            self.net = None;
            return;
        };
        self.chunks += 1;
        let mut ns_extra = 0;
        if c.cmd == PollCmd::PollAndCheckStatus {
            ns_extra = self.c.pci_read_ns;
        }
        self.net = Some(NetStep::PollCall { cycles: c.cycles });
        self.start(
            Ctx::Net,
            self.c.poll_call + ns_extra,
            Class::Net,
            Vec::new(),
        );
    }

    /// `netisr_pollmore` after the chunk's work.
    pub(super) fn poll_more(&mut self) {
        let now = Nanos(self.now);
        match self.polling.as_mut().map(|p| p.netisr_pollmore(now)) {
            Some(PollMore::NextChunk | PollMore::Missed) => self.chunk(),
            _ => self.net = None,
        }
    }

    pub(super) fn idle_poll_wanted(&self) -> bool {
        matches!(self.p.mode, Mode::Polling(cfg) if cfg.idle_poll) && self.net.is_none()
    }

    /// The idle thread's `em_poll(POLL_ONLY, each_burst)`.
    pub(super) fn idle_poll(&mut self) {
        let Mode::Polling(cfg) = self.p.mode else {
            return;
        };
        let mut ns = self.c.poll_call;
        let mut fx = Vec::new();
        for _ in 0..cfg.each_burst {
            let Some(f) = self.rx_ring.pop_front() else {
                break;
            };
            self.rx_taken += 1;
            let (n, e) = self.protocol(f);
            ns += n;
            fx.extend(e);
        }
        ns += std::mem::take(&mut self.tx_done_dirty) as u64 * self.c.txeof;
        self.start(Ctx::IdlePoll, ns, Class::System, fx);
    }
}
