//! ixgbevf and the older ixgbe adaptive moderation (moderation-algorithms.md §4.1).
//!
//! Each container (Rx, Tx) is classified on the bytes per microsecond of the *last ITR slice*
//! (a whole window's bytes divided by one interval, not by elapsed time) with thresholds 10
//! and 20; the vector's rate then moves 10 % of the way to the class target at every NAPI
//! completion, and the new value is written at once.
//!
//! Two variants: [`LegacyVariant::Vf`] keeps the interval in 0.25 µs units with bulk = 12 K/s
//! (in-tree ixgbevf); [`LegacyVariant::OutOfTree`] keeps a rate in ints/s with bulk = 8 K/s
//! (Intel's out-of-tree ixgbe ≤ 4.15 family).

use super::{family_policy, Coalescing, Traffic};
use nictune_core::units::Nanos;

/// Container class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum LegacyClass {
    /// 100 K/s.
    #[default]
    Lowest,
    /// 20 K/s.
    Low,
    /// 12 K/s (ixgbevf) or 8 K/s (out-of-tree ixgbe).
    Bulk,
}

/// Which driver the algorithm belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegacyVariant {
    /// In-tree ixgbevf: interval in µs<<2, bulk 12 K/s (IXGBE_12K_ITR = 336).
    Vf,
    /// Out-of-tree ixgbe: rate in ints/s, bulk 8 K/s.
    OutOfTree,
}

/// The `InterruptThrottleRate` module option (or ethtool rx-usecs for in-tree drivers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegacySetting {
    /// 0: off.
    Off,
    /// 1: dynamic (the default).
    Dynamic,
    /// 3: dynamic conservative. Assumption: like the same-numbered e1000/igb mode it never
    /// selects the lowest-latency class (LOWEST is clamped to LOW).
    Conservative,
    /// A fixed rate in ints/s (956–488281 in the code).
    Rate(u32),
}

/// Lowest fixed rate the code accepts: 1e9 / (0xFF8 · 256).
pub const MIN_RATE: u32 = 956;
/// Highest fixed rate the code accepts: 1e9 / (8 · 256).
pub const MAX_RATE: u32 = 488_281;

/// One vector's legacy moderation state.
#[derive(Debug, Clone)]
pub struct LegacyItr {
    variant: LegacyVariant,
    setting: LegacySetting,
    /// Vf: interval in 0.25 µs units. OutOfTree: rate in ints/s.
    value: u32,
    programmed: Coalescing,
    rx: Container,
    tx: Container,
}

#[derive(Debug, Clone, Copy, Default)]
struct Container {
    class: LegacyClass,
    packets: u64,
    bytes: u64,
}

impl Container {
    /// `update_itr`: an empty container is left alone (its counters are *not* cleared).
    fn update(&mut self, slice_us: u64) {
        if self.packets == 0 || slice_us == 0 {
            return;
        }
        let bpu = self.bytes / slice_us;
        self.class = match self.class {
            LegacyClass::Lowest if bpu > 10 => LegacyClass::Low,
            LegacyClass::Low if bpu > 20 => LegacyClass::Bulk,
            LegacyClass::Low if bpu <= 10 => LegacyClass::Lowest,
            LegacyClass::Bulk if bpu <= 20 => LegacyClass::Low,
            c => c,
        };
        self.packets = 0;
        self.bytes = 0;
    }
}

/// `EITR_INTS_PER_SEC_TO_REG`: the register from a rate with 256 ns arithmetic, masked to the
/// 82599's 2 µs granularity (bits 11:3, i.e. 0.25 µs per LSB of the masked value).
fn rate_to_register(rate: u32) -> u32 {
    (1_000_000_000 / (rate as u64 * 256)) as u32 & 0xFF8
}

fn register_interval(reg: u32) -> Coalescing {
    Coalescing::throttle(Nanos(reg.max(8) as u64 * 250))
}

