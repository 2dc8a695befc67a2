//! Application busy polling: `napi_busy_loop` (moderation-algorithms.md §6.3).
//!
//! A socket read (`busy_read`) or poll/epoll (`busy_poll`) spins on the NAPI instance of its
//! queue for up to the configured time, polling it with a small budget (8) instead of
//! sleeping for the interrupt. It stops as soon as data is there, the time is up or the
//! scheduler wants the CPU. While it owns the NAPI the device IRQ stays masked.

use super::complete::Napi;
use nictune_core::units::Nanos;

/// BUSY_POLL_BUDGET.
pub const BUSY_POLL_BUDGET: u32 = 8;

/// Busy-poll settings of a socket or epoll instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusyPollConfig {
    /// How long to spin (`net.core.busy_read`/`busy_poll`, SO_BUSY_POLL, epoll busy_poll_usecs).
    pub duration: Nanos,
    /// Packets per poll call (SO_BUSY_POLL_BUDGET; default 8).
    pub budget: u32,
    /// SO_PREFER_BUSY_POLL / epoll prefer_busy_poll.
    pub prefer: bool,
}

impl BusyPollConfig {
    /// `busy_read`-style spinning for `duration` with the default budget, no preference.
    pub fn new(duration: Nanos) -> BusyPollConfig {
        BusyPollConfig {
            duration,
            budget: BUSY_POLL_BUDGET,
            prefer: false,
        }
    }
}

/// One iteration's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusyStep {
    /// Poll the NAPI with this budget now.
    Poll(u32),
    /// The NAPI is owned by softirq; spin without polling.
    Spin,
    /// Stop spinning.
    Stop(StopReason),
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The socket has data (or epoll has events).
    DataReady,
    /// The busy-poll time ran out.
    Timeout,
    /// Another task wants the CPU.
    NeedResched,
}

/// A running busy-poll loop.
#[derive(Debug, Clone)]
pub struct BusyLoop {
    cfg: BusyPollConfig,
    start: Nanos,
    owns: bool,
    polls: u64,
}

impl BusyLoop {
    /// A loop started at `start` (only when `cfg.duration` > 0; 0 disables busy polling).
    pub fn start(cfg: BusyPollConfig, start: Nanos) -> Option<BusyLoop> {
        (cfg.duration > Nanos::ZERO).then_some(BusyLoop {
            cfg,
            start,
            owns: false,
            polls: 0,
        })
    }

    /// The next step at `now`, given whether data is ready and whether a reschedule is due.
    pub fn step(
        &mut self,
        napi: &mut Napi,
        now: Nanos,
        data_ready: bool,
        need_resched: bool,
    ) -> BusyStep {
        if data_ready {
            return BusyStep::Stop(StopReason::DataReady);
        }
        if need_resched {
            return BusyStep::Stop(StopReason::NeedResched);
        }
        if now - self.start > self.cfg.duration {
            return BusyStep::Stop(StopReason::Timeout);
        }
        if !self.owns {
            self.owns = napi.busy_poll_take(self.cfg.prefer);
        }
        if !self.owns {
            return BusyStep::Spin;
        }
        self.polls += 1;
        BusyStep::Poll(self.cfg.budget)
    }

    /// The loop `epoll_wait` runs (`ep_busy_loop`, fs/eventpoll.c, Linux 6.13): with
    /// prefer-busy-poll it runs even when `busy_poll_usecs` is 0, and then makes exactly one
    /// pass ("an effectively nonblocking iteration through napi_busy_loop", the 6.13 patch
    /// "eventpoll: Trigger napi_busy_loop, if prefer_busy_poll is set").
    pub fn epoll(cfg: BusyPollConfig, start: Nanos) -> Option<BusyLoop> {
        (cfg.duration > Nanos::ZERO || cfg.prefer).then_some(BusyLoop {
            cfg,
            start,
            owns: false,
            polls: 0,
        })
    }

    /// Ends the loop: releases the NAPI. Returns true when the caller must poll once more and
    /// complete (re-enabling the IRQ, or arming the suspension timer with prefer-busy-poll).
    pub fn stop(self, napi: &mut Napi, now: Nanos) -> bool {
        self.finish(napi, now).is_some()
    }

