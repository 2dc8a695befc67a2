//! Pure host model: parsers for procfs, sysfs and FreeBSD command output, the host
//! snapshot, doctor rules, and the read/write traits with a fake host. Plans (desired
//! settings against current values) and their diffs are `nictune_apply`'s.
//!
//! Flow B: host → **snapshot → doctor** → plan → apply → verify → rollback.
//!
//! - [`procfs`]: `/proc/stat`, `/proc/interrupts`, `/proc/softirqs`,
//!   `/proc/net/softnet_stat`, `/proc/net/dev`, `/proc/net/netstat` — text in, typed counters
//!   out.
//! - [`read`]: the [`read::HostRead`] seam with [`read::FakeHost`] and [`read::Recorder`].
//! - [`snapshot`]: the [`snapshot::HostSnapshot`] model and its builder.
//! - [`rates`]: rates between two counter samples (`show --interval`, doctor evidence).
//! - [`view`]: the human text of `show`.
//! - [`freebsd`]: captured FreeBSD command output and config files.
//! - [`modparams`]: the parameters a loaded driver module runs with, from nictune's reload
//!   record, modprobe.d and the kernel command line.
//! - [`doctor`]: Linux and FreeBSD rules producing findings with evidence and fixes.
//! - [`write`](mod@write): the [`write::HostWrite`] seam apply works over, with the setting
//!   keys and values it reads and writes.
//! - [`cpuset`]: core's CPU set (lists `0-3,8`, hex masks `ff,00000001`), re-exported.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod capture_script;
pub mod doctor;
pub mod error;
pub mod freebsd;
mod json;
pub mod modparams;
pub mod procfs;
pub mod rates;
pub mod read;
pub mod snapshot;
pub mod view;
pub mod write;

pub use error::ParseError;
pub use nictune_core::cpuset;
