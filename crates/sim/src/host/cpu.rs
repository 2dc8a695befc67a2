//! CPU cores and their time: hard interrupts and softirqs preempt the application thread,
//! and every nanosecond is accounted as irq, softirq, user or idle.
//!
//! Kernel work on a core runs back to back in the order it is issued (a core does one thing
//! at a time). The application is one thread with a FIFO of jobs on a chosen core; kernel
//! work on that core pushes the running job's completion back by its own length.
//! Accounting stops at the run's horizon so shares of a finished run add up to one.

use std::collections::VecDeque;

/// What kind of kernel work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelWork {
    /// Hard interrupt context.
    Irq,
    /// Softirq (NET_RX) or ksoftirqd.
    Softirq,
}

/// One core's accounting.
#[derive(Debug, Clone, Default)]
pub struct CoreTime {
    kernel_until: u64,
    /// ns in hard interrupts.
    pub irq: u64,
    /// ns in softirq.
    pub softirq: u64,
    /// ns of the application.
    pub user: u64,
}

#[derive(Debug, Clone, Copy)]
struct Job {
    ready: u64,
    work: u64,
    tag: u64,
}

#[derive(Debug, Clone, Copy)]
struct Running {
    job: Job,
    remaining: u64,
    resumed_at: u64,
}

/// The cores of one host and its application thread.
#[derive(Debug)]
pub struct Cpu {
    cores: Vec<CoreTime>,
    app_core: usize,
    queue: VecDeque<Job>,
    running: Option<Running>,
    gen: u32,
    horizon: u64,
}

/// When the application's current job will finish, with the generation that identifies the
/// completion event (older generations are stale).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppWake {
    /// Completion time.
    pub at: u64,
    /// Event generation.
    pub gen: u32,
}

impl Cpu {
    /// `cores` cores, the application on `app_core`, accounting up to `horizon` ns.
    pub fn new(cores: usize, app_core: usize, horizon: u64) -> Cpu {
        Cpu {
            cores: vec![CoreTime::default(); cores.max(1)],
            app_core: app_core.min(cores.max(1) - 1),
            queue: VecDeque::new(),
            running: None,
            gen: 0,
            horizon,
        }
    }

    /// Per-core accounting.
    pub fn cores(&self) -> &[CoreTime] {
        &self.cores
    }

    /// The horizon accounting stops at.
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    fn clip(&self, a: u64, b: u64) -> u64 {
        b.min(self.horizon).saturating_sub(a.min(self.horizon))
    }

    /// Runs `dur` ns of kernel work on `core`, starting no earlier than `at`. Returns its
    /// start and end, and the application's new completion if the work delayed it.
    pub fn kernel(
        &mut self,
        core: usize,
        at: u64,
        dur: u64,
        kind: KernelWork,
    ) -> (u64, u64, Option<AppWake>) {
        let start = at.max(self.cores[core].kernel_until);
        let end = start + dur;
        let clipped = self.clip(start, end);
        let c = &mut self.cores[core];
        c.kernel_until = end;
        match kind {
            KernelWork::Irq => c.irq += clipped,
            KernelWork::Softirq => c.softirq += clipped,
        }
        let mut wake = None;
        if core == self.app_core {
            if let Some(mut r) = self.running {
                if r.resumed_at < end && r.resumed_at + r.remaining > start {
                    let ran = start.saturating_sub(r.resumed_at).min(r.remaining);
                    self.cores[core].user += self.clip(r.resumed_at, r.resumed_at + ran);
                    r.remaining -= ran;
                    r.resumed_at = end;
                    self.running = Some(r);
                    wake = Some(self.bump());
                }
            }
        }
        (start, end, wake)
    }

    /// When kernel work issued now on `core` could start.
    pub fn kernel_free_at(&self, core: usize) -> u64 {
        self.cores[core].kernel_until
    }

