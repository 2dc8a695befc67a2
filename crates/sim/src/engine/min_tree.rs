//! The earliest of a fixed set of per-entity times, for models that keep one pending time per
//! entity (the router keeps one per CPU) instead of a queue of events.

/// The earliest of a fixed set of per-entity times (a tournament tree): O(log n) update,
/// O(1) query; ties go to the lower index. The case models keep one pending time per CPU.
#[derive(Debug, Clone)]
pub struct MinTree {
    leaves: usize,
    tree: Vec<(u64, u32)>,
}

impl MinTree {
    /// `n` entities, all at `u64::MAX` ("never").
    pub fn new(n: usize) -> MinTree {
        let leaves = n.max(1).next_power_of_two();
        let mut tree = vec![(u64::MAX, u32::MAX); 2 * leaves];
        for i in 0..leaves {
            tree[leaves + i] = (u64::MAX, i as u32);
        }
        for i in (1..leaves).rev() {
            tree[i] = tree[2 * i].min(tree[2 * i + 1]);
        }
        MinTree { leaves, tree }
    }

    /// Sets entity `i`'s time.
    #[inline]
    pub fn set(&mut self, i: usize, t: u64) {
        let mut k = self.leaves + i;
        self.tree[k] = (t, i as u32);
        while k > 1 {
            k /= 2;
            self.tree[k] = self.tree[2 * k].min(self.tree[2 * k + 1]);
        }
    }

    /// Entity `i`'s time.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        self.tree[self.leaves + i].0
    }

    /// The earliest `(time, entity)`.
    #[inline]
    pub fn min(&self) -> (u64, usize) {
        let (t, i) = self.tree[1];
        (t, i as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_the_minimum_with_low_index_ties() {
        let mut m = MinTree::new(5);
        assert_eq!(m.min().0, u64::MAX);
        m.set(3, 40);
        m.set(1, 40);
        m.set(4, 90);
        assert_eq!(m.min(), (40, 1));
        m.set(1, 100);
        assert_eq!(m.min(), (40, 3));
        m.set(3, u64::MAX);
        assert_eq!(m.min(), (90, 4));
        assert_eq!(m.get(1), 100);
    }
}
