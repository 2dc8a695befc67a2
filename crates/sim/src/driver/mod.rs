//! Drivers: the e1000 family ([`e1000`]); its moderation implements the one moderation trait
//! ([`crate::moderation::ModerationPolicy`]).
//!
//! The receive/transmit driver path itself (hard interrupt, NAPI poll, tx clean, rx refill)
//! is modelled once, e1000-style, in the engine (`engine::sim`); what differs between drivers
//! is the moderation policy and the NIC's timer hardware, both chosen per host.
//!
//! # Adding a driver
//!
//! 1. Implement [`crate::moderation::ModerationPolicy`] as a pure state machine: registers at `ifup`,
//!    and updates at interrupt entry, at NAPI completion, or from a periodic watchdog. It
//!    returns [`crate::moderation::Coalescing`] values (throttle interval, rx/tx packet and absolute
//!    timers, rx frame threshold) in nanoseconds of the NIC clock.
//! 2. Name it in `scenario::keys::DRIVERS` and build it in `scenario::build::policy` from the
//!    host's keys (add driver-specific keys to `scenario::keys::host_keys`).
//! 3. If the NIC reads its throttle differently, add a model to `scenario::keys::NICS` and map
//!    it to an [`crate::nic::throttle::ItrReading`] in `scenario::build` (`host`).
//!
//! Receive processing other than NAPI (FreeBSD DEVICE_POLLING's per-tick bursts) replaces the
//! engine's interrupt → `PollStep` chain (`Sim::hard_irq`) for a host: the natural cut is a per-host receive mode
//! beside [`crate::host::napi`], dispatched in `Sim::hard_irq` / `Sim::poll_step`.

pub mod e1000;
