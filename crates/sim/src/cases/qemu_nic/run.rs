//! The request/response run: the event loop joining the QEMU device ([`super::qemu`]), the
//! guest's single vCPU running the driver's handlers, and the host's turnaround.
//!
//! The vCPU runs one interrupt handler at a time, first come first served (an interrupt that
//! arrives while it is busy starts when the current work ends; one that finds it halted pays
//! the wake-up latency first). A handler is the driver's code path:
//!
//! - e1000 (INTx), `e1000_intr` + `e1000_clean`: hard interrupt (ICR read clears the causes
//!   and drops the line, `IMC = ~0`), then the NAPI poll cleans the tx ring and takes the
//!   request if it has reached the rx ring by then, then `e1000_set_itr` (modes 1 and 3),
//!   `napi_complete_done` and `IMS` (unmask), then — if it took a request — the server's work
//!   up to the reply's doorbell (TDT write), where QEMU transmits at once and raises TXDW.
//! - e1000e rx vector, `e1000_intr_msix_rx` + `e1000e_poll`: writes a pending EITR, polls the
//!   rx ring only, `IMS = RXQ0`, then the server's work as above (tx completions raise TXQ0).
//! - e1000e tx vector, `e1000_intr_msix_tx`: cleans the tx ring in the hard interrupt, then
//!   `IMS = TXQ0`.
//!
//! NAPI deferral (the device's `napi_defer_hard_irqs` and `gro_flush_timeout`, Linux 6.1
//! net/core/dev.c `napi_complete_done`): a poll that took a packet sets the deferral count;
//! while it is above zero each completion takes one off and, with a non-zero timeout, returns
//! false — the driver then leaves the interrupt masked — and arms the NAPI hrtimer, whose
//! expiry (`napi_watchdog`) schedules the poll again. The timer is a guest LAPIC timer, a
//! `QEMU_CLOCK_VIRTUAL` timer like the NIC's windows, so its expiry reaches the vCPU as late
//! as theirs; its interrupt costs the vCPU a hard interrupt, and its poll reads the rings as
//! the interrupt's poll does (e1000 cleans tx there too) without touching ICR or the mask.
//! Deferral without a timeout does nothing, and the timeout alone (deferral 0) only flushes
//! GRO, which holds nothing in a 1-byte request/response (PSH segments are flushed at once).

use super::qemu::{E1000Mitigation, E1000eMsix, Outcome, Vector, RXT0, TXDW};
use super::{
    Cpu, MsixRates, QemuNic, QemuNicCosts, QemuNicError, QemuNicPrediction, QemuNicSettings,
};
use crate::cases::exp_ns;
use crate::driver::e1000::{DelayTicks, Generation, E1000 as E1000Policy, WATCHDOG};
use crate::engine::queue::EventQueue;
use crate::engine::rng::Rng;
use crate::moderation::{ModerationCtx, ModerationPolicy, Traffic};
use crate::nic::{Coalescing, NicCounters};
use nictune_core::units::Nanos;
use std::collections::VecDeque;

/// Frame bytes as the driver counts them for a 1-byte message: 14 Ethernet + 20 IP + 32 TCP
/// with timestamps (Linux default `tcp_timestamps=1`; the same header the Case 1 scenario
/// assumes, `seed-e1000-rr.toml` `mss = 1448`) + 1 payload. Both directions are this size.
const FRAME_BYTES: u64 = 67;
/// Good octets per frame as the NIC counts them (the frame plus the 4-byte FCS): what the
/// mode-4 watchdog reads.
const FRAME_OCTETS: u64 = FRAME_BYTES + 4;
/// The link speed QEMU reports (`STATUS.SPEED_1000` in both devices' reset values), which
/// `e1000_set_itr` tests before classifying.
const LINK_MBPS: u32 = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The outstanding request reaches the emulated NIC (QEMU `*_receive_iov`).
    Arrive,
    /// A mitigation/throttling timer armed for this expiry.
    Timer(Vector, u64),
    /// The vCPU starts the next queued handler.
    Start,
    /// The running handler's NAPI poll reads the rings.
    Poll,
    /// The running handler's poll completes and unmasks.
    PollDone,
    /// The e1000e tx handler finished cleaning and unmasks.
    TxDone,
    /// The server's reply: the TDT write.
    Doorbell,
    /// The driver's 2 s watchdog (mode 4 only).
    Watchdog,
    /// The NAPI hrtimer's expiry reaches the vCPU (deferral).
    NapiTimer,
}

