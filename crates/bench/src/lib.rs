//! Live traffic engines, CPU and interrupt accounting, the namespace testbed and `serve`.
//!
//! Produces the same metrics types as the simulator so measured and predicted results compare
//! field by field. One of the two crates allowed to make system calls.
