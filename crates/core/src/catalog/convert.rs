//! Unit conversions between what users type and what the hardware holds. Pure functions over
//! unit newtypes; each states where its arithmetic comes from.
//!
//! - 8254x/8257x ITR and 82574 EITR count **256 ns**: `reg = 10^9 / (rate · 256)`
//!   (`e1000_main.c#e1000_configure_rx`, SDM §13.4.18).
//! - RDTR/RADV/TIDV/TADV count **1.024 µs** ticks (`e1000_param.c` comments, SDM §13.4.30).
//! - igb `itr_val` counts **0.25 µs**: `itr_val = usecs << 2` (`igb_ethtool.c#igb_set_coalesce`).
//! - 82599/X540/X550 EITR keeps bits 11..3 of `usecs << 2`: **2 µs** steps
//!   (`ixgbe_main.c#ixgbe_write_eitr`, `IXGBE_MAX_EITR` = 0xFF8).
//! - FreeBSD em tunables are µs, converted with `EM_USECS_TO_TICKS(u) = (1000u + 512) / 1024`
//!   and back with `EM_TICKS_TO_USECS(t) = (1024t + 500) / 1000` (`sys/dev/e1000/if_em.h`).

use crate::units::Nanos;
use serde::Serialize;

/// An interrupt rate in interrupts per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct IntsPerSec(pub u64);

/// A whole number of microseconds, as ethtool and most tunables take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Usecs(pub u64);

/// An e1000-class ITR/EITR register value: minimum gap between interrupts in 256 ns units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ItrReg(pub u64);

/// An e1000 delay-timer value (RDTR, RADV, TIDV, TADV) in ticks of 1.024 µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct DelayTicks(pub u64);

/// igb's `itr_val`: interval in 0.25 µs units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct IgbItrVal(pub u64);

/// The interval field an 82599-class EITR holds: 0.25 µs units with the low 3 bits cleared,
/// so 2 µs granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct IxgbeEitr(pub u64);

const ITR_UNIT_NS: u64 = 256;
const TICK_NS: u64 = 1024;
const IXGBE_EITR_MASK: u64 = 0xFF8;

/// ITR register for a rate; `None` for 0 (throttling off, the register stays 0).
pub fn itr_reg_from_rate(rate: IntsPerSec) -> Option<ItrReg> {
    (rate.0 > 0).then(|| ItrReg(1_000_000_000 / (rate.0 * ITR_UNIT_NS)))
}

impl ItrReg {
    /// The minimum gap between interrupts this register enforces.
    pub fn interval(self) -> Nanos {
        Nanos(self.0 * ITR_UNIT_NS)
    }
}

/// Time a delay-timer value stands for.
pub fn ticks_to_nanos(ticks: DelayTicks) -> Nanos {
    Nanos(ticks.0 * TICK_NS)
}

/// igb `itr_val` for an ethtool `rx-usecs` value (10–10000).
pub fn igb_itr_val(us: Usecs) -> IgbItrVal {
    IgbItrVal(us.0 << 2)
}

impl IgbItrVal {
    /// The interval it stands for.
    pub fn interval(self) -> Nanos {
        Nanos(self.0 * 250)
    }
}

/// 82599-class EITR interval field for an ethtool `rx-usecs` value.
pub fn ixgbe_eitr_from_usecs(us: Usecs) -> IxgbeEitr {
    IxgbeEitr((us.0 << 2) & IXGBE_EITR_MASK)
}

/// 82599-class EITR interval field for a rate: `(4000000 / rate) & 0xFF8` as FreeBSD ix
/// computes it (`sys/dev/ixgbe/if_ix.c`), capped at the field's maximum 0xFF8 (1022 µs) so
/// rates below ≈978/s do not wrap.
pub fn ixgbe_eitr_from_rate(rate: IntsPerSec) -> Option<IxgbeEitr> {
    let quarter_us = |r: u64| (4_000_000 / r).min(IXGBE_EITR_MASK);
    (rate.0 > 0).then(|| IxgbeEitr(quarter_us(rate.0) & IXGBE_EITR_MASK))
}

impl IxgbeEitr {
    /// The interval it stands for.
    pub fn interval(self) -> Nanos {
        Nanos(self.0 * 250)
    }
}

/// Gap between interrupts at `rate`; `None` for 0.
pub fn rate_to_interval(rate: IntsPerSec) -> Option<Nanos> {
    (rate.0 > 0).then(|| Nanos(1_000_000_000 / rate.0))
}

/// Highest interrupt rate an interval allows (rounded to the nearest integer); `None` for 0.
pub fn interval_to_rate(interval: Nanos) -> Option<IntsPerSec> {
    (interval.0 > 0).then(|| IntsPerSec((1_000_000_000 + interval.0 / 2) / interval.0))
}

