//! One receiving host with one NIC queue and one CPU: the shared model of Cases 2 and 3 and
//! the DIM check.
//!
//! Frames arrive as a Poisson stream into the rx ring (a full ring drops). The host receives
//! in one of two modes:
//! - **Interrupts**: the NIC interrupts when a frame is there, the IRQ is unmasked and the
//!   programmed moderation allows it — an ITR/EITR throttle (a minimum gap since the previous
//!   interrupt) or a DIM timer with a frame count (EQE: the timer starts at the first frame;
//!   CQE: every frame restarts it). The interrupt schedules NAPI; polls take up to `weight`
//!   frames and repeat while they use their whole budget; the completion runs the moderation
//!   policy ([`crate::moderation`]) and unmasks.
//! - **Polling**: FreeBSD DEVICE_POLLING ([`crate::freebsd::polling`]): no receive
//!   interrupts; each clock tick hands the driver chunks of `each_burst` frames until `burst`
//!   were offered, each chunk followed by its protocol work; `burst` adapts to `user_frac`.
//!
//! Optional transmit completions ([`TxCompletions`]): frames the host sends raise a
//! transmit-done cause a fixed delay later (e1000-class TIDV). In interrupt mode the cause
//! asserts the interrupt like a received frame (through the same throttle) and the next poll
//! cleans it; in polling mode the poll handler cleans transmit descriptors with no interrupt.
//!
//! Kernel work runs before the application; the application (one thread) consumes delivered
//! frames from a bounded socket buffer in the CPU time left, one frame at a time. With
//! `busy_poll` (busy_read) an application that finds its socket empty spins on the NAPI
//! ([`crate::napi_extras::busy_poll`], budget 8, system time) for up to the configured time;
//! while it owns the NAPI an interrupt only masks itself (MISSED), and the poller's final poll
//! re-enables it ([`crate::napi_extras::complete`]). Optional ICMP echo probes travel through
//! the same ring and are answered in the receive path.

use super::{CoreNs, Ledger};
use crate::engine::queue::EventQueue;
use crate::engine::rng::Rng;
use crate::freebsd::polling::{PollMore, Polling, PollingConfig};
use crate::metrics::histogram::Histogram;
use crate::moderation::{Coalescing, ModerationCtx, ModerationPolicy, Traffic};
use crate::napi_extras::busy_poll::{BusyLoop, BusyPollConfig, BusyStep};
use crate::napi_extras::complete::{Napi, NapiConfig};
use nictune_core::metrics::{CpuSplit, HostMetrics, Metrics};
use nictune_core::units::{Bytes, Nanos};
use std::collections::VecDeque;

/// CPU costs of the receiving host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostCosts {
    /// Hard interrupt (irq time).
    pub irq: Nanos,
    /// Fixed cost of one poll call or one polling chunk (softirq time).
    pub poll: Nanos,
    /// Per received frame through driver and stack (softirq time).
    pub per_frame: Nanos,
    /// The application's work per frame it consumes (user time).
    pub app_per_frame: Nanos,
}

/// Frames the host transmits, as interrupt causes: each raises a transmit-done cause
/// `delay` after it is sent (e1000-class descriptors with RS and IDE set: TXDW when the TIDV
/// packet timer expires). Sends are a Poisson stream of `pps`. Their CPU work is part of
/// [`HostCosts::per_frame`]; this only adds the interrupts they cause.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TxCompletions {
    /// Frames sent per second.
    pub pps: f64,
    /// From send to the transmit-done cause (TIDV).
    pub delay: Nanos,
}

/// How the host receives.
#[derive(Debug)]
pub enum RxMode {
    /// Interrupts with a moderation policy (fixed or adaptive) and a NAPI weight.
    Interrupts {
        /// The driver's moderation.
        policy: Box<dyn ModerationPolicy>,
        /// NAPI weight (64).
        weight: u32,
    },
    /// FreeBSD DEVICE_POLLING.
    Polling(PollingConfig),
}

