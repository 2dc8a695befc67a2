//! The NET_RX softirq budget and the softirq restart limits (moderation-algorithms.md §6).
//!
//! `net_rx_action` polls scheduled NAPIs until `netdev_budget` packets (300) or
//! `netdev_budget_usecs` (two jiffies, counted in whole jiffies) are used; hitting either
//! counts a `time_squeeze` and re-raises the softirq. `handle_softirqs` restarts while work is
//! pending, at most 10 times and within 2 ms and only if nothing else wants the CPU; after that
//! the pending work goes to the per-CPU ksoftirqd thread, which the scheduler treats like any
//! other thread (Linux's livelock bound).
//!
//! Linux 2.6.32 (the RHEL/CentOS 6 kernel) had only part of that: `__do_softirq` restarts while
//! anything is pending, at most `MAX_SOFTIRQ_RESTART` (10) times, with no time limit and no
//! `need_resched` check (both came with 3.x), then `wakeup_softirqd()`; `net_rx_action` takes
//! `time_limit = jiffies + 2` and stops before a poll once `budget <= 0 ||
//! time_after(jiffies, time_limit)` (kernel/softirq.c, net/core/dev.c of 2.6.32):
//! [`SoftirqRun::start_2632`], [`NetRxAction::start_2632`].

use nictune_core::units::Nanos;

/// MAX_SOFTIRQ_RESTART.
pub const MAX_SOFTIRQ_RESTART: u32 = 10;
/// MAX_SOFTIRQ_TIME (2 ms, converted to jiffies by the kernel).
pub const MAX_SOFTIRQ_TIME: Nanos = Nanos::from_millis(2);

/// The kernel clock: jiffies from simulated time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jiffies {
    tick: Nanos,
}

impl Jiffies {
    /// A clock at `hz` ticks per second.
    pub fn new(hz: u32) -> Jiffies {
        Jiffies {
            tick: Nanos(1_000_000_000 / hz.max(1) as u64),
        }
    }

    /// The jiffy count at `now`.
    pub fn at(&self, now: Nanos) -> u64 {
        now.0 / self.tick.0
    }

    /// `usecs_to_jiffies` / `msecs_to_jiffies`: rounds up.
    pub fn from_duration(&self, d: Nanos) -> u64 {
        d.0.div_ceil(self.tick.0)
    }
}

/// `net.core.netdev_budget` and `netdev_budget_usecs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetRxBudget {
    /// Packets per softirq run (default 300).
    pub packets: u32,
    /// Time per softirq run (default 2 jiffies: 2000 µs at HZ=1000, 8000 µs at HZ=250).
    pub time: Nanos,
}

impl NetRxBudget {
    /// Kernel defaults at `hz`.
    pub fn defaults(hz: u32) -> NetRxBudget {
        NetRxBudget {
            packets: 300,
            time: Nanos(2_000_000_000 / hz.max(1) as u64),
        }
    }
}

/// One `net_rx_action` run.
#[derive(Debug, Clone)]
pub struct NetRxAction {
    budget_left: i64,
    time_limit: u64,
    clock: Jiffies,
}

impl NetRxAction {
    /// Starts a run at `now`.
    pub fn start(budget: NetRxBudget, clock: Jiffies, now: Nanos) -> NetRxAction {
        NetRxAction {
            budget_left: budget.packets as i64,
            time_limit: clock.at(now) + clock.from_duration(budget.time),
            clock,
        }
    }

    /// A 2.6.32 run at `now`: 300 packets (`netdev_budget`) and `time_limit = jiffies + 2`,
    /// checked as `time_after(jiffies, time_limit)`, so polling continues through jiffy
    /// `start + 2` and stops in `start + 3`.
    pub fn start_2632(clock: Jiffies, now: Nanos) -> NetRxAction {
        NetRxAction {
            budget_left: 300,
            time_limit: clock.at(now) + 3,
            clock,
        }
    }

    /// After one NAPI poll returned `work` at `now`: true = continue with the next NAPI,
    /// false = stop (a time squeeze; remaining work re-raises the softirq). Checked only
    /// between polls, so a run can overshoot the budget by less than one weight.
    pub fn after_poll(&mut self, work: u32, now: Nanos) -> bool {
        self.budget_left -= work as i64;
        self.budget_left > 0 && self.clock.at(now) < self.time_limit
    }
}

/// What happens after one pass over the pending softirqs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterPass {
    /// Nothing pending.
    Done,
    /// Run the pending softirqs again now.
    Restart,
    /// Hand the pending work to ksoftirqd.
    WakeKsoftirqd,
}

