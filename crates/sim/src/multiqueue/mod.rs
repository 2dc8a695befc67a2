//! Multi-queue hosts: flows hashed to queues, queue vectors bound to CPUs, SMT siblings
//! sharing a core, and a serialised per-packet section (a NAT instance lock) shared by all
//! CPUs (issue 4 §4; seed-cases.md Case 5).

pub mod binding;
pub mod nat;
pub mod rss;
pub mod smt;
