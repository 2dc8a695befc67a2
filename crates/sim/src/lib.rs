//! The simulator: a pure, deterministic discrete-event model of the host receive path.
//!
//! Flow A: scenario → **sim** → metrics → report. No wall clock and no threads inside a run.
#![forbid(unsafe_code)]

pub mod bus;
pub mod cases;
pub mod freebsd;
pub mod moderation;
pub mod multiqueue;
pub mod napi_extras;
pub mod pool;
