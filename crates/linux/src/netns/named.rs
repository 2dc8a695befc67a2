//! Named network namespaces as `ip netns add/del/list` keep them, without iproute2:
//! `/run/netns/NAME` is a bind mount of a namespace's `nsfs` handle, which keeps the
//! namespace alive with no process in it, and which `ip netns` and every other tool see.
//!
//! - [`create`]: makes `/run/netns` a shared mount point (see below), creates the empty file
//!   `NAME`, and on a short-lived thread of its own calls `unshare(CLONE_NEWNET)` and
//!   bind-mounts that thread's `/proc/thread-self/ns/net` onto the file. Only that thread
//!   ever changes namespace; the caller and every other thread stay where they are.
//! - [`delete`]: `umount2(MNT_DETACH)` and unlink; the namespace goes when its last user
//!   does (its interfaces with it: a veth pair dies with either end).
//! - [`run_in`]: runs a closure on a new thread that joined the namespace (`setns`), so
//!   netlink sockets it opens, sysctls it writes under `/proc/sys/net` and processes it
//!   spawns belong to that namespace.
//!
//! Mount propagation: `/run/netns` is made a mount point of its own (bound onto itself when
//! it is a plain directory) and marked `MS_SHARED`, as iproute2 does. A process that later
//! unshares its mount namespace (as [`super::enter`] does, with `/` as a slave) then still
//! sees namespaces created afterwards, and [`delete`]'s unmount reaches its copy, so the
//! handle neither goes missing there nor keeps a deleted namespace alive.
#![allow(unsafe_code)]

use super::{check, failure_of, NetnsError, NETNS_RUN_DIR};
use std::ffi::CString;
use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// `/run/netns/NAME`.
pub fn path(name: &str) -> PathBuf {
    Path::new(NETNS_RUN_DIR).join(name)
}

/// True when `/run/netns/NAME` exists.
pub fn exists(name: &str) -> bool {
    path(name).exists()
}

/// The names under `/run/netns`, sorted; none when the directory does not exist.
pub fn list() -> Result<Vec<String>, NetnsError> {
    let dir = match fs::read_dir(NETNS_RUN_DIR) {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(failure_of("listing", NETNS_RUN_DIR)(
                "reading the directory",
                e,
            ))
        }
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names)
}

/// Creates network namespace `name` (`ip netns add NAME`) and returns its handle's path.
/// Fails if it exists. The new namespace has only `lo`, down. Needs root. The handle is
/// mounted in the calling thread's mount namespace: call it from a thread that has not
/// unshared its mounts (not from inside [`super::enter`]), so every process sees it.
pub fn create(name: &str) -> Result<PathBuf, NetnsError> {
    let fail = failure_of("creating", name);
    check_name(name).map_err(|e| fail("checking the name", e))?;
    share_run_dir().map_err(|e| fail("preparing /run/netns", e))?;
    let handle = path(name);
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o000)
        .open(&handle)
        .map_err(|e| fail("creating the handle file", e))?;
    let made = std::thread::scope(|s| {
        std::thread::Builder::new()
            .name(format!("netns add {name}"))
            .spawn_scoped(s, || unshare_and_bind(&handle))
            .map_err(|e| ("starting its thread", e))?
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    });
    if let Err((step, e)) = made {
        let _ = fs::remove_file(&handle);
        return Err(fail(step, e));
    }
    Ok(handle)
}

/// Deletes network namespace `name` (`ip netns del NAME`): true when it existed, false when
/// there was nothing to delete.
pub fn delete(name: &str) -> Result<bool, NetnsError> {
    let fail = failure_of("deleting", name);
    check_name(name).map_err(|e| fail("checking the name", e))?;
    let handle = path(name);
    if fs::symlink_metadata(&handle).is_err() {
        return Ok(false);
    }
    let target = c_path(&handle).map_err(|e| fail("naming the handle", e))?;
    // SAFETY: `target` is a valid NUL-terminated path that outlives the call; checked.
    match check(unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) }) {
        // EINVAL: not a mount point (a half-created handle); unlinking is all that is left.
        Err(e) if e.raw_os_error() != Some(libc::EINVAL) => return Err(fail("unmounting", e)),
        _ => {}
    }
    match fs::remove_file(&handle) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(fail("removing the handle", e)),
        _ => Ok(true),
    }
}

