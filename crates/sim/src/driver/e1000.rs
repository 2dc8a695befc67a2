//! Linux e1000 interrupt moderation (`InterruptThrottleRate` and the delay timers), in the two
//! driver generations Case 1 needs (moderation-algorithms.md §2, seed-cases.md Case 1).
//!
//! | value | e1000 7.3.x and later | e1000 7.0.x (RHEL5 era) |
//! |---|---|---|
//! | unset | 3 (dynamic conservative) | static 8000 |
//! | 0 | off | off |
//! | 1 | dynamic: classifier + ramp, 70000/20000/4000 | watchdog formula every 2 s |
//! | 3 | dynamic conservative (no lowest-latency class) | not accepted |
//! | 4 | "simplified": the watchdog formula every 2 s | not accepted |
//! | 100–100000 | fixed rate | fixed rate |
//!
//! In 7.0.x `1` leaves ITR unwritten at setup (the setup code writes it only for values > 1),
//! and in 7.3.x `4` writes `1e9/(4·256)`, which overflows the 16-bit field (§2.1 quirk); both
//! last only until the watchdog's link-up run. A simulated run starts with the link long up
//! and idle, so the watchdog modes start from what an idle watchdog pass writes: 8000/s.

use crate::moderation::{Coalescing, ModerationCtx, ModerationPolicy, Traffic};
use nictune_core::catalog::convert::{itr_reg_from_rate, ticks_to_nanos, IntsPerSec, ItrReg};
use nictune_core::units::Nanos;
use std::fmt;

/// The ITR register's INTERVAL field is 16 bits wide.
const ITR_FIELD_MASK: u64 = 0xFFFF;
/// The e1000 watchdog period (2 s).
pub const WATCHDOG: Nanos = Nanos(2_000_000_000);

/// Which driver generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// 7.0.x, e.g. 7.0.33-k2-NAPI in RHEL5 (Case 1).
    V7_0,
    /// 7.3.x and the in-kernel driver since.
    V7_3,
}

/// The decoded `InterruptThrottleRate` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItrMode {
    /// 0: no throttling.
    Off,
    /// A fixed rate (interrupts/s).
    Fixed(u32),
    /// 1 on 7.3: classifier with ramp.
    Dynamic,
    /// 3 on 7.3: classifier without the lowest-latency class.
    Conservative,
    /// 4 on 7.3, 1 on 7.0: the watchdog formula.
    Watchdog,
}

/// A value `InterruptThrottleRate` does not accept on this generation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("InterruptThrottleRate {value} is not accepted by e1000 {generation}; allowed: {allowed}")]
pub struct BadItr {
    /// The value given.
    pub value: i64,
    /// `7.0` or `7.3`.
    pub generation: &'static str,
    /// What the generation accepts.
    pub allowed: &'static str,
}

impl Generation {
    /// Decodes a driver `InterruptThrottleRate` value.
    pub fn decode(self, value: i64) -> Result<ItrMode, BadItr> {
        let (generation, allowed) = match self {
            Generation::V7_0 => ("7.0", "0, 1 or 100–100000"),
            Generation::V7_3 => ("7.3", "0, 1, 3, 4 or 100–100000"),
        };
        let bad = BadItr {
            value,
            generation,
            allowed,
        };
        match (self, value) {
            (_, 0) => Ok(ItrMode::Off),
            (Generation::V7_0, 1) | (Generation::V7_3, 4) => Ok(ItrMode::Watchdog),
            (Generation::V7_3, 1) => Ok(ItrMode::Dynamic),
            (Generation::V7_3, 3) => Ok(ItrMode::Conservative),
            (_, 100..=100_000) => Ok(ItrMode::Fixed(value as u32)),
            _ => Err(bad),
        }
    }

    /// The default `InterruptThrottleRate` of this generation.
    pub fn default_itr(self) -> i64 {
        match self {
            Generation::V7_0 => 8_000,
            Generation::V7_3 => 3,
        }
    }
}