/// Parameters of one run.
#[derive(Debug)]
pub struct RxHostParams {
    /// Offered frames per second (the senders' rate; the link may carry fewer).
    pub offered_pps: f64,
    /// Bit rate of the link the frames arrive on: a frame's last bit arrives one wire time
    /// after the later of its send and the previous frame's arrival, so no load exceeds the
    /// line rate.
    pub link_bps: f64,
    /// Frame size as the driver counts it (no FCS).
    pub frame: Bytes,
    /// Rx descriptors.
    pub ring: u32,
    /// Socket buffer of the application, in frames.
    pub socket_frames: u32,
    /// Receive mode.
    pub mode: RxMode,
    /// CPU costs.
    pub costs: HostCosts,
    /// An echo probe every this often (`ping -i`), if any.
    pub probe_every: Option<Nanos>,
    /// Fixed part of a probe's round trip outside this host's receive path.
    pub probe_base: Nanos,
    /// Busy polling by the application when its socket is empty (`busy_read`), interrupt
    /// mode only.
    pub busy_poll: Option<BusyPollConfig>,
    /// Transmit completions that raise interrupt causes (interrupt mode), if any.
    pub tx: Option<TxCompletions>,
    /// Simulated time.
    pub duration: Nanos,
    /// Seed.
    pub seed: u64,
}

/// Ethernet (14), IPv4 (20) and TCP with timestamps (32) headers of every TCP frame.
const TCP_FRAME_HEADERS: Bytes = Bytes(66);

/// The TCP payload of a frame of `frame` bytes; for a mean over data segments and pure ACKs
/// it is the mean payload, since every frame carries the same headers.
fn tcp_payload(frame: Bytes) -> Bytes {
    Bytes(frame.0.saturating_sub(TCP_FRAME_HEADERS.0))
}

/// Results.
#[derive(Debug, Clone)]
pub struct RxHostOutcome {
    /// Shared metrics (host `receiver`; latency = probe round trips).
    pub metrics: Metrics,
    /// Frames the stack received.
    pub received: u64,
    /// Frames the application consumed.
    pub consumed: u64,
    /// Dropped in the ring.
    pub ring_drops: u64,
    /// Dropped because the socket buffer was full.
    pub socket_drops: u64,
    /// Interrupts per second.
    pub interrupts_per_sec: f64,
    /// Busy time of the core.
    pub cpu: CoreNs,
    /// Final `kern.polling.burst` (polling mode).
    pub final_burst: Option<u32>,
    /// Events processed.
    pub events: u64,
    /// The ring's and the socket's packet ledgers.
    pub ledgers: Vec<Ledger>,
}

/// What can happen on the host: the engine queue orders these by `(time, seq)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The NIC raises the interrupt.
    Irq,
    /// The kernel work in progress (hard interrupt, NAPI poll, polling chunk) ends.
    KernelDone,
    /// The clock tick (polling mode).
    Tick,
    /// The application finished consuming a frame.
    AppDone,
    /// The busy-poll loop takes its next step.
    BusyStep,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    Idle,
    Irq,
    Poll(u32),
    Chunk,
}

struct Sim<'a> {
    p: &'a RxHostParams,
    policy: Option<Box<dyn ModerationPolicy>>,
    weight: u32,
    polling: Option<Polling>,
    agenda: EventQueue<Event>,
    now: u64,
    rng: Rng,
    mean_gap: f64,
    future: VecDeque<u64>,
    /// The latest sender's release (Poisson) and the latest arrival off the wire.
    last_send: u64,
    last_gen: u64,
    /// One frame's time on the wire (frame, FCS, preamble, inter-frame gap).
    wire_ns: u64,
    arrived: u64,
    ring: u32,
    ring_drops: u64,
    tx_rng: Rng,
    tx_next: u64,
    tx_pending: u32,
    next_probe: u64,
    probes: VecDeque<(u64, u64)>,
    taken: u64,
    latency: Histogram,
    setting: Coalescing,
    masked: bool,
    irq_pending: bool,
    last_irq: u64,
    irqs: u64,
    window: Traffic,
    kernel: Kernel,
    kernel_end: u64,
    softirq_pending: bool,
    app_busy: bool,
    app_end: u64,
    napi: Napi,
    busy: Option<BusyLoop>,
    busy_step_at: u64,
    socket: u32,
    socket_drops: u64,
    consumed: u64,
    acct: CoreNs,
}

