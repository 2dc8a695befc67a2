//! Advisory locks (`flock`) that say who holds them: the holder writes its pid into the lock
//! file, so a refused process can name it. Two locks use this: the state directory's, and the
//! machine-wide [`MACHINE_LOCK`] that keeps changes made through different state
//! directories (or by two tunes writing the host-wide busy-poll sysctls) from interleaving.

use std::fs::{File, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
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
    /// The lock's directory can be written by someone other than this process's user (or
    /// root): journals there could be planted to make a root revert write what they say.
    #[error("{dir} {why}; refusing to keep journals and locks there")]
    Untrusted {
        /// The directory.
        dir: PathBuf,
        /// What is wrong with it: its owner or mode.
        why: String,
    },
}

/// Whether a directory with this owner and mode may hold journals and locks for a process
/// whose effective uid is `euid`: owned by that user or by root, and writable by no one else
/// (group or other write without the sticky bit). `None` when it may.
pub fn untrusted(owner: u32, mode: u32, euid: u32) -> Option<String> {
    if owner != euid && owner != 0 {
        return Some(format!("belongs to uid {owner}, not to uid {euid} or root"));
    }
    let shared = mode & 0o022 != 0 && mode & 0o1000 == 0;
    shared.then(|| format!("is writable by other users (mode {:04o})", mode & 0o7777))
}

/// Refuses `dir` when it is [`untrusted`] by this process.
pub fn trusted(dir: &Path) -> Result<(), LockError> {
    let meta = std::fs::metadata(dir).map_err(|source| LockError::Io {
        op: "checking",
        path: dir.to_path_buf(),
        source,
    })?;
    let euid = nix::unistd::geteuid().as_raw();
    match untrusted(meta.uid(), meta.mode(), euid) {
        Some(why) => Err(LockError::Untrusted {
            dir: dir.to_path_buf(),
            why,
        }),
        None => Ok(()),
    }
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
        trusted(dir)?;
    }
    // Not through a symbolic link: the pid written below would land in its target.
    let mut file = File::options()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
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
    fn a_directory_others_can_write_or_own_is_not_trusted() {
        assert_eq!(untrusted(0, 0o40755, 0), None);
        assert_eq!(
            untrusted(1000, 0o40700, 1000),
            None,
            "a user's own directory"
        );
        assert_eq!(untrusted(0, 0o40755, 1000), None, "root's, for a user");
        assert_eq!(untrusted(0, 0o41777, 0), None, "sticky, like /tmp");
        let e = untrusted(1000, 0o40755, 0).unwrap();
        assert!(e.contains("uid 1000"), "{e}");
        let e = untrusted(0, 0o40777, 0).unwrap();
        assert!(e.contains("mode 0777"), "{e}");
        assert!(untrusted(0, 0o40775, 0).is_some(), "group-writable");
    }

    #[test]
    fn a_lock_file_that_is_a_symbolic_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        std::fs::write(&target, "keep me\n").unwrap();
        let path = dir.path().join("change.lock");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let e = MachineLock::try_take(&path).unwrap_err();
        assert!(matches!(e, LockError::Io { op: "opening", .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");
    }

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