/// The delay-timer module parameters, in 1.024 µs ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelayTicks {
    /// RxIntDelay → RDTR.
    pub rx: u16,
    /// RxAbsIntDelay → RADV.
    pub rx_abs: u16,
    /// TxIntDelay → TIDV (0 clears IDE: every write-back signals at once).
    pub tx: u16,
    /// TxAbsIntDelay → TADV.
    pub tx_abs: u16,
}

impl Default for DelayTicks {
    /// The in-kernel e1000_param.c defaults (RDTR 0, RADV 8, TIDV 8, TADV 32).
    fn default() -> Self {
        DelayTicks {
            rx: 0,
            rx_abs: 8,
            tx: 8,
            tx_abs: 32,
        }
    }
}

/// e1000's latency classes (`enum latency_range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Latency {
    /// lowest_latency → 70000/s.
    Lowest,
    /// low_latency → 20000/s.
    Low,
    /// bulk_latency → 4000/s.
    Bulk,
}

impl Latency {
    fn rate(self) -> u32 {
        match self {
            Latency::Lowest => 70_000,
            Latency::Low => 20_000,
            Latency::Bulk => 4_000,
        }
    }
}

/// `e1000_update_itr`: the next class from the window's packets and bytes.
pub fn classify(current: Latency, packets: u64, bytes: u64) -> Latency {
    if packets == 0 {
        return current;
    }
    let bpp = bytes / packets;
    match current {
        Latency::Lowest if bpp > 8000 => Latency::Bulk,
        Latency::Lowest if packets < 5 && bytes > 512 => Latency::Low,
        Latency::Low if bytes > 10_000 => {
            if bpp > 8000 || packets < 10 || bpp > 1200 {
                Latency::Bulk
            } else if packets > 35 {
                Latency::Lowest
            } else {
                Latency::Low
            }
        }
        Latency::Low if bpp > 2000 => Latency::Bulk,
        Latency::Low if packets <= 2 && bytes < 512 => Latency::Lowest,
        Latency::Bulk if bytes > 25_000 => {
            if packets > 35 {
                Latency::Low
            } else {
                Latency::Bulk
            }
        }
        Latency::Bulk if bytes < 6000 => Latency::Low,
        c => c,
    }
}

/// The ITR register interval for a rate (the catalog's `1e9 / (rate · 256)`), truncated to
/// the 16-bit field, as nominal ns (0 = off).
pub fn interval_ns(rate: u32) -> u64 {
    itr_reg_from_rate(IntsPerSec(rate as u64))
        .map_or(0, |r| ItrReg(r.0 & ITR_FIELD_MASK).interval().0)
}

fn ticks(t: u16) -> u64 {
    ticks_to_nanos(nictune_core::catalog::convert::DelayTicks(t as u64)).0
}

/// `e1000_watchdog`'s mode-4 rate from the good-octets deltas of the last period.
pub fn watchdog_rate(tx_octets: u64, rx_octets: u64) -> u32 {
    let goc = (tx_octets + rx_octets) / 10_000;
    let dif = tx_octets.abs_diff(rx_octets) / 10_000;
    (dif * 6000)
        .checked_div(goc)
        .map_or(8000, |r| (r + 2000) as u32)
}

/// e1000 moderation state.
pub struct E1000 {
    mode: ItrMode,
    generation: Generation,
    delays: DelayTicks,
    /// Current rate (`adapter->itr`).
    itr: u32,
    rx_itr: Latency,
    tx_itr: Latency,
    prev_rx_octets: u64,
    prev_tx_octets: u64,
}

impl fmt::Debug for E1000 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("E1000")
            .field("mode", &self.mode)
            .field("generation", &self.generation)
            .field("itr", &self.itr)
            .finish()
    }
}

