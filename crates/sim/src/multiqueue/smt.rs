//! SMT (hyper-threading): two logical CPUs sharing one core's execution resources.
//!
//! When both siblings have work, each progresses slower than alone; together they do more
//! than one core but less than two. The speed-up is a scenario parameter (Intel's own
//! material claims "up to 30 %" more throughput for Nehalem/Westmere-class cores; the Case 5
//! reader's comment — HT off being 1.3–2× better for ipfw forwarding — is a hypothesis the
//! parameter lets a user test, not a fact built in).

use nictune_core::units::Nanos;

/// How logical CPU numbers map onto cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiblingLayout {
    /// Siblings are adjacent (0,1), (2,3) … — FreeBSD's enumeration.
    Adjacent,
    /// Siblings are `cpu` and `cpu + cores` — Linux's usual enumeration on Intel.
    Split,
}

/// The host's SMT topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    /// Physical cores.
    pub cores: u32,
    /// Logical CPUs per core (1 = SMT off, 2 = HT).
    pub threads_per_core: u32,
    /// Numbering of siblings.
    pub layout: SiblingLayout,
    /// Combined throughput of a fully busy core in per-mille of one thread alone (1000 = no
    /// gain, 1300 = +30 %). Each of two busy siblings runs at half of it.
    pub shared_permille: u32,
}

impl Topology {
    /// Logical CPUs.
    pub fn cpus(&self) -> u32 {
        self.cores * self.threads_per_core
    }

    /// The core a logical CPU runs on.
    pub fn core_of(&self, cpu: u32) -> u32 {
        match self.layout {
            SiblingLayout::Adjacent => cpu / self.threads_per_core.max(1),
            SiblingLayout::Split => cpu % self.cores.max(1),
        }
    }

    /// The other logical CPU of the same core, if SMT is on.
    pub fn sibling(&self, cpu: u32) -> Option<u32> {
        if self.threads_per_core < 2 {
            return None;
        }
        Some(match self.layout {
            SiblingLayout::Adjacent => cpu ^ 1,
            SiblingLayout::Split => (cpu + self.cores) % self.cpus(),
        })
    }

    /// Wall time one logical CPU needs for `work` (time it would take alone) while its
    /// sibling is busy or idle.
    pub fn wall_time(&self, work: Nanos, sibling_busy: bool) -> Nanos {
        if !sibling_busy || self.threads_per_core < 2 {
            return work;
        }
        // Each sibling progresses at shared/2 of a lone thread.
        Nanos((work.0 * 2000).div_ceil(self.shared_permille.max(1) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x5650_pair(layout: SiblingLayout) -> Topology {
        Topology {
            cores: 12,
            threads_per_core: 2,
            layout,
            shared_permille: 1300,
        }
    }

    #[test]
    fn sibling_numbering() {
        let f = x5650_pair(SiblingLayout::Adjacent);
        assert_eq!((f.core_of(13), f.sibling(13)), (6, Some(12)));
        let l = x5650_pair(SiblingLayout::Split);
        assert_eq!((l.core_of(13), l.sibling(13)), (1, Some(1)));
        assert_eq!(l.sibling(1), Some(13));
        assert_eq!(f.cpus(), 24);
    }

    #[test]
    fn busy_sibling_slows_work_but_the_core_does_more() {
        let t = x5650_pair(SiblingLayout::Adjacent);
        let work = Nanos::from_micros(130);
        assert_eq!(t.wall_time(work, false), work);
        // 130 µs at 0.65 of full speed: 200 µs; two siblings finish 260 µs of work in 200 µs.
        assert_eq!(t.wall_time(work, true), Nanos::from_micros(200));
    }

    #[test]
    fn smt_off_has_no_siblings() {
        let t = Topology {
            cores: 12,
            threads_per_core: 1,
            layout: SiblingLayout::Adjacent,
            shared_permille: 1000,
        };
        assert_eq!(t.sibling(3), None);
        assert_eq!(t.wall_time(Nanos(100), true), Nanos(100));
    }
}
