//! A per-packet serialised section shared by every CPU: the lock of an in-kernel NAT
//! instance (ipfw nat in Case 5), with K independent instances.
//!
//! Packets choose an instance by their inside address (NAT-ing to several external addresses
//! with one instance each). An instance is held for `hold` per packet; a CPU that finds it
//! held spins until it is free (FreeBSD mutexes spin adaptively while the owner runs), and
//! taking a lock last held by another CPU first pulls its cache line over (`handoff`). Both
//! the wait and the handoff are CPU time of the waiting CPU — this is what made one instance
//! exhaust 24 threads at ≈500 Mbit/s.

use nictune_core::units::Nanos;

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

#[derive(Debug, Clone, Copy)]
struct Instance {
    free_at: Nanos,
    last_cpu: Option<u32>,
}

/// K NAT instances.
#[derive(Debug, Clone)]
pub struct NatLocks {
    instances: Vec<Instance>,
    hold: Nanos,
    handoff: Nanos,
    contended: u64,
}

impl NatLocks {
    /// `k` instances (at least one), each held `hold` per packet, with `handoff` added when
    /// the previous holder was another CPU.
    pub fn new(k: usize, hold: Nanos, handoff: Nanos) -> NatLocks {
        NatLocks {
            instances: vec![
                Instance {
                    free_at: Nanos::ZERO,
                    last_cpu: None
                };
                k.max(1)
            ],
            hold,
            handoff,
            contended: 0,
        }
    }

    /// The instance for a packet whose inside address hashes to `key`.
    pub fn instance_for(&self, key: u32) -> usize {
        key as usize % self.instances.len()
    }

    /// `cpu` needs the instance for `key` at `now` (calls must come in time order per
    /// instance, as the engine's event order guarantees).
    pub fn enter(&mut self, cpu: u32, key: u32, now: Nanos) -> Section {
        let instance = self.instance_for(key);
        let (hold, handoff) = (self.hold, self.handoff);
        let inst = &mut self.instances[instance];
        let start = now.max(inst.free_at);
        if start > now {
            self.contended += 1;
        }
        let migrate = if inst.last_cpu.is_some_and(|c| c != cpu) {
            handoff
        } else {
            Nanos::ZERO
        };
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

    #[test]
    fn uncontended_same_cpu_costs_only_the_hold_time() {
        let mut n = NatLocks::new(1, Nanos(500), Nanos(100));
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
        let mut n = NatLocks::new(1, Nanos(500), Nanos(100));
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
        let mut n = NatLocks::new(2, Nanos(500), Nanos(100));
        let a = n.enter(0, 0, Nanos(1_000));
        let b = n.enter(1, 1, Nanos(1_000));
        assert_eq!((a.instance, b.instance), (0, 1));
        assert_eq!(b.spin, Nanos::ZERO);
        // With one instance the same pair waits.
        let mut one = NatLocks::new(1, Nanos(500), Nanos(100));
        one.enter(0, 0, Nanos(1_000));
        assert_eq!(one.enter(1, 1, Nanos(1_000)).spin, Nanos(500));
    }

    #[test]
    fn zero_instances_means_one() {
        assert_eq!(NatLocks::new(0, Nanos(1), Nanos(0)).len(), 1);
    }
}