/// What the vCPU runs: a vector's interrupt handler, or the NAPI timer's poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handler {
    Irq(Vector),
    NapiTimer,
}

enum Device {
    E1000(E1000Mitigation),
    E1000e(E1000eMsix),
}

/// The run's state.
struct Run {
    nic: QemuNic,
    cpu: Cpu,
    host_turnaround: Nanos,
    vcpu_wake: Nanos,
    main_loop_wake: Nanos,
    ide: bool,
    q: EventQueue<Ev>,
    dev: Device,
    policy: E1000Policy,
    regs: Coalescing,
    /// EITR value the rx handler writes at its next interrupt (`rx_ring->set_itr`).
    rx_eitr_pending: Option<u32>,
    /// Handlers waiting for the vCPU, and whether it runs one.
    queue: VecDeque<Handler>,
    running: Option<Handler>,
    /// `napi_defer_hard_irqs`, `gro_flush_timeout` (ns), and the deferral count left.
    defer: u32,
    gro_flush_ns: u64,
    defer_left: u32,
    /// The running handler is in the server's work (between its poll and the reply), and
    /// how long timer polls have preempted that work so far.
    in_app: bool,
    app_delay: u64,
    /// When the running handler started its current stretch of work (for busy time).
    busy_from: u64,
    /// The outstanding request: when it reached the NIC, and whether a poll took it.
    request_at: Option<u64>,
    request_taken: bool,
    /// The running handler took the request in its poll.
    took_request: bool,
    /// Tx descriptors written back and not yet cleaned.
    tx_uncleaned: u64,
    window: Traffic,
    counters: NicCounters,
    app_jitter: Rng,
    host_jitter: Rng,
    m: Measure,
}

/// What the measured part of the run saw.
struct Measure {
    from: u64,
    to: u64,
    transactions: u64,
    round_trips_ns: Vec<u64>,
    interrupts: [u64; 3],
    packets: u64,
    busy_ns: u64,
}

impl Measure {
    fn inside(&self, t: u64) -> bool {
        (self.from..self.to).contains(&t)
    }
}

/// Octets each way of the traffic a tune runs while a run-time `rx-usecs 4` settles: one
/// watchdog period (2 s) of the RR at 1,000 transactions/s. Only its symmetry matters — the
/// watchdog's rate is 2000 + 6000·|tx − rx|/(tx + rx) for any total of 10,000 octets or more.
const SETTLE_OCTETS: u64 = 2_000 * FRAME_OCTETS;

/// Resolves the driver's moderation setting into its policy, its first registers and the
/// NIC's counters as the run starts. `rx-usecs 4` set at run time starts as a tune measures
/// it: after its wait for the watchdog's pass (`Setting::settle_time` in the tune crate),
/// which computed the rate from the symmetric RR traffic of that wait — not from the idle
/// link a module load leaves (8,000/s), nor from the 16-bit cut of 10⁹/(4·256) that
/// `e1000_set_coalesce` writes first. The module parameter starts there too when
/// [`QemuNicSettings::after_watchdog_pass`] says the run waited for that pass.
pub(super) fn driver(
    settings: &QemuNicSettings,
) -> Result<(E1000Policy, Coalescing, NicCounters), QemuNicError> {
    let value = match settings.rx_usecs {
        None => settings.interrupt_throttle_rate,
        Some(us) => super::rx_usecs_as_itr(us)?,
    };
    let delays = DelayTicks {
        rx: settings.rx_int_delay,
        rx_abs: settings.rx_abs_int_delay,
        tx: settings.tx_int_delay,
        tx_abs: settings.tx_abs_int_delay,
    };
    // Linux 6.1 e1000 and e1000e take the same InterruptThrottleRate values and run the same
    // e1000_update_itr/e1000_set_itr and mode-4 watchdog arithmetic as the in-kernel e1000
    // modelled in `driver::e1000` (generation 7.3).
    let mut policy =
        E1000Policy::new(Generation::V7_3, value, delays).map_err(QemuNicError::Itr)?;
    let mut regs = policy.initial();
    let mut counters = NicCounters::default();
    // Mode 4, set at run time (always waited for) or loaded and waited for.
    let settled = settings.rx_usecs.is_some() || settings.after_watchdog_pass;
    if value == 4 && settled {
        counters.tx_bytes = SETTLE_OCTETS;
        counters.rx_bytes = SETTLE_OCTETS;
        let ctx = ModerationCtx {
            now: Nanos::ZERO,
            link_mbps: LINK_MBPS,
            counters,
            regs,
        };
        regs = policy.on_watchdog(&ctx).unwrap_or(regs);
    }
    Ok((policy, regs, counters))
}

