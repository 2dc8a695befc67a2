//! Live traffic engines, CPU and interrupt accounting, the namespace testbed and `serve`.
//!
//! Place in the data flow: `nictune bench` and `nictune tune` call [`run()`] with a
//! [`BenchSpec`] and a [`ServerSide`]; the result carries the same
//! [`nictune_core::metrics::Metrics`] the simulator produces, so measured and predicted
//! results compare field by field, plus the accounting that says how far to trust them.
//!
//! ```text
//! BenchSpec ─ validate ─┐
//! ServerSide (loopback | &Testbed | peer) ─ run() ─ server side ─ clients ─ engine loops
//!                                              └ accounting samples at the window's edges
//!                                              └→ BenchResult { metrics, accounting, ... }
//! ```
//!
//! The testbed's lifecycle is the caller's: create one [`Testbed`], run many measurements
//! against it (each with its own client/server CPU placement), drop it to remove it.
//!
//! ```no_run
//! use nictune_bench::{run, BenchSpec, ServerSide, TestKind, Testbed};
//! use nictune_core::progress::NoProgress;
//!
//! let privilege = nictune_linux::write::privilege(); // read once, passed on
//! let bed = Testbed::create(privilege)?; // root; removes stale testbeds first
//! for server_cpu in [0, 1] {
//!     let mut spec = BenchSpec::new(TestKind::Rr);
//!     spec.client_cpu = Some(0);
//!     spec.server_cpu = Some(server_cpu);
//!     let r = run(&spec, ServerSide::Testbed(&bed), &NoProgress)?;
//!     println!("{:?} trans/s, p99 {:?} µs", r.metrics.transactions_per_sec,
//!              r.metrics.latency_us.map(|l| l.p99));
//! }
//! bed.destroy()?; // dropping it removes it too
//! # Ok::<(), nictune_bench::BenchError>(())
//! ```
//!
//! A search loop can take a [`SpecRunner`] instead: [`LiveMeasurer`] over a target, or
//! [`FakeMeasurer`] answering from a function in tests.
//!
//! Seams: engines see time only through [`clock::Clock`] and sockets only through
//! [`conn::Conn`] / [`conn::StreamConn`]; [`fake`] drives them deterministically. System
//! calls are confined to `sys` (the crate's only `unsafe`), `net`, `testbed` and
//! `accounting::sample`.
#![warn(missing_docs)]

pub mod accounting;
pub mod cancel;
pub mod changes;
pub mod client;
pub mod clock;
pub mod compare;
pub mod conn;
pub mod effect;
pub mod engine;
pub mod error;
pub mod fake;
pub mod histogram;
pub mod host_changes;
pub mod measure;
pub mod net;
pub mod peer;
pub mod protocol;
pub mod result;
pub mod run;
pub mod serve;
pub mod spec;
mod sys;
pub mod sysctls;
pub mod testbed;
pub mod text;
pub mod token;
pub mod window;

pub use error::{BenchError, Result};
pub use measure::{FakeMeasurer, LiveMeasurer, SpecRunner};
pub use peer::PeerTarget;
pub use result::{BenchResult, TestbedInfo};
pub use run::{allowed_cpus, run, run_cancellable, ServerSide};
pub use spec::{BenchSpec, Limits, Load, Sides, TestKind, MAX_OUTSTANDING};
pub use sys::pin_task;
pub use testbed::Testbed;
pub use token::Token;

/// Whether a process with `privilege` may build a testbed (root); the reason if not.
pub fn testbed_available(
    privilege: nictune_core::privilege::Privilege,
) -> std::result::Result<(), String> {
    testbed::check_available(privilege).map_err(|e| e.to_string())
}
