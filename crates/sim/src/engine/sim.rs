//! The run loop: hosts (NIC + driver + NAPI + CPU), a topology, a workload, and the events
//! that tie them together.
//!
//! Events (everything else is computed arithmetically inside them):
//!
//! | event | what happens |
//! |---|---|
//! | `NicCheck` | replay the card up to now; assert the interrupt if a cause is latched and the throttle allows, else wait for the gate or the next thing that could latch a cause. An asserted interrupt runs the driver's handler in the same event (`hard_irq`: read ICR, mask, schedule NAPI, raise NET_RX): the driver masks at once, so nothing can come between |
//! | `PollStep` | one slice of a NAPI poll: tx clean, take the frames in the ring (up to the poll's budget), charge their costs, hand them to the workload; a poll ends when a slice finds nothing new or the budget is used |
//! | `NapiTimer` | gro_flush_timeout hrtimer: schedule NAPI without an interrupt |
//! | `Watchdog` | the driver's periodic watchdog (moderation policies that use it), its period on the host's own tick clock |
//! | `AppDone` | an application job finished |
//! | `Timer` | a workload timer |
//!
//! Causality: the card is only ever replayed up to the current event time, and everything a
//! handler computes for the future (frame arrivals at the peer, job completions, poll slice
//! ends) is at or after it. Transmissions are serialised on a link in the order they are
//! computed.

pub use super::report::{HostReport, HostStats, SimOutput};
pub use super::spec::{HostSpec, Phases, SimSpec, Topology};

use super::clock::Oscillator;
use super::queue::EventQueue;
use crate::host::costs::Costs;
use crate::host::cpu::{AppWake, Cpu, KernelWork};
use crate::host::napi::{NapiConfig, Softnet};
use crate::metrics::recorder::Recorder;
use crate::moderation::{ModerationCtx, ModerationPolicy, Traffic};
use crate::napi_extras::complete::Napi;
use crate::napi_extras::softirq::AfterPass;
use crate::nic::link::Link;
use crate::nic::ring::Taken;
use crate::nic::{Feed, Nic};
use crate::workload::{Action, Rx, Workload};
use nictune_core::units::Nanos;

/// FCS bytes the drivers leave out of their byte counts.
const FCS: u64 = 4;
/// How long ksoftirqd waits behind a runnable application on its core before it runs
/// (one scheduler slice; CFS's minimum granularity is 0.75–3 ms depending on core count).
const KSOFTIRQD_WAIT_NS: u64 = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    NicCheck(u8),
    PollStep(u8),
    NapiTimer(u8),
    Watchdog(u8),
    AppDone(u8, u32),
    Timer(u64),
}

#[derive(Debug, Clone, Copy)]
struct PollRun {
    quota_left: u32,
    work: u32,
    ending: bool,
}

#[derive(Debug)]
struct Host {
    name: String,
    nic: Nic,
    feed: Feed,
    cpu: Cpu,
    irq_core: usize,
    costs: Costs,
    napi_cfg: NapiConfig,
    napi: Napi,
    softnet: Softnet,
    policy: Box<dyn ModerationPolicy>,
    watchdog_phase: u64,
    /// The kernel tick's oscillator: the watchdog's period runs on it.
    host_osc: Oscillator,
    window: Traffic,
    poll: Option<PollRun>,
    pending_refill: u32,
    check_at: Option<u64>,
    tx_link: Option<Link>,
    peer: Option<usize>,
    stats: HostStats,
}

impl Host {
    fn new(mut spec: HostSpec, horizon: u64) -> Host {
        let osc = Oscillator::from_ppm(spec.clock_ppm);
        let regs = spec.policy.initial();
        Host {
            name: spec.name,
            nic: Nic::new(spec.nic, osc, regs, spec.phase.throttle_ns),
            feed: Feed::default(),
            cpu: Cpu::new(spec.cores, spec.app_core, horizon),
            irq_core: spec.irq_core.min(spec.cores.max(1) - 1),
            costs: spec.costs,
            napi_cfg: spec.napi,
            napi: Napi::new(spec.napi),
            softnet: Softnet::default(),
            policy: spec.policy,
            watchdog_phase: spec.phase.watchdog_ns,
            host_osc: Oscillator::from_ppm(spec.host_clock_ppm),
            window: Traffic::default(),
            poll: None,
            pending_refill: 0,
            check_at: None,
            tx_link: None,
            peer: None,
            stats: HostStats {
                min_irq_gap: u64::MAX,
                ..HostStats::default()
            },
        }
    }

