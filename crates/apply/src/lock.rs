//! Advisory locks (`flock`) that say who holds them: the holder writes its pid into the lock
//! file, so a refused process can name it. Two locks use this: the state directory's, and the
//! machine-wide [`MACHINE_LOCK`] that keeps changes made through different state
//! directories (or by two tunes writing the host-wide busy-poll sysctls) from interleaving.

use std::fs::{File, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The machine-wide change lock, taken by every command that changes the live host (on top
/// of its state directory's lock). `/run` is cleared at boot, as a lock should be.
pub const MACHINE_LOCK: &str = "/run/nictune/change.lock";

/// A lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another open file holds the `flock`.
    #[error("lock {path} is held{}", by(*holder))]
    Busy {
        /// The lock file.
        path: PathBuf,
        /// The pid the holder wrote into the file; `None` when it holds no number.
        holder: Option<u32>,
    },
    /// Creating, opening, locking or writing the lock file failed.
    #[error("{op} lock {path}: {source}")]
    Io {
        /// What was being done ("opening", "creating the directory of", …).
        op: &'static str,
        /// The lock file.
        path: PathBuf,
        /// The file-system error.
        source: std::io::Error,
    },
}

/// ` by pid N` when the holder is known.
pub fn by(holder: Option<u32>) -> String {
    holder.map_or_else(String::new, |pid| format!(" by pid {pid}"))
}

/// Takes the lock at `path` without waiting (creating the file and its directory if
/// missing) and writes this process's pid into it. The lock lasts as long as the file.
pub fn try_take(path: &Path) -> Result<File, LockError> {
    let io = |op| {
        move |source| LockError::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io("creating the directory of"))?;
    }
    let mut file = File::options()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(io("opening"))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let holder = holder(&mut file);
            return Err(LockError::Busy {
                path: path.to_path_buf(),
                holder,
            });
        }
        Err(TryLockError::Error(e)) => return Err(io("locking")(e)),
    }
    // The pid is only for messages: failing to record it does not stop the change.
    let _ = file
        .set_len(0)
        .and_then(|()| writeln!(file, "{}", std::process::id()));
    Ok(file)
}

/// The pid the holder wrote, if it did.
fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    // A pid is a few digits: read no more than a line's worth of whatever the file holds.
    (&mut *file).take(64).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// The machine-wide change lock, held until dropped.
#[derive(Debug)]
#[must_use = "the lock is released when this is dropped"]
pub struct MachineLock {
    _file: File,
}

impl MachineLock {
    /// Takes the machine-wide lock at `path` ([`MACHINE_LOCK`] on a live host) without
    /// waiting.
    pub fn try_take(path: &Path) -> Result<MachineLock, LockError> {
        try_take(path).map(|file| MachineLock { _file: file })
    }

    /// Takes it, retrying for up to `attempts` × 50 ms (confirm and the watchdog wait briefly
    /// for a change that is finishing).
    pub fn waiting(path: &Path, attempts: u32) -> Result<MachineLock, LockError> {
        let mut result = MachineLock::try_take(path);
        for _ in 1..attempts.max(1) {
            if !matches!(result, Err(LockError::Busy { .. })) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            result = MachineLock::try_take(path);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_lock_names_its_holder_and_is_free_again_once_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run/change.lock");
        let held = MachineLock::try_take(&path).unwrap();
        let err = MachineLock::try_take(&path).unwrap_err();
        let LockError::Busy { holder, .. } = &err else {
            panic!("expected busy, got {err}");
        };
        assert_eq!(*holder, Some(std::process::id()));
        assert!(
            err.to_string()
                .ends_with(&format!("is held by pid {}", std::process::id())),
            "{err}"
        );
        drop(held);
        assert!(MachineLock::try_take(&path).is_ok());
    }
}
