//! FreeBSD em/igb adaptive interrupt moderation (moderation-algorithms.md §8).
//!
//! Two generations are modelled:
//! - [`SizeAim`], FreeBSD 8–13 igb (`igb_msix_que`): after the interrupt's Rx/Tx cleanup it
//!   first writes the value it computed at the *previous* interrupt, then computes a new one
//!   with the Linux ring-size formula. Idle interrupts change nothing.
//! - [`ClassAim`], FreeBSD 14.x em/igb/igc (`igc_neweitr`, computed in the interrupt filter
//!   before the cleanup runs, so it sees the traffic since the previous interrupt): one combined
//!   latency class driven by the e1000 classifier with the 1500-byte bulk exit, written at once.
//!
//! Hook mapping for the engine: [`super::ModerationPolicy::on_poll_complete`] is "the interrupt's cleanup
//! finished" (FreeBSD has no NAPI; the engine calls it at the end of each interrupt's rxeof).

use super::latency_class::{classify, per_packet, LatencyClass, Window, IGB_BULK_EXIT};
use super::{family_policy, quarter_micros, rate_to_256ns_throttle, Coalescing, Traffic};
use nictune_core::units::Nanos;

/// IGB_DEFAULT_ITR = 1e9 / (8000 · 256) = 488; sub-gigabit links use half of it.
pub const IGB_DEFAULT_ITR: u32 = 488;

/// FreeBSD 8–13 igb: the size formula, written one interrupt late.
#[derive(Debug, Clone)]
pub struct SizeAim {
    gigabit: bool,
    pending: u32,
    programmed: Coalescing,
    counts: Traffic,
}

impl SizeAim {
    /// A queue after attach, throttled at `hw.igb.max_interrupt_rate` (8000/s by default).
    pub fn new(gigabit: bool, max_interrupt_rate: u32) -> SizeAim {
        SizeAim {
            gigabit,
            pending: 0,
            programmed: rate_to_256ns_throttle(max_interrupt_rate),
            counts: Traffic::default(),
        }
    }

    /// The value waiting for the next interrupt (0.25 µs units; 0 = none).
    pub fn pending(&self) -> u32 {
        self.pending
    }

    fn compute(&self) -> u32 {
        let c = &self.counts;
        if !self.gigabit {
            return IGB_DEFAULT_ITR / 2;
        }
        let avg = per_packet(c.rx_bytes, c.rx_packets).max(per_packet(c.tx_bytes, c.tx_packets));
        let avg = (avg + 24).min(3000);
        let v = if avg > 300 && avg < 1200 {
            avg / 3
        } else {
            avg / 2
        };
        v as u32 & 0x7FFC
    }
}

/// The driver-side steps `family_policy!` maps onto [`super::ModerationPolicy`].
impl SizeAim {
    fn observe(&mut self, traffic: Traffic) {
        self.counts.add(traffic);
    }

    fn complete(&mut self, _now: Nanos) -> Option<Coalescing> {
        let write = std::mem::take(&mut self.pending);
        let written = (write != 0).then(|| {
            self.programmed = Coalescing::throttle(quarter_micros(write));
            self.programmed
        });
        if self.counts.rx_bytes != 0 || self.counts.tx_bytes != 0 {
            self.pending = self.compute();
            self.counts = Traffic::default();
        }
        written
    }

    fn current(&self) -> Coalescing {
        self.programmed
    }
}

family_policy!(SizeAim);

/// `hw.em.enable_aim` (FreeBSD 14).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AimMode {
    /// 0: AIM off, fixed `max_interrupt_rate`.
    Off,
    /// 1: normal, never the lowest-latency class.
    Normal,
    /// 2: low latency, all three classes.
    LowLatency,
}

/// FreeBSD 14.x em/igb/igc: combined latency classifier, written at once.
#[derive(Debug, Clone)]
pub struct ClassAim {
    mode: AimMode,
    gigabit: bool,
    /// `None` = the bootstrap state before the first classification.
    class: Option<LatencyClass>,
    rate: u32,
    counts: Traffic,
}

impl ClassAim {
    /// A queue after attach at `max_interrupt_rate`.
    pub fn new(mode: AimMode, gigabit: bool, max_interrupt_rate: u32) -> ClassAim {
        ClassAim {
            mode,
            gigabit,
            class: None,
            rate: max_interrupt_rate,
            counts: Traffic::default(),
        }
    }

    /// The latency class (`None` before the first busy interrupt).
    pub fn class(&self) -> Option<LatencyClass> {
        self.class
    }

    /// The programmed rate in ints/s.
    pub fn rate(&self) -> u32 {
        self.rate
    }

    fn next_class(&self) -> LatencyClass {
        let c = &self.counts;
        let rx_bpp = per_packet(c.rx_bytes, c.rx_packets);
        let tx_bpp = per_packet(c.tx_bytes, c.tx_packets);
        let w = Window {
            packets: c.rx_packets.max(c.tx_packets),
            bytes: c.rx_bytes.max(c.tx_bytes),
            bpp: rx_bpp.max(tx_bpp),
        };
        let next = match self.class {
            None => LatencyClass::Low,
            Some(state) => classify(state, w, IGB_BULK_EXIT),
        };
        if self.mode == AimMode::Normal && next == LatencyClass::Lowest {
            LatencyClass::Low
        } else {
            next
        }
    }
}

