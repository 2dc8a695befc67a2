//! The event loop: host A (the modelled FreeBSD box) and its peer across the circuit.
//!
//! Data flows both ways (`iperf -d` runs two connections): `up` from A's writer to the peer,
//! `down` from the peer to A's reader. The peer is ideal — it reads and writes at once and
//! answers in no time — so every limit seen is A's. Each direction of the circuit is a FIFO
//! transmitter at the line rate followed by a fixed propagation delay.
//!
//! A receives into its em rx ring. With interrupts, a received frame (RDTR 0: at once) or a
//! transmit write-back (TXDW, `hw.em.tx_int_delay` after it) raises a cause; the interrupt
//! asserts when unmasked, at least one ITR interval after the previous one; the filter reads
//! ICR, masks, and queues the task, which takes up to `rx_process_limit` frames, cleans the
//! transmit ring and unmasks (`em_handle_rxtx`). With polling, the clock's `hardclock` hands
//! the netisr chunks per [`crate::freebsd::polling`], each an `em_poll` call taking up to
//! `cycles` frames. Every frame's protocol work runs in that kernel thread: a data segment is
//! appended for the reader (every second one ACKed), an ACK frees the writer's buffer and
//! lets `tcp_output` send more. The reader and writer are iperf's two threads: they copy
//! 8 KB at a time through `read`/`write`, block when there is nothing to read or no room,
//! and are woken by the protocol work.

mod em;
mod ends;

use super::cpu::{Class, Cpu, Ctx, Next};
use super::tcp::{Receiver, Segment, Sender};
use super::{Cycles, Mode, Params, StatClock};
use crate::cases::Ledger;
use crate::engine::queue::EventQueue;
use crate::engine::rng::Rng;
use crate::freebsd::polling::Polling;
use std::collections::VecDeque;

/// iperf's buffer: `-l` defaults to 8 KB for TCP.
const IPERF_LEN: u32 = 8192;
/// em's default rx descriptors.
const RX_RING: usize = 256;
/// `hw.em.tx_int_delay` / `tx_abs_int_delay` default: 64 ticks of 1.024 µs.
const EM_TIDV_NS: u64 = 65_536;
/// `net.inet.tcp.delacktime`: 100 ms.
const DELACK_NS: u64 = 100_000_000;

/// The two directions of the circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    /// From A to the peer.
    Up,
    /// From the peer to A.
    Down,
}

/// Which connection a segment belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conn {
    /// A's writer → the peer's reader (data up, ACKs down).
    Up,
    /// The peer's writer → A's reader (data down, ACKs up).
    Down,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Frame {
    conn: Conn,
    seg: Segment,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A context's step ends (if the version is still current).
    Step(u8, u64),
    /// The clock interrupt (LAPIC timer, or the i8254 for hardclock with the RTC).
    Tick,
    /// The RTC's statistics clock.
    Stat,
    /// A frame finished serialising on a direction.
    TxDone(u8),
    /// A frame reaches the far end of a direction.
    Arrive(u8),
    /// The TXDW delay timer expires.
    Txdw,
    /// A's NIC asserts its interrupt.
    Irq,
    /// A's delayed-ACK callout.
    Delack,
    /// The peer's delayed ACK.
    PeerDelack,
    /// The peer's iperf connects back and starts sending (`-d`).
    PeerStart,
}

/// One direction of the circuit.
#[derive(Debug, Default)]
struct Wire {
    queue: VecDeque<Frame>,
    sending: Option<Frame>,
    flight: VecDeque<Frame>,
    enqueued: u64,
    sent: u64,
}

/// What the network thread is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NetStep {
    /// Taking one frame; `left` more may follow in this pass (rx_process_limit or cycles).
    Frame { left: u32 },
    /// em_txeof.
    Txeof,
    /// em_enable_intr at the end of the task (interrupts).
    Enable,
    /// The em_poll call's fixed part (polling), before its frames.
    PollCall { cycles: u32 },
}

/// What a step does when it ends.
#[derive(Debug, Clone)]
enum Effect {
    Send(Frame),
    WakeReader,
    WakeWriter,
}

