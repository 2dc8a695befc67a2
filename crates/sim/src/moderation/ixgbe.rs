//! Current ixgbe adaptive moderation, Linux ≥ 4.16 (moderation-algorithms.md §4.2).
//!
//! Each container holds microseconds plus a LATENCY flag. Packet-count bands nudge the
//! interval (+2 µs, keep, halve); very few or very many packets fall through to a size
//! formula. The vector takes the smaller container value (a bulk container always wins because
//! the minimum is taken before the flag is masked) and writes it at once. A container not
//! updated for more than a jiffy is treated as idle and restarts at 10 µs latency mode.

use super::{family_policy, quarter_micros, Coalescing, Traffic};
use nictune_core::units::Nanos;

/// Step for "slightly too short" (IXGBE_ITR_ADAPTIVE_MIN_INC).
pub const MIN_INC: u32 = 2;
/// Smallest adaptive interval in µs.
pub const MIN_USECS: u32 = 10;
/// Largest adaptive interval in µs.
pub const MAX_USECS: u32 = 126;
/// Latency-mode flag.
pub const LATENCY: u32 = 0x80;

/// Link speed classes of the size formula's final scaling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpeedClass {
    /// 10G, 100M and unknown speeds: `ceil(v/512)·2`.
    TenGig,
    /// 2.5G, 1G and 10M: `ceil(min(v, 8064)/128)·2`.
    OneGig,
}

#[derive(Debug, Clone, Copy)]
struct Container {
    present: bool,
    itr: u32,
    next_update: u64,
    packets: u64,
    bytes: u64,
}

/// One ixgbe vector in adaptive mode (rx-usecs 1).
#[derive(Debug, Clone)]
pub struct IxgbeItr {
    speed: SpeedClass,
    jiffy: Nanos,
    /// `q_vector->itr`, µs << 2.
    q_itr: u32,
    rx: Container,
    tx: Container,
}

impl IxgbeItr {
    /// A vector after probe. `hz` is the kernel tick rate (jiffy length). Containers start at
    /// `MAX_USECS | LATENCY` (assumed from the driver's q_vector setup); `q_itr` at 20 K/s.
    pub fn new(speed: SpeedClass, hz: u32, has_rx: bool, has_tx: bool) -> IxgbeItr {
        let c = |present| Container {
            present,
            itr: MAX_USECS | LATENCY,
            next_update: 0,
            packets: 0,
            bytes: 0,
        };
        IxgbeItr {
            speed,
            jiffy: Nanos(1_000_000_000 / hz.max(1) as u64),
            q_itr: 200,
            rx: c(has_rx),
            tx: c(has_tx),
        }
    }

    /// The container values (µs | LATENCY) of Rx and Tx.
    pub fn containers(&self) -> (u32, u32) {
        (self.rx.itr, self.tx.itr)
    }

    /// `q_vector->itr` in 0.25 µs units.
    pub fn q_itr(&self) -> u32 {
        self.q_itr
    }

    fn update(&self, c: &mut Container, jiffies: u64) {
        if !c.present {
            return;
        }
        c.itr = self.next_value(c, jiffies);
        c.next_update = jiffies + 1;
        c.packets = 0;
        c.bytes = 0;
    }

    fn next_value(&self, c: &Container, jiffies: u64) -> u32 {
        let q_us = self.q_itr >> 2;
        if jiffies > c.next_update {
            return MIN_USECS | LATENCY;
        }
        match c.packets {
            0 => (q_us + MIN_INC).min(MAX_USECS) | (c.itr & LATENCY),
            p if p < 4 && c.bytes < 9000 => self.by_size(LATENCY, c),
            p if p < 48 => (q_us + MIN_INC).min(MAX_USECS),
            p if p < 96 => q_us,
            p if p < 256 => (self.q_itr >> 3).max(MIN_USECS),
            _ => self.by_size(0, c),
        }
    }

    /// The size formula: a wire-size estimate turned into an interval.
    fn by_size(&self, itr: u32, c: &Container) -> u32 {
        let s = (c.bytes / c.packets.max(1)) as u32;
        let mut v = match s {
            0..=60 => 5120,
            61..=316 => 40 * s + 2720,
            317..=1084 => 15 * s + 11452,
            1085..=1967 => 5 * s + 22420,
            _ => 32256,
        };
        if itr & LATENCY != 0 {
            v >>= 1;
        }
        let inc = match self.speed {
            SpeedClass::TenGig => v.div_ceil(512) * MIN_INC,
            SpeedClass::OneGig => v.min(8064).div_ceil(128) * MIN_INC,
        };
        itr + inc
    }
}

/// The driver-side steps `family_policy!` maps onto [`super::ModerationPolicy`].
impl IxgbeItr {
    fn observe(&mut self, t: Traffic) {
        self.rx.packets += t.rx_packets;
        self.rx.bytes += t.rx_bytes;
        self.tx.packets += t.tx_packets;
        self.tx.bytes += t.tx_bytes;
    }

