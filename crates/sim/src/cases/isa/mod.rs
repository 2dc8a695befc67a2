//! Case 4: 1990s ISA Ethernet cards on a 40 MHz 486 (`seed-isa-ttcp`, `seed-isa-nfs`).
//!
//! Mechanisms: the card's on-board receive ring after the transmit reservation and the ISA
//! bus that empties it ([`crate::bus`]); a 10 Mbit/s half-duplex segment shared by both
//! directions; a fast peer (TTCP sender or NFS server); the 486 receiving.
//!
//! The 486's interrupt handler copies each frame off the card across the ISA bus and frees its
//! pages at once; every register access and copy it makes on the way is counted from the Linux
//! 8390 driver of the HOWTO's era and timed on the bus clock ([`driver`]). Protocol work
//! (TCP/UDP/IP, the copy to the application, ACKs and requests it sends) runs at lower
//! priority and is preempted by the next interrupt. A frame that finds the ring full is lost.
//! TCP ([`tcp`]): the peer is a 4.3BSD-Reno sender (slow start, fast retransmit and recovery,
//! retransmission timeout on the 500 ms slow timer) limited to `tcp_window`; the 486's Linux
//! receiver keeps out-of-order segments, ACKs every second segment in order and every
//! out-of-order one at once. NFS: the client keeps `outstanding` read requests in flight; a
//! reply is one UDP datagram sent as back-to-back IP fragments, lost entirely if one fragment
//! is lost, and re-requested after the NFS timeout.

pub mod driver;
pub mod tcp;

use super::{cpu_split, CoreNs, Ledger};
use crate::bus::{CardAccess, CardBuffer, IsaBus, IsaWidth, TX_RESERVED};
use crate::engine::queue::EventQueue;
use crate::engine::rng::Rng;
use nictune_core::metrics::{HostMetrics, Metrics};
use nictune_core::units::{Bytes, Nanos};
use std::collections::VecDeque;

/// Wire time of one byte at 10 Mbit/s.
const NS_PER_BYTE: u64 = 800;
/// TCP payload per full segment (1500 MTU − 40 bytes of headers).
pub const MSS: u64 = 1460;
/// Ethernet + IP + TCP headers of a data frame.
const DATA_OVERHEAD: u64 = 54;
/// Segments one TTCP `read()` takes at most: its default 8192-byte buffer (`-l`) holds five
/// full segments (the model reads whole segments).
const TTCP_READ_SEGMENTS: u64 = 5;
/// IP fragment payload per full frame.
const FRAG_PAYLOAD: u64 = 1480;
/// RPC reply header + NFS read result (status, attributes, count) + UDP header, about.
const NFS_REPLY_HEADERS: u64 = 128;

/// Host costs on the 486/40 and the peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IsaCosts {
    /// CPU time of one interrupt on the 486 besides its bus cycles: entry (`SAVE_ALL`),
    /// dispatch, the bottom-half check and exit. 1990s interrupt overheads were tens of µs
    /// (sim-notes §4.3: 21 µs per interrupt in 1998, "a few tens of µs" in 1996); assumed
    /// 25 µs. The interrupt controller and 8390 accesses are bus cycles ([`driver`]).
    pub irq_cpu: Nanos,
    /// CPU work of the handler per received frame besides its bus cycles (`alloc_skb`,
    /// `netif_rx`, the `ei_receive` loop). Assumed 15 µs.
    pub rx_frame_cpu: Nanos,
    /// Protocol work per received data segment or fragment in the network bottom half
    /// (IP and TCP input, checksum, queueing on the socket). Calibrated: TTCP 740 kB/s at
    /// 6.7 MHz (seed-cases.md Case 4).
    pub proto_frame: Nanos,
    /// The TTCP receiver's `read()` per segment: `tcp_read` copying 1460 bytes to user space
    /// (`memcpy_tofs`) and the syscall's share, in process context below the bottom half.
    /// Assumed 100 µs (a 486/40 copying at ≈15 MB/s, the order of its memory bandwidth \[U\]).
    pub app_read: Nanos,
    /// Building one small frame (ACK, NFS request) and handing it to the driver, besides the
    /// driver's bus cycles and its transmit-done interrupt. Assumed 100 µs (a protocol output
    /// pass on a 486).
    pub tx_frame: Nanos,
    /// The peer's gap between two frames it sends back to back (its own per-frame cost and
    /// carrier deference). Calibrated: TTCP 1075 kB/s at 26.7 MHz, where the wire limits.
    pub peer_gap: Nanos,
    /// NFS client retransmission timeout (`timeo=7`, 0.7 s, the classic default).
    pub nfs_timeout: Nanos,
    /// NFS server turnaround from request to first reply fragment (a warm cache). Assumed
    /// 200 µs.
    pub server_turnaround: Nanos,
    /// The driver's receiver-overrun recovery, run in the interrupt handler with the receiver
    /// stopped: Linux `lib8390.c#ei_rx_overrun` stops the 8390 and busy-waits at least 10 ms
    /// ("NS says 1.6ms total … We wait at least 10ms"; the 1.x/2.0 drivers spin on jiffies for
    /// one to two 10 ms ticks) before it restarts it.
    pub overrun_recovery: Nanos,
}