/// The whole simulation's state.
pub(super) struct Sim<'a> {
    p: &'a Params,
    c: Costs,
    q: EventQueue<Event>,
    now: u64,
    cpu: Cpu,
    nexts: [Option<Next>; 6],
    effects: [Vec<Effect>; 6],
    wires: [Wire; 2],
    rx_ring: VecDeque<Frame>,
    rx_drops: u64,
    rx_arrived: u64,
    rx_taken: u64,
    tx_done_dirty: u32,
    // Interrupt state.
    masked: bool,
    icr: bool,
    irq_scheduled: bool,
    last_irq: u64,
    irqs: u64,
    txdw_running: bool,
    task_again: bool,
    net: Option<NetStep>,
    polling: Option<Polling>,
    chunks: u64,
    // Clocks.
    lapic_hard: u64,
    lapic_stat: u64,
    samples: u64,
    busy_samples: u64,
    // TCP.
    up_tx: Sender,
    up_rx: Receiver,
    down_tx: Sender,
    down_rx: Receiver,
    delack_at: Option<u64>,
    peer_delack_at: Option<u64>,
    reader_awake: bool,
    writer_awake: bool,
    writer_resid: u32,
    read_bytes: u64,
}

/// Per-operation costs in nanoseconds at the host's clock: [`Cycles`] converted at `mhz`
/// (the bus read is already in ns).
#[derive(Debug, Clone, Copy)]
pub(super) struct Costs(Cycles);

impl Costs {
    pub fn at(cycles: Cycles, mhz: f64) -> Costs {
        let ns = |c: u64| (c as f64 * 1e3 / mhz.max(1.0)).round() as u64;
        Costs(Cycles {
            intr: ns(cycles.intr),
            pci_read_ns: cycles.pci_read_ns,
            switch: ns(cycles.switch),
            hardclock: ns(cycles.hardclock),
            syscall: ns(cycles.syscall),
            copy_per_kb: ns(cycles.copy_per_kb),
            rx_frame: ns(cycles.rx_frame),
            tcp_in_data: ns(cycles.tcp_in_data),
            tcp_in_ack: ns(cycles.tcp_in_ack),
            tcp_out: ns(cycles.tcp_out),
            txeof: ns(cycles.txeof),
            poll_call: ns(cycles.poll_call),
            user_per_call: ns(cycles.user_per_call),
        })
    }
}

impl std::ops::Deref for Costs {
    type Target = Cycles;
    fn deref(&self) -> &Cycles {
        &self.0
    }
}

/// What a run measured.
#[derive(Debug, Clone)]
pub(super) struct Measured {
    pub up_bytes: u64,
    pub down_bytes: u64,
    pub busy: super::super::CoreNs,
    pub top_busy: f64,
    pub irqs: u64,
    pub chunks: u64,
    pub switches: u64,
    pub final_burst: Option<u32>,
    pub events: u64,
    pub ledgers: Vec<Ledger>,
}

fn ctx_of(i: u8) -> Ctx {
    super::cpu::CTXS[i as usize]
}

fn dir_index(d: Dir) -> usize {
    d as usize
}

