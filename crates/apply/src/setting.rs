//! Setting keys and objects live in the pure host crate beside the `HostWrite` trait that
//! reads and writes them; re-exported here at their old path.

pub use nictune_host::write::setting::*;
