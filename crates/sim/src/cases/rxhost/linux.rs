//! The softirq rules of Linux 2.6.32 for the host's interrupt mode (see the parent's doc):
//! `irq_exit` → `__do_softirq` passes with their restart count, `net_rx_action` with its
//! budget and jiffy limit, an interrupt due at the end of a poll taken within the pass, and
//! ksoftirqd.

use super::{Event, Kernel, Linux2632, RxHostParams, Sim, SoftirqStats};
use crate::napi_extras::softirq::{AfterPass, Jiffies, NetRxAction, SoftirqRun};
use nictune_core::units::Nanos;

/// Softirq bits this model raises.
pub(super) const NET_RX: u8 = 1;
const TIMER: u8 = 2;

/// The state of the 2.6.32 softirq machinery.
pub(super) struct Softirq {
    pub(super) cfg: Linux2632,
    pub(super) clock: Jiffies,
    /// Softirqs raised and not yet run.
    pub(super) pending: u8,
    /// The `__do_softirq` in progress, if any.
    pub(super) run: Option<SoftirqRun>,
    /// Its `net_rx_action` in progress, and whether it may poll again.
    pub(super) net_rx: Option<(NetRxAction, bool)>,
    /// The NAPI is on the poll list.
    pub(super) listed: bool,
    /// ksoftirqd was woken and has not run yet.
    pub(super) ksoftirqd: bool,
    /// What the machinery did.
    pub(super) stats: SoftirqStats,
}

impl Sim<'_> {
    /// The hard interrupt's (or the tick's) exit: `do_softirq` if anything is pending.
    pub(super) fn irq_exit(&mut self) {
        let Some(l) = self.linux.as_mut() else {
            return self.poll();
        };
        if l.pending == 0 {
            return self.kernel_next();
        }
        l.ksoftirqd = false;
        l.run = Some(SoftirqRun::start_2632(l.clock));
        l.stats.invocations += 1;
        self.softirq_pass();
    }

    /// One pass of `__do_softirq` over what is pending.
    pub(super) fn softirq_pass(&mut self) {
        let l = self.linux.as_mut().expect("2.6.32 rules");
        let work = std::mem::take(&mut l.pending);
        if work & NET_RX != 0 {
            l.net_rx = Some((NetRxAction::start_2632(l.clock, Nanos(self.now)), true));
            return self.net_rx_next();
        }
        self.softirq_pass_done();
    }

    /// `net_rx_action`'s loop: poll while the NAPI is listed and budget and time allow.
    pub(super) fn net_rx_next(&mut self) {
        let l = self.linux.as_mut().expect("2.6.32 rules");
        let go = l.net_rx.as_ref().is_some_and(|&(_, go)| go);
        if !l.listed {
            l.net_rx = None;
            return self.softirq_pass_done();
        }
        if !go {
            l.stats.time_squeezes += 1;
            l.pending |= NET_RX;
            l.net_rx = None;
            return self.softirq_pass_done();
        }
        self.poll();
    }

    /// The poll completed (`napi_complete`) and unmasked the vector: an interrupt already
    /// due fires inside the pass and lists the NAPI again.
    pub(super) fn napi_completed(&mut self) {
        self.linux.as_mut().expect("2.6.32 rules").listed = false;
        match self.irq_due() {
            Some(at) if at <= self.now => {
                self.irq_assert();
                let l = self.linux.as_mut().expect("2.6.32 rules");
                l.listed = true;
                l.pending |= NET_RX;
                l.stats.in_pass_irqs += 1;
                let d = self.p.costs.irq.0;
                self.run_kernel(Kernel::IrqInPass, d, true);
            }
            _ => {
                self.arm_irq();
                self.net_rx_next();
            }
        }
    }

    /// The end of a pass: restart while something was raised, at most 10 times, then leave
    /// it to ksoftirqd.
    pub(super) fn softirq_pass_done(&mut self) {
        let now = Nanos(self.now);
        let l = self.linux.as_mut().expect("2.6.32 rules");
        let run = l.run.as_mut().expect("a do_softirq in progress");
        match run.after_pass(now, l.pending != 0, false) {
            AfterPass::Restart => {
                l.stats.restarts += 1;
                self.softirq_pass()
            }
            AfterPass::WakeKsoftirqd => {
                l.stats.ksoftirqd_wakeups += 1;
                l.ksoftirqd = true;
                l.run = None;
                self.kernel_next()
            }
            AfterPass::Done => {
                l.run = None;
                self.kernel_next()
            }
        }
    }

    /// ksoftirqd gets the CPU.
    pub(super) fn ksoftirqd_switch(&mut self) {
        let d = self.p.extras.linux.map_or(0, |l| l.ksoftirqd_switch.0);
        self.acct.system += d;
        self.kernel = Kernel::Ksoftirqd;
        self.kernel_end = self.now + d;
        self.agenda.schedule(self.kernel_end, Event::KernelDone);
    }

    /// The 2.6.32 tick: TIMER_SOFTIRQ is raised; outside a pass the interrupt's exit runs
    /// whatever is pending (including work left to ksoftirqd).
    pub(super) fn linux_tick(&mut self) {
        let l = self.linux.as_mut().expect("2.6.32 rules");
        self.agenda
            .schedule(self.now + 1_000_000_000 / l.cfg.hz as u64, Event::Tick);
        l.pending |= TIMER;
        if self.kernel == Kernel::Idle {
            self.irq_exit();
        }
    }
}

/// The 2.6.32 machinery, in interrupt mode without busy polling (2.6.32 had none).
pub(super) fn state(p: &RxHostParams, interrupts: bool) -> Option<Softirq> {
    let cfg = p
        .extras
        .linux
        .filter(|_| interrupts && p.extras.busy_poll.is_none())?;
    Some(Softirq {
        cfg,
        clock: Jiffies::new(cfg.hz),
        pending: 0,
        run: None,
        net_rx: None,
        listed: false,
        ksoftirqd: false,
        stats: SoftirqStats::default(),
    })
}
