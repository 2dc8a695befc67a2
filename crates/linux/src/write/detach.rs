//! Starting a process that outlives the terminal: the auto-revert watchdog.
//!
//! The child runs with stdin from /dev/null and its output appended to a log file, and calls
//! [`become_session_leader`] first thing: in a session of its own it has no controlling
//! terminal, so closing the SSH session or the terminal sends it no SIGHUP.

use std::fs::OpenOptions;
use std::path::Path;
use std::process::{Command, Stdio};

/// Starts `program args…` detached from our standard streams; returns its pid.
pub fn spawn_detached(program: &Path, args: &[String], log: &Path) -> std::io::Result<u32> {
    let out = OpenOptions::new().create(true).append(true).open(log)?;
    let err = out.try_clone()?;
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()?;
    Ok(child.id())
}

/// Leaves the terminal's session (call first thing in the detached child).
pub fn become_session_leader() -> Result<(), nix::Error> {
    nix::unistd::setsid().map(|_| ())
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
