//! Starting a process that outlives the terminal: the auto-revert watchdog.
//!
//! The child runs with stdin from /dev/null and its output appended to a log file, in a
//! process group of its own from the moment it exists, so a Ctrl-C or a hang-up sent to the
//! terminal's foreground group never reaches it, and closing the SSH session or the
//! terminal sends it no SIGHUP ([`become_session_leader`] is kept for a child started
//! otherwise: it leaves the terminal's session).

use std::fs::OpenOptions;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// Starts `program args…` detached from our standard streams; returns its pid.
pub fn spawn_detached(program: &Path, args: &[String], log: &Path) -> std::io::Result<u32> {
    let out = OpenOptions::new().create(true).append(true).open(log)?;
    let err = out.try_clone()?;
    // Its own process group from the start: a Ctrl-C or hang-up sent to the terminal's
    // group between this spawn and the child's setsid() must not reach it.
    let child = Command::new(program)
        .args(args)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()?;
    Ok(child.id())
}

/// Leaves the terminal's session (call first thing in the detached child). A child that
/// [`spawn_detached`] started already leads its own process group, where setsid() answers
/// EPERM: that group alone keeps the terminal's signals away, so it counts as done.
pub fn become_session_leader() -> Result<(), nix::Error> {
    use nix::unistd::{getpgrp, getpid, setsid};
    match setsid() {
        Err(nix::Error::EPERM) if getpgrp() == getpid() => Ok(()),
        other => other.map(|_| ()),
    }
}

/// Whether a process with this pid exists (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // Field 3, after the parenthesised command name, is the state; Z is a zombie.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    state.is_some_and(|s| s != "Z" && s != "X")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_an_unused_pid_is_not() {
        assert!(alive(std::process::id()));
        // Above the kernel's PID_MAX_LIMIT (4 194 304), so never a real process.
        assert!(!alive(4_194_305));
    }
}
