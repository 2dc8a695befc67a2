//! The clock seam: engines read time only through [`Clock`], so tests drive them with
//! [`FakeClock`] and get the same numbers every run.

use nictune_core::units::Nanos;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A monotonic nanosecond clock.
pub trait Clock: Send + Sync {
    /// Nanoseconds since this clock's origin; never goes backwards.
    fn now(&self) -> Nanos;
    /// Waits until `at` (a fake clock just jumps there).
    fn sleep_until(&self, at: Nanos);
}

/// `CLOCK_MONOTONIC` through [`Instant`] (vDSO, no system call), origin at construction.
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    origin: Instant,
}

impl MonotonicClock {
    /// A clock whose zero is now.
    pub fn new() -> MonotonicClock {
        MonotonicClock {
            origin: Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        MonotonicClock::new()
    }
}

/// Below this, sleeping overshoots by more than the wait itself: spin instead.
const SPIN_BELOW: Nanos = Nanos::from_micros(60);

impl Clock for MonotonicClock {
    fn now(&self) -> Nanos {
        Nanos(self.origin.elapsed().as_nanos() as u64)
    }

    fn sleep_until(&self, at: Nanos) {
        loop {
            let now = self.now();
            if now >= at {
                return;
            }
            let left = at - now;
            if left > SPIN_BELOW {
                std::thread::sleep(std::time::Duration::from_nanos((left - SPIN_BELOW).0));
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// A clock that moves only when told; shared by clones.
#[derive(Debug, Clone, Default)]
pub struct FakeClock {
    now: Arc<AtomicU64>,
}

impl FakeClock {
    /// A fake clock at zero.
    pub fn new() -> FakeClock {
        FakeClock::default()
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Nanos) {
        self.now.fetch_add(by.0, Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Nanos {
        Nanos(self.now.load(Ordering::SeqCst))
    }

    fn sleep_until(&self, at: Nanos) {
        self.now.fetch_max(at.0, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_clock_moves_only_forward() {
        let c = FakeClock::new();
        c.advance(Nanos(5));
        c.sleep_until(Nanos(3));
        assert_eq!(c.now(), Nanos(5));
        c.sleep_until(Nanos(9));
        assert_eq!(c.clone().now(), Nanos(9));
    }

    #[test]
    fn monotonic_clock_sleeps_at_least_until_the_target() {
        let c = MonotonicClock::new();
        let target = c.now() + Nanos::from_micros(300);
        c.sleep_until(target);
        assert!(c.now() >= target);
    }
}