    fn bump(&mut self) -> AppWake {
        self.gen = self.gen.wrapping_add(1);
        let r = self.running.expect("bump with a running job");
        AppWake {
            at: r.resumed_at + r.remaining,
            gen: self.gen,
        }
    }

    /// Queues a job of `work` ns that becomes runnable at `ready`; returns the new completion
    /// if it started running.
    pub fn submit(&mut self, ready: u64, work: u64, tag: u64) -> Option<AppWake> {
        self.queue.push_back(Job { ready, work, tag });
        if self.running.is_none() {
            self.start_next(ready)
        } else {
            None
        }
    }

    fn start_next(&mut self, now: u64) -> Option<AppWake> {
        let job = self.queue.pop_front()?;
        let begin = now
            .max(job.ready)
            .max(self.cores[self.app_core].kernel_until);
        self.running = Some(Running {
            job,
            remaining: job.work,
            resumed_at: begin,
        });
        Some(self.bump())
    }

    /// The completion event of generation `gen` fired at `now`: returns the finished job's
    /// tag and the next job's completion, or `None` for a stale event.
    pub fn complete(&mut self, now: u64, gen: u32) -> Option<(u64, Option<AppWake>)> {
        if gen != self.gen {
            return None;
        }
        let r = self.running.take()?;
        self.cores[self.app_core].user += self.clip(r.resumed_at, now);
        let next = self.start_next(now);
        Some((r.job.tag, next))
    }

    /// Application work (ns) running or queued on `core` and runnable by `now`.
    pub fn app_backlog_on(&self, core: usize, now: u64) -> u64 {
        if core != self.app_core {
            return 0;
        }
        let running = self.running.map_or(0, |r| r.remaining);
        let queued: u64 = self
            .queue
            .iter()
            .filter(|j| j.ready <= now)
            .map(|j| j.work)
            .sum();
        running + queued
    }

    /// Adds the running job's time up to the horizon (call once at the end of the run).
    pub fn close(&mut self) {
        if let Some(r) = self.running.take() {
            let end = (r.resumed_at + r.remaining).min(self.horizon);
            self.cores[self.app_core].user += self.clip(r.resumed_at, end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_work_preempts_the_application() {
        let mut cpu = Cpu::new(1, 0, 1_000_000);
        let w = cpu.submit(0, 10_000, 7).unwrap();
        assert_eq!(w.at, 10_000);
        let (s, e, moved) = cpu.kernel(0, 4_000, 2_000, KernelWork::Irq);
        assert_eq!((s, e), (4_000, 6_000));
        let moved = moved.unwrap();
        assert_eq!(moved.at, 12_000);
        assert_eq!(
            cpu.complete(10_000, w.gen),
            None,
            "stale completion ignored"
        );
        let (tag, next) = cpu.complete(12_000, moved.gen).unwrap();
        assert_eq!((tag, next), (7, None));
        let c = &cpu.cores()[0];
        assert_eq!((c.irq, c.user), (2_000, 10_000));
    }

    #[test]
    fn jobs_queue_and_wait_for_kernel_work() {
        let mut cpu = Cpu::new(2, 1, 1_000_000);
        cpu.kernel(1, 0, 5_000, KernelWork::Softirq);
        let w = cpu.submit(1_000, 1_000, 1).unwrap();
        assert_eq!(w.at, 6_000);
        assert_eq!(cpu.submit(2_000, 1_000, 2), None);
        let (_, next) = cpu.complete(6_000, w.gen).unwrap();
        assert_eq!(next.unwrap().at, 7_000);
    }

    #[test]
    fn accounting_stops_at_the_horizon() {
        let mut cpu = Cpu::new(1, 0, 10_000);
        cpu.kernel(0, 9_000, 5_000, KernelWork::Softirq);
        cpu.submit(0, 50_000, 0);
        cpu.close();
        let c = &cpu.cores()[0];
        assert_eq!(c.softirq, 1_000);
        assert!(c.user <= 9_000);
    }
}
