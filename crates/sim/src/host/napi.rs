//! Linux NAPI: the per-device poll state and the NET_RX softirq's budgets
//! (moderation-algorithms.md §6, §6.1).
//!
//! - A poll gets `weight` (64) as its budget; a poll that uses it all stays scheduled.
//! - One `net_rx_action` run polls until `netdev_budget` (300) packets are spent or the
//!   jiffy-granular time limit (`netdev_budget_usecs`, 2 jiffies on current kernels) passes;
//!   leaving work behind counts one `time_squeeze` and re-raises the softirq.
//! - `__do_softirq` restarts at most 9 times while the 2 ms limit (counted in jiffies)
//!   lasts, then hands the work to ksoftirqd, which competes with the application
//!   (kernel/softirq.c MAX_SOFTIRQ_RESTART/TIME).
//! - `napi_complete_done` with `napi_defer_hard_irqs` and `gro_flush_timeout` keeps the IRQ
//!   masked for up to N empty timer-driven polls (§6.1): the per-NAPI state machine is
//!   [`crate::napi_extras::complete::Napi`]; this file holds the host's settings and its
//!   softirq.

use crate::napi_extras::softirq::{AfterPass, Jiffies, NetRxAction, NetRxBudget, SoftirqRun};
use nictune_core::units::Nanos;

/// NAPI and softirq settings of one host (or one NAPI instance: the per-NAPI settings are
/// sysfs per netdev, or netlink `napi-set`). The only NAPI configuration of the simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NapiConfig {
    /// Per-poll budget (NAPI_POLL_WEIGHT 64).
    pub weight: u32,
    /// `net.core.netdev_budget` (300).
    pub budget: u32,
    /// `net.core.netdev_budget_usecs` (2000 µs at HZ=1000), counted in jiffies.
    pub budget_time: Nanos,
    /// Kernel tick rate (jiffies per second).
    pub hz: u32,
    /// `napi_defer_hard_irqs` (0): consecutive empty polls before the IRQ comes back.
    pub defer_hard_irqs: u32,
    /// `gro_flush_timeout` (0): the re-poll timer while the IRQ stays masked.
    pub gro_flush_timeout: Nanos,
    /// `irq-suspend-timeout` (Linux 6.13, 0): safety-net timer while an epoll busy poller
    /// with prefer-busy-poll keeps the IRQ suspended.
    pub irq_suspend_timeout: Nanos,
    /// Whether GRO is on (it is by default; the flush timeout only applies with GRO).
    pub gro: bool,
}

impl Default for NapiConfig {
    fn default() -> Self {
        NapiConfig {
            weight: 64,
            budget: 300,
            budget_time: Nanos::from_micros(2_000),
            hz: 1_000,
            defer_hard_irqs: 0,
            gro_flush_timeout: Nanos::ZERO,
            irq_suspend_timeout: Nanos::ZERO,
            gro: true,
        }
    }
}

/// The NET_RX softirq on a host's interrupt core: the current `__do_softirq` invocation with
/// its restart limits ([`SoftirqRun`]) and its current `net_rx_action` run with its packet and
/// jiffy budget ([`NetRxAction`]) — the state machines of [`crate::napi_extras::softirq`].
#[derive(Debug, Clone, Default)]
pub struct Softnet {
    /// A softirq is raised or running.
    pub active: bool,
    invocation: Option<SoftirqRun>,
    run: Option<NetRxAction>,
    /// Runs that ended with work left (softnet_stat `time_squeeze`).
    pub time_squeeze: u64,
}

impl Softnet {
    /// The softirq starts at `now` (irq exit, or ksoftirqd): a new `__do_softirq` invocation
    /// and its first `net_rx_action` run.
    pub fn raise(&mut self, now: u64, cfg: &NapiConfig) {
        self.active = true;
        let clock = Jiffies::new(cfg.hz);
        self.invocation = Some(SoftirqRun::start(clock, Nanos(now)));
        self.begin_run(now, cfg);
    }

    /// A new `net_rx_action` run at `now` within the current invocation.
    pub fn begin_run(&mut self, now: u64, cfg: &NapiConfig) {
        let budget = NetRxBudget {
            packets: cfg.budget,
            time: cfg.budget_time,
        };
        self.run = Some(NetRxAction::start(budget, Jiffies::new(cfg.hz), Nanos(now)));
    }

    /// A poll returned `work` at `now`: whether the run may poll again.
    pub fn after_poll(&mut self, work: u32, now: u64) -> bool {
        self.run
            .as_mut()
            .is_some_and(|r| r.after_poll(work, Nanos(now)))
    }

    /// The run stopped at `now` with work left: one `time_squeeze`; restart at once or wake
    /// ksoftirqd (nothing else asks for the CPU inside the softirq: `need_resched` false).
    pub fn squeeze(&mut self, now: u64) -> AfterPass {
        self.time_squeeze += 1;
        self.invocation
            .as_mut()
            .map_or(AfterPass::WakeKsoftirqd, |s| {
                s.after_pass(Nanos(now), true, false)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_window_is_jiffy_granular() {
        let cfg = NapiConfig::default();
        let mut s = Softnet::default();
        s.raise(1_500_000, &cfg);
        assert!(s.after_poll(64, 2_999_999));
        assert!(!s.after_poll(64, 3_000_000));
    }

    #[test]
    fn nine_restarts_then_ksoftirqd() {
        let cfg = NapiConfig::default();
        let mut s = Softnet::default();
        s.raise(0, &cfg);
        for i in 0..9 {
            assert_eq!(s.squeeze(i * 1_000), AfterPass::Restart, "restart {i}");
        }
        assert_eq!(s.squeeze(9_000), AfterPass::WakeKsoftirqd);
        assert_eq!(s.time_squeeze, 10);
    }
}
