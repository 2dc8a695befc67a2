//! Starting a process that outlives the terminal: the auto-revert watchdog.
//!
//! The child runs with stdin from /dev/null and its output appended to a log file, in a
//! process group of its own from the moment it exists, so a Ctrl-C or a hang-up sent to the
//! terminal's foreground group never reaches it, and closing the SSH session or the
//! terminal sends it no SIGHUP ([`become_session_leader`] is kept for a child started
//! otherwise: it leaves the terminal's session).
//!
//! Where systemd runs the machine, [`spawn_detached_scoped`] also takes the child out of the
//! caller's control group into a transient scope of its own: logind ends every process of a
//! login session's scope when the session closes if `KillUserProcesses=yes`, and systemd
//! ends every process of a service's group when the service stops (`KillMode=control-group`,
//! the default) — an `apply` run from a script in a unit would otherwise lose its watchdog
//! the moment the script ended.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `program args…` detached from our standard streams; returns its pid.
pub fn spawn_detached(program: &Path, args: &[String], log: &Path) -> std::io::Result<u32> {
    Ok(detached(Command::new(program).args(args), log)?.id())
}

/// The log opened for a child's output, not through a symbolic link planted in the state
/// directory.
fn open_log(log: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(log)
}

/// Spawns `command` in a process group of its own, stdin from /dev/null, output to `log`.
fn detached(command: &mut Command, log: &Path) -> std::io::Result<Child> {
    let out = open_log(log)?;
    let err = out.try_clone()?;
    // Its own process group from the start: a Ctrl-C or hang-up sent to the terminal's
    // group between this spawn and the child's setsid() must not reach it.
    command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
}

/// How a detached child left the caller's control group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// In the transient scope unit of this name (`systemd-run --scope`).
    Scope(String),
    /// Not moved: systemd does not run the machine, or `systemd-run` is missing or failed
    /// (its words are in the log), so the child shares the caller's control group.
    Caller,
}

/// As [`spawn_detached`], but where systemd runs the machine ([`systemd_run`] finds its
/// `systemd-run`) the child runs in a transient scope `unit` of its own, so that closing the
/// login session or stopping the service that ran the caller does not end it. `systemd-run
/// --scope` registers its own pid as the scope and then executes `program`, so the pid
/// returned is the child's either way. When the scope cannot be made (systemd-run exits
/// before executing `program`, or has not within `SCOPE_WAIT`), the child is started as
/// [`spawn_detached`] starts it.
pub fn spawn_detached_scoped(
    program: &Path,
    args: &[String],
    log: &Path,
    unit: &str,
    systemd_run: Option<&Path>,
) -> std::io::Result<(u32, Placement)> {
    spawn_scoped_with(program, args, log, (unit, systemd_run), in_cgroup)
}

/// [`spawn_detached_scoped`], with `placed(pid, scope)` telling whether the child is in the
/// scope.
fn spawn_scoped_with(
    program: &Path,
    args: &[String],
    log: &Path,
    (unit, systemd_run): (&str, Option<&Path>),
    placed: impl Fn(u32, &str) -> bool,
) -> std::io::Result<(u32, Placement)> {
    if let Some(run) = systemd_run {
        let mut command = Command::new(run);
        command
            .args(["--scope", "--quiet", "--collect"])
            .arg(format!("--unit={unit}"))
            .arg("--description=nictune auto-revert watchdog")
            .arg("--")
            .arg(program)
            .args(args);
        if let Ok(mut child) = detached(&mut command, log) {
            let scope = format!("{unit}.scope");
            let in_scope = |pid: u32| placed(pid, &scope);
            if runs_placed(&mut child, program, SCOPE_WAIT, in_scope) {
                return Ok((child.id(), Placement::Scope(scope)));
            }
        }
    }
    Ok((spawn_detached(program, args, log)?, Placement::Caller))
}

/// How long `systemd-run --scope` may take to register the scope over D-Bus and execute the
/// child: it answers in milliseconds where systemd is healthy.
const SCOPE_WAIT: Duration = Duration::from_secs(5);

/// Whether process `pid` is in the control group whose last path element is `name`.
fn in_cgroup(pid: u32, name: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|g| names_cgroup(&g, name))
}

/// Whether a `/proc/PID/cgroup` text (`ID:CONTROLLERS:PATH` lines, v1 or v2) places the
/// process in a group named `name` in any hierarchy.
fn names_cgroup(groups: &str, name: &str) -> bool {
    !name.is_empty()
        && groups
            .lines()
            .filter_map(|l| l.splitn(3, ':').nth(2))
            .any(|path| path.rsplit('/').next() == Some(name))
}

