//! `hw.igb.rx_process_limit` / `dev.igb.N.rx_processing_limit` (moderation-algorithms.md §8).
//!
//! The receive cleanup loops `while (count != 0)`, decrementing per packet, so −1 never
//! reaches zero: unlimited. The default is 100.

use super::TunableError;

/// How many packets one receive cleanup may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxProcessLimit(Option<u32>);

impl Default for RxProcessLimit {
    fn default() -> Self {
        RxProcessLimit(Some(100))
    }
}

/// The largest value the tunable takes (an `int` sysctl).
pub const MAX: i64 = 0x7fff_ffff;
/// What the tunable accepts, in words (the one statement of its range).
pub const ALLOWED: &str = "-1 (unlimited) or 1..2147483647";

impl RxProcessLimit {
    /// No limit (the tunable set to −1).
    pub const UNLIMITED: RxProcessLimit = RxProcessLimit(None);

    /// From the tunable's integer: −1 = unlimited, 1.. = that many packets. 0 is rejected:
    /// the cleanup would take nothing and receive would stall.
    pub fn from_tunable(value: i64) -> Result<RxProcessLimit, TunableError> {
        match value {
            -1 => Ok(RxProcessLimit::UNLIMITED),
            1..=MAX => Ok(RxProcessLimit(Some(value as u32))),
            _ => Err(TunableError {
                name: "rx_process_limit",
                value,
                allowed: ALLOWED,
            }),
        }
    }

    /// Packets one cleanup takes when `available` are ready in the ring.
    pub fn take(self, available: u32) -> u32 {
        self.0.map_or(available, |limit| limit.min(available))
    }

    /// The limit, `None` when unlimited.
    pub fn get(self) -> Option<u32> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minus_one_is_unlimited() {
        let l = RxProcessLimit::from_tunable(-1).unwrap();
        assert_eq!(l.take(4096), 4096);
        assert_eq!(l.get(), None);
    }

    #[test]
    fn default_caps_at_one_hundred() {
        assert_eq!(RxProcessLimit::default().take(4096), 100);
        assert_eq!(RxProcessLimit::default().take(7), 7);
    }

    #[test]
    fn zero_and_other_negatives_are_rejected_with_the_allowed_range() {
        for v in [0, -2, 1 << 40] {
            let e = RxProcessLimit::from_tunable(v).unwrap_err();
            assert_eq!(e.value, v);
            assert!(e.to_string().contains("-1 (unlimited)"), "{e}");
        }
    }
}