impl Default for IsaCosts {
    fn default() -> Self {
        IsaCosts {
            irq_cpu: Nanos::from_micros(25),
            rx_frame_cpu: Nanos::from_micros(15),
            proto_frame: Nanos::from_micros(256),
            app_read: Nanos::from_micros(100),
            tx_frame: Nanos::from_micros(100),
            peer_gap: Nanos::from_micros(95),
            nfs_timeout: Nanos::from_millis(700),
            server_turnaround: Nanos::from_micros(200),
            overrun_recovery: Nanos::from_millis(10),
        }
    }
}

/// What the peer sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsaWorkload {
    /// A TTCP stream into the 486 with this receive window.
    Ttcp {
        /// TCP window (`route add … window W`).
        window: Bytes,
    },
    /// NFS reads of `size` bytes, `outstanding` at a time.
    Nfs {
        /// rsize: 1024, 2048, 4096 or 8192.
        size: Bytes,
        /// Read requests in flight (read-ahead by the client's block I/O daemons).
        outstanding: u32,
    },
}

/// Scenario parameters.
#[derive(Debug, Clone)]
pub struct IsaParams {
    /// Card data width (8-bit WD8003EP in the report).
    pub width: IsaWidth,
    /// How the host reaches the card's RAM (shared memory on the WD8003EP).
    pub access: CardAccess,
    /// ISA bus clock in Hz.
    pub clock_hz: u64,
    /// On-card RAM (8 kB for 8-bit, 16 kB for 16-bit cards).
    pub card_ram: Bytes,
    /// Card RAM the driver keeps for transmit buffers (3 kB).
    pub tx_reserved: Bytes,
    /// Wait states the card adds to every bus cycle beyond the standard ISA timing.
    pub extra_wait_states: u64,
    /// Workload.
    pub workload: IsaWorkload,
    /// Simulated time.
    pub duration: Nanos,
    /// Costs.
    pub costs: IsaCosts,
    /// Seed of the run. The model has no other randomness: the seed draws the moment the
    /// workload starts within the first full frame time, the one thing the report leaves open
    /// (the phase between the peer's sends and the run's clock).
    pub seed: u64,
}

impl IsaParams {
    /// TTCP on a card of `width` at `clock_hz` with `window` (`seed-isa-ttcp` uses 16 KB).
    pub fn ttcp(width: IsaWidth, clock_hz: u64, window: Bytes) -> IsaParams {
        IsaParams {
            width,
            access: CardAccess::SharedMemory,
            clock_hz,
            card_ram: width.card_ram(),
            tx_reserved: TX_RESERVED,
            extra_wait_states: 0,
            workload: IsaWorkload::Ttcp { window },
            duration: Nanos::from_secs(10),
            costs: IsaCosts::default(),
            seed: 1,
        }
    }

    /// NFS reads of `size` on a card of `width` at `clock_hz`, four reads in flight (four
    /// block I/O daemons, the classic default of BSD-derived NFS clients \[U\]).
    pub fn nfs(width: IsaWidth, clock_hz: u64, size: Bytes) -> IsaParams {
        IsaParams {
            workload: IsaWorkload::Nfs {
                size,
                outstanding: 4,
            },
            ..IsaParams::ttcp(width, clock_hz, Bytes(0))
        }
    }

    /// `seed-isa-nfs`: the HOWTO's old WD8003E at 8 MHz.
    ///
    /// The original WD8003E's shared memory is slower than standard 8-bit ISA timing: NetBSD
    /// we(4) gives "typically only about 1MB/second" for it (and about 4 MB/s for the 16-bit
    /// 8013 boards). At 8 MHz that is 8 bus clocks per byte, i.e. the standard 6 (2 clocks + 4
    /// default wait states) plus 2 wait states the card adds through IOCHRDY: 1.52 ms to copy
    /// a full frame, slower than full frames arrive back to back (1.23 ms). With the standard
    /// 6 clocks (1.14 ms + ≈70 µs of handler CPU and register cycles) the card would keep up
    /// and no NFS size would overflow. 16-bit cards keep standard timing (3 clocks per word: 5.3 MB/s at 8 MHz,
    /// the same order as we(4)'s "about 4MB/second").
    pub fn seed_nfs(width: IsaWidth, size: Bytes) -> IsaParams {
        let ws = if width == IsaWidth::Bits8 { 2 } else { 0 };
        IsaParams {
            extra_wait_states: ws,
            ..IsaParams::nfs(width, 8_000_000, size)
        }
    }
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct IsaOutcome {
    /// Shared metrics (host `pc486`).
    pub metrics: Metrics,
    /// Application payload per second in KB/s (1024 bytes, as TTCP prints it).
    pub kbytes_per_sec: f64,
    /// Overruns: frames that found the card's receive ring full, each stopping the receiver
    /// for the driver's recovery.
    pub card_overflows: u64,
    /// Frames that arrived while the receiver was stopped for an overrun recovery.
    pub card_missed: u64,
    /// Peer retransmissions by timeout (TCP retransmission timeouts or NFS re-requests).
    pub retransmissions: u64,
    /// TCP fast retransmits (third duplicate ACK).
    pub fast_retransmits: u64,
    /// Events processed.
    pub events: u64,
    /// The packet ledger of the frames sent to the 486 (the wire, the card, the backlog).
    pub ledgers: Vec<Ledger>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// TCP data segment `seq` (in segments).
    Data(u64),
    /// Cumulative ACK: all segments below the first, and the window offered beyond it.
    Ack(u64, u64),
    /// NFS read request for reply `id`.
    Request(u64),
    /// Fragment `idx` of reply `id`.
    Fragment { id: u64, idx: u32 },
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    to_pc: bool,
    bytes: u64,
    kind: Kind,
}

/// What can happen on the segment and the two hosts: the engine queue orders these by
/// `(time, seq)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The frame on the wire has been sent in full.
    WireDone,
    /// The 486's current unit of work ends.
    CpuDone,
    /// The peer may send its next frame.
    PeerFree,
    /// The peer's retransmission timer.
    Timer,
    /// A reply the server prepared is ready to go.
    ReplyReady,
    /// The workload starts (NFS: the client sends its first requests).
    Start,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Idle,
    Drain,
    /// Protocol work on the backlog's head segment.
    Proto,
    /// Building and handing a small frame to the card.
    Tx,
    /// The TTCP application's `read()`.
    App,
    /// The handler's overrun recovery (receiver stopped, busy wait).
    Recover,
}