impl E1000 {
    /// The driver with `InterruptThrottleRate = value` on `generation`.
    pub fn new(generation: Generation, value: i64, delays: DelayTicks) -> Result<E1000, BadItr> {
        let mode = generation.decode(value)?;
        Ok(E1000 {
            mode,
            generation,
            delays,
            itr: 0,
            rx_itr: Latency::Lowest,
            tx_itr: Latency::Lowest,
            prev_rx_octets: 0,
            prev_tx_octets: 0,
        })
    }

    /// The current rate the driver believes in (`adapter->itr`).
    pub fn itr(&self) -> u32 {
        self.itr
    }

    fn regs(&self, interval: u64) -> Coalescing {
        let d = self.delays;
        Coalescing {
            interval_ns: interval,
            rx_pkt_ns: ticks(d.rx),
            rx_abs_ns: ticks(d.rx_abs),
            rx_frames: 0,
            tx_pkt_ns: ticks(d.tx),
            tx_abs_ns: ticks(d.tx_abs),
        }
    }
}

impl ModerationPolicy for E1000 {
    fn initial(&mut self) -> Coalescing {
        let interval = match (self.mode, self.generation) {
            (ItrMode::Off, _) => 0,
            (ItrMode::Fixed(rate), _) => {
                self.itr = rate;
                interval_ns(rate)
            }
            (ItrMode::Dynamic | ItrMode::Conservative, _) => {
                self.itr = 20_000;
                interval_ns(20_000)
            }
            (ItrMode::Watchdog, _) => {
                self.itr = watchdog_rate(0, 0);
                interval_ns(self.itr)
            }
        };
        self.regs(interval)
    }

    fn on_poll_complete(&mut self, ctx: &ModerationCtx, w: &Traffic) -> Option<Coalescing> {
        let conservative = match self.mode {
            ItrMode::Dynamic => false,
            ItrMode::Conservative => true,
            _ => return None,
        };
        let target = if ctx.link_mbps != 1000 {
            4000
        } else {
            self.tx_itr = classify(self.tx_itr, w.tx_packets, w.tx_bytes);
            self.rx_itr = classify(self.rx_itr, w.rx_packets, w.rx_bytes);
            if conservative {
                self.tx_itr = self.tx_itr.max(Latency::Low);
                self.rx_itr = self.rx_itr.max(Latency::Low);
            }
            self.rx_itr.max(self.tx_itr).rate()
        };
        if target == self.itr {
            return None;
        }
        self.itr = if target > self.itr {
            (self.itr + target / 4).min(target)
        } else {
            target
        };
        Some(self.regs(interval_ns(self.itr)))
    }

    fn watchdog_period(&self) -> Option<Nanos> {
        (self.mode == ItrMode::Watchdog).then_some(WATCHDOG)
    }

