//! The seam between long-running library work and the progress bar the binary draws.
//!
//! Libraries report progress through [`Progress`]; they never draw anything. The binary
//! passes a `TerminalBar` (feature `terminal`) only when stderr is a terminal and
//! `--quiet` is off, and tests pass [`NoProgress`].

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

/// A bar with an ETA drawn on stderr (indicatif), ticking five times a second.
#[cfg(feature = "terminal")]
#[derive(Debug)]
pub struct TerminalBar(indicatif::ProgressBar);

#[cfg(feature = "terminal")]
impl TerminalBar {
    /// A bar on stderr, hidden until the first [`Progress::start`].
    pub fn new() -> TerminalBar {
        let target = indicatif::ProgressDrawTarget::stderr();
        let bar = indicatif::ProgressBar::with_draw_target(None, target);
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        TerminalBar(bar)
    }
}

#[cfg(feature = "terminal")]
impl Default for TerminalBar {
    fn default() -> TerminalBar {
        TerminalBar::new()
    }
}

#[cfg(feature = "terminal")]
impl Progress for TerminalBar {
    fn start(&self, total: u64, label: &str) {
        let template = "{prefix} [{bar:30}] {pos}/{len} {msg} (ETA {eta})";
        let style = indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> ");
        self.0.set_style(style);
        self.0.set_prefix(label.to_string());
        self.0.set_length(total);
        self.0.set_position(0);
    }
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
    fn message(&self, msg: &str) {
        self.0.set_message(msg.to_string());
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}
