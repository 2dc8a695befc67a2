//! The interrupt-moderation seam: a driver's moderation algorithm as a pure state machine.
//!
//! The engine calls a [`ModerationPolicy`] at the points where real drivers run their
//! moderation code, and writes whatever [`Coalescing`] registers it returns to the NIC
//! (a write restarts the throttle's interval clock):
//!
//! | hook | real driver |
//! |---|---|
//! | [`initial`](ModerationPolicy::initial) | register setup at `ifup` (e1000_configure_rx) |
//! | [`on_interrupt`](ModerationPolicy::on_interrupt) | hard-interrupt entry (igb writes a deferred EITR here) |
//! | [`on_poll_complete`](ModerationPolicy::on_poll_complete) | after `napi_complete_done` returned true, before the IRQ is unmasked (e1000_set_itr, igb, ixgbe, DIM) |
//! | [`on_watchdog`](ModerationPolicy::on_watchdog) | the periodic watchdog (e1000 mode 4 every 2 s) |
//!
//! Policies see only what the driver could see: time, link speed, the NIC's cumulative
//! statistics and the current registers, plus the packet/byte window since the interrupt
//! that scheduled NAPI (e1000's `total_{rx,tx}_{bytes,packets}`, which keep accumulating over
//! timer-driven polls while deferral keeps the IRQ masked).

use crate::nic::{Coalescing, NicCounters};
use std::fmt;

/// What a policy may look at.
#[derive(Debug, Clone, Copy)]
pub struct ModerationCtx {
    /// Simulated time (ns).
    pub now: u64,
    /// Negotiated link speed (Mb/s).
    pub link_mbps: u32,
    /// The NIC's cumulative statistics.
    pub counters: NicCounters,
    /// The registers as last written.
    pub regs: Coalescing,
}

/// Packets and bytes the driver counted since the interrupt that scheduled NAPI. Byte counts
/// exclude the 4-byte FCS, as the drivers count them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PollWindow {
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Tx descriptors cleaned.
    pub tx_packets: u64,
    /// Bytes of those.
    pub tx_bytes: u64,
}

/// A driver's interrupt-moderation algorithm.
pub trait ModerationPolicy: fmt::Debug + Send {
    /// Registers programmed when the interface comes up.
    fn initial(&mut self) -> Coalescing;

    /// At hard-interrupt entry; a returned value is written at once.
    fn on_interrupt(&mut self, _ctx: &ModerationCtx) -> Option<Coalescing> {
        None
    }

    /// After a NAPI completion that re-enables the interrupt.
    fn on_poll_complete(
        &mut self,
        _ctx: &ModerationCtx,
        _window: &PollWindow,
    ) -> Option<Coalescing> {
        None
    }

    /// How often the watchdog runs (`None`: no watchdog hook). The first run falls at a
    /// per-host phase in `[0, period)` drawn from the run's seed: the hosts' watchdogs are
    /// unrelated timers.
    fn watchdog_period(&self) -> Option<u64> {
        None
    }

    /// The periodic watchdog.
    fn on_watchdog(&mut self, _ctx: &ModerationCtx) -> Option<Coalescing> {
        None
    }
}
