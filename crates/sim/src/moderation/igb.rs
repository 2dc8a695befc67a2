//! Linux igb adaptive moderation (moderation-algorithms.md §3).
//!
//! `itr_val` is kept in 0.25 µs units. A single-vector adapter without VFs runs the latency
//! classifier ([`super::latency_class`], bulk exit 1500 B); multi-queue adapters run the
//! size-based ring formula. Both run after NAPI completes, and the new value is **not** written
//! then: it is flagged and written at the start of the next interrupt (writing EITR resets the
//! hardware timer), which [`IgbItr`]'s interrupt hook reproduces.

use super::latency_class::{classify, per_packet, LatencyClass, Window, IGB_BULK_EXIT};
use super::{family_policy, quarter_micros, Coalescing, Traffic};
use nictune_core::units::Nanos;

/// 70 K/s in 0.25 µs units (igb.h IGB_70K_ITR).
pub const IGB_70K_ITR: u32 = 56;
/// 20 K/s (IGB_20K_ITR).
pub const IGB_20K_ITR: u32 = 196;
/// 4 K/s (IGB_4K_ITR).
pub const IGB_4K_ITR: u32 = 980;
/// Start value of the dynamic modes, ~6 K/s (IGB_START_ITR).
pub const IGB_START_ITR: u32 = 648;

/// The driver setting (ethtool rx-usecs or the `InterruptThrottleRate` module option).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgbSetting {
    /// 0: no throttling.
    Off,
    /// 1: dynamic.
    Dynamic,
    /// 3: dynamic conservative (never faster than 20 K/s).
    Conservative,
    /// A fixed interval in 0.25 µs units (rx-usecs 10–10000 shifted left by 2).
    Fixed(u32),
}

/// Which algorithm the driver picks for the vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgbAlgorithm {
    /// Exactly one q_vector and no VFs: `igb_set_itr` (classifier).
    Classifier,
    /// Otherwise: `igb_update_ring_itr` (size formula).
    RingSize,
}

/// One igb interrupt vector's moderation state.
#[derive(Debug, Clone)]
pub struct IgbItr {
    setting: IgbSetting,
    algorithm: IgbAlgorithm,
    gigabit: bool,
    itr_val: u32,
    set_itr: bool,
    programmed: Coalescing,
    rx_class: LatencyClass,
    tx_class: LatencyClass,
    counts: Traffic,
}

impl IgbItr {
    /// A vector as the driver configures it at probe.
    pub fn new(setting: IgbSetting, algorithm: IgbAlgorithm, gigabit: bool) -> IgbItr {
        let itr_val = match setting {
            IgbSetting::Off => 0,
            IgbSetting::Dynamic | IgbSetting::Conservative => IGB_START_ITR,
            IgbSetting::Fixed(v) => v,
        };
        IgbItr {
            setting,
            algorithm,
            gigabit,
            itr_val,
            set_itr: false,
            programmed: register_value(itr_val, setting),
            rx_class: LatencyClass::Lowest,
            tx_class: LatencyClass::Lowest,
            counts: Traffic::default(),
        }
    }

    /// The value the driver holds (0.25 µs units), written or pending.
    pub fn itr_val(&self) -> u32 {
        self.itr_val
    }

    /// Whether a new value waits for the next interrupt.
    pub fn write_pending(&self) -> bool {
        self.set_itr
    }

    fn adaptive(&self) -> bool {
        matches!(self.setting, IgbSetting::Dynamic | IgbSetting::Conservative)
    }

    fn set_itr(&mut self) -> u32 {
        if !self.gigabit {
            return IGB_4K_ITR;
        }
        let c = &self.counts;
        self.rx_class = classify(
            self.rx_class,
            Window::new(c.rx_packets, c.rx_bytes),
            IGB_BULK_EXIT,
        );
        self.tx_class = classify(
            self.tx_class,
            Window::new(c.tx_packets, c.tx_bytes),
            IGB_BULK_EXIT,
        );
        self.counts = Traffic::default();
        let mut current = self.rx_class.max(self.tx_class);
        if self.setting == IgbSetting::Conservative && current == LatencyClass::Lowest {
            current = LatencyClass::Low;
        }
        // The driver's "smoothing" is a no-op in interval units (§3): jump to the target.
        match current {
            LatencyClass::Lowest => IGB_70K_ITR,
            LatencyClass::Low => IGB_20K_ITR,
            LatencyClass::Bulk => IGB_4K_ITR,
        }
    }

    /// `igb_update_ring_itr`; `None` when the window was empty (value kept).
    fn ring_itr(&mut self) -> Option<u32> {
        let c = std::mem::take(&mut self.counts);
        if !self.gigabit {
            return Some(IGB_4K_ITR);
        }
        let avg = per_packet(c.rx_bytes, c.rx_packets).max(per_packet(c.tx_bytes, c.tx_packets));
        if avg == 0 {
            return None;
        }
        // +24: CRC, preamble and inter-frame gap; 3000 caps jumbo frames.
        let avg = (avg + 24).min(3000);
        let mut new = if avg > 300 && avg < 1200 {
            avg / 3
        } else {
            avg / 2
        } as u32;
        if new < IGB_20K_ITR && self.setting == IgbSetting::Conservative {
            new = IGB_20K_ITR;
        }
        Some(new)
    }
}

/// The EITR interval for `itr_val`: masked with 0x7FFC (0 → 4, the smallest interval).
fn register_value(itr_val: u32, setting: IgbSetting) -> Coalescing {
    if setting == IgbSetting::Off {
        return Coalescing::OFF;
    }
    let masked = itr_val & 0x7FFC;
    Coalescing::throttle(quarter_micros(if masked == 0 { 4 } else { masked }))
}