    fn ctx(&self, now: u64) -> ModerationCtx {
        ModerationCtx {
            now: Nanos(now),
            link_mbps: self.nic.config().link_mbps,
            counters: self.nic.counters,
            regs: self.nic.regs(),
        }
    }
}

/// A run in progress.
#[derive(Debug)]
pub struct Sim {
    q: EventQueue<Ev>,
    hosts: Vec<Host>,
    workload: Workload,
    rec: Recorder,
    horizon: u64,
    actions: Vec<Action>,
    costs: Vec<Costs>,
}

impl Sim {
    /// Builds a run from its description.
    pub fn new(spec: SimSpec) -> Sim {
        let horizon = spec.duration_ns;
        let mut hosts: Vec<Host> = spec
            .hosts
            .into_iter()
            .map(|h| Host::new(h, horizon))
            .collect();
        match spec.topology {
            Topology::Pair {
                bits_per_sec,
                propagation_ns,
            } => {
                for (i, h) in hosts.iter_mut().enumerate() {
                    h.tx_link = Some(Link::new(bits_per_sec, propagation_ns));
                    h.peer = Some(1 - i);
                }
            }
            Topology::Generator(g) => hosts[0].feed.generator = Some(g),
        }
        let costs = hosts.iter().map(|h| h.costs).collect();
        Sim {
            q: EventQueue::new(),
            hosts,
            workload: spec.workload,
            rec: Recorder::new(horizon),
            horizon,
            actions: Vec::with_capacity(16),
            costs,
        }
    }

    /// Runs to the horizon and returns what was measured.
    pub fn run(mut self) -> SimOutput {
        for h in 0..self.hosts.len() {
            if self.hosts[h].policy.watchdog_period().is_some() {
                let at = self.hosts[h].watchdog_phase;
                self.q.schedule(at, Ev::Watchdog(h as u8));
            }
            self.try_irq(h, 0);
        }
        let mut out = std::mem::take(&mut self.actions);
        self.workload.start(&self.costs, &mut out);
        self.perform(&mut out);
        while let Some((now, ev)) = self.q.pop_until(self.horizon) {
            self.dispatch(now, ev);
        }
        self.finish()
    }

    fn dispatch(&mut self, now: u64, ev: Ev) {
        match ev {
            Ev::NicCheck(h) => self.nic_check(h as usize, now),
            Ev::PollStep(h) => self.poll_step(h as usize, now),
            Ev::NapiTimer(h) => self.napi_timer(h as usize, now),
            Ev::Watchdog(h) => self.watchdog(h as usize, now),
            Ev::AppDone(h, gen) => self.app_done(h as usize, gen, now),
            Ev::Timer(tag) => {
                let mut out = std::mem::take(&mut self.actions);
                self.workload.on_timer(tag, now, &self.costs, &mut out);
                self.perform(&mut out);
            }
        }
    }

    fn schedule_check(&mut self, h: usize, t: u64) {
        let host = &mut self.hosts[h];
        if host.check_at.is_none_or(|c| t < c) {
            // The card is replayed lazily, so its next change may already be due: check now.
            let t = t.max(self.q.now());
            host.check_at = Some(t);
            self.q.schedule(t, Ev::NicCheck(h as u8));
        }
    }

    fn nic_check(&mut self, h: usize, now: u64) {
        let host = &mut self.hosts[h];
        if host.check_at != Some(now) {
            return;
        }
        host.check_at = None;
        host.nic.advance_to(now, &mut host.feed);
        self.try_irq(h, now);
    }

    /// With interrupts unmasked: assert now if allowed, else wait for the gate or for the
    /// next change on the card.
    fn try_irq(&mut self, h: usize, now: u64) {
        let host = &self.hosts[h];
        if !host.nic.unmasked() {
            return;
        }
        if host.nic.wants_interrupt() {
            let gate = host.nic.gate(now);
            if gate <= now {
                self.assert_irq(h, now);
            } else {
                self.schedule_check(h, gate);
            }
        } else if let Some(t) = host.nic.next_wakeup(&host.feed) {
            self.schedule_check(h, t);
        }
    }