    /// Ends the loop (`busy_poll_stop`, net/core/dev.c): `None` if it never owned the NAPI;
    /// otherwise the caller polls once more and `Some(skip_schedule)` says whether a timer
    /// was armed, so that a final poll which uses its whole budget leaves the NAPI to that
    /// timer ([`Napi::busy_poll_full`]) instead of to softirq.
    pub fn finish(self, napi: &mut Napi, now: Nanos) -> Option<bool> {
        self.owns.then(|| napi.busy_poll_stop(now, self.cfg.prefer))
    }

    /// Poll calls made so far.
    pub fn polls(&self) -> u64 {
        self.polls
    }
}

#[cfg(test)]
mod tests {
    use super::super::complete::NapiConfig;
    use super::*;

    #[test]
    fn zero_duration_disables_busy_polling() {
        assert!(BusyLoop::start(BusyPollConfig::new(Nanos::ZERO), Nanos::ZERO).is_none());
    }

    #[test]
    fn polls_with_budget_eight_until_data_arrives() {
        let mut napi = Napi::new(NapiConfig::default());
        let mut l =
            BusyLoop::start(BusyPollConfig::new(Nanos::from_micros(50)), Nanos::ZERO).unwrap();
        assert_eq!(
            l.step(&mut napi, Nanos(100), false, false),
            BusyStep::Poll(8)
        );
        assert!(napi.in_busy_poll());
        assert_eq!(
            l.step(&mut napi, Nanos(400), false, false),
            BusyStep::Poll(8)
        );
        assert_eq!(
            l.step(&mut napi, Nanos(700), true, false),
            BusyStep::Stop(StopReason::DataReady)
        );
        assert_eq!(l.polls(), 2);
        assert!(
            l.stop(&mut napi, Nanos(800)),
            "final poll re-enables the IRQ"
        );
        assert!(!napi.in_busy_poll());
        assert!(napi.complete_done(Nanos(900), 0, false).unmask);
    }

    #[test]
    fn stops_after_the_configured_time_or_on_resched() {
        let mut napi = Napi::new(NapiConfig::default());
        let cfg = BusyPollConfig::new(Nanos::from_micros(50));
        let mut l = BusyLoop::start(cfg, Nanos::ZERO).unwrap();
        assert_eq!(
            l.step(&mut napi, Nanos::from_micros(50), false, false),
            BusyStep::Poll(8)
        );
        assert_eq!(
            l.step(&mut napi, Nanos(50_001), false, false),
            BusyStep::Stop(StopReason::Timeout)
        );
        let mut l = BusyLoop::start(cfg, Nanos::ZERO).unwrap();
        assert_eq!(
            l.step(&mut napi, Nanos(1), false, true),
            BusyStep::Stop(StopReason::NeedResched)
        );
    }

    #[test]
    fn epoll_with_prefer_makes_one_pass_even_at_zero_microseconds() {
        let mut cfg = BusyPollConfig::new(Nanos::ZERO);
        assert!(
            BusyLoop::epoll(cfg, Nanos::ZERO).is_none(),
            "neither set: no loop"
        );
        cfg.prefer = true;
        let mut napi = Napi::new(NapiConfig::default());
        let mut l = BusyLoop::epoll(cfg, Nanos(10)).unwrap();
        assert_eq!(
            l.step(&mut napi, Nanos(10), false, false),
            BusyStep::Poll(8)
        );
        assert_eq!(
            l.step(&mut napi, Nanos(11), false, false),
            BusyStep::Stop(StopReason::Timeout)
        );
        assert_eq!(l.finish(&mut napi, Nanos(11)), Some(false));
    }

    #[test]
    fn spins_without_polling_while_softirq_owns_the_napi() {
        let mut napi = Napi::new(NapiConfig::default());
        assert!(napi.schedule());
        let mut l =
            BusyLoop::start(BusyPollConfig::new(Nanos::from_micros(50)), Nanos::ZERO).unwrap();
        assert_eq!(l.step(&mut napi, Nanos(1), false, false), BusyStep::Spin);
        assert!(
            !l.stop(&mut napi, Nanos(2)),
            "never owned: nothing to release"
        );
        assert!(napi.is_scheduled());
    }
}
