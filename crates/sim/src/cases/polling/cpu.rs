//! One CPU shared by prioritised contexts, as a FreeBSD 7 uniprocessor runs them: interrupt
//! handlers (filters, the clock) before the network kernel thread (the em taskqueue or the
//! polling netisr) before the softclock thread before the user threads (iperf's reader and
//! writer) before idle polling. A higher context preempts a lower one at once (kernel
//! preemption, `options PREEMPTION`); the preempted step resumes where it stopped. iperf's two
//! threads have the same priority and share the CPU in turns: the one holding it keeps it
//! while it has work, for at most one scheduler slice (ULE's `sched_slice`, a tenth of a
//! second of statistics ticks), and the other runs next (the slice is looked at when a step
//! ends).
//!
//! A context switch is charged whenever the CPU passes from one thread to another — including
//! to and from the idle thread — but not for an interrupt handler, which runs on the stack of
//! whatever it interrupted.
//!
//! The switch to the idle thread takes its time like any other: while nothing runs it is
//! charged to system as it elapses; an interrupt handler arriving meanwhile runs at once and
//! the switch resumes after it; a thread that becomes runnable meanwhile waits for the rest of
//! it before its own switch in. So a core's categories add up to the time that passed.
//!
//! The CPU also answers what the statistics clock sees ([`Cpu::sample`]): the context running
//! at an instant, which is what `statclock` charges a whole sample to and what `top` shows.

use super::super::CoreNs;

/// Who runs, highest priority first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ctx {
    /// An interrupt handler (em filter, hardclock).
    Intr,
    /// The network kernel thread: the em taskqueue (interrupts) or `swi:net` (polling).
    Net,
    /// `swi:clock` running callouts (delayed ACKs).
    Softclock,
    /// iperf's reader (the server side of the peer's stream).
    Reader,
    /// iperf's writer (the client side).
    Writer,
    /// The idle-polling thread (`kern.polling.idle_poll`).
    IdlePoll,
}

/// Every context, by priority.
pub const CTXS: [Ctx; 6] = [
    Ctx::Intr,
    Ctx::Net,
    Ctx::Softclock,
    Ctx::Reader,
    Ctx::Writer,
    Ctx::IdlePoll,
];

/// iperf's threads' turn: ULE's `sched_slice = realstathz / 10` statistics ticks ≈ 100 ms.
const SLICE_NS: u64 = 100_000_000;

impl Ctx {
    fn index(self) -> usize {
        self as usize
    }

    /// Contexts of one level share the CPU in turns; a lower level waits for a higher.
    fn level(self) -> u8 {
        match self {
            Ctx::Intr => 0,
            Ctx::Net => 1,
            Ctx::Softclock => 2,
            Ctx::Reader | Ctx::Writer => 3,
            Ctx::IdlePoll => 4,
        }
    }

    /// Whether the context is a thread (switching to it costs a context switch).
    fn is_thread(self) -> bool {
        self != Ctx::Intr
    }
}

/// How a step's time is accounted (`cp_time` classes as the case's metrics name them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Interrupt handlers.
    Irq,
    /// Network kernel threads.
    Net,
    /// System calls (with iperf's own loop around them) and switches.
    System,
}

/// A piece of work a context runs, with its remaining time.
#[derive(Debug, Clone, Copy)]
struct Step {
    remaining: u64,
    class: Class,
}

/// The CPU.
#[derive(Debug)]
pub struct Cpu {
    steps: [Option<Step>; CTXS.len()],
    /// Context whose step is running (or switching in), since when.
    running: Option<Ctx>,
    since: u64,
    /// The thread that had the CPU last (`None`: the idle thread).
    last_thread: Option<Ctx>,
    /// Switch time still to spend before the running thread's own step.
    switching: u64,
    switch_ns: u64,
    /// A switch to the idle thread in progress: ends at this time.
    to_idle_until: u64,
    /// What is left of the switch to the idle thread.
    idle_switch: u64,
    version: u64,
    /// A step started or finished since the last dispatch.
    changed: bool,
    /// The user thread holding the turn, and since when.
    turn: Option<Ctx>,
    turn_since: u64,
    acct: CoreNs,
    switches: u64,
}

/// What the caller should schedule after [`Cpu::dispatch`]: the running context's step ends at
/// `at` unless something preempts it (then `version` will have moved on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Next {
    /// The context.
    pub ctx: Ctx,
    /// When its step (and any switch before it) ends.
    pub at: u64,
    /// Stamp to recognise the event as current.
    pub version: u64,
}