    fn assert_irq(&mut self, h: usize, now: u64) {
        let host = &mut self.hosts[h];
        host.nic.assert_irq(now);
        let s = &mut host.stats;
        if let Some(last) = s.last_irq {
            s.min_irq_gap = s.min_irq_gap.min(now - last);
        }
        s.last_irq = Some(now);
        s.interrupts += 1;
        // The driver masks at once (below), so no second assertion can follow before it runs.
        self.hard_irq(h, now);
    }

    fn kernel(&mut self, h: usize, at: u64, dur: u64, kind: KernelWork) -> u64 {
        let host = &mut self.hosts[h];
        let (_, end, wake) = host.cpu.kernel(host.irq_core, at, dur, kind);
        self.app_wake(h, wake);
        end
    }

    fn app_wake(&mut self, h: usize, wake: Option<AppWake>) {
        if let Some(w) = wake {
            self.q.schedule(w.at, Ev::AppDone(h as u8, w.gen));
        }
    }

    /// e1000_intr with NAPI: read ICR (clears it), mask everything, schedule the poll.
    fn hard_irq(&mut self, h: usize, now: u64) {
        let end = self.kernel(h, now, self.hosts[h].costs.irq_ns, KernelWork::Irq);
        let host = &mut self.hosts[h];
        host.nic.advance_to(now, &mut host.feed);
        host.nic.read_icr_and_mask();
        let ctx = host.ctx(now);
        if let Some(regs) = host.policy.on_interrupt(&ctx) {
            host.nic.write_regs(regs, now);
        }
        if host.napi.schedule() {
            host.window = Traffic::default();
        }
        self.raise_softirq(h, end);
    }

    fn raise_softirq(&mut self, h: usize, at: u64) {
        let host = &mut self.hosts[h];
        if host.softnet.active {
            return;
        }
        host.softnet.raise(at, &host.napi_cfg);
        self.q.schedule(at, Ev::PollStep(h as u8));
    }

    fn poll_step(&mut self, h: usize, now: u64) {
        let host = &mut self.hosts[h];
        host.nic.advance_to(now, &mut host.feed);
        if host.pending_refill > 0 {
            host.nic
                .refill(std::mem::take(&mut host.pending_refill), now);
        }
        if let Some(run) = host.poll.filter(|r| r.ending) {
            self.poll_return(h, run.work, now);
            return;
        }
        let (mut run, start_cost) = match host.poll {
            Some(run) => (run, 0),
            None if host.napi.is_scheduled() => self.start_poll(h),
            None => {
                host.softnet.active = false;
                return;
            }
        };
        let k = (run.quota_left as usize).min(self.hosts[h].nic.rx_ready()) as u32;
        let cost = self.receive_batch(h, now + start_cost, k) - now;
        let host = &mut self.hosts[h];
        run.quota_left -= k;
        run.work += k;
        run.ending = k == 0 || run.quota_left == 0;
        host.pending_refill += k;
        host.poll = Some(run);
        if cost == 0 {
            self.poll_step(h, now);
        } else {
            let end = self.kernel(h, now, cost, KernelWork::Softirq);
            self.q.schedule(end, Ev::PollStep(h as u8));
        }
    }

    /// The first slice of a poll call: its fixed cost and the tx clean (e1000_clean cleans
    /// Tx before Rx). Returns the new poll and the slice's cost so far.
    fn start_poll(&mut self, h: usize) -> (PollRun, u64) {
        let host = &mut self.hosts[h];
        host.stats.polls += 1;
        let (n, bytes) = host.nic.clean_tx();
        host.window.tx_packets += n as u64;
        host.window.tx_bytes += bytes - FCS * n as u64;
        let run = PollRun {
            quota_left: host.napi_cfg.weight,
            work: 0,
            ending: false,
        };
        (run, host.costs.poll_ns + n as u64 * host.costs.tx_clean_ns)
    }

