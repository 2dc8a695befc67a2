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
    /// and exit. A signal the process was started with ignored stays ignored, as POSIX asks
    /// of interactive programs: `nohup nictune tune … &` keeps running after a logout.
    pub fn on_signals(&self) -> std::io::Result<()> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            if !ignored_at_start(signal) {
                signal_hook::flag::register(signal, Arc::clone(&self.0))?;
            }
        }
        Ok(())
    }
}

/// Whether this process ignores `signal` (`SigIgn` in /proc/self/status): one started as a
/// background job or under nohup does, and passes that on to its children; false when the
/// status cannot be read.
pub fn ignored_at_start(signal: i32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    is_set(sig_ign(&status), signal)
}

fn sig_ign(status: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .unwrap_or(0)
}

/// Whether `signal` (1-based, as the kernel numbers them) is in `mask`.
fn is_set(mask: u64, signal: i32) -> bool {
    (1..=64).contains(&signal) && mask & (1 << (signal - 1)) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hang_up_ignored_at_start_stays_ignored() {
        // nohup: SIGHUP (1) ignored; SIGPIPE (13) too, as Rust sets it.
        let mask = sig_ign("Name:\tnictune\nSigIgn:\t0000000000001001\nSigCgt:\t0\n");
        assert!(is_set(mask, signal_hook::consts::SIGHUP));
        assert!(!is_set(mask, signal_hook::consts::SIGINT));
        assert!(!is_set(mask, signal_hook::consts::SIGTERM));
        assert_eq!(sig_ign("no such line"), 0);
    }

    #[test]
    fn clones_share_the_flag() {
        let a = Cancel::new();
        let b = a.clone();
        assert!(!b.is_cancelled());
        a.cancel();
        assert!(b.is_cancelled());
    }
}