impl LegacyItr {
    /// A vector after probe: adaptive modes start at 20 K/s (Rx or mixed vector).
    pub fn new(variant: LegacyVariant, setting: LegacySetting) -> LegacyItr {
        let value = match variant {
            LegacyVariant::Vf => 200, // IXGBE_20K_ITR
            LegacyVariant::OutOfTree => 20_000,
        };
        let mut v = LegacyItr {
            variant,
            setting,
            value,
            programmed: Coalescing::OFF,
            rx: Container::default(),
            tx: Container::default(),
        };
        v.programmed = v.register();
        v
    }

    /// The classes of the Rx and Tx containers.
    pub fn classes(&self) -> (LegacyClass, LegacyClass) {
        (self.rx.class, self.tx.class)
    }

    /// Vf: interval in 0.25 µs; OutOfTree: rate in ints/s.
    pub fn value(&self) -> u32 {
        self.value
    }

    fn register(&self) -> Coalescing {
        match (self.setting, self.variant) {
            (LegacySetting::Off, _) => Coalescing::OFF,
            (LegacySetting::Rate(r), _) => register_interval(rate_to_register(r)),
            (_, LegacyVariant::Vf) => register_interval(self.value & 0xFF8),
            (_, LegacyVariant::OutOfTree) => register_interval(rate_to_register(self.value)),
        }
    }

    fn slice_us(&self) -> u64 {
        match self.variant {
            LegacyVariant::Vf => (self.value >> 2) as u64,
            LegacyVariant::OutOfTree => 1_000_000 / self.value.max(1) as u64,
        }
    }

    fn target(&self, class: LegacyClass) -> u32 {
        match (self.variant, class) {
            (LegacyVariant::Vf, LegacyClass::Lowest) => 40,
            (LegacyVariant::Vf, LegacyClass::Low) => 200,
            (LegacyVariant::Vf, LegacyClass::Bulk) => 336,
            (LegacyVariant::OutOfTree, LegacyClass::Lowest) => 100_000,
            (LegacyVariant::OutOfTree, LegacyClass::Low) => 20_000,
            (LegacyVariant::OutOfTree, LegacyClass::Bulk) => 8_000,
        }
    }

    /// The 90/10 smoothing towards `target` (an EMA on the rate in both variants).
    fn smooth(&self, target: u32) -> u32 {
        let (t, cur) = (target as u64, self.value as u64);
        match self.variant {
            LegacyVariant::Vf => ((10 * t * cur) / (9 * t + cur)) as u32,
            LegacyVariant::OutOfTree => ((9 * cur + t) / 10) as u32,
        }
    }
}

/// The driver-side steps `family_policy!` maps onto [`super::ModerationPolicy`].
impl LegacyItr {
    fn observe(&mut self, t: Traffic) {
        self.rx.packets += t.rx_packets;
        self.rx.bytes += t.rx_bytes;
        self.tx.packets += t.tx_packets;
        self.tx.bytes += t.tx_bytes;
    }

    fn complete(&mut self, _now: Nanos) -> Option<Coalescing> {
        if !matches!(
            self.setting,
            LegacySetting::Dynamic | LegacySetting::Conservative
        ) {
            return None;
        }
        let slice = self.slice_us();
        self.tx.update(slice);
        self.rx.update(slice);
        let mut class = self.rx.class.max(self.tx.class);
        if self.setting == LegacySetting::Conservative && class == LegacyClass::Lowest {
            class = LegacyClass::Low;
        }
        let target = self.target(class);
        if target == self.value {
            return None;
        }
        self.value = self.smooth(target);
        self.programmed = self.register();
        Some(self.programmed)
    }

    fn current(&self) -> Coalescing {
        self.programmed
    }
}