    /// Processes `k` frames from the ring starting at `t`; returns when the last finished.
    fn receive_batch(&mut self, h: usize, t: u64, k: u32) -> u64 {
        if matches!(self.workload, Workload::Stream) {
            self.receive_stream(h, t, k)
        } else {
            self.receive_frames(h, t, k)
        }
    }

    /// [`Sim::receive_batch`] for the stream sink, whose per-frame step only records
    /// ([`crate::workload::sink`]): the frames leave the ring in one drain and the host's
    /// counters are added once per batch.
    fn receive_stream(&mut self, h: usize, mut t: u64, k: u32) -> u64 {
        let host = &mut self.hosts[h];
        let rx_ns = host.costs.rx_pkt_ns;
        let mut rec = self.rec.stream_batch();
        let (mut n, mut bytes) = (0u64, 0u64);
        host.nic.take_rx_batch(k as usize, |taken| match taken {
            Taken::Frame(frame) => {
                t += rx_ns;
                n += 1;
                bytes += frame.bytes as u64 - FCS;
                crate::workload::sink(&mut rec, frame, t);
            }
            Taken::Run(run) => {
                n += run.count;
                bytes += run.count * (run.bytes as u64 - FCS);
                t = crate::workload::sink_run(&mut rec, run, t, rx_ns);
            }
        });
        drop(rec);
        host.window.rx_packets += n;
        host.window.rx_bytes += bytes;
        host.stats.rx_processed += n;
        t
    }

    /// [`Sim::receive_batch`] for workloads that answer frames (replies, ACKs, jobs).
    fn receive_frames(&mut self, h: usize, mut t: u64, k: u32) -> u64 {
        let mut out = std::mem::take(&mut self.actions);
        let host = &mut self.hosts[h];
        let rx_ns = host.costs.rx_pkt_ns;
        for _ in 0..k {
            let Some(frame) = host.nic.take_rx() else {
                break;
            };
            let start = t;
            t += rx_ns;
            host.window.rx_packets += 1;
            host.window.rx_bytes += frame.bytes as u64 - FCS;
            host.stats.rx_processed += 1;
            let rx = Rx {
                host: h,
                costs: &host.costs,
                start,
                end: t,
            };
            t += self.workload.on_rx(rx, &frame, &mut self.rec, &mut out);
        }
        self.perform(&mut out);
        t
    }

    /// A poll call returned `work`: complete the NAPI if it did not use its budget, then
    /// keep the NET_RX run going, end it, or re-raise it.
    fn poll_return(&mut self, h: usize, work: u32, now: u64) {
        let host = &mut self.hosts[h];
        host.poll = None;
        let more = host.softnet.after_poll(work, now);
        if work == host.napi_cfg.weight {
            host.stats.polls_not_done += 1;
        } else {
            host.stats.polls_done += 1;
            self.complete(h, work, now);
        }
        let host = &mut self.hosts[h];
        if !host.napi.is_scheduled() {
            host.softnet.active = false;
        } else if more {
            self.q.schedule(now, Ev::PollStep(h as u8));
        } else {
            self.squeeze(h, now);
        }
    }

    /// `napi_complete_done` and, when it allows, the driver's moderation update and unmask.
    fn complete(&mut self, h: usize, work: u32, now: u64) {
        let host = &mut self.hosts[h];
        let c = host.napi.complete_done(Nanos(now), work, host.napi_cfg.gro);
        if let Some(t) = c.timer {
            self.q.schedule(now + t.0, Ev::NapiTimer(h as u8));
        }
        if !c.unmask {
            return;
        }
        let host = &mut self.hosts[h];
        let ctx = host.ctx(now);
        let window = host.window;
        if let Some(regs) = host.policy.on_poll_complete(&ctx, &window) {
            host.nic.write_regs(regs, now);
        }
        host.nic.unmask();
        self.try_irq(h, now);
    }

