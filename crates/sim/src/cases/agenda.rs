//! A small, fast agenda for the case models: events ordered by `(time, insertion order)`,
//! packed into one `u128` key, with a one-element front slot in front of the binary heap.
//!
//! Most events a handler schedules are the earliest pending one (a CPU's next step); the front
//! slot hands them back without touching the heap. Ordering is exactly that of a plain heap
//! on `(time, seq)`: the slot always holds a key smaller than every key in the heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Largest event code (16 bits).
pub const MAX_EVENT: u16 = u16::MAX;

/// The agenda.
#[derive(Debug, Default)]
pub struct Agenda {
    heap: BinaryHeap<Reverse<u128>>,
    front: Option<u128>,
    seq: u64,
    popped: u64,
}

impl Agenda {
    /// An empty agenda.
    pub fn new() -> Agenda {
        Agenda::default()
    }

    /// Schedules event `ev` at time `t` (ns).
    #[inline]
    pub fn push(&mut self, t: u64, ev: u16) {
        self.seq += 1;
        let key = ((t as u128) << 64) | ((self.seq as u128) << 16) | ev as u128;
        match self.front {
            Some(f) if key < f => {
                self.heap.push(Reverse(f));
                self.front = Some(key);
            }
            Some(_) => self.heap.push(Reverse(key)),
            None if self.heap.peek().is_none_or(|m| key < m.0) => self.front = Some(key),
            None => self.heap.push(Reverse(key)),
        }
    }

    /// Events handed out so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Removes the earliest event: `(time, event)`.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, u16)> {
        let key = self.front.take().or_else(|| self.heap.pop().map(|r| r.0))?;
        self.popped += 1;
        Some(((key >> 64) as u64, key as u16))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut a = Agenda::new();
        a.push(50, 1);
        a.push(10, 2);
        a.push(50, 3);
        a.push(10, 4);
        a.push(30, 5);
        let order: Vec<(u64, u16)> = std::iter::from_fn(|| a.pop()).collect();
        assert_eq!(order, vec![(10, 2), (10, 4), (30, 5), (50, 1), (50, 3)]);
    }

    #[test]
    fn matches_a_plain_heap_on_a_long_random_sequence() {
        let mut a = Agenda::new();
        let mut plain = BinaryHeap::new();
        let mut x = 12345u64;
        let mut now = 0;
        for i in 0..10_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = now + (x >> 54);
            a.push(t, (i % 1000) as u16);
            plain.push(Reverse((t, i)));
            if x & 1 == 0 {
                let (ta, ea) = a.pop().unwrap();
                let Reverse((tp, ip)) = plain.pop().unwrap();
                assert_eq!((ta, ea), (tp, (ip % 1000) as u16));
                now = ta;
            }
        }
    }
}

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
mod min_tree_tests {
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