/// One `handle_softirqs` invocation (from IRQ exit or `local_bh_enable`).
#[derive(Debug, Clone)]
pub struct SoftirqRun {
    end: u64,
    restarts_left: u32,
    clock: Jiffies,
}

impl SoftirqRun {
    /// Starts at `now`.
    pub fn start(clock: Jiffies, now: Nanos) -> SoftirqRun {
        SoftirqRun {
            end: clock.at(now) + clock.from_duration(MAX_SOFTIRQ_TIME),
            restarts_left: MAX_SOFTIRQ_RESTART,
            clock,
        }
    }

    /// A 2.6.32 `__do_softirq`: restarts counted, no time limit.
    pub fn start_2632(clock: Jiffies) -> SoftirqRun {
        SoftirqRun {
            end: u64::MAX,
            restarts_left: MAX_SOFTIRQ_RESTART,
            clock,
        }
    }

    /// After a pass at `now` with softirqs still `pending`.
    pub fn after_pass(&mut self, now: Nanos, pending: bool, need_resched: bool) -> AfterPass {
        if !pending {
            return AfterPass::Done;
        }
        if self.clock.at(now) < self.end && !need_resched {
            self.restarts_left -= 1;
            if self.restarts_left > 0 {
                return AfterPass::Restart;
            }
        }
        AfterPass::WakeKsoftirqd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_usecs_is_two_jiffies() {
        assert_eq!(NetRxBudget::defaults(1000).time, Nanos::from_micros(2000));
        assert_eq!(NetRxBudget::defaults(250).time, Nanos::from_micros(8000));
    }

    #[test]
    fn net_rx_action_stops_on_the_packet_budget() {
        let clock = Jiffies::new(1000);
        let mut run = NetRxAction::start(NetRxBudget::defaults(1000), clock, Nanos::ZERO);
        for _ in 0..4 {
            assert!(run.after_poll(64, Nanos(1_000)));
        }
        // 5 × 64 = 320 ≥ 300: squeeze (overshoot < one weight).
        assert!(!run.after_poll(64, Nanos(2_000)));
    }

    #[test]
    fn net_rx_action_stops_at_the_jiffy_deadline() {
        let clock = Jiffies::new(1000);
        // Started late in jiffy 0: the limit is jiffy 2, i.e. as little as 1 jiffy of time.
        let mut run = NetRxAction::start(NetRxBudget::defaults(1000), clock, Nanos(999_000));
        assert!(run.after_poll(1, Nanos(1_999_999)));
        assert!(!run.after_poll(1, Nanos(2_000_000)));
    }

    #[test]
    fn ten_restarts_then_ksoftirqd() {
        let clock = Jiffies::new(1000);
        let mut run = SoftirqRun::start(clock, Nanos::ZERO);
        for _ in 0..9 {
            assert_eq!(run.after_pass(Nanos(10), true, false), AfterPass::Restart);
        }
        assert_eq!(
            run.after_pass(Nanos(10), true, false),
            AfterPass::WakeKsoftirqd
        );
    }

    #[test]
    fn linux_2632_restarts_ten_times_whatever_the_time_and_polls_through_jiffy_start_plus_2() {
        let clock = Jiffies::new(1000);
        let mut run = SoftirqRun::start_2632(clock);
        let late = Nanos::from_millis(50);
        for _ in 0..9 {
            assert_eq!(run.after_pass(late, true, false), AfterPass::Restart);
        }
        assert_eq!(run.after_pass(late, true, false), AfterPass::WakeKsoftirqd);
        let mut rx = NetRxAction::start_2632(clock, Nanos(999_000));
        assert!(
            rx.after_poll(1, Nanos(2_999_999)),
            "jiffy 2 = start + 2: go on"
        );
        assert!(!rx.after_poll(1, Nanos(3_000_000)), "jiffy 3: time_after");
    }

    #[test]
    fn time_limit_or_resched_hands_off_early() {
        let clock = Jiffies::new(1000);
        let mut run = SoftirqRun::start(clock, Nanos::ZERO);
        assert_eq!(run.after_pass(Nanos(1), false, false), AfterPass::Done);
        assert_eq!(
            run.after_pass(Nanos(1), true, true),
            AfterPass::WakeKsoftirqd
        );
        let mut run = SoftirqRun::start(clock, Nanos::ZERO);
        assert_eq!(
            run.after_pass(Nanos::from_millis(2), true, false),
            AfterPass::WakeKsoftirqd
        );
    }
}