struct Sim<'a> {
    p: &'a IsaParams,
    bus: IsaBus,
    nic: driver::Card,
    agenda: EventQueue<Event>,
    now: u64,
    // The segment.
    wire: VecDeque<Frame>,
    wire_busy: bool,
    // The card and the 486.
    card: CardBuffer,
    card_meta: VecDeque<Kind>,
    backlog: VecDeque<Kind>,
    unit: Unit,
    unit_end: u64,
    /// A bottom-half unit (protocol or transmit) an interrupt preempted, and its rest.
    saved: Option<(Unit, u64)>,
    /// The rest of an application read an interrupt preempted.
    app_rest: Option<u64>,
    /// Segments the application's current read takes.
    app_taking: u64,
    tx_debt: u64,
    acct: CoreNs,
    // TCP receiver.
    rx: tcp::Receiver,
    unacked: u64,
    // TCP peer.
    reno: tcp::Reno,
    /// A segment the peer must resend before anything new (fast retransmit).
    resend: Option<u64>,
    /// When the peer's retransmission timer fires, if it runs.
    rto_at: Option<u64>,
    /// Phase of the peer's 500 ms slow timer.
    slow_tick_phase: u64,
    peer_busy: bool,
    // NFS.
    next_id: u64,
    waiting: Vec<(u64, u64, u32)>,
    replies_pending: VecDeque<(u64, u64)>,
    /// The frames of every reply (fixed for a run).
    reply_frames: Vec<u64>,
    replies_out: VecDeque<Frame>,
    // Results.
    irqs: u64,
    /// Frames put on the wire towards the 486.
    to_pc: u64,
    /// Frames the 486's protocol code finished.
    processed: u64,
    delivered: u64,
    retransmissions: u64,
}

/// The TTCP receiver's window in segments (1 for NFS, which does not use it).
fn window_segments(workload: IsaWorkload) -> u64 {
    match workload {
        IsaWorkload::Ttcp { window } => (window.0 / MSS.min(window.0).max(1)).max(1),
        IsaWorkload::Nfs { .. } => 1,
    }
}

/// The frames of one NFS read reply: the datagram cut into IP fragments (none for TTCP).
fn reply_frames(workload: IsaWorkload) -> Vec<u64> {
    let IsaWorkload::Nfs { size, .. } = workload else {
        return vec![];
    };
    let mut left = size.0 + NFS_REPLY_HEADERS;
    let mut frames = Vec::new();
    while left > 0 {
        let chunk = left.min(FRAG_PAYLOAD);
        frames.push(chunk + 34); // Ethernet 14 + IP 20
        left -= chunk;
    }
    frames
}

fn wire_time(bytes: u64) -> u64 {
    (bytes.max(60) + 4 + 20) * NS_PER_BYTE
}

