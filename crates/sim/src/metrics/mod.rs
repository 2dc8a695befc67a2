//! Measurement during a run ([`recorder`], [`histogram`]) and the conversion of a finished
//! run into the shared [`nictune_core::metrics::Metrics`] ([`collect`], with the per-core
//! busy-time split of [`core_ns`] that the case models use too).

pub mod collect;
pub mod core_ns;
pub mod histogram;
pub mod recorder;
