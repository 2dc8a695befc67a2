//! Entering a named network namespace the way `ip netns exec` does: join the namespace,
//! then give this process a private mount namespace with a fresh `/sys`, so that
//! `/sys/class/net` lists the namespace's interfaces. `/proc/net/*` follows the namespace by
//! itself. Needs root (CAP_SYS_ADMIN); call before opening any netlink socket and before
//! starting threads.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Where `ip netns add NAME` keeps the namespace handle.
pub const NETNS_RUN_DIR: &str = "/run/netns";

/// A failure to enter a namespace, naming the step.
#[derive(Debug, thiserror::Error)]
#[error("entering network namespace {name:?}: {step}: {source}")]
pub struct NetnsError {
    pub name: String,
    pub step: &'static str,
    #[source]
    pub source: io::Error,
}

/// Moves the calling (single-threaded) process into network namespace `name`.
pub fn enter(name: &str) -> Result<(), NetnsError> {
    let fail = |step: &'static str, source: io::Error| NetnsError {
        name: name.to_string(),
        step,
        source,
    };
    let file =
        File::open(format!("{NETNS_RUN_DIR}/{name}")).map_err(|e| fail("opening the handle", e))?;
    // SAFETY: setns on a descriptor we hold open; the result is checked.
    check(unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) })
        .map_err(|e| fail("setns", e))?;
    // SAFETY: unshare only affects this process; the result is checked.
    check(unsafe { libc::unshare(libc::CLONE_NEWNS) }).map_err(|e| fail("unshare mounts", e))?;
    let root = c("/");
    let sys = c("/sys");
    let sysfs = c("sysfs");
    // SAFETY: all pointers are valid NUL-terminated strings that outlive the calls.
    unsafe {
        check(libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_SLAVE | libc::MS_REC,
            std::ptr::null(),
        ))
        .map_err(|e| fail("making / a slave mount", e))?;
        check(libc::umount2(sys.as_ptr(), libc::MNT_DETACH))
            .map_err(|e| fail("unmounting /sys", e))?;
        check(libc::mount(
            sysfs.as_ptr(),
            sys.as_ptr(),
            sysfs.as_ptr(),
            0,
            std::ptr::null(),
        ))
        .map_err(|e| fail("mounting sysfs", e))?;
    }
    Ok(())
}

/// Moves only the calling thread's network context into namespace `name` (setns without the
/// mount dance): netlink sockets it opens afterwards talk to that namespace. For threads of a
/// multi-threaded process, such as tests, where [`enter`] cannot unshare mounts.
pub fn enter_thread(name: &str) -> Result<(), NetnsError> {
    let fail = |step: &'static str, source: io::Error| NetnsError {
        name: name.to_string(),
        step,
        source,
    };
    let file =
        File::open(format!("{NETNS_RUN_DIR}/{name}")).map_err(|e| fail("opening the handle", e))?;
    // SAFETY: setns on a descriptor we hold open; the result is checked.
    check(unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) })
        .map_err(|e| fail("setns", e))
}

fn c(s: &str) -> CString {
    CString::new(s).expect("no NUL in a constant")
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
