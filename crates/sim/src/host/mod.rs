//! The host: CPU cores and their cost model, and Linux NAPI / softirq state.

pub mod costs;
pub mod cpu;
pub mod napi;
