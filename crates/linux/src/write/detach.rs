//! Starting a process that outlives the terminal: the auto-revert watchdog.
//!
//! The child runs with stdin from /dev/null and its output appended to a log file, in a
//! process group of its own from the moment it exists, so a Ctrl-C or a hang-up sent to the
//! terminal's foreground group never reaches it, and closing the SSH session or the
//! terminal sends it no SIGHUP ([`become_session_leader`] is kept for a child started
//! otherwise: it leaves the terminal's session).

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// Starts `program args…` detached from our standard streams; returns its pid.
pub fn spawn_detached(program: &Path, args: &[String], log: &Path) -> std::io::Result<u32> {
    // Not through a symbolic link planted in the state directory.
    let out = OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(log)?;
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
    alive_at(pid, u64::MAX)
}

/// Slack when comparing a process's start with a time it journaled: /proc/stat's `btime` has
/// 1 s resolution, and the wall clock may have been stepped (NTP) since the journal was
/// written. A pid reused within a minute of its process's death is not told apart.
pub const START_SLACK_MS: u64 = 60_000;

/// Whether `pid` is alive *and* is the process that was already running at `seen_unix_ms`, a
/// time that process journaled (a transaction's start, a tune's mark): a process holding the
/// pid that started later is another one reusing it, and the journaled one is gone. Where
/// the start cannot be read, the pid alone decides, as in [`alive`].
pub fn alive_at(pid: u32, seen_unix_ms: u64) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // After the parenthesised command name: field 3 (the state; Z is a zombie) first, and
    // field 22 (the start, in clock ticks after boot) twentieth.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return false;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields.first().is_none_or(|s| *s == "Z" || *s == "X") {
        return false;
    }
    if seen_unix_ms == u64::MAX {
        return true; // the pid alone: no need for the start (nor /proc/stat)
    }
    let started = fields
        .get(19)
        .and_then(|t| t.parse::<u64>().ok())
        .and_then(boot_ticks_to_unix_ms);
    started.is_none_or(|ms| ms <= seen_unix_ms.saturating_add(START_SLACK_MS))
}

/// Whether `pid` is alive and is the process that made `made` (a namespace handle under
/// /run/netns, a directory): it started no later than the file's modification time, which
/// is the file's creation or later. A process holding the pid that started afterwards
/// reuses the pid of a creator that is gone. Where the file cannot be read, the pid alone
/// decides.
pub fn alive_as_maker_of(pid: u32, made: &Path) -> bool {
    let seen = std::fs::metadata(made)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(u64::MAX, |d| d.as_millis() as u64);
    alive_at(pid, seen)
}

/// A time in clock ticks after boot (`/proc/PID/stat` field 22) as Unix milliseconds, from
/// /proc/stat's `btime` and `sysconf(_SC_CLK_TCK)`.
#[allow(unsafe_code)]
fn boot_ticks_to_unix_ms(ticks: u64) -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let btime: u64 = stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf reads a constant; no memory access.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = u64::try_from(hz).ok().filter(|&h| h > 0)?;
    Some(btime.saturating_mul(1000) + ticks.saturating_mul(1000) / hz)
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

    /// A journal written long before this process started names another process that had
    /// its pid: that one is gone.
    #[test]
    fn a_process_that_started_after_the_journaled_time_is_another_one() {
        let me = std::process::id();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        assert!(alive_at(me, now), "running at this moment");
        assert!(alive_at(me, u64::MAX));
        let started = boot_ticks_to_unix_ms(0).unwrap();
        assert!(started <= now, "booted before now");
        assert!(
            !alive_at(me, started),
            "the machine's boot predates this process"
        );
        assert!(!alive_at(me, 0), "1970");
        assert!(!alive_at(4_194_305, u64::MAX));
    }

    #[test]
    fn the_maker_of_a_file_started_before_it_was_made() {
        let me = std::process::id();
        let made = tempfile::NamedTempFile::new().unwrap();
        assert!(alive_as_maker_of(me, made.path()), "made by this process");
        assert!(
            alive_as_maker_of(me, Path::new("/nonexistent/x")),
            "pid alone"
        );
        let old = std::fs::File::options()
            .write(true)
            .open(made.path())
            .unwrap();
        old.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1))
            .unwrap();
        assert!(
            !alive_as_maker_of(me, made.path()),
            "made in 1970: not by me"
        );
        assert!(!alive_as_maker_of(4_194_305, Path::new("/")));
    }
}