/// The ITR/EITR register value for a programmed interval (256 ns units).
fn itr_units(interval_ns: u64) -> u32 {
    (interval_ns / super::qemu::ITR_UNIT_NS) as u32
}

/// A delay register in 1.024 µs ticks.
fn ticks(ns: u64) -> u32 {
    (ns / 1024) as u32
}

/// Simulates `duration` (the first tenth is warm-up, not measured) of the RR on `nic` with
/// `settings` and `costs`, from `seed`.
pub fn predict_rr(
    nic: QemuNic,
    settings: &QemuNicSettings,
    costs: &QemuNicCosts,
    seed: u64,
    duration: Nanos,
) -> Result<QemuNicPrediction, QemuNicError> {
    let (policy, regs, counters) = driver(settings)?;
    let dev = match nic {
        QemuNic::E1000 => Device::E1000(E1000Mitigation::new(
            itr_units(regs.interval_ns),
            ticks(regs.tx_abs_ns),
            ticks(regs.rx_abs_ns),
            ticks(regs.rx_pkt_ns),
        )),
        // e1000_configure_msix writes 1e9/(itr·256) to the rx, tx and other EITRs, or 1
        // when the rate is 0; QEMU keeps at least 500.
        QemuNic::E1000e => {
            let w = itr_units(regs.interval_ns).max(1);
            let m = E1000eMsix::new([w, w, w]);
            Device::E1000e(match costs.postponed_before {
                true => m.postponed_before(),
                false => m,
            })
        }
    };
    let end = duration.0;
    let mut run = Run {
        nic,
        cpu: Cpu::of(costs.request),
        host_turnaround: costs.host_turnaround,
        vcpu_wake: costs.vcpu_wake,
        main_loop_wake: costs.main_loop_wake,
        // e1000_configure_tx: IDE on every descriptor when TxIntDelay ≠ 0.
        ide: settings.tx_int_delay != 0,
        q: EventQueue::new(),
        dev,
        policy,
        regs,
        rx_eitr_pending: None,
        queue: VecDeque::new(),
        running: None,
        defer: settings.napi_defer_hard_irqs,
        gro_flush_ns: settings.gro_flush_timeout.0,
        defer_left: 0,
        in_app: false,
        app_delay: 0,
        busy_from: 0,
        request_at: None,
        request_taken: false,
        took_request: false,
        tx_uncleaned: 0,
        window: Traffic::default(),
        counters,
        app_jitter: Rng::new(seed, 1),
        host_jitter: Rng::new(seed, 2),
        m: Measure {
            // Warm-up: the first window phases and the dynamic ITR's ramp settle within a few
            // transactions; a tenth of the run also covers several 10 ms windows at 100/s.
            from: end / 10,
            to: end,
            transactions: 0,
            round_trips_ns: Vec::new(),
            interrupts: [0; 3],
            packets: 0,
            busy_ns: 0,
        },
    };
    if run.policy.watchdog_period().is_some() {
        // The watchdog is an unrelated timer: its phase is drawn from the seed.
        let phase = Rng::new(seed, 3).below(WATCHDOG.0);
        run.q.schedule(phase, Ev::Watchdog);
    }
    run.q.schedule(0, Ev::Arrive);
    while let Some((now, ev)) = run.q.pop_until(end) {
        run.step(now, ev);
    }
    debug_assert_eq!(run.q.backwards(), 0);
    let mut m = run.m;
    let round_trips = &mut m.round_trips_ns;
    let secs = (m.to - m.from) as f64 / 1e9;
    let ints: u64 = m.interrupts.iter().sum();
    round_trips.sort_unstable();
    let pct = |q: f64| {
        if round_trips.is_empty() {
            return f64::NAN;
        }
        let i = ((round_trips.len() - 1) as f64 * q).round() as usize;
        round_trips[i] as f64 / 1e3
    };
    Ok(QemuNicPrediction {
        transactions_per_sec: m.transactions as f64 / secs,
        p50_us: pct(0.5),
        p99_us: pct(0.99),
        interrupts_per_sec: ints as f64 / secs,
        vectors: (nic == QemuNic::E1000e).then(|| MsixRates {
            rx: m.interrupts[0] as f64 / secs,
            tx: m.interrupts[1] as f64 / secs,
            other: m.interrupts[2] as f64 / secs,
        }),
        packets_per_interrupt: if ints == 0 {
            0.0
        } else {
            m.packets as f64 / ints as f64
        },
        guest_busy: m.busy_ns as f64 / 1e9 / secs,
    })
}

