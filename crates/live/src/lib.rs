//! The live adapters of `nictune tune`: the tune loop (`nictune_tune::session`) is written
//! against three traits, and this crate implements them over the other engines —
//!
//! ```text
//! nictune_tune::session::Target     ← target::LiveTarget   over nictune_apply's journaled
//!                                                           transactions (host, --netns,
//!                                                           testbed namespaces via NsHost)
//! nictune_tune::session::Measurer   ← measure::BenchMeasurer over nictune_bench::SpecRunner
//!                                                           (in process, or in a guest)
//! nictune_tune::predict::Predictor  ← predict::VethPredictor over nictune_sim's veth model
//! ```
//!
//! so each can be tested here against the other crates' fakes (`nictune_bench::FakeMeasurer`,
//! the apply engine's `FakeWriter`). Around them:
//!
//! - [`tune`]: the live tunes themselves — the namespace testbed, a real interface against a
//!   `nictune serve` peer, the real-driver guests — each returning its results for the binary
//!   to write and render, and the end every tune shares ([`tune::run`]);
//! - [`caps`]: what a real interface lets a tune change, read from its host snapshot (the
//!   tune crate's `Capabilities`, from which the search space is built);
//! - [`changes`]: which earlier changes block a new one, and reverting a journaled change on
//!   this host (for `apply`, `revert`, the watchdog and the live tunes alike).
//!
//! The binary checks the arguments, makes one call here and renders what comes back.
#![warn(missing_docs)]

pub mod caps;
pub mod changes;
pub mod measure;
pub mod predict;
pub mod target;
pub mod tune;

pub use measure::BenchMeasurer;
pub use predict::VethPredictor;
pub use target::{LiveTarget, NsEnd};