/// The driver-side steps `family_policy!` maps onto [`super::ModerationPolicy`].
impl IgbItr {
    fn observe(&mut self, traffic: Traffic) {
        self.counts.add(traffic);
    }

    fn interrupt(&mut self, _now: Nanos) -> Option<Coalescing> {
        if !self.set_itr {
            return None;
        }
        self.set_itr = false;
        self.programmed = register_value(self.itr_val, self.setting);
        Some(self.programmed)
    }

    fn complete(&mut self, _now: Nanos) -> Option<Coalescing> {
        if !self.adaptive() {
            self.counts = Traffic::default();
            return None;
        }
        let new = match self.algorithm {
            IgbAlgorithm::Classifier => Some(self.set_itr()),
            IgbAlgorithm::RingSize => self.ring_itr(),
        };
        if let Some(new) = new.filter(|&n| n != self.itr_val) {
            self.itr_val = new;
            self.set_itr = true;
        }
        None
    }

    fn current(&self) -> Coalescing {
        self.programmed
    }
}

family_policy!(IgbItr, interrupt);

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(v: &mut IgbItr, t: Traffic) -> Option<Coalescing> {
        v.observe(t);
        v.complete(Nanos::ZERO)
    }

    #[test]
    fn dynamic_modes_start_at_about_six_thousand() {
        let v = IgbItr::new(IgbSetting::Dynamic, IgbAlgorithm::RingSize, true);
        assert_eq!(v.current(), Coalescing::throttle(Nanos(648 * 250)));
        let off = IgbItr::new(IgbSetting::Off, IgbAlgorithm::RingSize, true);
        assert_eq!(off.current(), Coalescing::OFF);
    }

    #[test]
    fn ring_formula_for_small_and_full_frames() {
        let mut v = IgbItr::new(IgbSetting::Dynamic, IgbAlgorithm::RingSize, true);
        // 64-byte frames: (64+24)/2 = 44 → 11 µs.
        assert_eq!(complete(&mut v, Traffic::rx(10, 640)), None);
        assert_eq!(v.itr_val(), 44);
        assert!(v.write_pending());
        assert_eq!(
            v.interrupt(Nanos(1)),
            Some(Coalescing::throttle(Nanos(11_000)))
        );
        assert!(!v.write_pending());
        // 1500-byte frames: (1500+24)/2 = 762, written as 762 & 0x7FFC = 760 → 190 µs.
        complete(&mut v, Traffic::rx(4, 6000));
        assert_eq!(v.itr_val(), 762);
        assert_eq!(
            v.current(),
            Coalescing::throttle(Nanos(11_000)),
            "not yet written"
        );
        assert_eq!(
            v.interrupt(Nanos(2)),
            Some(Coalescing::throttle(Nanos(190_000)))
        );
    }

    #[test]
    fn ring_formula_mid_sizes_divide_by_three_and_idle_keeps_value() {
        let mut v = IgbItr::new(IgbSetting::Dynamic, IgbAlgorithm::RingSize, true);
        complete(&mut v, Traffic::rx(2, 1200)); // 600+24 = 624 → /3 = 208
        assert_eq!(v.itr_val(), 208);
        v.interrupt(Nanos(1));
        complete(&mut v, Traffic::default());
        assert_eq!(v.itr_val(), 208);
        assert!(!v.write_pending());
    }

    #[test]
    fn conservative_ring_never_faster_than_20k() {
        let mut v = IgbItr::new(IgbSetting::Conservative, IgbAlgorithm::RingSize, true);
        complete(&mut v, Traffic::rx(10, 640));
        assert_eq!(v.itr_val(), IGB_20K_ITR);
    }

    #[test]
    fn sub_gigabit_links_use_4k() {
        let mut v = IgbItr::new(IgbSetting::Dynamic, IgbAlgorithm::Classifier, false);
        complete(&mut v, Traffic::rx(1, 64));
        assert_eq!(v.itr_val(), IGB_4K_ITR);
    }

    #[test]
    fn classifier_jumps_without_ramp_and_writes_next_interrupt() {
        let mut v = IgbItr::new(IgbSetting::Dynamic, IgbAlgorithm::Classifier, true);
        // One small packet: stays LOWEST → 70K.
        complete(&mut v, Traffic::rx(1, 64));
        assert_eq!(v.itr_val(), IGB_70K_ITR);
        assert_eq!(
            v.interrupt(Nanos(1)),
            Some(Coalescing::throttle(Nanos(14_000)))
        );
        // A jumbo window: LOWEST → BULK at once (no ramp in igb).
        complete(&mut v, Traffic::rx(1, 9000));
        assert_eq!(v.itr_val(), IGB_4K_ITR);
        // Bulk exits below 1500 bytes (e1000 would exit below 6000).
        complete(&mut v, Traffic::rx(2, 3000));
        assert_eq!(v.itr_val(), IGB_4K_ITR);
        complete(&mut v, Traffic::rx(2, 1000));
        assert_eq!(v.itr_val(), IGB_20K_ITR);
    }

    #[test]
    fn conservative_classifier_maps_lowest_to_low() {
        let mut v = IgbItr::new(IgbSetting::Conservative, IgbAlgorithm::Classifier, true);
        complete(&mut v, Traffic::rx(1, 64));
        assert_eq!(v.itr_val(), IGB_20K_ITR);
    }

    #[test]
    fn fixed_setting_is_not_adapted() {
        let mut v = IgbItr::new(IgbSetting::Fixed(500 << 2), IgbAlgorithm::RingSize, true);
        assert_eq!(v.current(), Coalescing::throttle(Nanos::from_micros(500)));
        complete(&mut v, Traffic::rx(10, 640));
        assert_eq!(v.interrupt(Nanos(1)), None);
    }
}