/// Runs `f` on a new thread inside network namespace `name` and returns what it returns.
/// Only that thread joins the namespace (`setns(CLONE_NEWNET)`): sockets it opens (netlink
/// included), `/proc/sys/net` files it writes and processes it spawns belong to `name`. Its
/// mount namespace is the caller's, so `/sys/class/net` still shows the caller's interfaces.
/// A panic in `f` is resumed on the caller.
pub fn run_in<R: Send>(name: &str, f: impl FnOnce() -> R + Send) -> Result<R, NetnsError> {
    std::thread::scope(|s| {
        let body = || super::enter_thread(name).map(|()| f());
        std::thread::Builder::new()
            .name(format!("in netns {name}"))
            .spawn_scoped(s, body)
            .map_err(|e| failure_of("entering", name)("starting a thread", e))?
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// The project's one rule for namespace names ([`nictune_core::names::check_netns`]): a
/// subset of what `ip netns` accepts that is also safe in paths and generated files.
pub(super) fn check_name(name: &str) -> io::Result<()> {
    nictune_core::names::check_netns(name)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

/// Makes `/run/netns` exist and be a shared mount point: marks it `MS_SHARED`, and when it
/// is not a mount point yet (EINVAL) binds it onto itself first.
fn share_run_dir() -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(NETNS_RUN_DIR)?;
    let dir = c_path(Path::new(NETNS_RUN_DIR))?;
    match mount(None, &dir, libc::MS_SHARED | libc::MS_REC) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            mount(Some(&dir), &dir, libc::MS_BIND | libc::MS_REC)?;
            mount(None, &dir, libc::MS_SHARED | libc::MS_REC)
        }
        other => other,
    }
}

/// On the calling thread: a new network namespace, bound onto `handle`.
fn unshare_and_bind(handle: &Path) -> Result<(), (&'static str, io::Error)> {
    // SAFETY: unshare takes no pointers and affects only the calling thread, which
    // `create` started for this and nothing else; checked.
    check(unsafe { libc::unshare(libc::CLONE_NEWNET) }).map_err(|e| ("unshare", e))?;
    let own = c_path(Path::new("/proc/thread-self/ns/net")).map_err(|e| ("naming", e))?;
    let target = c_path(handle).map_err(|e| ("naming", e))?;
    mount(Some(&own), &target, libc::MS_BIND).map_err(|e| ("bind-mounting the handle", e))
}

/// `mount(source, target, "none", flags, NULL)`: a bind (`source`) or a propagation change.
fn mount(source: Option<&CString>, target: &CString, flags: libc::c_ulong) -> io::Result<()> {
    let none = c"none";
    let source = source.map_or(c"".as_ptr(), |s| s.as_ptr());
    // SAFETY: every pointer is a valid NUL-terminated string that outlives the call, and
    // the data argument may be null; checked.
    check(unsafe {
        libc::mount(
            source,
            target.as_ptr(),
            none.as_ptr(),
            flags,
            std::ptr::null(),
        )
    })
}

fn c_path(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #15: this check allowed spaces and 255 bytes where `show --netns` and `apply
    /// --netns` refused them; now every path takes the one rule in `nictune_core::names`.
    #[test]
    fn names_follow_the_one_netns_rule() {
        for bad in ["", ".", "..", "a/b", "/x", "a b", "-x", "a\0b"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name(&"x".repeat(65)).is_err());
        assert!(check_name(&"x".repeat(64)).is_ok());
        assert!(check_name("nictune-tb-1-0-c").is_ok());
        let err = create("a b").unwrap_err().to_string();
        assert!(err.contains("allowed: 1-64 ASCII letters"), "{err}");
    }

    #[test]
    fn errors_name_the_action_the_namespace_and_the_step() {
        let e = create("a/b").unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("creating network namespace \"a/b\": checking the name"));
    }
}
