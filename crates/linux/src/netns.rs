//! Entering a named network namespace the way `ip netns exec` does: join the namespace,
//! then give this process a private mount namespace with a fresh `/sys`, so that
//! `/sys/class/net` lists the namespace's interfaces. `/proc/net/*` follows the namespace by
//! itself. Needs root (CAP_SYS_ADMIN); call before opening any netlink socket and before
//! starting threads.
//!
//! Named namespaces themselves (`ip netns add/del/list`, running a closure inside one on its
//! own thread) are in [`named`]; which one this thread runs in (`ip netns identify`) in
//! [`identify`]; per-namespace sysctls in [`sysctl`]; a program started inside one with
//! [`spawn_in`].
#![allow(unsafe_code)]

pub mod identify;
pub mod named;
pub mod sysctl;

pub use identify::{current, journal_name, Current, JournalNetnsError};
pub use named::{create, delete, exists, list, path, run_in};

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

/// Where `ip netns add NAME` keeps the namespace handle.
pub const NETNS_RUN_DIR: &str = "/run/netns";

/// A failure to create, enter, delete or use a named namespace, naming the step.
#[derive(Debug, thiserror::Error)]
#[error("{action} network namespace {name:?}: {step}: {source}")]
pub struct NetnsError {
    /// `entering`, `creating`, `deleting`, `listing`, or what was done inside it.
    pub action: &'static str,
    /// The namespace's name (under /run/netns).
    pub name: String,
    /// The system call or operation that failed (`setns`, `the handle`, `starting its thread`).
    pub step: &'static str,
    /// The error of that step.
    #[source]
    pub source: io::Error,
}

/// Moves the calling (single-threaded) process into network namespace `name`.
pub fn enter(name: &str) -> Result<(), NetnsError> {
    enter_thread(name)?;
    private_sys(&failure(name))
}

/// Whether this process runs in the host's own network namespace (PID 1's): the two
/// namespace handles name the same nsfs inode. `None` when either cannot be read (PID 1's
/// needs root).
pub fn in_init() -> Option<bool> {
    use std::os::unix::fs::MetadataExt;
    let ino = |p: &str| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    Some(ino("/proc/self/ns/net")? == ino("/proc/1/ns/net")?)
}

/// Moves the calling (single-threaded) process back into the host's own network namespace
/// ([`INIT_NETNS`]), as [`enter`] does for a named one: a revert of a change made there, run
/// from inside another namespace (`ip netns exec`), must write where the change was made.
pub fn enter_init() -> Result<(), NetnsError> {
    let fail = failure_of("entering", "of the host (PID 1's)");
    let handle = open_init().map_err(|e| fail("opening its handle", e))?;
    // SAFETY: setns on a descriptor we hold open; the result is checked.
    check(unsafe { libc::setns(handle.as_raw_fd(), libc::CLONE_NEWNET) })
        .map_err(|e| fail("setns", e))?;
    private_sys(&fail)
}

/// A private mount namespace whose `/sys` shows the network namespace just entered.
fn private_sys(fail: &impl Fn(&'static str, io::Error) -> NetnsError) -> Result<(), NetnsError> {
    // SAFETY: unshare only affects this process; the result is checked.
    check(unsafe { libc::unshare(libc::CLONE_NEWNS) }).map_err(|e| fail("unshare mounts", e))?;
    remount_sys(fail)
}

/// The handle `/run/netns/NAME` of a valid name.
fn open_named(
    name: &str,
    fail: &impl Fn(&'static str, io::Error) -> NetnsError,
) -> Result<File, NetnsError> {
    named::check_name(name).map_err(|e| fail("checking the name", e))?;
    File::open(named::path(name)).map_err(|e| fail("opening the handle", e))
}

/// The first of the host's namespace handles ([`INIT_NETNS`]) that opens.
fn open_init() -> io::Result<File> {
    INIT_NETNS
        .iter()
        .map(File::open)
        .reduce(|first, next| first.or(next))
        .unwrap_or_else(|| Err(io::ErrorKind::NotFound.into()))
}

/// Moves only the calling thread's network context into namespace `name` (setns without the
/// mount dance): netlink sockets it opens afterwards talk to that namespace. For threads of a
/// multi-threaded process, such as tests, where [`enter`] cannot unshare mounts.
pub fn enter_thread(name: &str) -> Result<(), NetnsError> {
    let fail = failure(name);
    let file = open_named(name, &fail)?;
    // SAFETY: setns on a descriptor we hold open; the result is checked.
    check(unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) })
        .map_err(|e| fail("setns", e))
}

