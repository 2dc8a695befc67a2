//! Adaptive interrupt moderation families, one file per driver family.
//!
//! Every family is a pure state machine behind one small interface, [`ModerationPolicy`]:
//! the engine reports traffic as the driver's counters see it ([`ModerationPolicy::observe`]),
//! calls [`ModerationPolicy::on_interrupt`] at the start of every interrupt of the vector and
//! [`ModerationPolicy::on_complete`] when NAPI completes (or, for FreeBSD, when the interrupt
//! filter runs), and applies any [`Coalescing`] the policy returns as a register write at that
//! instant. Which hook a family computes in, which counters it clears and when its write takes
//! effect are the family's own business; this is what distinguishes, for example, igb (value
//! written at the *next* interrupt) from ixgbe (written at once).
//!
//! The specification of each family is `moderation-algorithms.md` (§ numbers in the files).

pub mod dim;
pub mod engine;
pub mod freebsd_aim;
pub mod igb;
pub mod ixgbe;
pub mod ixgbe_legacy;
pub mod latency_class;

use nictune_core::units::Nanos;

/// Traffic a vector handled, as the driver's per-ring counters count it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Received packets.
    pub rx_packets: u64,
    /// Received bytes (without FCS, as drivers count them).
    pub rx_bytes: u64,
    /// Transmitted packets (segments after GSO).
    pub tx_packets: u64,
    /// Transmitted bytes.
    pub tx_bytes: u64,
}

impl Traffic {
    /// Receive-only traffic.
    pub const fn rx(packets: u64, bytes: u64) -> Traffic {
        Traffic {
            rx_packets: packets,
            rx_bytes: bytes,
            tx_packets: 0,
            tx_bytes: 0,
        }
    }

    /// Adds `other` to `self`.
    pub fn add(&mut self, other: Traffic) {
        self.rx_packets += other.rx_packets;
        self.rx_bytes += other.rx_bytes;
        self.tx_packets += other.tx_packets;
        self.tx_bytes += other.tx_bytes;
    }
}

/// How a DIM-programmed timer starts (the completion-queue period mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerStart {
    /// EQE mode: the timer starts at the first event and is not restarted (absolute timer).
    AtFirstEvent,
    /// CQE mode: the timer restarts on every completion (packet timer).
    PerCompletion,
}

/// What the driver has programmed into the NIC for one interrupt vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coalescing {
    /// No moderation: an interrupt for every cause.
    Off,
    /// Minimum gap between two interrupts (Intel ITR/EITR semantics: a throttle, not a delay).
    Throttle(Nanos),
    /// A coalescing timer plus a frame-count threshold (what DIM programs).
    Timer {
        /// Timer length.
        usecs: Nanos,
        /// Interrupt as soon as this many completions are pending.
        frames: u32,
        /// Whether completions restart the timer.
        start: TimerStart,
    },
}

/// An interrupt moderation policy: a driver's adaptive algorithm or a fixed setting.
pub trait ModerationPolicy: std::fmt::Debug {
    /// Traffic the driver's rings counted since the previous call (Rx clean, Tx clean).
    fn observe(&mut self, traffic: Traffic);
    /// Start of an interrupt of this vector; returns a register write made here.
    fn on_interrupt(&mut self, _now: Nanos) -> Option<Coalescing> {
        None
    }
    /// NAPI completed and the IRQ is about to be unmasked; returns a register write made here.
    fn on_complete(&mut self, now: Nanos) -> Option<Coalescing>;
    /// What the NIC is programmed with right now.
    fn current(&self) -> Coalescing;
}

/// A boxed policy is a policy (the scenario builder picks the family at run time).
impl<P: ModerationPolicy + ?Sized> ModerationPolicy for Box<P> {
    fn observe(&mut self, traffic: Traffic) {
        (**self).observe(traffic)
    }
    fn on_interrupt(&mut self, now: Nanos) -> Option<Coalescing> {
        (**self).on_interrupt(now)
    }
    fn on_complete(&mut self, now: Nanos) -> Option<Coalescing> {
        (**self).on_complete(now)
    }
    fn current(&self) -> Coalescing {
        (**self).current()
    }
}

/// A fixed setting: never changes what is programmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixed(pub Coalescing);

impl ModerationPolicy for Fixed {
    fn observe(&mut self, _traffic: Traffic) {}
    fn on_complete(&mut self, _now: Nanos) -> Option<Coalescing> {
        None
    }
    fn current(&self) -> Coalescing {
        self.0
    }
}

/// The interval of an Intel register holding microseconds shifted left by 2 (0.25 µs per LSB),
/// as igb and ixgbe keep `q_vector->itr`.
pub(crate) const fn quarter_micros(itr: u32) -> Nanos {
    Nanos(itr as u64 * 250)
}

/// The throttle of an interrupt rate (ints/s) in 256 ns register units, as e1000-class
/// drivers compute it: `reg = 1e9 / (rate · 256)`, interval = reg · 256 ns.
pub(crate) fn rate_to_256ns_throttle(rate_per_s: u32) -> Coalescing {
    if rate_per_s == 0 {
        return Coalescing::Off;
    }
    let reg = 1_000_000_000u64 / (rate_per_s as u64 * 256);
    Coalescing::Throttle(Nanos(reg * 256))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_conversions_match_the_sdm_examples() {
        // moderation-algorithms.md §1: 8000/s → 488 → 124.928 µs; 20000/s → 195.
        assert_eq!(
            rate_to_256ns_throttle(8000),
            Coalescing::Throttle(Nanos(488 * 256))
        );
        assert_eq!(
            rate_to_256ns_throttle(20000),
            Coalescing::Throttle(Nanos(195 * 256))
        );
        assert_eq!(rate_to_256ns_throttle(0), Coalescing::Off);
        assert_eq!(quarter_micros(196), Nanos(49_000));
    }

    #[test]
    fn fixed_policy_never_writes() {
        let mut p = Fixed(Coalescing::Throttle(Nanos::from_micros(125)));
        p.observe(Traffic::rx(100, 150_000));
        assert_eq!(p.on_interrupt(Nanos(1)), None);
        assert_eq!(p.on_complete(Nanos(2)), None);
        assert_eq!(p.current(), Coalescing::Throttle(Nanos(125_000)));
    }
}
