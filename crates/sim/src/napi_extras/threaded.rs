//! Fair sharing of one core between threads: threaded NAPI (`napi/<dev>-<id>` kthreads) or
//! ksoftirqd competing with the application.
//!
//! Modelled on CFS (Linux < 6.6; `kernel/sched/fair.c`): each runnable thread accumulates
//! virtual runtime (`ran × 1024 / weight`), the one with the least runs next, a timeslice is
//! `sched_latency / nr_running` but at least `min_granularity`, a waking thread gets at most
//! half a latency period of sleeper credit and preempts the running one only if its virtual
//! runtime is lower by more than `wakeup_granularity`. Defaults are the unscaled kernel
//! values (6 ms, 0.75 ms, 1 ms); the kernel multiplies them by 1 + log2(ncpus) (capped at 8
//! CPUs), which [`FairConfig::scaled`] applies.

use nictune_core::units::Nanos;

/// Scheduler tunables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FairConfig {
    /// `sched_latency_ns`.
    pub latency: Nanos,
    /// `sched_min_granularity_ns`.
    pub min_granularity: Nanos,
    /// `sched_wakeup_granularity_ns`.
    pub wakeup_granularity: Nanos,
}

impl Default for FairConfig {
    fn default() -> Self {
        FairConfig {
            latency: Nanos::from_millis(6),
            min_granularity: Nanos::from_micros(750),
            wakeup_granularity: Nanos::from_millis(1),
        }
    }
}

impl FairConfig {
    /// Defaults scaled as the kernel does for `ncpus` CPUs (factor 1 + log2(min(ncpus, 8))).
    pub fn scaled(ncpus: u32) -> FairConfig {
        let factor = 1 + ncpus.clamp(1, 8).ilog2() as u64;
        let d = FairConfig::default();
        FairConfig {
            latency: Nanos(d.latency.0 * factor),
            min_granularity: Nanos(d.min_granularity.0 * factor),
            wakeup_granularity: Nanos(d.wakeup_granularity.0 * factor),
        }
    }
}

/// Handle of a thread on a [`FairCore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ThreadId(usize);

#[derive(Debug, Clone)]
struct Thread {
    vruntime: u64,
    weight: u64,
    runnable: bool,
}

/// NICE_0_LOAD.
pub const NICE_0_WEIGHT: u64 = 1024;

/// One core's run queue.
#[derive(Debug, Clone)]
pub struct FairCore {
    cfg: FairConfig,
    threads: Vec<Thread>,
    min_vruntime: u64,
}

impl FairCore {
    /// An empty run queue.
    pub fn new(cfg: FairConfig) -> FairCore {
        FairCore {
            cfg,
            threads: Vec::new(),
            min_vruntime: 0,
        }
    }

    /// Adds a sleeping thread of `weight` (1024 = nice 0).
    pub fn add(&mut self, weight: u64) -> ThreadId {
        self.threads.push(Thread {
            vruntime: self.min_vruntime,
            weight: weight.max(1),
            runnable: false,
        });
        ThreadId(self.threads.len() - 1)
    }

    /// Makes `id` runnable with bounded sleeper credit.
    pub fn wake(&mut self, id: ThreadId) {
        let credit = self.cfg.latency.0 / 2;
        let t = &mut self.threads[id.0];
        if !t.runnable {
            t.vruntime = t.vruntime.max(self.min_vruntime.saturating_sub(credit));
            t.runnable = true;
        }
    }

    /// `id` blocks.
    pub fn sleep(&mut self, id: ThreadId) {
        self.threads[id.0].runnable = false;
    }

    /// Whether `id` is runnable.
    pub fn is_runnable(&self, id: ThreadId) -> bool {
        self.threads[id.0].runnable
    }

    /// The runnable thread to run next (least virtual runtime; ties by insertion order).
    pub fn pick(&self) -> Option<ThreadId> {
        self.runnable()
            .min_by_key(|(i, t)| (t.vruntime, *i))
            .map(|(i, _)| ThreadId(i))
    }

    fn runnable(&self) -> impl Iterator<Item = (usize, &Thread)> {
        self.threads.iter().enumerate().filter(|(_, t)| t.runnable)
    }

