//! Applying a plan as a transaction: journal, write, verify, commit or roll back, and the
//! auto-revert watchdog.
//!
//! Flow B: host → snapshot → plan → **apply → verify → rollback**. Works over the host traits;
//! the binary injects the Linux adapter, tests inject the fake host.
#![forbid(unsafe_code)]