impl Sim<'_> {
    fn send(&mut self, f: Frame) {
        self.to_pc += u64::from(f.to_pc);
        self.wire.push_back(f);
        if !self.wire_busy {
            self.start_wire();
        }
    }

    fn start_wire(&mut self) {
        if let Some(f) = self.wire.front() {
            self.wire_busy = true;
            self.agenda
                .schedule(self.now + wire_time(f.bytes), Event::WireDone);
        }
    }

    fn wire_done(&mut self) {
        let f = self.wire.pop_front().expect("a frame was on the wire");
        self.wire_busy = false;
        self.start_wire();
        if f.to_pc {
            self.card_receive(f);
        } else {
            self.peer_receive(f);
        }
        self.peer_try();
    }

    fn card_receive(&mut self, f: Frame) {
        if !self.card.accept(Bytes(f.bytes)) {
            return;
        }
        self.card_meta.push_back(f.kind);
        match self.unit {
            Unit::Drain | Unit::Recover => {}
            Unit::Proto | Unit::Tx => {
                self.saved = Some((self.unit, self.unit_end - self.now));
                self.irqs += 1;
                self.start_drain(true);
            }
            Unit::App => {
                self.app_rest = Some(self.unit_end - self.now);
                self.irqs += 1;
                self.start_drain(true);
            }
            Unit::Idle => {
                self.irqs += 1;
                self.start_drain(true);
            }
        }
    }

    fn run_unit(&mut self, unit: Unit, d: u64) {
        self.unit = unit;
        self.unit_end = self.now + d;
        self.agenda.schedule(self.unit_end, Event::CpuDone);
    }

    /// The handler takes the oldest frame off the card; the first frame of an interrupt also
    /// pays the interrupt's entry and its fixed register accesses.
    fn start_drain(&mut self, first: bool) {
        let bytes = self.card.front().expect("card has a frame").0;
        let mut work = self.nic.rx_frame(bytes);
        let mut cpu = self.p.costs.rx_frame_cpu.0;
        if first {
            work = work.and(self.nic.rx_interrupt());
            cpu += self.p.costs.irq_cpu.0;
        }
        let d = cpu + self.bus.time(work).0;
        self.acct.irq += d;
        self.run_unit(Unit::Drain, d);
    }

    fn cpu_done(&mut self) {
        if self.now != self.unit_end {
            return; // a preempted protocol unit's stale completion
        }
        match self.unit {
            Unit::Drain => {
                self.card.release_front();
                let kind = self.card_meta.pop_front().expect("meta follows the card");
                self.backlog.push_back(kind);
                if self.card.queued() > 0 {
                    self.start_drain(false);
                } else if self.card.stopped() {
                    // Linux's handler drains the ring (ei_receive) and then finds the
                    // overwrite warning in the status register: ei_rx_overrun.
                    let d = self.p.costs.overrun_recovery.0;
                    self.acct.irq += d;
                    self.run_unit(Unit::Recover, d);
                } else {
                    self.resume_proto();
                }
            }
            Unit::Recover => {
                self.card.restart();
                self.resume_proto();
            }
            Unit::Proto => {
                let kind = self
                    .backlog
                    .pop_front()
                    .expect("a segment was being processed");
                self.unit = Unit::Idle;
                self.processed += 1;
                self.protocol(kind);
                self.resume_proto();
            }
            Unit::Tx => self.resume_proto(),
            Unit::App => {
                self.unit = Unit::Idle;
                self.app_done();
                self.resume_proto();
            }
            Unit::Idle => {}
        }
    }

    fn resume_proto(&mut self) {
        if let Some((unit, rest)) = self.saved.take() {
            return self.run_unit(unit, rest);
        }
        if self.tx_debt > 0 {
            let d = std::mem::take(&mut self.tx_debt);
            return self.run_unit(Unit::Tx, d);
        }
        if !self.backlog.is_empty() {
            // The bottom half runs before the interrupted process gets the CPU back.
            let d = self.p.costs.proto_frame.0;
            self.acct.softirq += d;
            return self.run_unit(Unit::Proto, d);
        }
        if let Some(rest) = self.app_rest.take() {
            return self.run_unit(Unit::App, rest);
        }
        if let Some(n) = self.rx.readable(TTCP_READ_SEGMENTS) {
            self.app_taking = n;
            let d = n * self.p.costs.app_read.0;
            self.acct.user += d;
            return self.run_unit(Unit::App, d);
        }
        self.unit = Unit::Idle;
    }

    /// The application's read finished: the data is delivered and its buffers freed; Linux
    /// 1.2 `cleanup_rbuf` then sends a window update at once if the free space exceeds what
    /// the peer was last told by more than one frame (or the peer was told zero).
    fn app_done(&mut self) {
        let n = std::mem::take(&mut self.app_taking);
        self.delivered += n * self.segment();
        if self.rx.consume(n) {
            self.unacked = 0;
            self.send_ack();
        }
    }

    fn send_ack(&mut self) {
        let window = self.rx.advertise();
        self.pc_send(60, Kind::Ack(self.rx.expected, window));
    }

    /// Puts a small frame on the wire and owes the 486 the work of building it, the driver's
    /// bus cycles to hand it to the card, and the transmit-done interrupt that follows, which
    /// run next (the frame leaves when the protocol decides to send it; its CPU time follows
    /// at once).
    fn pc_send(&mut self, bytes: u64, kind: Kind) {
        let work = self.nic.tx_frame(bytes).and(self.nic.tx_done());
        let d = self.p.costs.tx_frame.0 + self.p.costs.irq_cpu.0 + self.bus.time(work).0;
        self.acct.softirq += d;
        self.tx_debt += d;
        self.send(Frame {
            to_pc: false,
            bytes,
            kind,
        });
    }

    fn protocol(&mut self, kind: Kind) {
        match kind {
            Kind::Data(seq) => {
                let r = self.rx.on_segment(seq);
                self.unacked += r.delivered;
                if r.ack_now || self.unacked >= 2 || self.backlog.is_empty() {
                    self.unacked = 0;
                    self.send_ack();
                }
            }
            Kind::Fragment { id, idx } => self.fragment(id, idx),
            Kind::Ack(..) | Kind::Request(_) => {}
        }
    }

    // --- TCP peer -------------------------------------------------------------------

    fn peer_receive(&mut self, f: Frame) {
        match f.kind {
            Kind::Ack(a, window) => self.peer_ack(a, window),
            Kind::Request(id) => {
                // The reply is ready after the server's turnaround; it then queues behind any
                // reply the server is still sending.
                let at = self.now + self.p.costs.server_turnaround.0;
                self.replies_pending.push_back((at, id));
                self.agenda.schedule(at, Event::ReplyReady);
            }
            // Only the 486 sends to the peer, and it sends ACKs and requests.
            Kind::Data(_) | Kind::Fragment { .. } => {}
        }
    }

    fn peer_ack(&mut self, ack: u64, window: u64) {
        match self.reno.on_ack(ack, window) {
            tcp::AckOutcome::Advanced => {
                // BSD restarts the retransmission timer on every ACK of new data and stops it
                // when everything is acknowledged.
                self.rto_at = None;
                if self.reno.outstanding() {
                    self.arm_rto();
                }
            }
            tcp::AckOutcome::FastRetransmit => self.resend = Some(self.reno.snd_una),
            tcp::AckOutcome::Nothing => {}
        }
    }

    /// Arms the retransmission timer: it fires at the `rto_ticks`-th slow-timer tick after now.
    fn arm_rto(&mut self) {
        let t = self.now.saturating_sub(self.slow_tick_phase) / tcp::SLOW_TICK_NS;
        let at = self.slow_tick_phase + (t + self.reno.rto_ticks()) * tcp::SLOW_TICK_NS;
        let at = if at <= self.now {
            at + tcp::SLOW_TICK_NS
        } else {
            at
        };
        self.rto_at = Some(at);
        self.agenda.schedule(at, Event::Timer);
    }

    /// The TTCP sender's segment: a full MSS, or the whole window when the receiver offers
    /// less than one (the sender may send what the window allows, RFC 1122 §4.2.3.4).
    fn segment(&self) -> u64 {
        match self.p.workload {
            IsaWorkload::Ttcp { window } => MSS.min(window.0).max(1),
            IsaWorkload::Nfs { .. } => MSS,
        }
    }

    fn peer_try(&mut self) {
        if self.peer_busy {
            return;
        }
        let next = match self.p.workload {
            IsaWorkload::Ttcp { .. } => {
                let seq = self.resend.take().or_else(|| self.reno.next_to_send());
                if seq.is_some() && self.rto_at.is_none() {
                    self.arm_rto();
                }
                seq.map(|seq| Frame {
                    to_pc: true,
                    bytes: self.segment() + DATA_OVERHEAD,
                    kind: Kind::Data(seq),
                })
            }
            IsaWorkload::Nfs { .. } => self.replies_out.pop_front(),
        };
        if let Some(f) = next {
            self.peer_busy = true;
            // The fragments of one datagram leave in one pass of the server's IP output, back
            // to back on the wire; the per-send gap applies between datagrams and segments.
            let last_fragment = |idx: u32| idx as usize + 1 == self.reply_frames.len();
            let gap = match f.kind {
                Kind::Fragment { idx, .. } if !last_fragment(idx) => 0,
                Kind::Fragment { .. } | Kind::Data(_) | Kind::Ack(..) | Kind::Request(_) => {
                    self.p.costs.peer_gap.0
                }
            };
            let free = self.now + wire_time(f.bytes) + gap;
            self.send(f);
            self.agenda.schedule(free, Event::PeerFree);
        }
    }

    fn timer(&mut self) {
        match self.p.workload {
            IsaWorkload::Ttcp { .. } => {
                if self.rto_at != Some(self.now) {
                    return; // re-armed or stopped since this expiry was scheduled
                }
                self.rto_at = None;
                self.reno.on_timeout();
                self.resend = None;
                self.arm_rto();
                self.peer_try();
            }
            IsaWorkload::Nfs { .. } => self.nfs_timeouts(),
        }
    }

    // --- NFS ------------------------------------------------------------------------

    fn queue_reply(&mut self, id: u64) {
        for (idx, &bytes) in self.reply_frames.iter().enumerate() {
            self.replies_out.push_back(Frame {
                to_pc: true,
                bytes,
                kind: Kind::Fragment {
                    id,
                    idx: idx as u32,
                },
            });
        }
    }

    /// The NFS client sends its first `outstanding` reads.
    fn start_nfs(&mut self) {
        if let IsaWorkload::Nfs { outstanding, .. } = self.p.workload {
            for _ in 0..outstanding.max(1) {
                let id = self.next_id;
                self.next_id += 1;
                self.request(id);
            }
        }
    }

    fn request(&mut self, id: u64) {
        let deadline = self.now + self.p.costs.nfs_timeout.0;
        self.waiting.push((id, deadline, 0));
        self.agenda.schedule(deadline, Event::Timer);
        self.pc_send(150, Kind::Request(id));
    }

    fn fragment(&mut self, id: u64, idx: u32) {
        let Some(w) = self.waiting.iter_mut().find(|w| w.0 == id) else {
            return;
        };
        if idx != w.2 {
            return; // a gap: the datagram cannot be reassembled
        }
        w.2 += 1;
        if w.2 as usize == self.reply_frames.len() {
            self.waiting.retain(|w| w.0 != id);
            if let IsaWorkload::Nfs { size, .. } = self.p.workload {
                self.delivered += size.0;
            }
            let id = self.next_id;
            self.next_id += 1;
            self.request(id);
        }
    }

    fn nfs_timeouts(&mut self) {
        let now = self.now;
        let expired: Vec<u64> = self
            .waiting
            .iter()
            .filter(|w| w.1 <= now)
            .map(|w| w.0)
            .collect();
        for id in expired {
            self.waiting.retain(|w| w.0 != id);
            self.retransmissions += 1;
            self.request(id);
        }
    }
}

