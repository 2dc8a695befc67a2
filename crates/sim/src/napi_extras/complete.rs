//! `napi_complete_done`, IRQ deferral and IRQ suspension (moderation-algorithms.md §6.1, §6.2).
//!
//! A NAPI instance carries the state bits that decide whether completing a poll unmasks the
//! device interrupt or keeps it masked and re-polls from a timer instead.

use nictune_core::units::Nanos;

pub use crate::host::napi::NapiConfig;

/// What a completion decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The driver unmasks its IRQ (`napi_complete_done` returned true).
    pub unmask: bool,
    /// A timer (relative) re-polls the NAPI later.
    pub timer: Option<Nanos>,
    /// MISSED was set: the NAPI is scheduled again at once.
    pub reschedule: bool,
}

/// One NAPI instance's state bits and deferral counter.
#[derive(Debug, Clone, Default)]
pub struct Napi {
    cfg: NapiConfig,
    sched: bool,
    missed: bool,
    in_busy_poll: bool,
    prefer_busy_poll: bool,
    defer_count: u32,
    timer: Option<Nanos>,
}

impl Napi {
    /// An idle NAPI with `cfg`.
    pub fn new(cfg: NapiConfig) -> Napi {
        Napi {
            cfg,
            ..Napi::default()
        }
    }

    /// Whether the NAPI is scheduled (owned by softirq or a busy poller).
    pub fn is_scheduled(&self) -> bool {
        self.sched
    }

    /// Whether a busy poller owns it.
    pub fn in_busy_poll(&self) -> bool {
        self.in_busy_poll
    }

    /// The armed timer's deadline.
    pub fn timer(&self) -> Option<Nanos> {
        self.timer
    }

    /// Remaining empty polls before the IRQ is unmasked.
    pub fn defer_count(&self) -> u32 {
        self.defer_count
    }

    /// The configuration.
    pub fn config(&self) -> &NapiConfig {
        &self.cfg
    }

    /// `napi_schedule` from the IRQ handler (or a timer): true if it now owns the NAPI and
    /// a poll must run; false if it was already scheduled (MISSED is set instead).
    pub fn schedule(&mut self) -> bool {
        if self.sched {
            self.missed = true;
            return false;
        }
        self.sched = true;
        true
    }

    /// The hrtimer fired at `now` (`napi_watchdog`): schedules the NAPI unless it already is.
    pub fn timer_fired(&mut self, now: Nanos) -> bool {
        match self.timer {
            Some(t) if t <= now => {
                self.timer = None;
                !self.sched && self.schedule()
            }
            _ => false,
        }
    }

    /// `napi_complete_done` at `now` after a poll that did `work` (< budget) packets.
    pub fn complete_done(&mut self, now: Nanos, work: u32, gro_active: bool) -> Completion {
        if self.in_busy_poll {
            return Completion {
                unmask: false,
                timer: None,
                reschedule: false,
            };
        }
        let (timeout, ret) = self.completion_timeout(work, gro_active);
        self.sched = false;
        self.prefer_busy_poll = false;
        if std::mem::take(&mut self.missed) {
            self.sched = true;
            return Completion {
                unmask: false,
                timer: None,
                reschedule: true,
            };
        }
        let timer = (timeout > Nanos::ZERO).then_some(timeout);
        // hrtimer_start restarts an armed timer; a completion without a timeout leaves an
        // armed one alone (the kernel does not cancel it here).
        if let Some(t) = timer {
            self.timer = Some(now + t);
        }
        Completion {
            unmask: ret,
            timer,
            reschedule: false,
        }
    }

    /// The timeout and return value of `napi_complete_done` before the state bits change.
    fn completion_timeout(&mut self, work: u32, gro_active: bool) -> (Nanos, bool) {
        let mut timeout = Nanos::ZERO;
        let mut ret = true;
        if work > 0 {
            if gro_active {
                timeout = self.cfg.gro_flush_timeout;
            }
            self.defer_count = self.cfg.defer_hard_irqs;
        }
        if self.prefer_busy_poll {
            timeout = self.cfg.irq_suspend_timeout;
            ret = timeout == Nanos::ZERO;
        }
        if ret && self.defer_count > 0 {
            self.defer_count -= 1;
            timeout = self.cfg.gro_flush_timeout;
            ret = timeout == Nanos::ZERO;
        }
        (timeout, ret)
    }

