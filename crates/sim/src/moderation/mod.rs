//! Interrupt moderation: the one trait every driver's algorithm implements, and the families.
//!
//! A [`ModerationPolicy`] is a pure state machine. Every model that runs a NIC (the engine's
//! hosts, the case hosts, the router's vectors) calls it at the points where real drivers run
//! their moderation code, and writes whatever [`Coalescing`] it returns to the NIC at that
//! instant (a write restarts the throttle's interval clock):
//!
//! | hook | real driver |
//! |---|---|
//! | [`initial`](ModerationPolicy::initial) | register setup at `ifup` (e1000_configure_rx, igb_configure) |
//! | [`on_interrupt`](ModerationPolicy::on_interrupt) | hard-interrupt entry (igb writes a deferred EITR here; FreeBSD 14 em/igb/igc AIM computes here; DIM counts the event) |
//! | [`on_poll_complete`](ModerationPolicy::on_poll_complete) | after `napi_complete_done` returned true, before the IRQ is unmasked (e1000_set_itr, igb, ixgbe, DIM) |
//! | [`on_watchdog`](ModerationPolicy::on_watchdog) | the periodic watchdog (e1000 mode 4 every 2 s) |
//!
//! Policies see only what the driver could see ([`ModerationCtx`]): time, link speed, the
//! NIC's cumulative statistics and the current registers, plus the [`Traffic`] window the
//! driver's rings counted since the interrupt that scheduled NAPI (e1000's
//! `total_{rx,tx}_{bytes,packets}`, which keep accumulating over timer-driven polls while
//! deferral keeps the IRQ masked). Which hook a family computes in, which counters it clears
//! and when its write takes effect are the family's own business; this is what distinguishes,
//! for example, igb (value written at the *next* interrupt) from ixgbe (written at once).
//!
//! Where each algorithm lives and which source it follows: `docs/simulator.md`; the
//! specification of each family is `docs/moderation-algorithms.md` (§ numbers in the files).
//! The e1000 family lives in [`crate::driver::e1000`] beside its delay-timer parameters.

pub mod dim;
pub mod freebsd_aim;
pub mod igb;
pub mod ixgbe;
pub mod ixgbe_legacy;
pub mod latency_class;

pub use crate::nic::Coalescing;
use crate::nic::NicCounters;
use nictune_core::units::Nanos;

/// Traffic a vector handled, as the driver's per-ring counters count it. Byte counts exclude
/// the 4-byte FCS, as the drivers count them.
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

impl Coalescing {
    /// No moderation: an interrupt for every cause.
    pub const OFF: Coalescing = Coalescing {
        interval_ns: 0,
        rx_pkt_ns: 0,
        rx_abs_ns: 0,
        rx_frames: 0,
        tx_pkt_ns: 0,
        tx_abs_ns: 0,
    };

    /// A minimum gap between two interrupts (Intel ITR/EITR semantics: a throttle, not a
    /// delay).
    pub const fn throttle(gap: Nanos) -> Coalescing {
        Coalescing {
            interval_ns: gap.0,
            ..Coalescing::OFF
        }
    }

    /// A coalescing timer plus a frame-count threshold (what DIM programs), as the 8254x-style
    /// timer pair: EQE (timer from the first completion) is the absolute timer with the packet
    /// timer one tick longer, so the absolute one always fires first (absolute-only behaviour,
    /// moderation-algorithms.md §1); CQE (restarted by each completion) is the packet timer.
    pub const fn timer(usecs: Nanos, frames: u32, start: TimerStart) -> Coalescing {
        match start {
            TimerStart::AtFirstEvent => Coalescing {
                rx_pkt_ns: usecs.0 + 1,
                rx_abs_ns: usecs.0,
                rx_frames: frames,
                ..Coalescing::OFF
            },
            TimerStart::PerCompletion => Coalescing {
                rx_pkt_ns: usecs.0,
                rx_frames: frames,
                ..Coalescing::OFF
            },
        }
    }

    /// When the receive delay timers expire for frames pending since `first`, the latest at
    /// `last`: the packet timer (RDTR) from the last frame, the absolute timer (RADV) from the
    /// first, whichever comes sooner; with neither set, at once.
    pub fn rx_deadline(&self, first: u64, last: u64) -> u64 {
        let pkt = last + self.rx_pkt_ns;
        if self.rx_abs_ns == 0 {
            pkt
        } else {
            pkt.min(first + self.rx_abs_ns)
        }
    }

    /// Whether a receive delay timer is programmed.
    pub fn rx_timed(&self) -> bool {
        self.rx_pkt_ns > 0 || self.rx_abs_ns > 0
    }
}

/// What a policy may look at.
#[derive(Debug, Clone, Copy)]
pub struct ModerationCtx {
    /// Simulated time.
    pub now: Nanos,
    /// Negotiated link speed (Mb/s).
    pub link_mbps: u32,
    /// The NIC's cumulative statistics (models that keep none pass zeros).
    pub counters: NicCounters,
    /// The registers as last written.
    pub regs: Coalescing,
}

impl ModerationCtx {
    /// A context at `now` with nothing else known: a model with no statistics registers
    /// (the case hosts) and a policy that reads none.
    pub fn at(now: Nanos, regs: Coalescing) -> ModerationCtx {
        ModerationCtx {
            now,
            link_mbps: 0,
            counters: NicCounters::default(),
            regs,
        }
    }
}

/// A driver's interrupt-moderation algorithm (the only moderation trait of the simulator).
pub trait ModerationPolicy: std::fmt::Debug + Send {
    /// Registers programmed when the interface comes up.
    fn initial(&mut self) -> Coalescing;