impl Cpu {
    /// An idle CPU whose context switch costs `switch_ns`.
    pub fn new(switch_ns: u64) -> Cpu {
        Cpu {
            steps: [None; CTXS.len()],
            running: None,
            since: 0,
            last_thread: None,
            switching: 0,
            switch_ns,
            to_idle_until: 0,
            idle_switch: 0,
            version: 0,
            changed: false,
            turn: None,
            turn_since: 0,
            acct: CoreNs::default(),
            switches: 0,
        }
    }

    /// Whether `ctx` has a step (running or preempted).
    pub fn busy(&self, ctx: Ctx) -> bool {
        self.steps[ctx.index()].is_some()
    }

    /// Gives `ctx` a step of `ns` (it must have none).
    pub fn start(&mut self, now: u64, ctx: Ctx, ns: u64, class: Class) {
        self.charge(now);
        debug_assert!(self.steps[ctx.index()].is_none(), "{ctx:?} already busy");
        self.changed = true;
        self.steps[ctx.index()] = Some(Step {
            remaining: ns,
            class,
        });
    }

    /// The running context's step ended at `now`; it has no step any more.
    pub fn finish(&mut self, now: u64, ctx: Ctx) {
        self.charge(now);
        self.steps[ctx.index()] = None;
        self.changed = true;
        if self.running == Some(ctx) {
            self.running = None;
            self.switching = 0;
        }
    }

    /// Picks who runs from `now`: the highest context with a step. After a step started or
    /// finished the previous [`Next`] is stale; otherwise the same one comes back.
    pub fn dispatch(&mut self, now: u64) -> Option<Next> {
        self.charge(now);
        if std::mem::take(&mut self.changed) {
            self.version += 1;
        }
        let top = self.pick(now);
        if top != self.running {
            self.switching = 0;
        }
        match top {
            Some(c) if c.is_thread() && self.last_thread != Some(c) => {
                // The rest of a switch to idle first, then the switch to `c`.
                self.switching = std::mem::take(&mut self.idle_switch) + self.switch_ns;
                self.switches += 1;
                self.last_thread = Some(c);
            }
            None if self.last_thread.is_some() => {
                // The switch to the idle thread.
                self.last_thread = None;
                self.switches += 1;
                self.idle_switch = self.switch_ns;
                self.to_idle_until = now + self.switch_ns;
            }
            _ => {}
        }
        self.running = top;
        let ctx = self.running?;
        let step = self.steps[ctx.index()].expect("running has a step");
        Some(Next {
            ctx,
            at: now + self.switching + step.remaining,
            version: self.version,
        })
    }

    /// Accounts the time since the last call to the running context.
    fn charge(&mut self, now: u64) {
        let mut dt = now.saturating_sub(self.since);
        self.since = now;
        let Some(ctx) = self.running else {
            let sw = dt.min(self.idle_switch);
            self.idle_switch -= sw;
            self.acct.system += sw;
            return;
        };
        let sw = dt.min(self.switching);
        self.switching -= sw;
        self.acct.system += sw;
        dt -= sw;
        let step = self.steps[ctx.index()]
            .as_mut()
            .expect("running has a step");
        let used = dt.min(step.remaining);
        step.remaining -= used;
        match step.class {
            Class::Irq => self.acct.irq += used,
            Class::Net => self.acct.softirq += used,
            Class::System => self.acct.system += used,
        }
    }

    /// Whether `version` is still the running step's.
    pub fn current(&self, version: u64) -> bool {
        version == self.version
    }

    /// What the statistics clock sees at `now`: busy or idle.
    pub fn sample(&self, now: u64) -> bool {
        self.running.is_some() || now < self.to_idle_until
    }

    /// Busy time by class so far (charged up to the last call).
    pub fn acct(&self) -> CoreNs {
        self.acct
    }

    /// Context switches so far.
    pub fn switches(&self) -> u64 {
        self.switches
    }