    /// A busy poller tries to take the NAPI: true if it now owns it (SCHED|IN_BUSY_POLL).
    /// If someone else owns it and `prefer` is set, PREFER_BUSY_POLL is set so the owner's
    /// next full poll completes instead of repolling in softirq.
    pub fn busy_poll_take(&mut self, prefer: bool) -> bool {
        if self.sched && !self.in_busy_poll {
            if prefer {
                self.prefer_busy_poll = true;
            }
            return false;
        }
        self.sched = true;
        self.in_busy_poll = true;
        if prefer {
            self.prefer_busy_poll = true;
        }
        true
    }

    /// `busy_poll_stop` at `now`. Returns whether the final reschedule is skipped (a timer
    /// was armed instead). The caller then polls once more and calls [`Napi::complete_done`].
    pub fn busy_poll_stop(&mut self, now: Nanos, prefer: bool) -> bool {
        self.missed = false;
        self.in_busy_poll = false;
        if !prefer {
            return false;
        }
        self.defer_count = self.cfg.defer_hard_irqs;
        let timeout = if self.cfg.irq_suspend_timeout > Nanos::ZERO {
            self.cfg.irq_suspend_timeout
        } else if self.defer_count > 0 {
            self.cfg.gro_flush_timeout
        } else {
            Nanos::ZERO
        };
        if timeout == Nanos::ZERO {
            return false;
        }
        self.timer = Some(now + timeout);
        true
    }

    /// The busy poller's final poll used its whole budget, so the driver did not complete
    /// (`__busy_poll_stop`, net/core/dev.c): with a timer armed (`skip_schedule`) the NAPI is
    /// released to it; otherwise it stays scheduled and goes to softirq. Returns true when a
    /// softirq poll must run.
    pub fn busy_poll_full(&mut self, skip_schedule: bool) -> bool {
        if skip_schedule {
            self.sched = false;
        }
        !skip_schedule
    }

    /// epoll found events with prefer-busy-poll (`napi_suspend_irqs`): push the safety-net
    /// timer to `now + irq_suspend_timeout`.
    pub fn suspend_irqs(&mut self, now: Nanos) {
        if self.cfg.irq_suspend_timeout > Nanos::ZERO {
            self.timer = Some(now + self.cfg.irq_suspend_timeout);
        }
    }