    /// The NET_RX run ran out of budget or time with work left: `time_squeeze`, then
    /// restart at once, or after 10 restarts / 2 ms hand over to ksoftirqd, which waits
    /// behind a runnable application on its core for up to one slice.
    fn squeeze(&mut self, h: usize, now: u64) {
        let host = &mut self.hosts[h];
        host.stats.time_squeeze += 1;
        let start = match host.softnet.squeeze(now) {
            AfterPass::Restart => {
                host.softnet.begin_run(now, &host.napi_cfg);
                now
            }
            AfterPass::Done | AfterPass::WakeKsoftirqd => {
                let wait = host.cpu.app_backlog_on(host.irq_core, now);
                let start = now + wait.min(KSOFTIRQD_WAIT_NS);
                host.softnet.raise(start, &host.napi_cfg);
                start
            }
        };
        self.q.schedule(start, Ev::PollStep(h as u8));
    }

    fn napi_timer(&mut self, h: usize, now: u64) {
        // A timer re-armed since this event was scheduled, or a NAPI already scheduled,
        // makes this expiry a no-op.
        if !self.hosts[h].napi.timer_fired(Nanos(now)) {
            return;
        }
        let end = self.kernel(h, now, self.hosts[h].costs.hrtimer_ns, KernelWork::Irq);
        self.raise_softirq(h, end);
    }

    fn watchdog(&mut self, h: usize, now: u64) {
        let host = &mut self.hosts[h];
        host.nic.advance_to(now, &mut host.feed);
        let ctx = host.ctx(now);
        if let Some(regs) = host.policy.on_watchdog(&ctx) {
            host.nic.write_regs(regs, now);
        }
        // A jiffies timer re-armed `2 * HZ` ahead (e1000 7.0 `mod_timer(&adapter->
        // watchdog_timer, jiffies + 2 * HZ)`): its period is counted in this host's ticks.
        if let Some(p) = host.policy.watchdog_period() {
            self.q
                .schedule(now + host.host_osc.real(p.0), Ev::Watchdog(h as u8));
        }
        self.try_irq(h, now);
    }

    fn app_done(&mut self, h: usize, gen: u32, now: u64) {
        let Some((tag, next)) = self.hosts[h].cpu.complete(now, gen) else {
            return;
        };
        self.app_wake(h, next);
        let mut out = std::mem::take(&mut self.actions);
        self.workload
            .on_job_done(h, tag, now, &mut self.rec, &mut out);
        self.perform(&mut out);
    }

    /// Carries out workload actions (and leaves `out` empty for reuse).
    fn perform(&mut self, out: &mut Vec<Action>) {
        for action in out.drain(..) {
            match action {
                Action::Send { host, at, frame } => self.send(host, at, frame),
                Action::Job {
                    host,
                    ready,
                    work,
                    tag,
                } => {
                    let wake = self.hosts[host].cpu.submit(ready, work, tag);
                    self.app_wake(host, wake);
                }
                Action::Timer { at, tag } => self.q.schedule(at, Ev::Timer(tag)),
            }
        }
        if self.actions.capacity() < out.capacity() {
            std::mem::swap(&mut self.actions, out);
        }
    }

    fn send(&mut self, h: usize, at: u64, frame: crate::nic::frame::Frame) {
        let host = &mut self.hosts[h];
        let (Some(link), Some(peer)) = (host.tx_link.as_mut(), host.peer) else {
            return;
        };
        let frame = host.nic.transmit(frame, at, link);
        self.try_irq(h, self.q.now());
        self.hosts[peer].feed.link.push_back(frame);
        self.try_irq(peer, self.q.now());
    }

    fn finish(mut self) -> SimOutput {
        let mut hosts = Vec::with_capacity(self.hosts.len());
        let mut packets = 0;
        for host in &mut self.hosts {
            host.nic.advance_to(self.horizon, &mut host.feed);
            host.cpu.close();
            packets += host.nic.counters.arrived;
            hosts.push(HostReport {
                name: host.name.clone(),
                counters: host.nic.counters,
                stats: host.stats,
                cores: host.cpu.cores().to_vec(),
                holding: host.nic.holding(),
                on_link: host.feed.in_flight(),
                interval_ns: host.nic.regs().interval_ns,
            });
        }
        SimOutput {
            recorder: self.rec,
            hosts,
            events: self.q.events(),
            packets,
            sim_ns: self.horizon,
            transactions: self.workload.has_transactions(),
            time_reversals: self.q.backwards(),
        }
    }
}