/// Runs the scenario.
pub fn run(p: &IsaParams) -> IsaOutcome {
    let mut sim = Sim {
        p,
        bus: IsaBus::new(p.width, p.clock_hz).with_extra_wait_states(p.extra_wait_states),
        nic: driver::Card {
            access: p.access,
            width: p.width,
        },
        agenda: EventQueue::new(),
        now: 0,
        wire: VecDeque::new(),
        wire_busy: false,
        card: CardBuffer::new(p.card_ram, p.tx_reserved),
        card_meta: VecDeque::new(),
        backlog: VecDeque::new(),
        unit: Unit::Idle,
        unit_end: 0,
        saved: None,
        app_rest: None,
        app_taking: 0,
        tx_debt: 0,
        acct: CoreNs::default(),
        rx: tcp::Receiver::new(window_segments(p.workload)),
        unacked: 0,
        reno: tcp::Reno::new(window_segments(p.workload)),
        resend: None,
        rto_at: None,
        slow_tick_phase: 0,
        peer_busy: false,
        next_id: 0,
        waiting: Vec::new(),
        replies_pending: VecDeque::new(),
        reply_frames: reply_frames(p.workload),
        replies_out: VecDeque::new(),
        irqs: 0,
        to_pc: 0,
        processed: 0,
        delivered: 0,
        retransmissions: 0,
    };
    let mut rng = Rng::new(p.seed, 0);
    let start = rng.below(wire_time(MSS + DATA_OVERHEAD));
    sim.slow_tick_phase = rng.below(tcp::SLOW_TICK_NS);
    match p.workload {
        IsaWorkload::Ttcp { .. } => sim.agenda.schedule(start, Event::PeerFree),
        IsaWorkload::Nfs { .. } => sim.agenda.schedule(start, Event::Start),
    }
    while let Some((t, ev)) = sim.agenda.pop_until(p.duration.0) {
        sim.now = t;
        match ev {
            Event::WireDone => sim.wire_done(),
            Event::CpuDone => sim.cpu_done(),
            Event::PeerFree => {
                sim.peer_busy = false;
                sim.peer_try();
            }
            Event::ReplyReady => {
                while let Some(&(at, id)) = sim.replies_pending.front() {
                    if at > sim.now {
                        break;
                    }
                    sim.replies_pending.pop_front();
                    sim.queue_reply(id);
                }
                sim.peer_try();
            }
            Event::Timer => sim.timer(),
            Event::Start => sim.start_nfs(),
        }
    }
    let secs = p.duration.as_secs_f64();
    let mut host = HostMetrics {
        interrupts_per_sec: Some(sim.irqs as f64 / secs),
        packets_per_interrupt: (sim.irqs > 0).then(|| sim.processed as f64 / sim.irqs as f64),
        cpu: cpu_split(&[sim.acct], p.duration.0),
        ..HostMetrics::default()
    };
    host.drops
        .insert("card_overflow".into(), sim.card.overruns());
    host.drops.insert("card_missed".into(), sim.card.missed());
    let mut metrics = Metrics {
        throughput_bps: Some(sim.delivered as f64 * 8.0 / secs),
        ..Metrics::default()
    };
    metrics.hosts.insert("pc486".into(), host);
    IsaOutcome {
        metrics,
        kbytes_per_sec: sim.delivered as f64 / 1024.0 / secs,
        card_overflows: sim.card.overruns(),
        card_missed: sim.card.missed(),
        retransmissions: sim.retransmissions + sim.reno.timeouts,
        fast_retransmits: sim.reno.fast_retransmits,
        events: sim.agenda.events(),
        ledgers: vec![Ledger {
            stage: "card",
            offered: sim.to_pc,
            delivered: sim.processed,
            dropped: sim.card.overruns() + sim.card.missed(),
            in_flight: sim.wire.iter().filter(|f| f.to_pc).count() as u64
                + sim.card.queued() as u64
                + sim.backlog.len() as u64,
        }],
    }
}