    /// epoll found nothing (`napi_resume_irqs`): schedule the NAPI now so that the normal
    /// completion path decides when the IRQ comes back. True if a poll must run.
    pub fn resume_irqs(&mut self) -> bool {
        self.cfg.irq_suspend_timeout > Nanos::ZERO && self.schedule()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deferred(n: u32, g: u64) -> Napi {
        Napi::new(NapiConfig {
            defer_hard_irqs: n,
            gro_flush_timeout: Nanos(g * 1000),
            irq_suspend_timeout: Nanos::ZERO,
            ..NapiConfig::default()
        })
    }

    #[test]
    fn without_deferral_completion_unmasks() {
        let mut n = deferred(0, 0);
        assert!(n.schedule());
        let c = n.complete_done(Nanos::ZERO, 5, true);
        assert_eq!(
            c,
            Completion {
                unmask: true,
                timer: None,
                reschedule: false
            }
        );
        assert!(!n.is_scheduled());
    }

    #[test]
    fn deferral_keeps_irq_masked_for_n_empty_polls() {
        let mut n = deferred(2, 20);
        n.schedule();
        // Non-empty poll: count reset to 2, then 2 → 1, timer 20 µs, IRQ stays masked.
        let c = n.complete_done(Nanos::ZERO, 10, true);
        assert_eq!((c.unmask, c.timer), (false, Some(Nanos(20_000))));
        assert_eq!(n.defer_count(), 1);
        assert!(!n.timer_fired(Nanos(19_999)));
        assert!(n.timer_fired(Nanos(20_000)));
        // First empty poll: 1 → 0, still masked.
        let c = n.complete_done(Nanos(21_000), 0, true);
        assert!(!c.unmask);
        assert!(n.timer_fired(Nanos(41_000)));
        // Second empty poll: count is 0 → unmask.
        let c = n.complete_done(Nanos(42_000), 0, true);
        assert_eq!((c.unmask, c.timer), (true, None));
    }

    #[test]
    fn gro_timeout_without_defer_unmasks_and_still_arms_the_timer() {
        let mut n = deferred(0, 50);
        n.schedule();
        let c = n.complete_done(Nanos::ZERO, 3, true);
        assert_eq!((c.unmask, c.timer), (true, Some(Nanos(50_000))));
    }

    #[test]
    fn missed_schedule_reschedules_instead_of_completing() {
        let mut n = deferred(0, 0);
        assert!(n.schedule());
        assert!(!n.schedule(), "second IRQ while polling sets MISSED");
        let c = n.complete_done(Nanos::ZERO, 1, false);
        assert_eq!(
            c,
            Completion {
                unmask: false,
                timer: None,
                reschedule: true
            }
        );
        assert!(n.is_scheduled());
    }

    #[test]
    fn busy_poller_owns_the_napi_and_completion_does_nothing() {
        let mut n = deferred(0, 0);
        assert!(n.busy_poll_take(false));
        assert!(n.in_busy_poll());
        let c = n.complete_done(Nanos::ZERO, 3, true);
        assert!(!c.unmask && c.timer.is_none());
        assert!(!n.busy_poll_stop(Nanos(1), false));
        assert!(n.complete_done(Nanos(2), 0, true).unmask);
    }

    #[test]
    fn irq_suspension_keeps_irqs_off_while_epoll_finds_events() {
        let cfg = NapiConfig {
            defer_hard_irqs: 2,
            gro_flush_timeout: Nanos::from_micros(20),
            irq_suspend_timeout: Nanos::from_millis(20),
            ..NapiConfig::default()
        };
        let mut n = Napi::new(cfg);
        assert!(n.busy_poll_take(true));
        // Busy poll stop with prefer: timer = irq_suspend_timeout, reschedule skipped.
        assert!(n.busy_poll_stop(Nanos::ZERO, true));
        assert_eq!(n.timer(), Some(Nanos::from_millis(20)));
        // The final poll completes with PREFER set: IRQ stays masked, suspend timer armed.
        let c = n.complete_done(Nanos(1_000), 4, true);
        assert_eq!((c.unmask, c.timer), (false, Some(Nanos::from_millis(20))));
        // Each epoll hit pushes the safety net forward.
        n.suspend_irqs(Nanos::from_millis(5));
        assert_eq!(n.timer(), Some(Nanos::from_millis(25)));
        // epoll finds nothing: resume schedules the NAPI; the completion then uses the normal
        // deferral (prefer cleared by the previous completion): defer 2 → masked on a timer.
        assert!(n.resume_irqs());
        let c = n.complete_done(Nanos::from_millis(6), 0, true);
        assert_eq!((c.unmask, c.timer), (false, Some(Nanos::from_micros(20))));
    }

    #[test]
    fn a_full_final_busy_poll_goes_to_softirq_or_to_the_armed_timer() {
        let mut n = deferred(0, 0);
        assert!(n.busy_poll_take(false));
        assert!(!n.busy_poll_stop(Nanos(1), false));
        assert!(n.busy_poll_full(false), "no timer: softirq takes over");
        assert!(n.is_scheduled());
        let mut n = deferred(2, 20);
        assert!(n.busy_poll_take(true));
        assert!(n.busy_poll_stop(Nanos(1), true));
        assert!(!n.busy_poll_full(true), "the timer re-polls");
        assert!(!n.is_scheduled());
        assert!(n.timer_fired(Nanos(20_001)));
    }

    #[test]
    fn prefer_busy_poll_set_by_a_waiting_poller_makes_the_owner_complete() {
        let cfg = NapiConfig {
            defer_hard_irqs: 0,
            gro_flush_timeout: Nanos::ZERO,
            irq_suspend_timeout: Nanos::from_millis(1),
            ..NapiConfig::default()
        };
        let mut n = Napi::new(cfg);
        assert!(n.schedule()); // owned by softirq
        assert!(!n.busy_poll_take(true));
        let c = n.complete_done(Nanos::ZERO, 64, true);
        assert_eq!((c.unmask, c.timer), (false, Some(Nanos::from_millis(1))));
    }
}
