//! A host's oscillator: the clock its NIC timers run on.
//!
//! Two crystals never agree exactly. IEEE 802.3 allows ±100 ppm on the transmit clock and
//! board crystals are typically specified at ±20–50 ppm, so two hosts' NIC timers drift apart
//! by tens of ppm. A timer of `n` nominal nanoseconds on a clock that runs `ppm` fast lasts
//! `n / (1 + ppm·10⁻⁶)` real nanoseconds. The arithmetic here is exact (integer, in parts per
//! billion) so that a drift of a few nanoseconds per 125 µs interval accumulates correctly
//! over millions of intervals instead of being lost to rounding.

/// Parts per billion in one.
const PPB: i128 = 1_000_000_000;

/// One host's oscillator, `ppb` parts per billion fast (negative: slow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Oscillator {
    ppb: i64,
}

impl Oscillator {
    /// An oscillator `ppm` parts per million fast (rounded to 1 ppb).
    pub fn from_ppm(ppm: f64) -> Oscillator {
        Oscillator {
            ppb: (ppm * 1000.0).round() as i64,
        }
    }

    /// The offset in ppm, as configured (to 1 ppb).
    pub fn ppm(&self) -> f64 {
        self.ppb as f64 / 1000.0
    }

    /// Real nanoseconds that `nominal` nanoseconds of this clock last (rounded down).
    pub fn real(&self, nominal: u64) -> u64 {
        (nominal as i128 * PPB / (PPB + self.ppb as i128)) as u64
    }

    /// Real time of boundary `k` of an interval clock started at `origin` with `period`
    /// nominal nanoseconds per interval.
    pub fn boundary(&self, origin: u64, period: u64, k: u64) -> u64 {
        origin + (k as i128 * period as i128 * PPB / (PPB + self.ppb as i128)) as u64
    }

    /// The first boundary at or after `t` of an interval clock started at `origin` with
    /// `period` nominal nanoseconds per interval (`period` > 0); `origin` itself when `t` is
    /// earlier.
    pub fn next_boundary(&self, origin: u64, period: u64, t: u64) -> u64 {
        if t <= origin {
            return origin;
        }
        let elapsed = (t - origin) as i128;
        let per = period as i128 * PPB;
        let scaled = elapsed * (PPB + self.ppb as i128);
        // First guess, then correct for the floor in `boundary`.
        let mut k = ((scaled + per - 1) / per).max(0) as u64;
        while k > 0 && self.boundary(origin, period, k - 1) >= t {
            k -= 1;
        }
        while self.boundary(origin, period, k) < t {
            k += 1;
        }
        self.boundary(origin, period, k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fast_clock_makes_timers_shorter() {
        let fast = Oscillator::from_ppm(10.0);
        let slow = Oscillator::from_ppm(-10.0);
        assert_eq!(Oscillator::default().real(124_928), 124_928);
        assert_eq!(fast.real(1_000_000_000), 999_990_000);
        assert_eq!(slow.real(1_000_000_000), 1_000_010_000);
    }

    #[test]
    fn boundaries_drift_by_the_exact_offset() {
        // 20 ppm over 8000 intervals of 125 µs (one second) = 20 µs of drift.
        let osc = Oscillator::from_ppm(-20.0);
        let b = osc.boundary(0, 125_000, 8000);
        assert_eq!(b, 1_000_020_000);
    }

    #[test]
    fn next_boundary_is_the_first_at_or_after() {
        let osc = Oscillator::from_ppm(13.0);
        for t in [
            0u64,
            1,
            124_998,
            124_999,
            125_000,
            1_000_000_007,
            5_555_555_555,
        ] {
            let b = osc.next_boundary(0, 125_000, t);
            assert!(b >= t);
            let period_real = osc.real(125_000);
            assert!(b - t <= period_real + 1, "t={t} b={b}");
        }
        assert_eq!(osc.next_boundary(100, 125_000, 100), 100);
    }
}