impl Run {
    fn step(&mut self, now: u64, ev: Ev) {
        match ev {
            Ev::Arrive => self.arrive(now),
            Ev::Timer(v, expiry) => {
                let out = match &mut self.dev {
                    Device::E1000(d) => d.timer_fired(now, expiry),
                    Device::E1000e(m) => m.timer_fired(v, expiry),
                };
                self.apply(now, v, out);
            }
            Ev::Start => self.start(now),
            Ev::Poll => self.poll(now),
            Ev::PollDone => self.poll_done(now),
            Ev::TxDone => {
                let out = self.msix().unmask(now, Vector::Tx);
                self.apply(now, Vector::Tx, out);
                self.finish(now);
            }
            Ev::Doorbell => self.doorbell(now),
            Ev::Watchdog => self.watchdog(now),
            Ev::NapiTimer => self.napi_timer(now),
        }
    }

    fn msix(&mut self) -> &mut E1000eMsix {
        match &mut self.dev {
            Device::E1000e(m) => m,
            Device::E1000(_) => unreachable!("an MSI-X step on the e1000 model"),
        }
    }

    fn e1000(&mut self) -> &mut E1000Mitigation {
        match &mut self.dev {
            Device::E1000(d) => d,
            Device::E1000e(_) => unreachable!("an INTx step on the e1000e model"),
        }
    }

    /// Schedules an armed timer (its expiry runs once QEMU's main-loop thread has woken) and
    /// hands an interrupt to the vCPU.
    fn apply(&mut self, now: u64, v: Vector, out: Outcome) {
        if let Some(expiry) = out.armed {
            self.q
                .schedule(expiry + self.main_loop_wake.0, Ev::Timer(v, expiry));
        }
        if out.interrupt {
            if self.m.inside(now) {
                self.m.interrupts[v as usize] += 1;
            }
            self.hand_to_vcpu(now, Handler::Irq(v));
        }
    }

    /// Queues `h` for the vCPU.
    fn hand_to_vcpu(&mut self, now: u64, h: Handler) {
        self.queue.push_back(h);
        if self.running.is_none() {
            // The vCPU was halted: its thread must be woken before the handler runs.
            self.running = Some(h);
            self.q.schedule(now + self.vcpu_wake.0, Ev::Start);
        }
    }

    fn arrive(&mut self, now: u64) {
        self.request_at = Some(now);
        self.request_taken = false;
        self.counters.rx_packets += 1;
        self.counters.rx_bytes += FRAME_OCTETS;
        let out = match &mut self.dev {
            Device::E1000(d) => d.cause(now, RXT0),
            Device::E1000e(m) => m.cause(now, Vector::Rx),
        };
        self.apply(now, Vector::Rx, out);
    }