impl<'a> Sim<'a> {
    pub fn new(p: &'a Params, c: Costs) -> Sim<'a> {
        let tcp = p.tcp;
        let polling = match p.mode {
            Mode::Polling(cfg) => Some(Polling::new(cfg)),
            Mode::Interrupts { .. } => None,
        };
        Sim {
            p,
            c,
            q: EventQueue::new(),
            now: 0,
            cpu: Cpu::new(c.switch),
            nexts: [None; 6],
            effects: Default::default(),
            wires: [Wire::default(), Wire::default()],
            rx_ring: VecDeque::new(),
            rx_drops: 0,
            rx_arrived: 0,
            rx_taken: 0,
            tx_done_dirty: 0,
            masked: polling.is_some(),
            icr: false,
            irq_scheduled: false,
            last_irq: 0,
            irqs: 0,
            txdw_running: false,
            task_again: false,
            net: None,
            polling,
            chunks: 0,
            lapic_hard: 0,
            lapic_stat: 0,
            samples: 0,
            busy_samples: 0,
            up_tx: Sender::new(tcp, tcp.recvspace),
            up_rx: Receiver::new(tcp),
            down_tx: Sender::new(tcp, tcp.recvspace),
            down_rx: Receiver::new(tcp),
            delack_at: None,
            peer_delack_at: None,
            reader_awake: false,
            writer_awake: false,
            writer_resid: 0,
            read_bytes: 0,
        }
    }

    /// Runs to the end and measures.
    pub fn run(mut self) -> Measured {
        let mut rng = Rng::new(self.p.seed, 0);
        // The clock's phase against the start of the transfer is the run's random draw.
        let tick = self.tick_ns();
        self.q.schedule(rng.below(tick), Event::Tick);
        if self.p.statclock == StatClock::Rtc {
            self.q.schedule(rng.below(RTC_STAT_NS), Event::Stat);
        }
        // A's client starts; the peer's connects back (-d) within a round trip of the circuit.
        self.wake_writer();
        self.q
            .schedule(rng.below(2 * self.p.prop.0.max(1)), Event::PeerStart);
        self.dispatch();
        while let Some((t, ev)) = self.q.pop_until(self.p.duration.0) {
            self.now = t;
            self.handle(ev);
        }
        self.measured()
    }

    /// One event, then whoever should run runs (a stale step's end changes nothing).
    fn handle(&mut self, ev: Event) {
        if let Event::Step(_, v) = ev {
            if !self.cpu.current(v) {
                return;
            }
        }
        self.event(ev);
        self.dispatch();
    }

    fn event(&mut self, ev: Event) {
        match ev {
            Event::Step(i, v) => self.step_done(ctx_of(i), v),
            Event::Tick => self.tick(),
            Event::Stat => self.rtc_stat(),
            Event::TxDone(d) => self.tx_done(if d == 0 { Dir::Up } else { Dir::Down }),
            Event::Arrive(d) => self.arrive(if d == 0 { Dir::Up } else { Dir::Down }),
            Event::Txdw => self.txdw(),
            Event::Irq => self.irq(),
            Event::Delack => self.delack_fires(),
            Event::PeerDelack => self.peer_delack_fires(),
            Event::PeerStart => self.peer_send(),
        }
    }

    // --- the CPU ----------------------------------------------------------------------

    /// Gives `ctx` a step; it runs when the event's handling ends and it is the highest.
    fn start(&mut self, ctx: Ctx, ns: u64, class: Class, effects: Vec<Effect>) {
        self.cpu.start(self.now, ctx, ns, class);
        self.effects[ctx as usize] = effects;
    }

    fn dispatch(&mut self) {
        if let Some(n) = self.cpu.dispatch(self.now) {
            if self.nexts[n.ctx as usize] != Some(n) {
                self.q.schedule(n.at, Event::Step(n.ctx as u8, n.version));
                self.nexts[n.ctx as usize] = Some(n);
            }
        } else if self.idle_poll_wanted() {
            self.idle_poll();
            self.dispatch();
        }
    }

    fn step_done(&mut self, ctx: Ctx, version: u64) {
        if !self.cpu.current(version) {
            return;
        }
        self.cpu.finish(self.now, ctx);
        let effects = std::mem::take(&mut self.effects[ctx as usize]);
        // The context goes on first (a thread keeps the CPU for its next step), then the
        // step's frames leave and the threads it woke become runnable.
        match ctx {
            Ctx::Intr | Ctx::Softclock | Ctx::IdlePoll => {}
            Ctx::Net => self.net_next(),
            Ctx::Reader => self.reader_next(),
            Ctx::Writer => self.writer_next(),
        }
        for e in effects {
            self.apply(e);
        }
    }

    fn apply(&mut self, e: Effect) {
        match e {
            Effect::Send(f) => self.transmit(Dir::Up, f),
            Effect::WakeReader => self.wake_reader(),
            Effect::WakeWriter => self.wake_writer(),
        }
    }

    // --- clocks -----------------------------------------------------------------------

    /// The clock interrupt's period: the LAPIC timer at 2·HZ (`LAPIC_TIMER_HZ_DIVIDER`), or
    /// the i8254 counting `round(TIMER_FREQ / hz)` of its 1.193182 MHz (999.85 µs at HZ
    /// 1000: not a divisor of the RTC's 7812.5 µs, so the two clocks drift past each other).
    fn tick_ns(&self) -> u64 {
        match self.p.statclock {
            StatClock::Lapic => 1_000_000_000 / (2 * self.p.hz as u64),
            StatClock::Rtc => {
                let counts = (I8254_HZ as f64 / self.p.hz as f64).round();
                (counts * 1e9 / I8254_HZ as f64).round() as u64
            }
        }
    }

    /// The clock interrupt: hardclock every tick (i8254) or every second LAPIC tick, and with
    /// the LAPIC the statistics clock every `LAPIC_TIMER_STATHZ_DIVIDER`-th, sampling what
    /// the interrupt interrupted.
    fn tick(&mut self) {
        self.q.schedule(self.now + self.tick_ns(), Event::Tick);
        let mut hard = true;
        if self.p.statclock == StatClock::Lapic {
            let lapic_hz = 2 * self.p.hz as u64;
            self.lapic_hard += self.p.hz as u64;
            hard = self.lapic_hard >= lapic_hz;
            if hard {
                self.lapic_hard -= lapic_hz;
            }
            self.lapic_stat += lapic_hz / 15;
            if self.lapic_stat >= lapic_hz {
                self.lapic_stat -= lapic_hz;
                self.sample();
            }
        }
        let ns = self.c.intr + if hard { self.c.hardclock } else { 0 };
        self.intr_step(ns);
        if hard {
            self.hardclock();
        }
    }

    /// An interrupt handler's time (handlers do not nest: a busy handler extends).
    fn intr_step(&mut self, ns: u64) {
        if self.cpu.busy(Ctx::Intr) {
            self.cpu.finish(self.now, Ctx::Intr);
            let left = self.nexts[Ctx::Intr as usize].map_or(0, |n| n.at.saturating_sub(self.now));
            let effects = std::mem::take(&mut self.effects[Ctx::Intr as usize]);
            return self.start(Ctx::Intr, left + ns, Class::Irq, effects);
        }
        self.start(Ctx::Intr, ns, Class::Irq, Vec::new());
    }

    fn rtc_stat(&mut self) {
        self.q.schedule(self.now + RTC_STAT_NS, Event::Stat);
        self.sample();
        self.intr_step(self.c.intr);
    }

    fn sample(&mut self) {
        self.samples += 1;
        self.busy_samples += u64::from(self.cpu.sample(self.now));
    }

    /// `hardclock`: with polling, `hardclock_device_poll` schedules the netisr.
    fn hardclock(&mut self) {
        let scheduled = self.polling.as_mut().is_some_and(Polling::hardclock);
        if scheduled && self.net.is_none() {
            self.chunk();
        }
    }

    // --- the circuit ------------------------------------------------------------------

    fn wire_ns(&self, f: &Frame) -> u64 {
        // Frame plus FCS, preamble and inter-frame gap (IEEE 802.3 clause 4).
        let bytes = f.seg.frame_bytes() as u64 + 24;
        (bytes as f64 * 8.0 * 1e9 / self.p.link_bps).ceil() as u64
    }

    fn transmit(&mut self, d: Dir, f: Frame) {
        let w = &mut self.wires[dir_index(d)];
        w.enqueued += 1;
        w.queue.push_back(f);
        if w.sending.is_none() {
            self.send_next(d);
        }
    }

    fn send_next(&mut self, d: Dir) {
        let Some(f) = self.wires[dir_index(d)].queue.pop_front() else {
            return;
        };
        self.wires[dir_index(d)].sending = Some(f);
        let end = self.now + self.wire_ns(&f);
        self.q.schedule(end, Event::TxDone(d as u8));
        if d == Dir::Up {
            self.tx_writeback();
        }
    }

    fn tx_done(&mut self, d: Dir) {
        let w = &mut self.wires[dir_index(d)];
        let f = w.sending.take().expect("a frame on the wire");
        w.sent += 1;
        w.flight.push_back(f);
        self.q
            .schedule(self.now + self.p.prop.0, Event::Arrive(d as u8));
        self.send_next(d);
    }

    fn arrive(&mut self, d: Dir) {
        let f = self.wires[dir_index(d)]
            .flight
            .pop_front()
            .expect("in flight");
        match d {
            Dir::Up => self.peer_receives(f),
            Dir::Down => self.nic_receives(f),
        }
    }

    // --- results ----------------------------------------------------------------------

    fn measured(mut self) -> Measured {
        self.cpu.dispatch(self.p.duration.0);
        let up = &self.wires[0];
        let in_wire = up.queue.len() as u64 + u64::from(up.sending.is_some());
        Measured {
            up_bytes: self.up_rx.rcv_nxt,
            down_bytes: self.read_bytes,
            busy: self.cpu.acct(),
            top_busy: self.busy_samples as f64 / self.samples.max(1) as f64,
            irqs: self.irqs,
            chunks: self.chunks,
            switches: self.cpu.switches(),
            final_burst: self.polling.as_ref().map(Polling::burst),
            events: self.q.events(),
            ledgers: vec![
                Ledger {
                    stage: "nic",
                    offered: self.rx_arrived + self.rx_drops,
                    delivered: self.rx_taken,
                    dropped: self.rx_drops,
                    in_flight: self.rx_ring.len() as u64,
                },
                Ledger {
                    stage: "tx",
                    offered: up.enqueued,
                    delivered: up.sent,
                    dropped: 0,
                    in_flight: in_wire,
                },
            ],
        }
    }
}

/// The RTC's statistics clock period: 128 Hz.
const RTC_STAT_NS: u64 = 1_000_000_000 / 128;
/// The i8254's input clock (`TIMER_FREQ`).
const I8254_HZ: u64 = 1_193_182;
