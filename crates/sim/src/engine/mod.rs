//! The discrete-event engine: time, ordering, randomness, and the run loop that drives the
//! NIC, driver, NAPI, CPU and workload models.

pub mod clock;
pub mod min_tree;
pub mod queue;
pub mod report;
pub mod rng;
pub mod sim;
pub mod spec;
pub mod ziggurat;