    fn start(&mut self, now: u64) {
        let h = self
            .queue
            .pop_front()
            .expect("a started handler was queued");
        self.running = Some(h);
        self.busy_from = now;
        self.took_request = false;
        let v = match h {
            Handler::Irq(v) => v,
            Handler::NapiTimer => {
                // The timer's interrupt, then napi_watchdog's poll: ICR and the mask stay
                // as the last handler left them.
                self.q.schedule(now + self.cpu.hardirq, Ev::Poll);
                return;
            }
        };
        match self.nic {
            QemuNic::E1000 => {
                // e1000_intr: the ICR read drops the line, IMC masks everything, the counts
                // of the next e1000_set_itr start from zero.
                let d = self.e1000();
                d.read_icr(now);
                d.mask_all(now);
                self.window = Traffic::default();
                self.q.schedule(now + self.cpu.hardirq, Ev::Poll);
            }
            QemuNic::E1000e if v == Vector::Rx => {
                if let Some(w) = self.rx_eitr_pending.take() {
                    self.msix().write_eitr(Vector::Rx, w);
                }
                self.window.rx_packets = 0;
                self.window.rx_bytes = 0;
                self.q.schedule(now + self.cpu.hardirq, Ev::Poll);
            }
            QemuNic::E1000e => {
                // e1000_intr_msix_tx cleans in the hard interrupt.
                let n = std::mem::take(&mut self.tx_uncleaned);
                self.window.tx_packets = n;
                self.window.tx_bytes = n * FRAME_BYTES;
                self.count_packets(now, n);
                self.q
                    .schedule(now + self.cpu.hardirq + n * self.cpu.tx_clean, Ev::TxDone);
            }
        }
    }

    fn count_packets(&mut self, now: u64, n: u64) {
        if self.m.inside(now) {
            self.m.packets += n;
        }
    }

    /// e1000's poll cleans the tx ring first (`e1000_clean_tx_irq`): the descriptors written
    /// back since, into the moderation window's counts; returns the vCPU time it takes.
    fn clean_tx_in_poll(&mut self, now: u64) -> u64 {
        let n = std::mem::take(&mut self.tx_uncleaned);
        self.window.tx_packets += n;
        self.window.tx_bytes += n * FRAME_BYTES;
        self.count_packets(now, n);
        n * self.cpu.tx_clean
    }

    fn poll(&mut self, now: u64) {
        let mut cost = self.cpu.poll;
        if self.nic == QemuNic::E1000 {
            cost += self.clean_tx_in_poll(now);
        }
        if self.request_at.is_some_and(|a| a <= now) && !self.request_taken {
            self.request_taken = true;
            self.took_request = true;
            self.window.rx_packets += 1;
            self.window.rx_bytes += FRAME_BYTES;
            self.count_packets(now, 1);
            cost += self.cpu.rx_pkt;
        }
        self.q.schedule(now + cost, Ev::PollDone);
    }

    /// What the driver's moderation code sees.
    fn ctx(&self, now: u64) -> ModerationCtx {
        ModerationCtx {
            now: Nanos(now),
            link_mbps: LINK_MBPS,
            counters: self.counters,
            regs: self.regs,
        }
    }

    fn poll_done(&mut self, now: u64) {
        self.complete_poll(now, self.took_request);
        if self.took_request {
            self.in_app = true;
            let extra = exp_ns(&mut self.app_jitter, self.cpu.app_jitter as f64);
            self.q
                .schedule(now + self.cpu.app_fixed + extra, Ev::Doorbell);
        } else {
            self.finish(now);
        }
    }

    /// The end of a poll at `now`: `e1000_set_itr` (modes 1 and 3), then
    /// `napi_complete_done` — the unmask, or while deferring the NAPI timer.
    fn complete_poll(&mut self, now: u64, work: bool) {
        let ctx = self.ctx(now);
        if let Some(regs) = self.policy.on_poll_complete(&ctx, &self.window) {
            self.regs = regs;
            let units = itr_units(regs.interval_ns);
            match &mut self.dev {
                Device::E1000(d) => d.write_itr(units),
                // e1000_set_itr with MSI-X only sets rx_ring->itr_val and set_itr; the rx
                // handler writes it at its next interrupt.
                Device::E1000e(_) => self.rx_eitr_pending = Some(units),
            }
        }
        if self.napi_complete_done(work) {
            let out = match &mut self.dev {
                Device::E1000(d) => d.unmask(now),
                Device::E1000e(m) => m.unmask(now, Vector::Rx),
            };
            self.apply(now, Vector::Rx, out);
        } else {
            // hrtimer_start(gro_flush_timeout): its expiry waits for QEMU's main loop as the
            // NIC's windows do.
            self.q.schedule(
                now + self.gro_flush_ns + self.main_loop_wake.0,
                Ev::NapiTimer,
            );
        }
    }