    /// At hard-interrupt entry; a returned value is written at once.
    fn on_interrupt(&mut self, _ctx: &ModerationCtx) -> Option<Coalescing> {
        None
    }

    /// After a NAPI completion that re-enables the interrupt (or, for FreeBSD, when the
    /// receive task finishes), with the traffic counted since the interrupt that scheduled it.
    fn on_poll_complete(&mut self, _ctx: &ModerationCtx, _window: &Traffic) -> Option<Coalescing> {
        None
    }

    /// How often the watchdog runs (`None`: no watchdog hook). The first run falls at a
    /// per-host phase in `[0, period)` drawn from the run's seed: the hosts' watchdogs are
    /// unrelated timers.
    fn watchdog_period(&self) -> Option<Nanos> {
        None
    }

    /// The periodic watchdog.
    fn on_watchdog(&mut self, _ctx: &ModerationCtx) -> Option<Coalescing> {
        None
    }
}

/// Implements [`ModerationPolicy`] for a family whose state machine has the driver-side
/// steps `observe(Traffic)` (count the ring's traffic), `complete(now)` (the completion-time
/// computation) and `current()` (what is programmed), and optionally `interrupt(now)`.
macro_rules! family_policy {
    ($t:ty) => {
        family_policy!(@impl $t, |_s: &mut $t, _now| None);
    };
    ($t:ty, interrupt) => {
        family_policy!(@impl $t, |s: &mut $t, now| s.interrupt(now));
    };
    (@impl $t:ty, $irq:expr) => {
        impl $crate::moderation::ModerationPolicy for $t {
            fn initial(&mut self) -> $crate::moderation::Coalescing {
                self.current()
            }
            fn on_interrupt(
                &mut self,
                ctx: &$crate::moderation::ModerationCtx,
            ) -> Option<$crate::moderation::Coalescing> {
                let irq: fn(&mut $t, nictune_core::units::Nanos) -> Option<$crate::moderation::Coalescing> = $irq;
                irq(self, ctx.now)
            }
            fn on_poll_complete(
                &mut self,
                ctx: &$crate::moderation::ModerationCtx,
                window: &$crate::moderation::Traffic,
            ) -> Option<$crate::moderation::Coalescing> {
                self.observe(*window);
                self.complete(ctx.now)
            }
        }
    };
}
pub(crate) use family_policy;

/// A boxed policy is a policy (the scenario builder picks the family at run time).
impl<P: ModerationPolicy + ?Sized> ModerationPolicy for Box<P> {
    fn initial(&mut self) -> Coalescing {
        (**self).initial()
    }
    fn on_interrupt(&mut self, ctx: &ModerationCtx) -> Option<Coalescing> {
        (**self).on_interrupt(ctx)
    }
    fn on_poll_complete(&mut self, ctx: &ModerationCtx, w: &Traffic) -> Option<Coalescing> {
        (**self).on_poll_complete(ctx, w)
    }
    fn watchdog_period(&self) -> Option<Nanos> {
        (**self).watchdog_period()
    }
    fn on_watchdog(&mut self, ctx: &ModerationCtx) -> Option<Coalescing> {
        (**self).on_watchdog(ctx)
    }
}

/// A fixed setting: never changes what is programmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixed(pub Coalescing);

impl ModerationPolicy for Fixed {
    fn initial(&mut self) -> Coalescing {
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
        return Coalescing::OFF;
    }
    let reg = 1_000_000_000u64 / (rate_per_s as u64 * 256);
    Coalescing::throttle(Nanos(reg * 256))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_conversions_match_the_sdm_examples() {
        // moderation-algorithms.md §1: 8000/s → 488 → 124.928 µs; 20000/s → 195.
        assert_eq!(
            rate_to_256ns_throttle(8000),
            Coalescing::throttle(Nanos(488 * 256))
        );
        assert_eq!(
            rate_to_256ns_throttle(20000),
            Coalescing::throttle(Nanos(195 * 256))
        );
        assert_eq!(rate_to_256ns_throttle(0), Coalescing::OFF);
        assert_eq!(quarter_micros(196), Nanos(49_000));
    }

    #[test]
    fn fixed_policy_never_writes() {
        let mut p = Fixed(Coalescing::throttle(Nanos::from_micros(125)));
        let ctx = ModerationCtx::at(Nanos(1), p.0);
        assert_eq!(p.on_poll_complete(&ctx, &Traffic::rx(100, 150_000)), None);
        assert_eq!(p.on_interrupt(&ctx), None);
        assert_eq!(p.initial(), Coalescing::throttle(Nanos(125_000)));
    }

    #[test]
    fn timers_map_to_the_8254x_pair() {
        let eqe = Coalescing::timer(Nanos(8_000), 256, TimerStart::AtFirstEvent);
        assert_eq!(
            (eqe.rx_abs_ns, eqe.rx_pkt_ns, eqe.rx_frames, eqe.tx_pkt_ns),
            (8_000, 8_001, 256, 0)
        );
        let cqe = Coalescing::timer(Nanos(8_000), 128, TimerStart::PerCompletion);
        assert_eq!(
            (cqe.rx_abs_ns, cqe.rx_pkt_ns, cqe.rx_frames),
            (0, 8_000, 128)
        );
        // EQE: the absolute timer decides however late the last frame came.
        assert_eq!(eqe.rx_deadline(100, 7_000), 8_100);
        // CQE: each completion restarts it.
        assert_eq!(cqe.rx_deadline(100, 7_000), 15_000);
        assert!(!Coalescing::OFF.rx_timed() && eqe.rx_timed() && cqe.rx_timed());
    }
}