    /// Who should run at `now`: the highest level with work; within a level the holder of
    /// the turn while its slice lasts, else the next in turn.
    fn pick(&mut self, now: u64) -> Option<Ctx> {
        let ready = |c: &Ctx| self.steps[c.index()].is_some();
        let level = CTXS.into_iter().find(ready)?.level();
        let mut peers = CTXS.into_iter().filter(|c| c.level() == level && ready(c));
        let first = peers.next().expect("one at least");
        let next = match peers.next() {
            None => first,
            Some(other) => {
                let holder = self.turn.filter(|h| ready(h) && h.level() == level);
                let keep = holder.filter(|_| now - self.turn_since < SLICE_NS);
                keep.unwrap_or(match holder {
                    Some(h) if h == first => other,
                    _ => first,
                })
            }
        };
        if next.level() == Ctx::Reader.level() && Some(next) != self.turn {
            self.turn = Some(next);
            self.turn_since = now;
        }
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_higher_context_preempts_and_the_lower_resumes_where_it_stopped() {
        let mut cpu = Cpu::new(10);
        cpu.start(0, Ctx::Reader, 100, Class::System);
        let n = cpu.dispatch(0).unwrap();
        assert_eq!(
            (n.ctx, n.at),
            (Ctx::Reader, 110),
            "switch in, then the step"
        );
        // An interrupt at 50 takes 20 (no switch); the reader then owes 60 more.
        cpu.start(50, Ctx::Intr, 20, Class::Irq);
        let i = cpu.dispatch(50).unwrap();
        assert!(!cpu.current(n.version));
        assert_eq!((i.ctx, i.at), (Ctx::Intr, 70));
        cpu.finish(70, Ctx::Intr);
        let r = cpu.dispatch(70).unwrap();
        assert_eq!((r.ctx, r.at), (Ctx::Reader, 130));
        cpu.finish(130, Ctx::Reader);
        assert_eq!(cpu.dispatch(130), None);
        // The switch back to idle is charged as it elapses.
        assert_eq!(cpu.acct().system, 100 + 10);
        cpu.dispatch(500);
        let a = cpu.acct();
        assert_eq!((a.irq, a.system), (20, 100 + 10 + 10));
        assert_eq!(cpu.switches(), 2, "into the reader, back to idle");
    }

    /// A thread runnable during the switch to idle waits for its rest: the CPU is never
    /// charged more time than passed (idle polling starts a thread after every such switch).
    #[test]
    fn a_switch_to_idle_takes_time_before_the_next_thread() {
        let mut cpu = Cpu::new(10);
        cpu.start(0, Ctx::Reader, 100, Class::System);
        assert_eq!(cpu.dispatch(0).unwrap().at, 110);
        cpu.finish(110, Ctx::Reader);
        assert_eq!(cpu.dispatch(110), None);
        cpu.start(115, Ctx::IdlePoll, 50, Class::System);
        // 5 ns left of the switch to idle, 10 to switch in, then the step.
        assert_eq!(cpu.dispatch(115).unwrap().at, 115 + 5 + 10 + 50);
        cpu.finish(180, Ctx::IdlePoll);
        assert_eq!(cpu.dispatch(180), None);
        cpu.dispatch(190);
        let a = cpu.acct();
        assert_eq!(a.irq + a.softirq + a.user + a.system, 190, "{a:?}");
    }

    #[test]
    fn the_statistics_clock_sees_what_runs() {
        let mut cpu = Cpu::new(5);
        assert!(!cpu.sample(0));
        cpu.start(0, Ctx::Net, 50, Class::Net);
        cpu.dispatch(0);
        assert!(cpu.sample(10));
        cpu.finish(55, Ctx::Net);
        cpu.dispatch(55);
        assert!(cpu.sample(57), "switching to idle");
        assert!(!cpu.sample(60));
    }

    #[test]
    fn iperfs_threads_take_turns_by_the_slice() {
        let mut cpu = Cpu::new(0);
        let slice = SLICE_NS;
        cpu.start(0, Ctx::Writer, 10, Class::System);
        assert_eq!(cpu.dispatch(0).unwrap().ctx, Ctx::Writer);
        cpu.start(5, Ctx::Reader, 10, Class::System);
        assert_eq!(
            cpu.dispatch(5).unwrap().ctx,
            Ctx::Writer,
            "the holder keeps its turn"
        );
        cpu.finish(10, Ctx::Writer);
        cpu.start(10, Ctx::Writer, slice, Class::System);
        assert_eq!(
            cpu.dispatch(10).unwrap().ctx,
            Ctx::Writer,
            "still within its slice"
        );
        cpu.finish(10 + slice, Ctx::Writer);
        cpu.start(10 + slice, Ctx::Writer, 10, Class::System);
        assert_eq!(
            cpu.dispatch(10 + slice).unwrap().ctx,
            Ctx::Reader,
            "slice over"
        );
    }
}
