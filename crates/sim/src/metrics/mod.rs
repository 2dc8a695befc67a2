//! Measurement during a run ([`recorder`], [`histogram`]) and the conversion of a finished
//! run into the shared [`nictune_core::metrics::Metrics`] ([`collect`]).

pub mod collect;
pub mod histogram;
pub mod recorder;
