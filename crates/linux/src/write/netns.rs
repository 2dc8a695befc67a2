//! Entering a named network namespace for the rest of the process, as `ip netns exec` does:
//! a private mount namespace, `setns` into `/run/netns/<name>`, and a fresh sysfs so
//! `/sys/class/net` lists that namespace's devices. `/proc/sys/net` follows the network
//! namespace by itself.
//!
//! Must run while the process has one thread (before any progress bar or worker starts).

use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::sched::{setns, unshare, CloneFlags};
use std::fs::File;
use std::path::PathBuf;

/// Entering a namespace failed.
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    #[error("network namespace {name:?}: {why}; allowed: a name listed by `ip netns list`")]
    BadName { name: String, why: &'static str },
    #[error("opening network namespace {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("entering network namespace {name:?} ({step}): {source}")]
    Enter {
        name: String,
        step: &'static str,
        source: nix::Error,
    },
}

/// Where `ip netns add` leaves its namespace handles.
pub const NETNS_RUN_DIR: &str = "/run/netns";

/// Moves this process into network namespace `name`.
pub fn enter(name: &str) -> Result<(), NetnsError> {
    check_name(name)?;
    let path = PathBuf::from(NETNS_RUN_DIR).join(name);
    let handle = File::open(&path).map_err(|source| NetnsError::Open { path, source })?;
    let fail = |step| {
        move |source| NetnsError::Enter {
            name: name.to_string(),
            step,
            source,
        }
    };
    unshare(CloneFlags::CLONE_NEWNS).map_err(fail("unshare mounts"))?;
    let private = MsFlags::MS_SLAVE | MsFlags::MS_REC;
    mount(None::<&str>, "/", None::<&str>, private, None::<&str>).map_err(fail("make / slave"))?;
    setns(&handle, CloneFlags::CLONE_NEWNET).map_err(fail("setns"))?;
    // /sys may not be mounted at all in a minimal container; then there is nothing to hide.
    let _ = umount2("/sys", MntFlags::MNT_DETACH);
    mount(
        Some("sysfs"),
        "/sys",
        Some("sysfs"),
        MsFlags::empty(),
        None::<&str>,
    )
    .map_err(fail("mount sysfs"))?;
    Ok(())
}

/// A plain file name: no path separators, not `.`/`..`.
pub fn check_name(name: &str) -> Result<(), NetnsError> {
    let why = if name.is_empty() {
        "empty"
    } else if name.contains('/') || name == "." || name == ".." {
        "not a plain name"
    } else {
        return Ok(());
    };
    Err(NetnsError::BadName {
        name: name.to_string(),
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_file_names() {
        assert!(check_name("nictune-apply-1").is_ok());
        let err = check_name("../etc").unwrap_err().to_string();
        assert_eq!(
            err,
            "network namespace \"../etc\": not a plain name; allowed: a name listed by `ip netns list`"
        );
        assert!(check_name("").is_err());
    }
}