/// The model's assumptions, for `nictune sim seed-isa-ttcp|seed-isa-nfs --explain`.
pub const EXPLAIN: &str = "\
seed-isa-ttcp / seed-isa-nfs — Case 4: ISA Ethernet cards in a 40 MHz 486 (Ethernet HOWTO).

Card: 8-bit cards carry 8 kB, 16-bit 16 kB; the driver keeps 3 kB for two transmit buffers;
the rest is a ring of 256-byte pages (a full frame needs 6); a frame that does not fit overruns.
`card`: 8bit/16bit are WD8003/WD8013 boards whose RAM the host copies as shared memory;
ne1000/ne2000 move frames through the 8390's remote-DMA data port.

Bus: everything the driver does across the ISA bus runs on the bus clock — standard cycles of
6 bus clocks (8-bit, memory or I/O) or 3 (16-bit); the card may add wait states to its
packet-RAM cycles (extra_wait_states). Counted from Linux 1.2's 8390.c, wd.c and ne.c and the
8259A handling in asm-i386/irq.h, per receive interrupt: 5 interrupt-controller accesses and
9 paused 8390 register accesses (page select, ISR reads, restart, the final CURPAG/BOUNDARY
pass, acknowledge); per received frame: 5 paused register accesses, the 4-byte 8390 header and
the frame (remote DMA adds 7 paused accesses per transfer; a 16-bit WD board switches its
memory width with 2 more); per sent frame: 8 register accesses and its copy (remote DMA adds
9), then a transmit-done interrupt (5 controller accesses, 6 register accesses). A paused
access (inb_p/outb_p) is two I/O cycles: Linux pauses with a write to port 0x80.