/// The driver-side steps `family_policy!` maps onto [`super::ModerationPolicy`].
impl ClassAim {
    fn observe(&mut self, traffic: Traffic) {
        self.counts.add(traffic);
    }

    fn interrupt(&mut self, _now: Nanos) -> Option<Coalescing> {
        if self.mode == AimMode::Off || (self.counts.rx_bytes == 0 && self.counts.tx_bytes == 0) {
            return None;
        }
        let rate = if self.gigabit {
            let class = self.next_class();
            self.class = Some(class);
            match class {
                LatencyClass::Lowest => 70_000,
                LatencyClass::Low => 20_000,
                LatencyClass::Bulk => 4_000,
            }
        } else {
            4_000
        };
        self.counts = Traffic::default();
        if rate == self.rate {
            return None;
        }
        self.rate = rate;
        Some(self.current())
    }

    fn complete(&mut self, _now: Nanos) -> Option<Coalescing> {
        None
    }

    fn current(&self) -> Coalescing {
        rate_to_256ns_throttle(self.rate)
    }
}

family_policy!(ClassAim, interrupt);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_aim_writes_one_interrupt_late() {
        let mut q = SizeAim::new(true, 8000);
        assert_eq!(q.current(), Coalescing::throttle(Nanos(488 * 256)));
        q.observe(Traffic::rx(10, 15_000)); // (1500+24)/2 = 762 & 0x7FFC = 760
        assert_eq!(q.complete(Nanos(1)), None, "nothing computed before");
        assert_eq!(q.pending(), 760);
        q.observe(Traffic::rx(10, 640)); // (64+24)/2 = 44
        assert_eq!(
            q.complete(Nanos(2)),
            Some(Coalescing::throttle(Nanos(190_000)))
        );
        assert_eq!(q.pending(), 44);
        // An idle interrupt writes the pending value and computes nothing new.
        assert_eq!(
            q.complete(Nanos(3)),
            Some(Coalescing::throttle(Nanos(11_000)))
        );
        assert_eq!(q.pending(), 0);
        assert_eq!(q.complete(Nanos(4)), None);
    }

    #[test]
    fn size_aim_uses_the_larger_direction_and_sub_gig_default() {
        let mut q = SizeAim::new(true, 8000);
        q.observe(Traffic {
            rx_packets: 10,
            rx_bytes: 640,
            tx_packets: 2,
            tx_bytes: 1200,
        });
        q.complete(Nanos(1));
        assert_eq!(q.pending(), ((600 + 24) / 3) & 0x7FFC);
        let mut slow = SizeAim::new(false, 8000);
        slow.observe(Traffic::rx(1, 64));
        slow.complete(Nanos(1));
        assert_eq!(slow.pending(), 244);
    }

    #[test]
    fn class_aim_bootstraps_to_low_then_classifies_combined() {
        let mut q = ClassAim::new(AimMode::LowLatency, true, 8000);
        assert_eq!(q.interrupt(Nanos(1)), None, "idle: no change");
        q.observe(Traffic::rx(1, 64));
        assert_eq!(q.interrupt(Nanos(2)), Some(rate_to_256ns_throttle(20_000)));
        assert_eq!(q.class(), Some(LatencyClass::Low));
        // Two tiny packets: LOW → LOWEST (70 K) in low-latency mode.
        q.observe(Traffic::rx(2, 128));
        q.interrupt(Nanos(3));
        assert_eq!((q.class(), q.rate()), (Some(LatencyClass::Lowest), 70_000));
        // Tx jumbo while Rx is small: bpp = max → BULK.
        q.observe(Traffic {
            rx_packets: 5,
            rx_bytes: 300,
            tx_packets: 1,
            tx_bytes: 9000,
        });
        q.interrupt(Nanos(4));
        assert_eq!((q.class(), q.rate()), (Some(LatencyClass::Bulk), 4_000));
        // Bulk exits below 1500 bytes.
        q.observe(Traffic::rx(2, 1400));
        q.interrupt(Nanos(5));
        assert_eq!(q.class(), Some(LatencyClass::Low));
    }

    #[test]
    fn class_aim_normal_mode_trims_lowest() {
        let mut q = ClassAim::new(AimMode::Normal, true, 8000);
        q.observe(Traffic::rx(1, 64));
        q.interrupt(Nanos(1));
        q.observe(Traffic::rx(2, 128));
        assert_eq!(q.interrupt(Nanos(2)), None, "stays at 20 K");
        assert_eq!(q.class(), Some(LatencyClass::Low));
    }

    #[test]
    fn class_aim_off_and_sub_gig() {
        let mut off = ClassAim::new(AimMode::Off, true, 8000);
        off.observe(Traffic::rx(100, 150_000));
        assert_eq!(off.interrupt(Nanos(1)), None);
        assert_eq!(off.current(), rate_to_256ns_throttle(8000));
        let mut slow = ClassAim::new(AimMode::Normal, false, 8000);
        slow.observe(Traffic::rx(1, 64));
        assert_eq!(slow.interrupt(Nanos(1)), Some(rate_to_256ns_throttle(4000)));
    }
}