    fn complete(&mut self, now: Nanos) -> Option<Coalescing> {
        let jiffies = now.0 / self.jiffy.0;
        let (mut rx, mut tx) = (self.rx, self.tx);
        self.update(&mut tx, jiffies);
        self.update(&mut rx, jiffies);
        (self.rx, self.tx) = (rx, tx);
        let new = (rx.itr.min(tx.itr) & !LATENCY) << 2;
        if new == self.q_itr {
            return None;
        }
        self.q_itr = new;
        Some(self.current())
    }

    fn current(&self) -> Coalescing {
        // EITR keeps bits 11:3 (2 µs granularity).
        Coalescing::throttle(quarter_micros((self.q_itr & 0xFF8).max(8)))
    }
}

family_policy!(IxgbeItr);

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = Nanos::MILLI;

    fn complete(v: &mut IxgbeItr, now: Nanos, t: Traffic) -> Option<Coalescing> {
        v.observe(t);
        v.complete(now)
    }

    fn vector() -> IxgbeItr {
        IxgbeItr::new(SpeedClass::TenGig, 1000, true, false)
    }

    #[test]
    fn first_update_after_idle_is_ten_microseconds_latency() {
        let mut v = vector();
        // jiffy 5 > next_update 0 → idle.
        assert_eq!(
            complete(&mut v, Nanos(5 * MS.0), Traffic::rx(300, 450_000)),
            Some(Coalescing::throttle(Nanos(10_000)))
        );
        assert_eq!(v.containers().0, MIN_USECS | LATENCY);
    }

    #[test]
    fn packet_bands_step_the_interval() {
        let mut v = vector();
        complete(&mut v, Nanos(5 * MS.0), Traffic::rx(1, 64)); // idle → 10 µs, q_itr 40
                                                               // 20 packets (< 48): +2 µs → 12.
        complete(&mut v, Nanos(5 * MS.0), Traffic::rx(20, 20 * 1500));
        assert_eq!(v.containers().0, 12);
        assert_eq!(v.q_itr(), 48);
        // 60 packets (< 96): keep.
        complete(&mut v, Nanos(5 * MS.0 + 1), Traffic::rx(60, 60 * 1500));
        assert_eq!(v.containers().0, 12);
        // 200 packets (< 256): halve, floor 10.
        complete(&mut v, Nanos(6 * MS.0), Traffic::rx(200, 200 * 1500));
        assert_eq!(v.containers().0, 10);
    }

    #[test]
    fn many_packets_use_the_bulk_size_formula() {
        let mut v = vector();
        complete(&mut v, Nanos(5 * MS.0), Traffic::rx(1, 64));
        // 300 × 1500 B: s = 1500 → v = 5·1500 + 22420 = 29920 → ceil(/512)·2 = 118 µs.
        complete(&mut v, Nanos(5 * MS.0), Traffic::rx(300, 300 * 1500));
        assert_eq!(v.containers().0, 118);
        assert_eq!(v.current(), Coalescing::throttle(Nanos(118_000)));
    }

    #[test]
    fn few_small_packets_use_latency_mode_half_size() {
        let mut v = IxgbeItr::new(SpeedClass::OneGig, 1000, true, false);
        complete(&mut v, Nanos(5 * MS.0), Traffic::rx(1, 64));
        // 2 × 60 B: v = 5120 >> 1 = 2560 → 1G: ceil(2560/128)·2 = 40 → 40 | LATENCY.
        complete(&mut v, Nanos(5 * MS.0), Traffic::rx(2, 120));
        assert_eq!(v.containers().0, 40 | LATENCY);
        assert_eq!(v.q_itr(), 160);
    }

    #[test]
    fn empty_window_creeps_up_and_keeps_the_flag() {
        let mut v = vector();
        complete(&mut v, Nanos(5 * MS.0), Traffic::rx(1, 64)); // 10|LAT, q 40
        complete(&mut v, Nanos(5 * MS.0), Traffic::default());
        assert_eq!(v.containers().0, 12 | LATENCY);
    }

    #[test]
    fn bulk_container_wins_the_minimum_before_masking() {
        let mut v = IxgbeItr::new(SpeedClass::TenGig, 1000, true, true);
        complete(&mut v, Nanos(5 * MS.0), Traffic::default());
        // Rx bulk 118 (no flag) vs Tx 12|LATENCY (= 140): min is the bulk 118.
        v.observe(Traffic {
            rx_packets: 300,
            rx_bytes: 450_000,
            tx_packets: 0,
            tx_bytes: 0,
        });
        v.complete(Nanos(5 * MS.0));
        let (rx, tx) = v.containers();
        assert_eq!(rx, 118);
        assert!(tx & LATENCY != 0 && (tx & !LATENCY) < 118);
        assert_eq!(v.q_itr(), 118 << 2);
    }
}