    /// `napi_complete_done`'s verdict on a poll that took a packet (`work`) or not: true when
    /// the driver unmasks the interrupt, false while deferral keeps it masked (the timer
    /// polls next).
    fn napi_complete_done(&mut self, work: bool) -> bool {
        if work {
            self.defer_left = self.defer;
        }
        if self.defer_left > 0 {
            self.defer_left -= 1;
            return self.gro_flush_ns == 0;
        }
        true
    }

    /// The NAPI timer's expiry. The timer interrupt preempts the server's work (a hard
    /// interrupt, then its softirq poll on the way out), which resumes that much later; at
    /// any other time the vCPU takes it after the handler it runs (the NAPI is being
    /// polled then, and a poll in progress is not scheduled twice).
    fn napi_timer(&mut self, now: u64) {
        if !self.in_app {
            self.hand_to_vcpu(now, Handler::NapiTimer);
            return;
        }
        let mut cost = self.cpu.hardirq + self.cpu.poll;
        if self.nic == QemuNic::E1000 {
            cost += self.clean_tx_in_poll(now);
        }
        // The request being served was taken; the next one comes after its reply.
        self.app_delay += cost;
        self.complete_poll(now + cost, false);
    }

    fn doorbell(&mut self, now: u64) {
        // Timer polls that preempted the server's work push its reply back.
        let delay = std::mem::take(&mut self.app_delay);
        if delay > 0 {
            self.q.schedule(now + delay, Ev::Doorbell);
            return;
        }
        self.in_app = false;
        let arrived = self.request_at.take().expect("a reply answers a request");
        let turnaround = Nanos(
            (self.host_turnaround.0 as f64 * (1.0 - super::JITTER_SHARE)) as u64
                + exp_ns(
                    &mut self.host_jitter,
                    self.host_turnaround.0 as f64 * super::JITTER_SHARE,
                ),
        );
        if self.m.inside(now) {
            self.m.transactions += 1;
            self.m.round_trips_ns.push(now - arrived + turnaround.0);
        }
        self.q.schedule(now + turnaround.0, Ev::Arrive);
        self.tx_uncleaned += 1;
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += FRAME_OCTETS;
        let ide = self.ide;
        let (v, out) = match &mut self.dev {
            Device::E1000(d) => {
                d.tx_descriptor(ide);
                (Vector::Rx, d.cause(now, TXDW))
            }
            Device::E1000e(m) => (Vector::Tx, m.cause(now, Vector::Tx)),
        };
        self.apply(now, v, out);
        self.finish(now);
    }

    /// The running handler (and the server's work it led to) ends: the next queued handler
    /// starts at once, or the vCPU halts.
    fn finish(&mut self, now: u64) {
        if self.m.inside(now) {
            self.m.busy_ns += now - self.busy_from.max(self.m.from);
        }
        if self.queue.is_empty() {
            self.running = None;
        } else {
            self.q.schedule(now, Ev::Start);
        }
    }

    fn watchdog(&mut self, now: u64) {
        let ctx = self.ctx(now);
        if let Some(regs) = self.policy.on_watchdog(&ctx) {
            self.regs = regs;
            let units = itr_units(regs.interval_ns);
            match &mut self.dev {
                Device::E1000(d) => d.write_itr(units),
                // e1000e_write_itr writes every vector's EITR.
                Device::E1000e(m) => {
                    for v in [Vector::Rx, Vector::Tx, Vector::Other] {
                        m.write_eitr(v, units);
                    }
                }
            }
        }
        self.q.schedule(now + WATCHDOG.0, Ev::Watchdog);
    }
}
