//! The seam between long-running library work and the progress bar the binary draws.
//!
//! Libraries report progress through [`Progress`]; they never draw anything. The binary
//! passes a bar that renders on stderr only when stderr is a terminal and `--quiet` is off,
//! and tests pass [`NoProgress`].

/// Receives progress from long work (a sweep, a benchmark, a tune).
pub trait Progress: Sync {
    /// Work of `total` units named `label` starts.
    fn start(&self, total: u64, label: &str);
    /// `n` more units are done.
    fn advance(&self, n: u64);
    /// A short status message (e.g. the candidate being measured).
    fn message(&self, _msg: &str) {}
    /// The work is over.
    fn finish(&self);
}

/// Discards all progress.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _total: u64, _label: &str) {}
    fn advance(&self, _n: u64) {}
    fn finish(&self) {}
}
