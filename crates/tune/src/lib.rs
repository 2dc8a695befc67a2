//! The measured search behind `nictune tune`. Pure: no system calls, no clocks.
//!
//! Place in the data flows: tune joins both. Flow B gives it a target whose settings it can
//! change and restore (the apply engine's journal, behind [`session::Target`]); flow A's
//! metrics come back from the bench engine (behind [`session::Measurer`]) and, with
//! `--predict`, from the simulator (behind [`predict::Predictor`]) before anything is
//! measured. Out of it come [`results::TuneResults`] (`results.json`), a profile
//! ([`profile`], `recommended.toml`) and, through the report crate, `report.html`.
//!
//! The pieces, in the order a tune uses them:
//! - [`space`]: candidates from what the target supports ([`knob`], [`candidate`]), with
//!   per-driver values from the settings catalog ([`levels`]);
//! - [`session`]: the loop: snapshot → apply → warm up → measure → record → restore;
//!   [`readback`]: what each candidate's settings read back as (not taken, adjusted);
//! - [`search`]: successive halving with repeated, interleaved finals;
//! - [`observe`], [`stats`], [`summary`]: per-run numbers, means with 95 % intervals;
//! - [`objective`], [`pareto`], [`verdict`]: what "best" means, the trade-offs, and whether
//!   the best is better than the settings as found beyond the noise;
//! - [`synthetic`]: a labelled fake target for tests and demonstrations.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod candidate;
pub mod ends;
pub mod fit;
pub mod knob;
pub mod levels;
pub mod objective;
pub mod observe;
pub mod pareto;
pub mod predict;
pub mod profile;
pub mod readback;
pub mod results;
pub mod search;
pub mod session;
pub mod space;
pub mod stats;
pub mod summary;
pub mod synthetic;
pub mod verdict;
