//! Applying a plan as a transaction: journal, write, verify, commit or roll back, and the
//! state behind the auto-revert watchdog, `confirm`, `revert` and `status`; plus the
//! renderers that export a profile to native configuration formats.
//!
//! Flow B: host → snapshot → plan → **apply → verify → rollback**. Works over the
//! `nictune_host::write::HostWrite` trait; the binary injects the Linux adapter (whose reads `--dry-run`
//! uses to resolve the plan, writing nothing), tests inject [`fake::FakeWriter`].
//!
//! - [`desired`]: `KEY=VALUE` and TOML profiles, checked without touching the system.
//! - [`plan`]: desired settings resolved against current values into ordered changes.
//! - [`engine`]: the transaction (journal → write → read back; reverse-order undo).
//! - [`journal`], [`state`], [`txn`]: the durable record, the lock, confirm and revert.
//! - [`identity`]: what each interface and IRQ of a change was, and where a restore writes
//!   when a name or number now means another device.
//! - [`fs`]: the journal's file operations, with a fault-injecting test implementation;
//!   [`lock`]: the locks that name their holder, the machine-wide one among them.
//! - [`export`]: native configuration for systemd, NetworkManager, udev, tuned, FreeBSD, ….
//! - The seam and what crosses it (`HostWrite`, setting keys, values) are the pure
//!   `nictune_host::write`'s, so the Linux adapter needs no apply; use them from there.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod catalog;
pub mod checks;
pub mod desired;
pub mod engine;
pub mod export;
pub mod fake;
pub mod fs;
pub mod identity;
pub mod journal;
pub mod lock;
pub mod plan;
pub mod state;
pub mod txn;