impl Sim<'_> {
    /// The `k`-th future data arrival (0-based), generating as needed.
    fn future_arrival(&mut self, k: usize) -> u64 {
        while self.future.len() <= k {
            self.last_send += super::exp_ns(&mut self.rng, self.mean_gap);
            self.last_gen = self.last_send.max(self.last_gen) + self.wire_ns;
            self.future.push_back(self.last_gen);
        }
        self.future[k]
    }

    /// Arrivals (and probes) up to `t` into the ring, transmit-done causes into `tx_pending`.
    fn fill(&mut self, t: u64) {
        while self.tx_next <= t {
            self.tx_pending += 1;
            self.tx_next += self.p.tx.map_or(u64::MAX, |tx| {
                super::exp_ns(&mut self.tx_rng, 1e9 / tx.pps.max(1e-9))
            });
        }
        loop {
            let data = self.future_arrival(0);
            let probe = self.next_probe;
            let next = data.min(probe);
            if next > t {
                break;
            }
            if self.ring < self.p.ring {
                self.ring += 1;
                self.arrived += 1;
                if probe == next {
                    self.probes.push_back((self.arrived, probe));
                }
            } else {
                self.ring_drops += 1;
            }
            if probe == next {
                self.next_probe = self.p.probe_every.map_or(u64::MAX, |e| probe + e.0);
            } else {
                self.future.pop_front();
            }
        }
    }

    /// The stack took `n` frames, finishing at `done`.
    fn take(&mut self, n: u32, done: u64) {
        self.ring -= n;
        self.taken += n as u64;
        while self
            .probes
            .front()
            .is_some_and(|&(idx, _)| idx <= self.taken)
        {
            let (_, at) = self.probes.pop_front().expect("checked");
            self.latency.record(done - at + self.p.probe_base.0);
        }
        let kept = n.min(self.p.socket_frames - self.socket);
        self.socket += kept;
        self.socket_drops += (n - kept) as u64;
    }

    fn run_kernel(&mut self, kind: Kernel, d: u64, irq: bool) {
        if irq {
            self.acct.irq += d;
        } else {
            self.acct.softirq += d;
        }
        self.kernel = kind;
        self.kernel_end = self.now + d;
        self.agenda.schedule(self.kernel_end, Event::KernelDone);
        self.preempt_app(d);
    }

    /// Kernel work of `d` preempts a running application quantum.
    fn preempt_app(&mut self, d: u64) {
        if self.app_busy && self.app_end > self.now {
            self.app_end += d;
            self.agenda.schedule(self.app_end, Event::AppDone);
        }
    }

    /// The next kernel step once the CPU is free of the current one.
    fn kernel_next(&mut self) {
        self.kernel = Kernel::Idle;
        if std::mem::take(&mut self.softirq_pending) {
            return self.poll();
        }
        self.app_try();
    }

    // --- interrupts -------------------------------------------------------------------

    /// Schedules the NIC's next interrupt, if unmasked and none is pending.
    fn arm_irq(&mut self) {
        if self.masked || self.irq_pending || self.policy.is_none() {
            return;
        }
        self.fill(self.now);
        let first = if self.ring > 0 || self.tx_pending > 0 {
            self.now
        } else {
            self.future_arrival(0)
                .min(self.next_probe)
                .min(self.tx_next)
        };
        let s = self.setting;
        let mut at = if s.rx_timed() {
            self.timer_fire(first, s)
        } else {
            first
        };
        if s.interval_ns > 0 {
            at = at.max(self.last_irq + s.interval_ns);
        }
        self.irq_pending = true;
        self.agenda.schedule(at.max(self.now), Event::Irq);
    }

    /// The receive delay timers with a frame count: the interrupt comes when `rx_frames` are
    /// pending or a timer expires (the absolute one from the first frame, the packet one
    /// restarted by each; [`Coalescing::rx_deadline`]). Without a frame count the wait is
    /// bounded by the ring filling up.
    fn timer_fire(&mut self, first: u64, s: Coalescing) -> u64 {
        let pending = self.ring as usize;
        let frames = if s.rx_frames > 0 {
            s.rx_frames
        } else {
            self.p.ring
        };
        let need = (frames as usize).saturating_sub(pending.max(1));
        let mut last = first;
        let skip = usize::from(pending == 0);
        for k in 0..need {
            let a = self.future_arrival(k + skip);
            let deadline = s.rx_deadline(first, last);
            if a > deadline {
                return deadline;
            }
            last = a;
        }
        last
    }

    fn irq_fires(&mut self) {
        self.irq_pending = false;
        self.masked = true;
        self.last_irq = self.now;
        self.irqs += 1;
        if self.busy.is_some() {
            // The busy poller owns the NAPI: the handler masks the IRQ and its schedule only
            // sets MISSED; the poller's final poll re-enables the IRQ.
            self.napi.schedule();
            self.acct.irq += self.p.costs.irq.0;
            return;
        }
        let ctx = ModerationCtx::at(Nanos(self.now), self.setting);
        if let Some(w) = self.policy.as_mut().and_then(|p| p.on_interrupt(&ctx)) {
            self.setting = w;
        }
        if self.kernel == Kernel::Idle {
            let d = self.p.costs.irq.0;
            self.run_kernel(Kernel::Irq, d, true);
        } else {
            // The hard interrupt runs at once; the work in progress finishes later.
            self.acct.irq += self.p.costs.irq.0;
            self.kernel_end += self.p.costs.irq.0;
            self.agenda.schedule(self.kernel_end, Event::KernelDone);
            self.softirq_pending = true;
        }
    }

    fn poll(&mut self) {
        self.fill(self.now);
        self.tx_pending = 0; // the poll cleans the transmit ring too
        let n = self.ring.min(self.weight);
        let d = self.p.costs.poll.0 + n as u64 * self.p.costs.per_frame.0;
        self.run_kernel(Kernel::Poll(n), d, false);
    }

    fn poll_done(&mut self, n: u32) {
        self.take(n, self.now);
        let bytes = n as u64 * self.p.frame.0;
        self.window.add(Traffic::rx(n as u64, bytes));
        if n == self.weight {
            return self.poll();
        }
        let window = std::mem::take(&mut self.window);
        let ctx = ModerationCtx::at(Nanos(self.now), self.setting);
        if let Some(w) = self
            .policy
            .as_mut()
            .and_then(|p| p.on_poll_complete(&ctx, &window))
        {
            self.setting = w;
        }
        self.masked = false;
        self.arm_irq();
        self.kernel_next();
    }

    // --- polling ----------------------------------------------------------------------

    fn tick(&mut self) {
        let tick = self.polling.as_ref().map_or(0, |p| p.tick().0);
        self.agenda.schedule(self.now + tick, Event::Tick);
        let scheduled = self.polling.as_mut().is_some_and(Polling::hardclock);
        if scheduled && self.kernel == Kernel::Idle {
            self.chunk();
        }
    }

    fn chunk(&mut self) {
        let Some(c) = self
            .polling
            .as_mut()
            .and_then(|p| p.netisr_poll(Nanos(self.now)))
        else {
            return self.kernel_next();
        };
        self.fill(self.now);
        let n = self.ring.min(c.cycles);
        let d = self.p.costs.poll.0 + n as u64 * self.p.costs.per_frame.0;
        self.softirq_pending = false;
        self.run_kernel(Kernel::Chunk, d, false);
        self.take(n, self.kernel_end);
    }

    fn chunk_done(&mut self) {
        let more = self
            .polling
            .as_mut()
            .map(|p| p.netisr_pollmore(Nanos(self.now)));
        match more {
            Some(PollMore::NextChunk | PollMore::Missed) => self.chunk(),
            _ => self.kernel_next(),
        }
    }

    // --- application ------------------------------------------------------------------

    fn app_try(&mut self) {
        if self.app_busy || self.kernel != Kernel::Idle {
            return;
        }
        if self.socket == 0 {
            return self.busy_start();
        }
        self.app_busy = true;
        let d = self.p.costs.app_per_frame.0;
        self.acct.user += d;
        self.app_end = self.now + d;
        self.agenda.schedule(self.app_end, Event::AppDone);
    }

    fn app_done(&mut self) {
        if !self.app_busy || self.now != self.app_end {
            return; // stale: the quantum was pushed back by kernel work
        }
        self.app_busy = false;
        self.socket -= 1;
        self.consumed += 1;
        self.app_try();
    }

    // --- busy polling -----------------------------------------------------------------

    /// The application found its socket empty: with busy_read it spins on the NAPI.
    fn busy_start(&mut self) {
        let Some(cfg) = self.p.busy_poll else { return };
        if self.busy.is_none() && self.polling.is_none() {
            self.busy = BusyLoop::start(cfg, Nanos(self.now));
            self.busy_schedule(self.now);
        }
    }

    fn busy_schedule(&mut self, at: u64) {
        self.busy_step_at = at;
        self.agenda.schedule(at, Event::BusyStep);
    }

    fn busy_step(&mut self) {
        if self.now != self.busy_step_at {
            return;
        }
        if self.kernel != Kernel::Idle {
            return self.busy_schedule(self.kernel_end); // interrupts and softirq come first
        }
        let Some(mut l) = self.busy.take() else {
            return;
        };
        let step = l.step(&mut self.napi, Nanos(self.now), self.socket > 0, false);
        match step {
            BusyStep::Poll(budget) => {
                let d = self.busy_poll_once(budget);
                self.busy = Some(l);
                self.busy_schedule(self.now + d);
            }
            BusyStep::Spin => {
                // Softirq owns the NAPI; spin (as system time) until the next poll attempt.
                self.busy = Some(l);
                let d = self.p.costs.poll.0.max(1);
                self.acct.system += d;
                self.busy_schedule(self.now + d);
            }
            BusyStep::Stop(_) => {
                if l.stop(&mut self.napi, Nanos(self.now)) {
                    self.busy_poll_once(self.p.busy_poll.map_or(8, |c| c.budget));
                    if self
                        .napi
                        .complete_done(Nanos(self.now), 0, false)
                        .reschedule
                    {
                        // An IRQ came in meanwhile (MISSED): the rescheduled poll finds the
                        // ring just emptied and completes.
                        self.napi.complete_done(Nanos(self.now), 0, false);
                    }
                    self.masked = false;
                    self.arm_irq();
                }
                self.app_try();
            }
        }
    }

    /// One poll from the busy loop, charged as system time; returns its duration.
    fn busy_poll_once(&mut self, budget: u32) -> u64 {
        self.fill(self.now);
        let n = self.ring.min(budget);
        let d = self.p.costs.poll.0 + n as u64 * self.p.costs.per_frame.0;
        self.acct.system += d;
        self.take(n, self.now + d);
        d
    }

    fn kernel_done(&mut self) {
        if self.now != self.kernel_end {
            return;
        }
        match self.kernel {
            Kernel::Irq => self.poll(),
            Kernel::Poll(n) => self.poll_done(n),
            Kernel::Chunk => self.chunk_done(),
            Kernel::Idle => {}
        }
    }
}

