//! The seam between the engine and a machine lives in the pure host crate, so the Linux
//! adapter implements it without depending on apply; re-exported here at its old path.

pub use nictune_host::write::{HostError, HostErrorKind, HostWrite, Op};