486 costs: 25 µs of CPU per interrupt and 15 µs per received frame in the handler besides its
bus cycles (assumed from 1990s interrupt overheads), 256 µs of bottom-half protocol work per
segment (calibrated: TTCP 740 KB/s at 6.7 MHz), 100 µs for the TTCP read() of one segment
(assumed: a 486 copying at ~15 MB/s), 100 µs of protocol output per small frame sent (assumed).
Interrupts preempt the bottom half, the bottom half preempts the application. Peer: 95 µs
between back-to-back frames (calibrated: 1075 KB/s at 26.7 MHz). Everything else — the
intermediate clocks, the ceiling, overflows — follows from the mechanism.

TCP: the peer is a 4.3BSD-Reno sender (RFC 2001): slow start from one segment, fast retransmit
on the third duplicate ACK with fast recovery, and a retransmission timeout on BSD's 500 ms
slow timer (the 1 s minimum of two ticks, so 0.5–1 s, doubling per consecutive timeout). The
486's Linux 1.2 receiver keeps out-of-order segments and ACKs each at once, ACKs every second
segment in order, offers the free socket buffer (`tcp_window`) as its window, and sends a
window update as soon as the application's read frees more than a frame beyond what it last
offered (cleanup_rbuf). NFS: UDP reads, four in flight, each reply one datagram of
back-to-back fragments, lost whole if a fragment is lost, re-requested after 0.7 s.

Overrun: a frame that finds the ring full stops the 8390's receiver (overwrite warning). The
handler drains what is on the ring, then runs Linux's recovery (ei_rx_overrun: stop, busy-wait
at least 10 ms, restart); every frame arriving meanwhile is missed (≈8 full frames). Source:
lib8390.c and NetBSD we(4) (early 8390s must be reset after an overrun).

seed-isa-nfs (8 MHz, old WD8003E): NetBSD we(4) puts the original WD8003E's shared memory at
about 1 MB/s; the model gives the card 2 wait states beyond standard 8-bit timing (8 clocks per
byte = 1.0 MB/s at 8 MHz). A full frame then takes ≈1.6 ms to empty (with the handler) while
the server's fragments arrive 1.23 ms apart, back to back. 1 kB and 2 kB replies (one or two
frames) never overflow; 8 kB overflows often (≈15 overruns and ≈20 re-requests in 10 s); 4 kB
only rarely: a 4 kB reply is three frames (1514 + 1514 + 1298 bytes, 18 pages), which fit in
the 20 free pages of an empty card, so it overflows only when the frames of several replies in
flight pile up. The HOWTO's “performs badly” is reproduced as overruns, not as a throughput
collapse: the 486 is CPU-bound (≈720 KB/s) at 4 and 8 kB alike. A 16-bit card drains a frame
in ≈0.35 ms and handles 4 kB and 8 kB without overruns.

TTCP across clocks (8-bit WD card, 16 kB window): 740 / 824 / 947 / 1075 / 1075 / 1075 KB/s at
6.7 / 8 / 10 / 13.4 / 20 / 26.7 MHz. The knee at ≈12 MHz is where the CPU time per segment
(bus copy and register cycles + handler + protocol + read + half an ACK) falls below the
1.32 ms frame spacing; per-frame costs are deterministic here, so the knee is sharp — real cost
jitter would round it and leave 13.4 MHz somewhat below the ceiling.

At 5.4 MHz and below TTCP collapses (≈130 KB/s at 5.4 MHz, ≈640 KB/s at 5.5 MHz). The
mechanism: the CPU-bound 486 starves the TTCP reader, the socket buffer fills and the offered window
closes; when the reader catches up, the window update opens most of the 16 kB window at once
and the peer sends it back to back at the wire's spacing, while the card empties each frame
more slowly than the next arrives. Once such a burst leaves more than the 3⅓ full frames the
5 kB ring holds, it overruns; the 8390 stops for the driver's 10 ms recovery and misses the
rest of the burst. Because the burst was the whole window, no segment arrives after the hole to
produce duplicate ACKs, so fast retransmit cannot start and every overrun costs a retransmission
timeout (0.5–1 s). The threshold is sharp because the costs and the burst are deterministic; a
window that fits the card (`tcp_window=4096`) has no such edge.

A window below one MSS is honoured: the sender's segments are then the window's size.
";

#[cfg(test)]
mod validation {
    //! issue 4 §8, Case 4.
    use super::*;

    fn ttcp(mhz_x10: u64) -> IsaOutcome {
        run(&IsaParams::ttcp(
            IsaWidth::Bits8,
            mhz_x10 * 100_000,
            Bytes(16 * 1024),
        ))
    }

    #[test]
    fn cpu_time_never_exceeds_the_run() {
        let o = ttcp(67);
        let c = &o.metrics.hosts["pc486"].cpu;
        assert!(c.irq + c.softirq + c.user <= 1.0 + 1e-9, "{c:?}");
    }

    #[test]
    fn calibration_points() {
        let slow = ttcp(67).kbytes_per_sec;
        let fast = ttcp(267).kbytes_per_sec;
        assert!((slow - 740.0).abs() < 15.0, "6.7 MHz: {slow}");
        assert!((fast - 1075.0).abs() < 20.0, "26.7 MHz: {fast}");
    }