family_policy!(LegacyItr);

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(v: &mut LegacyItr, t: Traffic) -> Option<Coalescing> {
        v.observe(t);
        v.complete(Nanos::ZERO)
    }

    #[test]
    fn fixed_rate_uses_256ns_arithmetic_and_2us_granularity() {
        // 1000/s → 1e9/(1000·256) = 3906 → &0xFF8 = 3904 → 976 µs (2.4 % off 1 ms).
        let v = LegacyItr::new(LegacyVariant::Vf, LegacySetting::Rate(1000));
        assert_eq!(v.current(), Coalescing::throttle(Nanos(976_000)));
        let max = LegacyItr::new(LegacyVariant::Vf, LegacySetting::Rate(MAX_RATE));
        assert_eq!(max.current(), Coalescing::throttle(Nanos(2_000)));
    }

    #[test]
    fn vf_classifies_bytes_per_slice_microsecond() {
        let mut v = LegacyItr::new(LegacyVariant::Vf, LegacySetting::Dynamic);
        // Slice = 200>>2 = 50 µs. 400 bytes → 8 B/µs: stays LOWEST; target 40 → smoothing:
        // 10·40·200 / (9·40 + 200) = 80000/560 = 142.
        assert_eq!(
            complete(&mut v, Traffic::rx(10, 400)),
            Some(Coalescing::throttle(Nanos(136 * 250)))
        );
        assert_eq!(v.value(), 142);
        assert_eq!(v.classes().0, LegacyClass::Lowest);
        // Slice = 35 µs. 35·15 = 525 bytes → 15 B/µs → LOW; target 200:
        // 10·200·142/(1800+142) = 284000/1942 = 146.
        complete(&mut v, Traffic::rx(5, 525));
        assert_eq!(v.classes().0, LegacyClass::Low);
        assert_eq!(v.value(), 146);
        // Slice 36 µs, 36·21 = 756 bytes → 21 > 20 → BULK; target 336.
        complete(&mut v, Traffic::rx(5, 756));
        assert_eq!(v.classes().0, LegacyClass::Bulk);
        assert_eq!(v.value(), (10 * 336 * 146 / (9 * 336 + 146)) as u32);
    }

    #[test]
    fn smoothing_is_a_ten_percent_step_on_the_rate() {
        let mut v = LegacyItr::new(LegacyVariant::Vf, LegacySetting::Dynamic);
        let before = 4e6 / v.value() as f64; // ints/s for µs<<2 units
        complete(&mut v, Traffic::rx(1, 1));
        let after = 4e6 / v.value() as f64;
        let expected = 0.9 * before + 0.1 * 100_000.0;
        assert!(
            (after - expected).abs() / expected < 0.01,
            "{after} vs {expected}"
        );
    }

    #[test]
    fn empty_container_keeps_class_and_counters() {
        let mut v = LegacyItr::new(LegacyVariant::Vf, LegacySetting::Dynamic);
        complete(&mut v, Traffic::rx(20, 20 * 1500)); // 600 B/µs over 50 µs → LOW
        assert_eq!(v.classes(), (LegacyClass::Low, LegacyClass::Lowest));
        complete(&mut v, Traffic::default());
        assert_eq!(v.classes(), (LegacyClass::Low, LegacyClass::Lowest));
    }

    #[test]
    fn conservative_never_targets_100k() {
        let mut v = LegacyItr::new(LegacyVariant::Vf, LegacySetting::Conservative);
        assert_eq!(
            complete(&mut v, Traffic::rx(1, 64)),
            None,
            "already at the LOW target"
        );
        assert_eq!(v.value(), 200);
    }

    #[test]
    fn out_of_tree_smooths_in_interrupts_per_second() {
        let mut v = LegacyItr::new(LegacyVariant::OutOfTree, LegacySetting::Dynamic);
        // Slice = 1e6/20000 = 50 µs; 50·30 bytes → 30 B/µs: LOWEST → LOW only (one step).
        complete(&mut v, Traffic::rx(10, 1500));
        assert_eq!(v.classes().0, LegacyClass::Low);
        assert_eq!(v.value(), 20_000, "target equals current: no write");
        complete(&mut v, Traffic::rx(10, 1500));
        assert_eq!(v.classes().0, LegacyClass::Bulk);
        assert_eq!(v.value(), (9 * 20_000 + 8_000) / 10);
    }

    #[test]
    fn off_never_writes() {
        let mut v = LegacyItr::new(LegacyVariant::Vf, LegacySetting::Off);
        assert_eq!(v.current(), Coalescing::OFF);
        assert_eq!(complete(&mut v, Traffic::rx(1000, 1_000_000)), None);
    }
}