/// FCS, preamble with SFD, and the minimum inter-frame gap: what a frame counted without FCS
/// adds on the wire (IEEE 802.3 clause 4; sim-notes §4.1).
const WIRE_EXTRA: u64 = 4 + 8 + 12;

/// Nanoseconds a `frame` (counted without FCS) occupies a link of `bps`, rounded up.
fn wire_ns(frame: Bytes, bps: f64) -> u64 {
    (((frame.0 + WIRE_EXTRA) * 8) as f64 * 1e9 / bps.max(1.0)).ceil() as u64
}

/// Runs the host.
pub fn run(mut p: RxHostParams) -> RxHostOutcome {
    // The run owns the mode's state; what stays in `p` is configuration only.
    let mode = std::mem::replace(&mut p.mode, RxMode::Polling(PollingConfig::default()));
    let (mut policy, weight, polling) = match mode {
        RxMode::Interrupts { policy, weight } => (Some(policy), weight, None),
        RxMode::Polling(cfg) => (None, 1, Some(Polling::new(cfg))),
    };
    let setting = policy.as_mut().map_or(Coalescing::OFF, |p| p.initial());
    // Polling cleans transmit descriptors in the poll handler: no causes to track.
    let tx_next = match (&p.tx, &polling) {
        (Some(tx), None) => tx.delay.0,
        _ => u64::MAX,
    };
    let mut sim = Sim {
        p: &p,
        policy,
        weight: weight.max(1),
        polling,
        agenda: EventQueue::new(),
        now: 0,
        rng: Rng::new(p.seed, 0),
        mean_gap: 1e9 / p.offered_pps.max(1e-9),
        future: VecDeque::new(),
        last_send: 0,
        last_gen: 0,
        wire_ns: wire_ns(p.frame, p.link_bps),
        arrived: 0,
        ring: 0,
        ring_drops: 0,
        tx_rng: Rng::new(p.seed, 1),
        tx_next,
        tx_pending: 0,
        next_probe: p.probe_every.map_or(u64::MAX, |e| e.0 / 2),
        probes: VecDeque::new(),
        taken: 0,
        latency: Histogram::new(),
        setting,
        masked: false,
        irq_pending: false,
        last_irq: 0,
        irqs: 0,
        window: Traffic::default(),
        kernel: Kernel::Idle,
        kernel_end: 0,
        softirq_pending: false,
        app_busy: false,
        app_end: 0,
        napi: Napi::new(NapiConfig::default()),
        busy: None,
        busy_step_at: u64::MAX,
        socket: 0,
        socket_drops: 0,
        consumed: 0,
        acct: CoreNs::default(),
    };
    if sim.polling.is_some() {
        sim.agenda.schedule(0, Event::Tick);
    } else {
        sim.arm_irq();
    }
    while let Some((t, ev)) = sim.agenda.pop_until(p.duration.0) {
        sim.now = t;
        match ev {
            Event::Irq => sim.irq_fires(),
            Event::KernelDone => sim.kernel_done(),
            Event::Tick => sim.tick(),
            Event::BusyStep => sim.busy_step(),
            Event::AppDone => sim.app_done(),
        }
    }
    outcome(&p, sim)
}

