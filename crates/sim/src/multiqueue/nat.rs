//! A per-packet serialised section shared by every CPU: the lock of an in-kernel NAT
//! instance (ipfw nat in Case 5), with K independent instances.
//!
//! Packets choose an instance by their inside address (NAT-ing to several external addresses
//! with one instance each). An instance is held for `hold` per packet; a CPU that finds it
//! held spins until it is free (FreeBSD mutexes spin adaptively while the owner runs), and
//! taking a lock last held by another CPU first pulls its cache lines over (`handoff`). The
//! handoff grows with the number of CPUs spinning on the same lock: every release invalidates
//! all spinners' copies and they re-read it one after another (Boyd-Wickizer et al.,
//! "Non-scalable locks are dangerous", Linux Symposium 2012: acquisition cost grows linearly
//! with the waiters). The wait and the handoff are CPU time of the waiting CPU; the growth with
//! waiters is the positive feedback that made one instance exhaust 24 threads.

use nictune_core::units::Nanos;
use std::collections::VecDeque;

/// Timing of one critical section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    /// Instance used.
    pub instance: usize,
    /// When the CPU got the lock.
    pub start: Nanos,
    /// When it released it.
    pub end: Nanos,
    /// Time spent spinning before `start`.
    pub spin: Nanos,
}

#[derive(Debug, Clone)]
struct Instance {
    free_at: Nanos,
    last_cpu: Option<u32>,
    /// Start times of entries granted but not yet started (the current spinners).
    waiting: VecDeque<Nanos>,
}

/// K NAT instances.
#[derive(Debug, Clone)]
pub struct NatLocks {
    instances: Vec<Instance>,
    hold: Nanos,
    handoff: Handoff,
    contended: u64,
}

/// Cost of taking a lock another CPU held last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Handoff {
    /// With no other spinner.
    pub base: Nanos,
    /// Added per CPU spinning on the same lock.
    pub per_waiter: Nanos,
}

impl NatLocks {
    /// `k` instances (at least one), each held `hold` per packet, with `handoff` added when
    /// the previous holder was another CPU.
    pub fn new(k: usize, hold: Nanos, handoff: Handoff) -> NatLocks {
        let idle = Instance {
            free_at: Nanos::ZERO,
            last_cpu: None,
            waiting: VecDeque::new(),
        };
        NatLocks {
            instances: vec![idle; k.max(1)],
            hold,
            handoff,
            contended: 0,
        }
    }

    /// The instance for a packet whose inside address hashes to `key`.
    #[inline]
    pub fn instance_for(&self, key: u32) -> usize {
        let n = self.instances.len();
        if n.is_power_of_two() {
            key as usize & (n - 1) // the same as `%`, without a division per packet
        } else {
            key as usize % n
        }
    }

    /// `cpu` needs the instance for `key` at `now` (calls must come in time order per
    /// instance, as the engine's event order guarantees).
    #[inline]
    pub fn enter(&mut self, cpu: u32, key: u32, now: Nanos) -> Section {
        let instance = self.instance_for(key);
        let (hold, handoff) = (self.hold, self.handoff);
        let inst = &mut self.instances[instance];
        while inst.waiting.front().is_some_and(|&s| s <= now) {
            inst.waiting.pop_front();
        }
        let start = now.max(inst.free_at);
        let migrate = if inst.last_cpu.is_some_and(|c| c != cpu) {
            handoff.base + Nanos(handoff.per_waiter.0 * inst.waiting.len() as u64)
        } else {
            Nanos::ZERO
        };
        if start > now {
            self.contended += 1;
            inst.waiting.push_back(start);
        }
        let end = start + migrate + hold;
        inst.free_at = end;
        inst.last_cpu = Some(cpu);
        Section {
            instance,
            start,
            end,
            spin: start - now,
        }
    }

    /// Entries that had to wait.
    pub fn contended(&self) -> u64 {
        self.contended
    }

    /// Instances.
    pub fn len(&self) -> usize {
        self.instances.len()
    }

    /// Always false: there is at least one instance.
    pub fn is_empty(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Handoff = Handoff {
        base: Nanos(100),
        per_waiter: Nanos(50),
    };

    #[test]
    fn uncontended_same_cpu_costs_only_the_hold_time() {
        let mut n = NatLocks::new(1, Nanos(500), H);
        let s = n.enter(0, 7, Nanos(1_000));
        assert_eq!(
            (s.start, s.end, s.spin),
            (Nanos(1_000), Nanos(1_500), Nanos::ZERO)
        );
        let s = n.enter(0, 7, Nanos(2_000));
        assert_eq!(s.end, Nanos(2_500));
        assert_eq!(n.contended(), 0);
    }

    #[test]
    fn a_second_cpu_spins_and_pays_the_handoff() {
        let mut n = NatLocks::new(1, Nanos(500), H);
        n.enter(0, 1, Nanos(1_000));
        let s = n.enter(1, 2, Nanos(1_200));
        assert_eq!(
            (s.spin, s.start, s.end),
            (Nanos(300), Nanos(1_500), Nanos(2_100))
        );
        assert_eq!(n.contended(), 1);
    }

    #[test]
    fn two_instances_serialise_only_their_own_packets() {
        let mut n = NatLocks::new(2, Nanos(500), H);
        let a = n.enter(0, 0, Nanos(1_000));
        let b = n.enter(1, 1, Nanos(1_000));
        assert_eq!((a.instance, b.instance), (0, 1));
        assert_eq!(b.spin, Nanos::ZERO);
        // With one instance the same pair waits.
        let mut one = NatLocks::new(1, Nanos(500), H);
        one.enter(0, 0, Nanos(1_000));
        assert_eq!(one.enter(1, 1, Nanos(1_000)).spin, Nanos(500));
    }

    #[test]
    fn handoff_grows_with_the_spinners() {
        let mut n = NatLocks::new(1, Nanos(500), H);
        n.enter(0, 0, Nanos(1_000)); // holds until 1500
        let a = n.enter(1, 0, Nanos(1_100)); // waits; no other spinner: +100
        assert_eq!((a.start, a.end), (Nanos(1_500), Nanos(2_100)));
        let b = n.enter(2, 0, Nanos(1_200)); // one spinner ahead: +150
        assert_eq!((b.start, b.end), (Nanos(2_100), Nanos(2_750)));
        let c = n.enter(3, 0, Nanos(1_300)); // two ahead: +200
        assert_eq!(c.end, Nanos(2_750 + 200 + 500));
        // Later, once the queue drained, the handoff is back to its base.
        let d = n.enter(0, 0, Nanos(10_000));
        assert_eq!(d.end, Nanos(10_600));
    }

    #[test]
    fn zero_instances_means_one() {
        assert_eq!(NatLocks::new(0, Nanos(1), Handoff::default()).len(), 1);
    }
}
