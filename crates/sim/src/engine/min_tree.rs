//! The earliest of a fixed set of per-entity times, for models that keep one pending time per
//! entity (the router keeps one per CPU) instead of a queue of events.

/// The earliest of a fixed set of per-entity times (a tournament tree): O(log n) update,
/// O(1) query; ties go to the lower index. The case models keep one pending time per CPU.
///
/// Each node is one `u64`: the time shifted left by the index width, with the index in the low
/// bits, so a node comparison is one integer compare and ties fall to the lower index. Times
/// at or beyond `u64::MAX >> shift` (centuries of nanoseconds for any realistic entity count)
/// read as "never".
#[derive(Debug, Clone)]
pub struct MinTree {
    leaves: usize,
    shift: u32,
    tree: Vec<u64>,
}

impl MinTree {
    /// `n` entities, all at `u64::MAX` ("never").
    pub fn new(n: usize) -> MinTree {
        let leaves = n.max(1).next_power_of_two();
        let shift = leaves.trailing_zeros().max(1);
        let mut tree = vec![u64::MAX; 2 * leaves];
        for i in 0..leaves {
            tree[leaves + i] = (u64::MAX << shift) | i as u64;
        }
        for i in (1..leaves).rev() {
            tree[i] = tree[2 * i].min(tree[2 * i + 1]);
        }
        MinTree {
            leaves,
            shift,
            tree,
        }
    }

    /// Sets entity `i`'s time.
    #[inline]
    pub fn set(&mut self, i: usize, t: u64) {
        let t = t.min(u64::MAX >> self.shift);
        let mut k = self.leaves + i;
        self.tree[k] = (t << self.shift) | i as u64;
        while k > 1 {
            let m = self.tree[k & !1].min(self.tree[k | 1]);
            k /= 2;
            if self.tree[k] == m {
                break; // the ancestors depend only on this node: unchanged
            }
            self.tree[k] = m;
        }
    }

    fn decode(&self, key: u64) -> (u64, usize) {
        let t = key >> self.shift;
        let t = if t == u64::MAX >> self.shift {
            u64::MAX
        } else {
            t
        };
        (t, (key & ((1 << self.shift) - 1)) as usize)
    }

    /// Entity `i`'s time.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        self.decode(self.tree[self.leaves + i]).0
    }

    /// The earliest `(time, entity)`.
    #[inline]
    pub fn min(&self) -> (u64, usize) {
        self.decode(self.tree[1])
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