fn outcome(p: &RxHostParams, sim: Sim) -> RxHostOutcome {
    let secs = p.duration.as_secs_f64();
    let split = sim.acct.split(p.duration.0);
    let ips = sim.irqs as f64 / secs;
    let mut host = HostMetrics {
        interrupts_per_sec: Some(ips),
        packets_per_interrupt: (sim.irqs > 0).then(|| sim.taken as f64 / sim.irqs as f64),
        cpu: CpuSplit::from_cores(vec![split]),
        ..HostMetrics::default()
    };
    host.drops.insert("ring_full".into(), sim.ring_drops);
    host.drops.insert("socket_full".into(), sim.socket_drops);
    let mut metrics = Metrics {
        // Every receive host carries TCP: the metric counts payload, not frame bytes.
        throughput_bps: Some(sim.consumed as f64 * tcp_payload(p.frame).0 as f64 * 8.0 / secs),
        latency_us: sim.latency.summary_us(),
        ..Metrics::default()
    };
    metrics.hosts.insert("receiver".into(), host);
    RxHostOutcome {
        metrics,
        received: sim.taken,
        consumed: sim.consumed,
        ring_drops: sim.ring_drops,
        socket_drops: sim.socket_drops,
        interrupts_per_sec: ips,
        cpu: sim.acct,
        final_burst: sim.polling.as_ref().map(Polling::burst),
        events: sim.agenda.events(),
        ledgers: vec![
            Ledger {
                stage: "nic",
                offered: sim.arrived + sim.ring_drops,
                delivered: sim.taken,
                dropped: sim.ring_drops,
                in_flight: sim.ring as u64,
            },
            Ledger {
                stage: "socket",
                offered: sim.taken,
                delivered: sim.consumed,
                dropped: sim.socket_drops,
                in_flight: sim.socket as u64,
            },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moderation::Fixed;

    fn overload(mode: RxMode) -> RxHostOutcome {
        run(RxHostParams {
            link_bps: 1e9,
            offered_pps: 400_000.0,
            frame: Bytes(64),
            ring: 256,
            socket_frames: 64,
            mode,
            costs: HostCosts {
                irq: Nanos(2_000),
                poll: Nanos(500),
                per_frame: Nanos(3_000),
                app_per_frame: Nanos(1_000),
            },
            probe_every: Some(Nanos::from_millis(10)),
            probe_base: Nanos::ZERO,
            busy_poll: None,
            tx: None,
            duration: Nanos::from_millis(200),
            seed: 9,
        })
    }

    #[test]
    fn busy_time_never_exceeds_the_run_and_frames_are_conserved() {
        let modes = [
            RxMode::Polling(PollingConfig::default()),
            RxMode::Interrupts {
                policy: Box::new(Fixed(Coalescing::OFF)),
                weight: 64,
            },
            RxMode::Interrupts {
                policy: Box::new(Fixed(Coalescing::throttle(Nanos::from_micros(50)))),
                weight: 64,
            },
        ];
        for mode in modes {
            let o = overload(mode);
            let busy = (o.cpu.irq + o.cpu.softirq + o.cpu.user) as f64 / 0.2e9;
            // Work is charged when it starts, so the last unit may run past the end.
            assert!(busy <= 1.0 + 1e-3, "busy {busy}");
            assert!(o.consumed + o.socket_drops <= o.received);
            assert!(o.ring_drops > 0, "overloaded");
        }
    }

    #[test]
    fn interrupts_without_moderation_starve_the_application_polling_does_not() {
        let intr = overload(RxMode::Interrupts {
            policy: Box::new(Fixed(Coalescing::OFF)),
            weight: 64,
        });
        let poll = overload(RxMode::Polling(PollingConfig::default()));
        assert!(
            poll.consumed > intr.consumed,
            "{} vs {}",
            poll.consumed,
            intr.consumed
        );
    }

    fn light(busy_poll: Option<BusyPollConfig>) -> RxHostOutcome {
        run(RxHostParams {
            link_bps: 1e9,
            offered_pps: 20_000.0,
            frame: Bytes(200),
            ring: 256,
            socket_frames: 64,
            mode: RxMode::Interrupts {
                policy: Box::new(Fixed(Coalescing::throttle(Nanos::from_micros(125)))),
                weight: 64,
            },
            costs: HostCosts {
                irq: Nanos(2_000),
                poll: Nanos(500),
                per_frame: Nanos(1_000),
                app_per_frame: Nanos(1_000),
            },
            probe_every: Some(Nanos::from_millis(1)),
            probe_base: Nanos::ZERO,
            busy_poll,
            tx: None,
            duration: Nanos::from_millis(500),
            seed: 4,
        })
    }

    #[test]
    fn busy_read_trades_cpu_for_latency() {
        let plain = light(None);
        let busy = light(Some(BusyPollConfig::new(Nanos::from_micros(100))));
        let (lp, lb) = (
            plain.metrics.latency_us.unwrap().mean,
            busy.metrics.latency_us.unwrap().mean,
        );
        assert!(lb < 0.5 * lp, "busy {lb} µs vs plain {lp} µs");
        assert!(busy.cpu.system > 0 && plain.cpu.system == 0);
        assert_eq!(busy.consumed + busy.socket_drops, busy.received);
        assert!(busy.received >= plain.received - 5);
    }
}
