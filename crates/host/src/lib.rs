//! Pure host model: parsers for procfs, sysfs and FreeBSD command output, the host
//! snapshot, doctor rules, plans and diffs, and the read/write traits with a fake host.
//!
//! Flow B: host → **snapshot → doctor / plan** → apply → verify → rollback.
#![forbid(unsafe_code)]
