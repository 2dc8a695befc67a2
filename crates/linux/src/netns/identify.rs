//! Which network namespace the calling thread runs in, the way `ip netns identify` tells it:
//! a namespace is known by its `nsfs` inode, so `/proc/thread-self/ns/net` is compared (device
//! and inode) with the host's handles ([`super::INIT_NETNS`]) and with every name under
//! `/run/netns`.
//!
//! A change is journaled with the namespace it was made in, so that `nictune revert` run from
//! anywhere can go there ([`journal_name`]). A process started with `ip netns exec NAME`, or
//! spawned into a namespace by a testbed, did not pass `--netns`; without this it would
//! journal "the initial namespace", and a revert from the host would write the old values to
//! the host's interface of the same name.

use super::{named, NetnsError, INIT_NETNS};
use std::io;
use std::os::unix::fs::MetadataExt;

/// Where the calling thread's network namespace is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Current {
    /// The host's own namespace (PID 1's). Also reported when the host's handles cannot be
    /// read (no root) and no name matches: then nothing better is known, and changing
    /// anything needs root anyway.
    Initial,
    /// A namespace with a handle `/run/netns/NAME`.
    Named(String),
    /// Another namespace, with no name: one made by `unshare -n` or a container runtime
    /// that keeps its handle elsewhere.
    Unnamed,
}

/// The device and inode that identify a namespace handle.
fn ns_id(path: &str) -> io::Result<(u64, u64)> {
    let meta = std::fs::metadata(path)?;
    Ok((meta.dev(), meta.ino()))
}

/// The calling thread's network namespace.
pub fn current() -> Result<Current, NetnsError> {
    let own = ns_id("/proc/thread-self/ns/net").map_err(|e| NetnsError {
        action: "identifying",
        name: "of this thread".into(),
        step: "reading /proc/thread-self/ns/net",
        source: e,
    })?;
    let initial = INIT_NETNS.iter().find_map(|p| ns_id(p).ok());
    if initial == Some(own) {
        return Ok(Current::Initial);
    }
    for name in named::list()? {
        let handle = named::path(&name);
        if handle.to_str().and_then(|p| ns_id(p).ok()) == Some(own) {
            return Ok(Current::Named(name));
        }
    }
    Ok(match initial {
        Some(_) => Current::Unnamed,
        None => Current::Initial,
    })
}

/// Journaling a change needs to know where it is made, and could not.
#[derive(Debug, thiserror::Error)]
pub enum JournalNetnsError {
    /// This thread runs in a namespace without a name: a revert could not enter it.
    #[error(
        "this process runs in a network namespace that has no name under /run/netns, so a \
         later `nictune revert` could not enter it to restore the values"
    )]
    Unnamed,
    /// Finding the namespace failed.
    #[error(transparent)]
    Identify(#[from] NetnsError),
}

/// The namespace a change made by the calling thread is journaled under: `explicit` (the
/// `--netns` it entered), else the one it runs in — `None` for the host's own namespace,
/// the name of a named one. A namespace with no name is refused: its values could never be
/// restored from outside.
pub fn journal_name(explicit: Option<&str>) -> Result<Option<String>, JournalNetnsError> {
    if let Some(name) = explicit {
        return Ok(Some(name.to_string()));
    }
    match current()? {
        Current::Initial => Ok(None),
        Current::Named(name) => Ok(Some(name)),
        Current::Unnamed => Err(JournalNetnsError::Unnamed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netns::{delete, run_in};

    /// Root and the host's handles: what identifying a namespace needs.
    fn skip() -> Option<&'static str> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Some("needs root (namespaces)");
        }
        if INIT_NETNS.iter().all(|p| ns_id(p).is_err()) {
            return Some("the host's namespace handle cannot be read here");
        }
        None
    }

    #[test]
    fn the_test_process_runs_in_the_initial_namespace() {
        if let Some(why) = skip() {
            return nictune_core::live::skip(why);
        }
        assert_eq!(current().unwrap(), Current::Initial);
        assert_eq!(journal_name(None).unwrap(), None);
        assert_eq!(journal_name(Some("x")).unwrap().as_deref(), Some("x"));
    }

    #[test]
    fn a_thread_in_a_named_namespace_journals_its_name_and_an_unnamed_one_is_refused() {
        if let Some(why) = skip() {
            return nictune_core::live::skip(why);
        }
        let name = format!("nictune-ident-{}", std::process::id());
        crate::netns::create(&name).unwrap();
        let inside = run_in(&name, || (current(), journal_name(None)));
        let unnamed = std::thread::spawn(|| {
            // SAFETY: unshare affects only this new thread, which ends right after.
            let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
            assert_eq!(rc, 0, "{}", io::Error::last_os_error());
            (current().unwrap(), journal_name(None))
        })
        .join()
        .unwrap();
        delete(&name).unwrap();
        let (here, journaled) = inside.unwrap();
        assert_eq!(here.unwrap(), Current::Named(name.clone()));
        assert_eq!(journaled.unwrap(), Some(name));
        assert_eq!(unnamed.0, Current::Unnamed);
        assert!(matches!(unnamed.1, Err(JournalNetnsError::Unnamed)));
    }
}