/// Spawns `cmd` inside network namespace `name`, as `ip netns exec NAME …` would run it
/// (without its private `/sys`: the program sees the namespace's links through netlink and
/// `/proc/net`, not `/sys/class/net`). The child joins the namespace between fork and exec;
/// pre-exec steps the caller added to `cmd` before run first.
pub fn spawn_in(name: &str, cmd: &mut Command) -> Result<Child, NetnsError> {
    let fail = failure_of("running a program in", name);
    let file = open_named(name, &fail)?;
    let fd = file.as_raw_fd();
    // SAFETY: between fork and exec the closure makes only the async-signal-safe system call
    // setns, on a descriptor this function keeps open until spawn has returned.
    unsafe {
        cmd.pre_exec(move || check(libc::setns(fd, libc::CLONE_NEWNET)));
    }
    let child = cmd.spawn().map_err(|e| fail("starting it", e))?;
    drop(file);
    Ok(child)
}

/// Handles of the host's own network namespace, where host-wide sysctls such as
/// `net.core.busy_poll` are visible (a child namespace's `/proc/sys/net/core` lacks them):
/// PID 1's, and kthreadd's (PID 2), a kernel thread, which lives in the initial namespace
/// too and whose handle can be opened where an init hides its own (a sandbox's PID 1 that is
/// not dumpable refuses even root).
pub const INIT_NETNS: [&str; 2] = ["/proc/1/ns/net", "/proc/2/ns/net"];

/// Runs `f` on a new thread that joined the host's network namespace ([`INIT_NETNS`]) and
/// returns what it returns: reads that only the host's namespace can make, from a process
/// that runs in another (`ip netns exec`). Needs CAP_SYS_ADMIN over the host's namespace
/// (root in the initial user namespace).
pub fn run_in_init<R: Send>(f: impl FnOnce() -> R + Send) -> Result<R, NetnsError> {
    let fail = failure_of("entering", "of the host (PID 1's)");
    std::thread::scope(|s| {
        let body = || {
            let handle = open_init().map_err(|e| fail("opening its handle", e))?;
            // SAFETY: setns on a descriptor we hold open; it changes only this thread.
            check(unsafe { libc::setns(handle.as_raw_fd(), libc::CLONE_NEWNET) })
                .map_err(|e| fail("setns", e))?;
            Ok(f())
        };
        std::thread::Builder::new()
            .name("in the host netns".into())
            .spawn_scoped(s, body)
            .map_err(|e| fail("starting a thread", e))?
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// In a private mount namespace: stops mounts propagating back, then replaces `/sys` with a
/// sysfs of the current network namespace.
fn remount_sys(fail: &impl Fn(&'static str, io::Error) -> NetnsError) -> Result<(), NetnsError> {
    let (root, sys, sysfs) = (c"/", c"/sys", c"sysfs");
    let none = std::ptr::null();
    // SAFETY: all pointers are valid NUL-terminated strings (or null where the call allows
    // it) that outlive the calls; every result is checked.
    unsafe {
        check(libc::mount(
            none,
            root.as_ptr(),
            none,
            libc::MS_SLAVE | libc::MS_REC,
            none.cast(),
        ))
        .map_err(|e| fail("making / a slave mount", e))?;
        check(libc::umount2(sys.as_ptr(), libc::MNT_DETACH))
            .map_err(|e| fail("unmounting /sys", e))?;
        check(libc::mount(
            sysfs.as_ptr(),
            sys.as_ptr(),
            sysfs.as_ptr(),
            0,
            none.cast(),
        ))
        .map_err(|e| fail("mounting sysfs", e))
    }
}

/// The error maker for entering namespace `name`: which step failed and why.
fn failure(name: &str) -> impl Fn(&'static str, io::Error) -> NetnsError + '_ {
    failure_of("entering", name)
}

/// The error maker for `action` on namespace `name`.
fn failure_of<'a>(
    action: &'static str,
    name: &'a str,
) -> impl Fn(&'static str, io::Error) -> NetnsError + 'a {
    move |step, source| NetnsError {
        action,
        name: name.to_string(),
        step,
        source,
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
