//! The event queues: [`EventQueue`], a binary heap ordered by `(time, sequence)`, and
//! [`EntityQueue`], one pending event per entity ordered by `(time, entity)`, for models whose
//! entities (the router's CPUs) re-plan their next step far more often than they complete one.
//!
//! Events at the same instant run in the order they were scheduled (the sequence number is
//! the tie-breaker), so a run is a pure function of its inputs. The pending set stays small
//! (a few timers and interrupts per host) because packets are never events of their own; see
//! the crate docs.

use super::min_tree::MinTree;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A scheduled item: fires at `time` (ns), ties broken by `seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Slot<E: Ord> {
    time: u64,
    seq: u64,
    event: E,
}

/// Min-queue of events by `(time, seq)`.
#[derive(Debug)]
pub struct EventQueue<E: Ord> {
    heap: BinaryHeap<Reverse<Slot<E>>>,
    front: Option<Slot<E>>,
    next_seq: u64,
    popped: u64,
    now: u64,
    backwards: u64,
}

impl<E: Ord + Copy> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(64),
            front: None,
            next_seq: 0,
            popped: 0,
            now: 0,
            backwards: 0,
        }
    }

    /// Schedules `event` at `time`. A time in the past is a model bug: it is counted (see
    /// [`EventQueue::backwards`]) and the event runs now, so time still never goes back.
    pub fn schedule(&mut self, time: u64, event: E) {
        if time < self.now {
            self.backwards += 1;
        }
        let time = time.max(self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = Slot { time, seq, event };
        match self.front {
            Some(f) if slot < f => {
                self.heap.push(Reverse(f));
                self.front = Some(slot);
            }
            Some(_) => self.heap.push(Reverse(slot)),
            None if self.heap.peek().is_none_or(|m| slot < m.0) => self.front = Some(slot),
            None => self.heap.push(Reverse(slot)),
        }
    }

    /// Removes and returns the earliest event if it is at or before `until`.
    #[inline]
    pub fn pop_until(&mut self, until: u64) -> Option<(u64, E)> {
        let head = match &self.front {
            Some(f) => f.time,
            None => self.heap.peek()?.0.time,
        };
        if head > until {
            return None;
        }
        let slot = self.front.take().or_else(|| self.heap.pop().map(|r| r.0))?;
        self.now = slot.time;
        self.popped += 1;
        Some((slot.time, slot.event))
    }

    /// The time of the last event popped.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Events that were scheduled before the current time (0 in a correct model; the property
    /// tests check it).
    pub fn backwards(&self) -> u64 {
        self.backwards
    }

    /// How many events have been popped so far.
    pub fn events(&self) -> u64 {
        self.popped
    }
}

impl<E: Ord + Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// One pending typed event per entity: scheduling an entity replaces its pending event, and
/// the earliest comes first, ties to the lower entity index (a tournament tree,
/// [`MinTree`]: O(log n) to reschedule, O(1) to find the earliest).
#[derive(Debug, Clone)]
pub struct EntityQueue<E: Copy> {
    times: MinTree,
    events: Vec<E>,
}

impl<E: Copy> EntityQueue<E> {
    /// `n` entities, each with `idle` pending at "never" (`u64::MAX`).
    pub fn new(n: usize, idle: E) -> Self {
        EntityQueue {
            times: MinTree::new(n),
            events: vec![idle; n],
        }
    }

    /// Replaces `entity`'s pending event with `event` at `time` (`u64::MAX`: never).
    #[inline]
    pub fn schedule(&mut self, entity: usize, time: u64, event: E) {
        self.events[entity] = event;
        self.times.set(entity, time);
    }

    /// When `entity`'s pending event is due (`u64::MAX`: never).
    #[inline]
    pub fn time(&self, entity: usize) -> u64 {
        self.times.get(entity)
    }

    /// The earliest pending `(time, entity, event)`.
    #[inline]
    pub fn next(&self) -> (u64, usize, E) {
        let (t, i) = self.times.min();
        (t, i, self.events[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(20, 'c');
        q.schedule(10, 'a');
        q.schedule(10, 'b');
        q.schedule(5, 'z');
        let order: Vec<char> = std::iter::from_fn(|| q.pop_until(100).map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['z', 'a', 'b', 'c']);
        assert_eq!(q.events(), 4);
    }

    #[test]
    fn matches_a_plain_heap_on_a_long_random_sequence() {
        let mut q = EventQueue::new();
        let mut plain = BinaryHeap::new();
        let mut x = 12345u64;
        for i in 0..10_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = q.now() + (x >> 54);
            q.schedule(t, (i % 1000) as u16);
            plain.push(Reverse((t, i)));
            if x & 1 == 0 {
                let got = q.pop_until(u64::MAX).unwrap();
                let Reverse((tp, ip)) = plain.pop().unwrap();
                assert_eq!(got, (tp, (ip % 1000) as u16));
            }
        }
    }

    #[test]
    fn stops_at_the_horizon_and_clamps_the_past() {
        let mut q = EventQueue::new();
        q.schedule(50, 1u8);
        assert_eq!(q.pop_until(49), None);
        assert_eq!(q.pop_until(50), Some((50, 1)));
        q.schedule(10, 2);
        assert_eq!(q.pop_until(100), Some((50, 2)));
        assert_eq!(q.backwards(), 1);
    }

    #[test]
    fn an_entity_queue_keeps_one_event_per_entity() {
        let mut q = EntityQueue::new(3, 'z');
        assert_eq!(q.next().0, u64::MAX);
        q.schedule(2, 30, 'a');
        q.schedule(1, 30, 'b');
        assert_eq!(q.next(), (30, 1, 'b'), "ties go to the lower entity");
        q.schedule(1, 50, 'c');
        assert_eq!(
            q.next(),
            (30, 2, 'a'),
            "rescheduling replaces the pending event"
        );
        q.schedule(2, u64::MAX, 'd');
        assert_eq!(q.next(), (50, 1, 'c'));
    }
}