/// Waits until `child`, started through a launcher, is `program` and `placed` says it sits
/// where the launcher was to put it. The launcher moves it first and executes `program`
/// after, and before the launcher's own execution the child is a copy of this process (it
/// may well be the same program), so only both together prove the launcher did its job.
/// `false` — after ending the child, which is ours — when it exited first or has not got
/// there within `wait`.
fn runs_placed(
    child: &mut Child,
    program: &Path,
    wait: Duration,
    placed: impl Fn(u32) -> bool,
) -> bool {
    let program = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    let pid = child.id();
    let started = Instant::now();
    loop {
        if !matches!(child.try_wait(), Ok(None)) {
            return false; // exited (and reaped), or cannot be waited for
        }
        let exe = std::fs::read_link(format!("/proc/{pid}/exe"));
        if placed(pid) && exe.is_ok_and(|e| e == program) {
            return true;
        }
        if started.elapsed() >= wait {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The `systemd-run` to start a scope with, when systemd runs the machine: `/run/systemd/system`
/// exists (what `sd_booted()` tests) and a `systemd-run` is found on `PATH`.
pub fn systemd_run() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    systemd_run_in(Path::new("/run/systemd/system"), &path)
}

/// [`systemd_run`] with the marker directory and the search path given.
fn systemd_run_in(booted: &Path, path: &std::ffi::OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if !booted.is_dir() {
        return None;
    }
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("systemd-run"))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
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

/// Time since boot on `CLOCK_BOOTTIME`: never stepped (NTP, `date -s`), and counting a
/// suspend, so a deadline measured on it passes while the machine sleeps, as on the wall
/// clock, but does not move when the wall clock is set.
#[allow(unsafe_code)]
pub fn boot_clock() -> std::time::Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into memory we own; CLOCK_BOOTTIME exists on
    // every kernel nictune supports (2.6.39+), so it cannot fail with valid arguments.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_BOOTTIME) failed");
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
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

    /// A stand-in `systemd-run` in `dir`: records its arguments in `dir/argv`, then either
    /// executes what follows `--` (as `--scope` does once the scope exists) or fails.
    fn fake_systemd_run(dir: &Path, works: bool) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let run = dir.join("systemd-run");
        let tail = match works {
            true => "while [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"",
            false => "echo 'Failed to start transient scope unit' >&2; exit 1",
        };
        let argv = dir.join("argv");
        let script = format!("#!/bin/sh\necho \"$@\" > '{}'\n{tail}\n", argv.display());
        std::fs::write(&run, script).unwrap();
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).unwrap();
        run
    }

    /// The command name of `pid` once it executed `name` (spawn returns as soon as the
    /// child's memory is its own, a moment before the kernel renames it).
    fn comm_once(pid: u32, name: &str) -> String {
        let read = || std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        for _ in 0..1000 {
            if read().trim_end() == name {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        read().trim_end().to_string()
    }

    /// Ends a child of this test, by its pid.
    fn end(pid: u32) {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }

    /// Through `systemd-run --scope`, the pid returned runs the program itself, and the
    /// scope is asked for by name.
    #[test]
    fn a_scoped_child_is_the_program_under_the_launchers_pid() {
        let dir = tempfile::tempdir().unwrap();
        let run = fake_systemd_run(dir.path(), true);
        let log = dir.path().join("log");
        let args = ["30".to_string()];
        let sleep = Path::new("/bin/sleep");
        // The stand-in cannot move a process between control groups; its record of the
        // arguments, written before it executes the program, stands for the move.
        let moved = |_: u32, scope: &str| {
            scope == "nictune-watchdog-1.scope" && dir.path().join("argv").exists()
        };
        let unit = ("nictune-watchdog-1", Some(run.as_path()));
        let (pid, placed) = spawn_scoped_with(sleep, &args, &log, unit, moved).unwrap();
        let comm = comm_once(pid, "sleep");
        end(pid);
        assert_eq!(comm, "sleep");
        assert_eq!(placed, Placement::Scope("nictune-watchdog-1.scope".into()));
        let argv = std::fs::read_to_string(dir.path().join("argv")).unwrap();
        assert!(
            argv.starts_with("--scope --quiet --collect --unit=nictune-watchdog-1 "),
            "{argv}"
        );
        assert!(argv.trim_end().ends_with("-- /bin/sleep 30"), "{argv}");
    }

    /// A `systemd-run` that cannot make the scope (no D-Bus, a unit of that name) must not
    /// leave the caller without its child: it is started directly, and the log keeps
    /// systemd-run's words.
    #[test]
    fn without_a_scope_the_child_is_started_directly() {
        let dir = tempfile::tempdir().unwrap();
        let run = fake_systemd_run(dir.path(), false);
        let log = dir.path().join("log");
        let args = ["30".to_string()];
        let sleep = Path::new("/bin/sleep");
        let unit = ("nictune-watchdog-2", Some(run.as_path()));
        let (pid, placed) = spawn_scoped_with(sleep, &args, &log, unit, |_, _| true).unwrap();
        let comm = comm_once(pid, "sleep");
        end(pid);
        assert_eq!(comm, "sleep");
        assert_eq!(placed, Placement::Caller);
        let said = std::fs::read_to_string(&log).unwrap();
        assert!(
            said.contains("Failed to start transient scope unit"),
            "{said}"
        );
    }

    #[test]
    fn the_scope_is_read_from_the_process_cgroup_lines() {
        let v2 = "0::/system.slice/nictune-watchdog-1.scope\n";
        assert!(names_cgroup(v2, "nictune-watchdog-1.scope"));
        assert!(
            !names_cgroup(v2, "nictune-watchdog-1"),
            "a prefix is not the name"
        );
        assert!(!names_cgroup(
            "0::/user.slice/session-3.scope\n",
            "nictune-watchdog-1.scope"
        ));
        let v1 = "12:pids:/\n1:name=systemd:/system.slice/nictune-watchdog-1.scope\n";
        assert!(names_cgroup(v1, "nictune-watchdog-1.scope"));
        assert!(!names_cgroup("0::/\n", ""), "the root is no scope");
    }

    /// systemd-run is used only where systemd runs the machine, and only from an absolute
    /// directory of the search path.
    #[test]
    fn systemd_run_is_looked_for_only_where_systemd_booted_the_machine() {
        let booted = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        let run = fake_systemd_run(bin.path(), true);
        let path = std::env::join_paths(["relative/dir".as_ref(), bin.path()]).unwrap();
        assert_eq!(systemd_run_in(booted.path(), &path), Some(run));
        let gone = booted.path().join("system");
        assert_eq!(
            systemd_run_in(&gone, &path),
            None,
            "not booted with systemd"
        );
        let elsewhere = std::env::join_paths(["relative/dir"]).unwrap();
        assert_eq!(systemd_run_in(booted.path(), &elsewhere), None);
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
