//! nictune's shared vocabulary. Pure: no system calls, no clocks.
//!
//! Place in the data flows: everything else depends on this crate.
//! - Flow A (scenario → sim → metrics → report) shares [`metrics`] with `bench`, so predicted
//!   and measured results compare field by field.
//! - Flow B (host → snapshot → doctor/plan → apply → verify/rollback) validates every value
//!   through the settings catalog.
//!
//! [`envelope`] fixes the JSON convention (`{"schema": "nictune.<command>/v1", ...}`),
//! [`units`] the unit newtypes, [`duration`] the one duration grammar of every flag, [`cpuset`] CPU sets in list and mask notation, [`progress`]
//! the progress-reporting seam the binary renders, [`names`] the one rule for interface and
//! namespace names, [`privilege`] the process's privilege as a value the binary reads once
//! and passes on, [`input`] the size limits of everything read from outside (its bounded
//! reader is this crate's only I/O).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod catalog;
pub mod cpuset;
pub mod duration;
pub mod envelope;
pub mod error;
pub mod input;
pub mod live;
pub mod metrics;
pub mod names;
pub mod privilege;
pub mod progress;
pub mod taken;
pub mod units;
