//! Live traffic engines, CPU and interrupt accounting, the namespace testbed and `serve`.
//!
//! Produces the same metrics types as the simulator so measured and predicted results compare
//! field by field. One of the two crates allowed to make system calls.

pub mod accounting;
pub mod cancel;
pub mod clock;
pub mod conn;
pub mod engine;
pub mod error;
pub mod fake;
pub mod histogram;
pub mod net;
pub mod spec;
mod sys;
pub mod testbed;
pub mod window;