/// FreeBSD em: µs tunable → register ticks (`EM_USECS_TO_TICKS`).
pub fn em_usecs_to_ticks(us: Usecs) -> DelayTicks {
    DelayTicks((1000 * us.0 + 512) / 1024)
}

/// FreeBSD em: register ticks → µs as the driver reports them (`EM_TICKS_TO_USECS`).
pub fn em_ticks_to_usecs(ticks: DelayTicks) -> Usecs {
    Usecs((1024 * ticks.0 + 500) / 1000)
}

/// Length of one clock tick at `hz` ticks per second; `None` for 0.
pub fn hz_to_tick(hz: u64) -> Option<Nanos> {
    (hz > 0).then(|| Nanos(1_000_000_000 / hz))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn itr_register_for_documented_rates() {
        // moderation-algorithms.md §1: 70000→55, 20000→195, 8000→488, 4000→976.
        let reg = |r| itr_reg_from_rate(IntsPerSec(r)).unwrap().0;
        assert_eq!(
            [reg(70_000), reg(20_000), reg(8_000), reg(4_000)],
            [55, 195, 488, 976]
        );
        assert_eq!(itr_reg_from_rate(IntsPerSec(0)), None);
    }

    #[test]
    fn itr_8000_is_124_9_microseconds() {
        let reg = itr_reg_from_rate(IntsPerSec(8_000)).unwrap();
        assert_eq!(reg.interval(), Nanos(124_928));
        assert_eq!(format!("{:.1}", reg.interval().as_micros_f64()), "124.9");
    }

    #[test]
    fn sdm_example_itr_500_is_128_us_and_7813_per_second() {
        assert_eq!(ItrReg(500).interval(), Nanos(128_000));
        assert_eq!(
            interval_to_rate(ItrReg(500).interval()),
            Some(IntsPerSec(7_813))
        );
    }

    #[test]
    fn delay_ticks_are_1024_ns() {
        assert_eq!(ticks_to_nanos(DelayTicks(8)), Nanos(8_192));
        assert_eq!(ticks_to_nanos(DelayTicks(128)), Nanos(131_072));
        assert_eq!(ticks_to_nanos(DelayTicks(65_535)), Nanos(67_107_840));
    }

    #[test]
    fn igb_rx_usecs_50_is_itr_val_200() {
        let v = igb_itr_val(Usecs(50));
        assert_eq!(v, IgbItrVal(200));
        assert_eq!(v.interval(), Nanos(50_000));
        // igb.h constants: IGB_20K_ITR 196 → 49 µs, IGB_4K_ITR 980 → 245 µs.
        assert_eq!(IgbItrVal(196).interval(), Nanos(49_000));
        assert_eq!(IgbItrVal(980).interval(), Nanos(245_000));
    }

    #[test]
    fn ixgbe_rounds_down_to_2_us() {
        assert_eq!(ixgbe_eitr_from_usecs(Usecs(50)).interval(), Nanos(50_000));
        assert_eq!(ixgbe_eitr_from_usecs(Usecs(51)).interval(), Nanos(50_000));
        assert_eq!(ixgbe_eitr_from_usecs(Usecs(1022)), IxgbeEitr(0xFF8));
        // FreeBSD ix at 8000/s: 4000000/8000 = 500 → 496 → 124 µs.
        let eitr = ixgbe_eitr_from_rate(IntsPerSec(8_000)).unwrap();
        assert_eq!(eitr.interval(), Nanos(124_000));
        // The OOT driver's lowest rate, 956/s, asks for 1046 µs: the field tops out at 1022 µs.
        let slowest = ixgbe_eitr_from_rate(IntsPerSec(956)).unwrap();
        assert_eq!(slowest, IxgbeEitr(0xFF8));
        assert_eq!(slowest.interval(), Nanos(1_022_000));
    }

    #[test]
    fn rate_and_interval_round_trip() {
        assert_eq!(rate_to_interval(IntsPerSec(8_000)), Some(Nanos(125_000)));
        assert_eq!(interval_to_rate(Nanos(50_000)), Some(IntsPerSec(20_000)));
        assert_eq!(interval_to_rate(Nanos::ZERO), None);
    }

    #[test]
    fn freebsd_em_tick_macros() {
        // if_em.h: RADV 64 ticks → 66 µs (moderation-algorithms.md §8).
        assert_eq!(em_ticks_to_usecs(DelayTicks(64)), Usecs(66));
        assert_eq!(em_usecs_to_ticks(Usecs(66)), DelayTicks(64));
        assert_eq!(em_usecs_to_ticks(Usecs(0)), DelayTicks(0));
    }

    #[test]
    fn hz_1000_is_a_1_ms_tick() {
        assert_eq!(hz_to_tick(1000), Some(Nanos::MILLI));
        assert_eq!(hz_to_tick(0), None);
    }
}
