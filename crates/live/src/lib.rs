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
//! and [`caps`] reads what a real interface lets a tune change from its host snapshot (the
//! tune crate's `Capabilities`, from which the search space is built), [`changes`] decides
//! which earlier changes block a new one and reverts a journaled change on this host (for
//! `apply`, `revert`, the watchdog and the live tunes alike),
//!
//! so each can be tested here against the other crates' fakes (`nictune_bench::FakeMeasurer`,
//! the apply engine's fake host), and the binary only wires them together.
#![warn(missing_docs)]

pub mod caps;
pub mod changes;
pub mod measure;
pub mod predict;
pub mod target;

pub use measure::BenchMeasurer;
pub use predict::VethPredictor;
pub use target::{LiveTarget, NsEnd};
