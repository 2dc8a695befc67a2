//! The measured window: warm-up before it is excluded, completions inside it are counted per
//! interim interval (1 s, like `netperf -D 1`).

use nictune_core::units::Nanos;

/// Interim interval length.
pub const INTERIM: Nanos = Nanos::SECOND;

/// Where the measured interval starts and ends on the engine clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// End of warm-up; the first counted instant.
    pub start: Nanos,
    /// End of the measured interval; nothing after it counts.
    pub end: Nanos,
}

impl Window {
    /// Warm-up from `origin` lasting `warmup`, then `duration` measured.
    pub fn after_warmup(origin: Nanos, warmup: Nanos, duration: Nanos) -> Window {
        Window {
            start: origin + warmup,
            end: origin + warmup + duration,
        }
    }

    /// True when an event at `t` is inside the measured interval.
    pub fn contains(&self, t: Nanos) -> bool {
        t >= self.start && t < self.end
    }

    /// The measured length.
    pub fn length(&self) -> Nanos {
        self.end.saturating_sub(self.start)
    }

    /// Number of interim intervals (the last may be partial).
    pub fn intervals(&self) -> usize {
        self.length().0.div_ceil(INTERIM.0) as usize
    }

    /// The interim interval `t` falls in (caller checked [`Window::contains`]).
    pub fn interval_of(&self, t: Nanos) -> usize {
        ((t - self.start).0 / INTERIM.0) as usize
    }

    /// Length of interval `i` (the last one may be short).
    pub fn interval_length(&self, i: usize) -> Nanos {
        let from = INTERIM.0 * i as u64;
        Nanos(self.length().0.saturating_sub(from).min(INTERIM.0))
    }
}

/// Completed events per interim interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interim {
    counts: Vec<u64>,
}

impl Interim {
    /// Zeroed counters for every interval of `window`.
    pub fn new(window: &Window) -> Interim {
        Interim {
            counts: vec![0; window.intervals()],
        }
    }

    /// Counts `n` events at `t` (inside `window`).
    pub fn add(&mut self, window: &Window, t: Nanos, n: u64) {
        if let Some(c) = self.counts.get_mut(window.interval_of(t)) {
            *c += n;
        }
    }

    /// Adds another connection's counters.
    pub fn merge(&mut self, other: &Interim) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
    }

    /// Total over the window.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Events per second in each interval.
    pub fn rates(&self, window: &Window) -> Vec<f64> {
        let per_sec = |(i, c): (usize, &u64)| *c as f64 / window.interval_length(i).as_secs_f64();
        self.counts.iter().enumerate().map(per_sec).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warmup_is_outside_and_intervals_cover_the_window() {
        let w = Window::after_warmup(
            Nanos(100),
            Nanos::from_millis(500),
            Nanos::from_millis(2_500),
        );
        assert!(!w.contains(Nanos(100)));
        assert!(w.contains(w.start));
        assert!(!w.contains(w.end));
        assert_eq!(w.intervals(), 3);
        assert_eq!(w.interval_length(2), Nanos::from_millis(500));
    }

    #[test]
    fn rates_divide_by_each_interval_length() {
        let w = Window::after_warmup(Nanos(0), Nanos(0), Nanos::from_millis(1_500));
        let mut a = Interim::new(&w);
        a.add(&w, Nanos::from_millis(10), 100);
        a.add(&w, Nanos::from_millis(1_200), 50);
        let mut b = Interim::new(&w);
        b.add(&w, Nanos::from_millis(999), 100);
        a.merge(&b);
        assert_eq!(a.total(), 250);
        assert_eq!(a.rates(&w), vec![200.0, 100.0]);
    }
}