    /// e1000 7.0.x `e1000_watchdog_task` (the timer callback hands it to keventd; it re-arms
    /// itself with `mod_timer(&adapter->watchdog_timer, jiffies + 2 * HZ)`): with
    /// `adapter->itr == 1` it writes ITR on every run, whether or not the rate changed. The
    /// same run also sets ICS.RXDMT0 (a software interrupt cause), not modelled.
    fn on_watchdog(&mut self, ctx: &ModerationCtx) -> Option<Coalescing> {
        if self.mode != ItrMode::Watchdog {
            return None;
        }
        // The good-octets counters are 32-bit low halves read every period.
        let tx = (ctx.counters.tx_bytes - self.prev_tx_octets) & 0xFFFF_FFFF;
        let rx = (ctx.counters.rx_bytes - self.prev_rx_octets) & 0xFFFF_FFFF;
        self.prev_tx_octets = ctx.counters.tx_bytes;
        self.prev_rx_octets = ctx.counters.rx_bytes;
        self.itr = watchdog_rate(tx, rx);
        Some(self.regs(interval_ns(self.itr)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::NicCounters;

    fn ctx() -> ModerationCtx {
        ModerationCtx {
            now: Nanos::ZERO,
            link_mbps: 1000,
            counters: NicCounters::default(),
            regs: Coalescing::default(),
        }
    }

    #[test]
    fn register_conversions_match_the_reference_examples() {
        // §1: 70000/s → 55, 20000/s → 195, 8000/s → 488, 4000/s → 976 (256 ns units).
        assert_eq!(interval_ns(70_000), 55 * 256);
        assert_eq!(interval_ns(20_000), 195 * 256);
        assert_eq!(interval_ns(8_000), 488 * 256);
        assert_eq!(interval_ns(4_000), 976 * 256);
        // Mode 4's initial write overflows the 16-bit field: 976562 & 0xFFFF = 59058.
        assert_eq!(interval_ns(4), 59_058 * 256);
    }

    #[test]
    fn generations_accept_different_values() {
        assert_eq!(Generation::V7_0.decode(1), Ok(ItrMode::Watchdog));
        assert_eq!(Generation::V7_3.decode(1), Ok(ItrMode::Dynamic));
        assert_eq!(Generation::V7_3.decode(4), Ok(ItrMode::Watchdog));
        assert!(Generation::V7_0.decode(3).is_err());
        let err = Generation::V7_3.decode(50).unwrap_err();
        assert!(err.to_string().contains("0, 1, 3, 4 or 100–100000"));
    }

    #[test]
    fn classifier_follows_the_table() {
        assert_eq!(classify(Latency::Lowest, 1, 9000), Latency::Bulk);
        assert_eq!(classify(Latency::Lowest, 2, 1000), Latency::Low);
        assert_eq!(classify(Latency::Low, 40, 20_000), Latency::Lowest);
        assert_eq!(classify(Latency::Low, 5, 20_000), Latency::Bulk);
        assert_eq!(classify(Latency::Low, 2, 100), Latency::Lowest);
        assert_eq!(classify(Latency::Bulk, 3, 5000), Latency::Low);
        assert_eq!(classify(Latency::Bulk, 40, 30_000), Latency::Low);
        assert_eq!(classify(Latency::Bulk, 0, 0), Latency::Bulk);
    }

    #[test]
    fn ramp_up_is_damped_and_drop_is_instant() {
        let mut e = E1000::new(Generation::V7_3, 1, DelayTicks::default()).unwrap();
        e.initial();
        e.itr = 4_000;
        e.rx_itr = Latency::Low;
        e.tx_itr = Latency::Low;
        let small = Traffic {
            rx_packets: 10,
            rx_bytes: 3000,
            ..Traffic::default()
        };
        let mut seen = vec![];
        for _ in 0..4 {
            e.on_poll_complete(&ctx(), &small);
            seen.push(e.itr());
        }
        assert_eq!(seen, vec![9_000, 14_000, 19_000, 20_000]);
        let bulk = Traffic {
            rx_packets: 3,
            rx_bytes: 27_000,
            ..Traffic::default()
        };
        e.on_poll_complete(&ctx(), &bulk);
        assert_eq!(e.itr(), 4_000);
    }

    #[test]
    fn watchdog_formula_symmetric_and_one_sided() {
        assert_eq!(watchdog_rate(1_000_000, 1_000_000), 2000);
        assert_eq!(watchdog_rate(0, 1_000_000), 8000);
        assert_eq!(watchdog_rate(0, 0), 8000);
    }

    #[test]
    fn watchdog_modes_start_from_the_idle_rate() {
        let mut e = E1000::new(Generation::V7_0, 1, DelayTicks::default()).unwrap();
        assert_eq!(e.initial().interval_ns, interval_ns(8000));
        assert_eq!(e.watchdog_period(), Some(WATCHDOG));
        let regs = e.on_watchdog(&ctx()).unwrap();
        assert_eq!(regs.interval_ns, interval_ns(8000));
    }
}