    #[test]
    fn throughput_rises_monotonically_and_flattens_below_the_wire() {
        let rates: Vec<f64> = [67, 80, 134, 200, 267]
            .iter()
            .map(|&m| ttcp(m).kbytes_per_sec)
            .collect();
        assert!(rates.windows(2).all(|w| w[1] >= w[0] - 1.0), "{rates:?}");
        // 10 Mbit/s carries at most 1460 of every 1538 bytes: ≈1158 KB/s.
        assert!(rates.iter().all(|&r| r < 1158.0), "{rates:?}");
        assert!(
            rates[4] - rates[3] < 0.2 * (rates[1] - rates[0]).max(1.0) + 5.0,
            "{rates:?}"
        );
    }

    #[test]
    fn nfs_on_an_old_8_bit_card_overflows_from_4k() {
        for size in [1024, 2048] {
            let o = run(&IsaParams::seed_nfs(IsaWidth::Bits8, Bytes(size)));
            assert_eq!(o.card_overflows, 0, "{size}");
        }
        let mut overruns = Vec::new();
        for size in [4096, 8192] {
            let o = run(&IsaParams::seed_nfs(IsaWidth::Bits8, Bytes(size)));
            assert!(o.card_overflows > 0 && o.retransmissions > 0, "{size}");
            overruns.push(o.card_overflows);
        }
        assert!(
            overruns[1] > overruns[0],
            "8k overruns more often: {overruns:?}"
        );
    }

    #[test]
    fn an_overrun_loses_what_arrives_during_the_drivers_recovery() {
        // 10 ms with the receiver stopped is ≈8 full frames of back-to-back fragments.
        let o = run(&IsaParams::seed_nfs(IsaWidth::Bits8, Bytes(8192)));
        assert!(o.card_overflows > 10, "{}", o.card_overflows);
        let per_overrun = o.card_missed as f64 / o.card_overflows as f64;
        assert!(
            (2.0..=9.0).contains(&per_overrun),
            "{per_overrun} missed per overrun"
        );
        let c = &o.metrics.hosts["pc486"].cpu;
        assert!(c.irq > 0.5, "drain plus recovery run in the handler: {c:?}");
    }

    #[test]
    fn a_16_bit_card_handles_4k_nfs() {
        let o = run(&IsaParams::seed_nfs(IsaWidth::Bits16, Bytes(4096)));
        assert_eq!(o.card_overflows, 0);
        assert!(o.kbytes_per_sec > 900.0, "{}", o.kbytes_per_sec);
    }

    #[test]
    fn on_a_slow_card_a_window_beyond_the_card_overruns_and_collapses() {
        // The HOWTO's tip: small windows for small-buffer cards; too large → overruns and a
        // sharp loss. Same slow-card assumption as seed-isa-nfs (2 extra wait states).
        let old = |w| IsaParams {
            extra_wait_states: 2,
            ..IsaParams::ttcp(IsaWidth::Bits8, 6_700_000, Bytes(w))
        };
        let small = run(&old(4096));
        let large = run(&old(16 * 1024));
        assert_eq!(small.card_overflows, 0);
        assert!(large.card_overflows > 0 && large.retransmissions > 0);
        assert!(
            large.kbytes_per_sec < small.kbytes_per_sec / 3.0,
            "{} vs {}",
            large.kbytes_per_sec,
            small.kbytes_per_sec
        );
    }

    #[test]
    fn below_the_edge_every_overrun_costs_a_timeout_because_the_burst_was_the_window() {
        let edge = run(&IsaParams::ttcp(
            IsaWidth::Bits8,
            5_000_000,
            Bytes(16 * 1024),
        ));
        assert!(edge.card_overflows >= 5, "{}", edge.card_overflows);
        // Nothing arrives after the hole, so there are no duplicate ACKs to repair it.
        assert_eq!(edge.fast_retransmits, 0);
        assert!(edge.retransmissions + 1 >= edge.card_overflows);
        let fits = run(&IsaParams::ttcp(IsaWidth::Bits8, 5_000_000, Bytes(4096)));
        assert_eq!(fits.card_overflows, 0);
        assert!(
            fits.kbytes_per_sec > 3.0 * edge.kbytes_per_sec,
            "{} vs {}",
            fits.kbytes_per_sec,
            edge.kbytes_per_sec
        );
    }

    #[test]
    fn a_small_window_limits_ttcp() {
        let small = run(&IsaParams::ttcp(IsaWidth::Bits8, 26_700_000, Bytes(1460)));
        assert!(small.kbytes_per_sec < 0.9 * ttcp(267).kbytes_per_sec);
    }

    #[test]
    fn a_window_below_the_mss_is_honoured() {
        // One segment of the window's size in flight: less per round trip than a full MSS,
        // and never more than the window per round trip.
        let one_mss = run(&IsaParams::ttcp(IsaWidth::Bits8, 26_700_000, Bytes(1460)));
        let below = run(&IsaParams::ttcp(IsaWidth::Bits8, 26_700_000, Bytes(1000)));
        assert!(below.kbytes_per_sec > 0.0);
        assert!(
            below.kbytes_per_sec < one_mss.kbytes_per_sec,
            "{} vs {}",
            below.kbytes_per_sec,
            one_mss.kbytes_per_sec
        );
        // Payload per ledger frame: the segments are the window's size, not an MSS.
        let frames = below.ledgers[0].delivered as f64;
        let bytes = below.kbytes_per_sec * 1024.0 * 10.0;
        assert!(
            (bytes / frames - 1000.0).abs() < 50.0,
            "{} B per frame",
            bytes / frames
        );
    }
}
