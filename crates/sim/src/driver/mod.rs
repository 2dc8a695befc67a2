//! Drivers: the interrupt-moderation seam ([`policy`]) and the e1000 family ([`e1000`]).
//!
//! The receive/transmit driver path itself (hard interrupt, NAPI poll, tx clean, rx refill)
//! is modelled once, e1000-style, in the engine (`engine::sim`); what differs between drivers
//! is the moderation policy and the NIC's timer hardware, both chosen per host.

pub mod e1000;
pub mod policy;
