//! Stopping a run early: a shared flag every engine loop polls, set by Ctrl-C, SIGTERM or
//! SIGHUP (the terminal or SSH session closed).
//!
//! Loops never block longer than [`POLL_SLICE`] without looking at the flag, so an
//! interrupted run returns within a fraction of a second and its testbed guard cleans up.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The longest any blocking socket call waits before the loop checks the flag again.
pub const POLL_SLICE: Duration = Duration::from_millis(100);

/// A cloneable stop flag.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag nobody has set.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Asks every loop watching this flag to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// True once [`Cancel::cancel`] was called or a registered signal arrived.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Sets this flag on SIGINT, SIGTERM and SIGHUP (the binary calls this once). Each of
    /// them then no longer ends the process: whoever registered must poll the flag, clean up
    /// and exit.
    pub fn on_signals(&self) -> std::io::Result<()> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            signal_hook::flag::register(signal, Arc::clone(&self.0))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let a = Cancel::new();
        let b = a.clone();
        assert!(!b.is_cancelled());
        a.cancel();
        assert!(b.is_cancelled());
    }
}