    /// The timeslice of `id` now: its weight's share of the latency period, at least
    /// `min_granularity`.
    pub fn slice(&self, id: ThreadId) -> Nanos {
        let n = self.runnable().count() as u64;
        let period = self.cfg.latency.0.max(n * self.cfg.min_granularity.0);
        let total: u64 = self.runnable().map(|(_, t)| t.weight).sum::<u64>().max(1);
        Nanos(period * self.threads[id.0].weight / total)
    }

    /// Charges `ran` of CPU time to `id`.
    pub fn charge(&mut self, id: ThreadId, ran: Nanos) {
        let t = &mut self.threads[id.0];
        t.vruntime += ran.0 * NICE_0_WEIGHT / t.weight;
        if let Some(min) = self.runnable().map(|(_, t)| t.vruntime).min() {
            self.min_vruntime = self.min_vruntime.max(min);
        }
    }

    /// Whether waking `woken` preempts `running` at once.
    pub fn preempts(&self, woken: ThreadId, running: ThreadId) -> bool {
        let (w, r) = (&self.threads[woken.0], &self.threads[running.0]);
        r.vruntime > w.vruntime + self.cfg.wakeup_granularity.0
    }

    /// Virtual runtime of `id` (for tests and traces).
    pub fn vruntime(&self, id: ThreadId) -> Nanos {
        Nanos(self.threads[id.0].vruntime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_busy_threads_share_the_core_equally() {
        let mut core = FairCore::new(FairConfig::default());
        let (napi, app) = (core.add(NICE_0_WEIGHT), core.add(NICE_0_WEIGHT));
        core.wake(napi);
        core.wake(app);
        assert_eq!(core.slice(napi), Nanos::from_millis(3));
        let mut ran = [0u64; 2];
        for _ in 0..100 {
            let id = core.pick().unwrap();
            let s = core.slice(id);
            core.charge(id, s);
            ran[id.0] += s.0;
        }
        assert_eq!(ran[0], ran[1]);
    }

    #[test]
    fn slices_respect_min_granularity_with_many_threads() {
        let mut core = FairCore::new(FairConfig::default());
        let ids: Vec<_> = (0..10).map(|_| core.add(NICE_0_WEIGHT)).collect();
        ids.iter().for_each(|&i| core.wake(i));
        assert_eq!(core.slice(ids[0]), Nanos::from_micros(750));
    }

    #[test]
    fn a_long_sleeper_gets_bounded_credit_and_preempts() {
        let mut core = FairCore::new(FairConfig::default());
        let (app, ksoftirqd) = (core.add(NICE_0_WEIGHT), core.add(NICE_0_WEIGHT));
        core.wake(app);
        core.charge(app, Nanos::from_millis(100));
        core.wake(ksoftirqd);
        // Credit: at most latency/2 = 3 ms behind min_vruntime (100 ms).
        assert_eq!(core.vruntime(ksoftirqd), Nanos::from_millis(97));
        assert!(core.preempts(ksoftirqd, app));
        assert_eq!(core.pick(), Some(ksoftirqd));
        // After 2.5 ms it is within the wakeup granularity: no more preemption.
        core.charge(ksoftirqd, Nanos(2_500_000));
        assert!(!core.preempts(ksoftirqd, app));
    }

    #[test]
    fn heavier_weight_gets_a_larger_share() {
        let mut core = FairCore::new(FairConfig::default());
        let (a, b) = (core.add(2048), core.add(1024));
        core.wake(a);
        core.wake(b);
        assert_eq!(core.slice(a), Nanos::from_millis(4));
        assert_eq!(core.slice(b), Nanos::from_millis(2));
        core.sleep(b);
        assert_eq!(core.pick(), Some(a));
        assert!(!core.is_runnable(b));
    }

    #[test]
    fn scaling_follows_log2_of_the_cpu_count() {
        assert_eq!(FairConfig::scaled(1).latency, Nanos::from_millis(6));
        assert_eq!(FairConfig::scaled(4).latency, Nanos::from_millis(18));
        assert_eq!(FairConfig::scaled(64).latency, Nanos::from_millis(24));
    }
}
