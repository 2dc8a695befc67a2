//! The state directory (default `/var/lib/nictune`): one journal per transaction under
//! `changes/`, and a `lock` file so only one change runs at a time. Its file operations go
//! through [`Fs`] so tests can fail any of them.
//!
//! Machine facts (the time, whether a process is alive) are arguments, so the decisions here
//! are testable without a clock or a process table.

use crate::fs::{Fs, StdFs};
use crate::journal::{
    parse_numbered, summarize_numbered, Defect, Journal, JournalError, Phase, Record, Summary,
};
use crate::lock::{self, LockError};
use crate::plan::Change;
use serde::Serialize;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The default state directory.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/nictune";
/// The environment variable that overrides it (a `--state-dir` flag overrides both).
pub const STATE_DIR_ENV: &str = "NICTUNE_STATE_DIR";

/// The word before a tune mark's start time (`started_unix_ms 1795239660000`).
const MARK_STARTED: &str = "started_unix_ms";

/// A state-directory operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A file operation failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done ("listing", "reading", …).
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The file-system error.
        source: std::io::Error,
    },
    /// The state directory cannot be written by this process (permissions, read-only mount).
    #[error("{op} {path}: the state directory is not writable ({source})")]
    NotWritable {
        /// What was being done.
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The file-system error (permission denied, read-only file system).
        source: std::io::Error,
    },
    /// The state directory's lock is held by another process.
    #[error("another nictune change is running (lock {path} is held{})", lock::by(*holder))]
    Busy {
        /// The lock file.
        path: PathBuf,
        /// The holder's pid as the lock file names it; `None` when it names none.
        holder: Option<u32>,
    },
    /// The state directory (or the machine lock's) can be written by other users.
    #[error("{dir} {why}; refusing to keep journals and locks there")]
    Untrusted {
        /// The directory.
        dir: PathBuf,
        /// Its owner or mode, and why that is wrong.
        why: String,
    },
    /// A journal could not be created, opened, written or read.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// The state directory.
#[derive(Debug, Clone)]
pub struct StateDir {
    root: PathBuf,
    fs: Arc<dyn Fs>,
}

/// Held while a change runs; released on drop.
#[derive(Debug)]
#[must_use = "the lock is released when this is dropped"]
pub struct Lock {
    _file: File,
}

/// The locks a change of the live host holds: the state directory's, then the machine-wide
/// one ([`lock::MACHINE_LOCK`]), so changes through different state directories (or two
/// tunes writing the host-wide busy-poll sysctls) take turns. Released on drop.
#[derive(Debug)]
#[must_use = "the locks are released when this is dropped"]
pub struct LiveLocks {
    /// The state directory's lock, what journal operations take as proof.
    pub state: Lock,
    _machine: lock::MachineLock,
}

/// The lines of a change's journal that were left out because nictune never writes such a
/// line (the file was edited or damaged): the file, and each line with what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct DamagedJournal {
    /// The journal file.
    pub path: PathBuf,
    /// The lines left out, in file order (at least one).
    pub defects: Vec<Defect>,
}

impl std::fmt::Display for DamagedJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "journal {}", self.path.display())?;
        for (i, d) in self.defects.iter().enumerate() {
            let sep = if i == 0 { " " } else { "; " };
            write!(f, "{sep}line {}: {}", d.line, d.problem)?;
        }
        f.write_str("; such a line was left out")
    }
}

impl StateDir {
    /// The state directory at `root`, over the real file system. Nothing is created until
    /// the first lock or journal.
    pub fn new(root: impl Into<PathBuf>) -> StateDir {
        StateDir::with_fs(root, Arc::new(StdFs))
    }

    /// A state directory whose file operations go through `fs` (tests inject failures).
    pub fn with_fs(root: impl Into<PathBuf>, fs: Arc<dyn Fs>) -> StateDir {
        StateDir {
            root: root.into(),
            fs,
        }
    }

    /// The directory's path.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn changes_dir(&self) -> PathBuf {
        self.root.join("changes")
    }

    fn io<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> StateError + 'a {
        move |source| io_error(op, path.to_path_buf(), source)
    }

    /// Creates the directories if missing.
    pub fn ensure(&self) -> Result<(), StateError> {
        let dir = self.changes_dir();
        self.fs
            .create_dir_all(&dir)
            .map_err(StateDir::io("creating", &dir))
    }

    /// Takes the change lock without waiting.
    pub fn try_lock(&self) -> Result<Lock, StateError> {
        if self.root.exists() {
            // Before anything is created in it.
            lock::trusted(&self.root)?;
        }
        self.ensure()?;
        let file = lock::try_take(&self.root.join("lock"))?;
        Ok(Lock { _file: file })
    }

    /// Takes the change lock, retrying for up to `attempts` × 50 ms (confirm and the
    /// watchdog wait briefly for an apply that is finishing).
    pub fn lock_waiting(&self, attempts: u32) -> Result<Lock, StateError> {
        let mut last = None;
        for _ in 0..attempts.max(1) {
            match self.try_lock() {
                Err(StateError::Busy { path, holder }) => last = Some((path, holder)),
                other => return other,
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let (path, holder) = last.unwrap_or_else(|| (self.root.join("lock"), None));
        Err(StateError::Busy { path, holder })
    }

    /// Takes both locks of a change of the live host ([`LiveLocks`]), each retrying for up to
    /// `attempts` × 50 ms.
    pub fn lock_live(&self, attempts: u32) -> Result<LiveLocks, StateError> {
        let state = self.lock_waiting(attempts)?;
        let machine = lock::MachineLock::waiting(Path::new(lock::MACHINE_LOCK), attempts)?;
        Ok(LiveLocks {
            state,
            _machine: machine,
        })
    }

    /// The lines replaying `txn`'s journal left out ([`Summary::defects`]), with its path;
    /// `None` when there were none.
    pub fn damage(&self, txn: &Summary) -> Option<DamagedJournal> {
        (!txn.defects.is_empty()).then(|| DamagedJournal {
            path: self.journal_path(&txn.id),
            defects: txn.defects.clone(),
        })
    }

    /// Every change in `all` (this directory's transactions) that must be reverted before
    /// another starts: interrupted, overdue, incompletely restored, or left in place by a
    /// tune that was killed (the tunes marked here). `alive(pid, t)` tells whether `pid`
    /// runs as the process that existed at Unix ms `t` ([`Alive`]).
    pub fn problems(&self, all: &[Summary], now_unix_ms: u64, alive: impl Alive) -> Vec<Attention> {
        let mut found = needing_recovery(all, now_unix_ms, &alive);
        found.extend(left_by_killed_tunes(
            all,
            &self.tune_marks(),
            now_unix_ms,
            &alive,
        ));
        found
    }

    /// Starts a transaction: writes its `begin` record (the plan with old values) to disk.
    pub fn begin(&self, begin: &Record, _lock: &Lock) -> Result<Journal, StateError> {
        let Record::Begin { id, .. } = begin else {
            unreachable!("begin() takes a Begin record");
        };
        let path = self.journal_path(id);
        let mut journal = Journal::create(self.fs.as_ref(), &path)?;
        if let Err(e) = journal.append(begin) {
            // Nothing was written to the host: a journal without its whole begin record is
            // noise. If removing it fails too, `revert` closes it (it names no write).
            let _ = self.fs.remove_file(&path);
            return Err(e.into());
        }
        Ok(journal)
    }

    /// Opens the journal of transaction `id` to append to it.
    pub fn open_journal(&self, id: &str) -> Result<Journal, JournalError> {
        Journal::open(self.fs.as_ref(), &self.journal_path(id))
    }

    /// Where running tunes mark themselves: `tunes/<pid>`, removed when the tune ends with
    /// nothing of its own left in place, so a mark whose process is gone means a killed tune.
    pub fn tunes_dir(&self) -> PathBuf {
        self.root.join("tunes")
    }

    /// The tunes marked in [`StateDir::tunes_dir`] (none when it is unreadable).
    pub fn tune_marks(&self) -> Vec<TuneMark> {
        let entries = self.fs.list(&self.tunes_dir()).unwrap_or_default();
        let pid = |p: &PathBuf| p.file_name()?.to_str()?.parse().ok();
        entries
            .iter()
            .filter_map(pid)
            .map(|pid| TuneMark {
                pid,
                started_unix_ms: self.tune_mark_started(pid),
            })
            .collect()
    }

    /// Marks process `pid`, started at `now_unix_ms`, as a running tune (or a `serve` change
    /// session): `tunes/<pid>`, holding `started_unix_ms <ms>`. An existing mark is kept.
    pub fn mark_tune(&self, pid: u32, now_unix_ms: u64) -> Result<PathBuf, StateError> {
        let dir = self.tunes_dir();
        self.fs
            .create_dir_all(&dir)
            .map_err(Self::io("marking a tune in", &dir))?;
        let path = dir.join(pid.to_string());
        let mut file = match self.fs.create_new(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(path),
            other => other.map_err(Self::io("marking a tune in", &dir))?,
        };
        // The start time lets a revert tell this tune's changes from older ones of another
        // process that had the same pid; a mark without it (torn, or from an older
        // nictune) only costs that grouping.
        let line = format!("{MARK_STARTED} {now_unix_ms}\n");
        file.write_all(line.as_bytes())
            .and_then(|()| file.sync_data())
            .map_err(Self::io("marking a tune in", &dir))?;
        Ok(path)
    }

    /// When the tune marked as `pid` started (Unix ms), from its mark; `None` when there is
    /// no mark or it does not say.
    fn tune_mark_started(&self, pid: u32) -> Option<u64> {
        let text = self
            .fs
            .read_to_string(&self.tunes_dir().join(pid.to_string()))
            .ok()?;
        let rest = text.lines().next()?.strip_prefix(MARK_STARTED)?;
        rest.trim().parse().ok()
    }

    /// Removes `pid`'s tune mark unless something it changed is still in place (then the
    /// next change refuses until `nictune revert` has run).
    pub fn unmark_tune_if_clean(&self, pid: u32) {
        let mark = TuneMark {
            pid,
            started_unix_ms: self.tune_mark_started(pid),
        };
        let clean = self
            .transactions()
            .is_ok_and(|all| mark.in_place(&all).is_empty());
        if clean {
            let _ = self.fs.remove_file(&self.tunes_dir().join(pid.to_string()));
        }
    }

    /// Where transaction `id`'s journal lives: `changes/<id>.jsonl` under the root.
    pub fn journal_path(&self, id: &str) -> PathBuf {
        self.changes_dir().join(format!("{id}.jsonl"))
    }

    /// Transaction `id`, read from its own journal only; `None` when there is no such
    /// journal (or it does not begin as `id`).
    pub fn transaction(&self, id: &str) -> Result<Option<Summary>, StateError> {
        let path = self.journal_path(id);
        let text = match self.fs.read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            other => other.map_err(StateDir::io("reading", &path))?,
        };
        Ok(summarize_numbered(&parse_numbered(&text)).filter(|s| s.id == id))
    }

    /// Every transaction on disk, oldest first.
    pub fn transactions(&self) -> Result<Vec<Summary>, StateError> {
        let dir = self.changes_dir();
        let entries = match self.fs.list(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            other => other.map_err(StateDir::io("listing", &dir))?,
        };
        let mut all = Vec::new();
        for path in entries {
            if path.extension().is_some_and(|e| e == "jsonl") {
                let text = self
                    .fs
                    .read_to_string(&path)
                    .map_err(StateDir::io("reading", &path))?;
                all.extend(summarize_numbered(&parse_numbered(&text)));
            }
        }
        all.sort_by(|a, b| (a.started_unix_ms, &a.id).cmp(&(b.started_unix_ms, &b.id)));
        Ok(all)
    }

    /// Moves the journals of `owner_pid`'s closed transactions (see [`closed`]) to `dest`,
    /// returning how many moved. A tune keeps its candidates' history with its report rather
    /// than in the host's state directory, where it would bury the changes that matter;
    /// anything not closed stays here, where `status` and `revert` look.
    pub fn move_closed(
        &self,
        owner_pid: u32,
        dest: &StateDir,
        _lock: &Lock,
    ) -> Result<usize, StateError> {
        let mut moved = 0;
        for s in self.transactions()? {
            if s.owner_pid != owner_pid || !closed(&s) {
                continue;
            }
            dest.ensure()?;
            let (from, to) = (self.journal_path(&s.id), dest.journal_path(&s.id));
            if self.fs.rename(&from, &to).is_err() {
                // Another file system: copy, then remove the original.
                self.fs
                    .copy(&from, &to)
                    .map_err(StateDir::io("copying", &from))?;
                self.fs
                    .remove_file(&from)
                    .map_err(StateDir::io("removing", &from))?;
            }
            moved += 1;
        }
        Ok(moved)
    }
}

/// An I/O error, told apart when it means the directory cannot be written at all.
fn io_error(op: &'static str, path: PathBuf, source: std::io::Error) -> StateError {
    use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
    match source.kind() {
        PermissionDenied | ReadOnlyFilesystem => StateError::NotWritable { op, path, source },
        _ => StateError::Io { op, path, source },
    }
}

impl From<LockError> for StateError {
    fn from(e: LockError) -> StateError {
        match e {
            LockError::Busy { path, holder } => StateError::Busy { path, holder },
            LockError::Io { op, path, source } => io_error(op, path, source),
            LockError::Untrusted { dir, why } => StateError::Untrusted { dir, why },
        }
    }
}

/// Whether a transaction is over with nothing of it left in place: rolled back or reverted
/// with every value restored. Its journal is history only.
pub fn closed(s: &Summary) -> bool {
    matches!(
        s.phase,
        Phase::RolledBack { complete: true } | Phase::Reverted { complete: true, .. }
    )
}

/// A transaction that needs attention, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Attention {
    /// The transaction id.
    pub id: String,
    /// What is wrong with it.
    pub problem: Problem,
}

/// What is wrong with a transaction left on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Problem {
    /// nictune stopped in the middle of applying or reverting (crash, kill -9, power loss).
    Interrupted,
    /// The confirmation deadline passed and no watchdog is alive to revert.
    Overdue,
    /// A rollback or revert could not restore every value.
    Incomplete,
    /// Waiting for `nictune confirm` (not a fault; shown so nobody is surprised).
    Pending,
    /// Applied by a tune that was killed (`kill -9`, a crash) before it could revert it: a
    /// candidate's values, meant to last one measurement, still in place.
    LeftByKilledTune,
    /// Left open by a boot before this one: the reboot reset everything it set, and `revert`
    /// closes it without writing.
    MadeBeforeReboot,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Problem::Interrupted => "interrupted",
            Problem::Overdue => "overdue (not confirmed in time and no watchdog is alive)",
            Problem::Incomplete => "incompletely restored",
            Problem::Pending => "waiting for confirmation",
            Problem::LeftByKilledTune => "left in place by a tune that was killed",
            Problem::MadeBeforeReboot => {
                "made before the last reboot (nothing of it is in place; revert closes it)"
            }
        })
    }
}

/// Whether process `pid` runs as the process that existed at Unix ms `t` — one that started
/// later reuses the pid of one that is gone; `u64::MAX` asks about the pid alone. The live
/// answer is `nictune_linux::write::detach::alive_at`.
pub trait Alive: Fn(u32, u64) -> bool {}
impl<F: Fn(u32, u64) -> bool> Alive for F {}

/// A tune's mark (`tunes/<pid>`): its pid and, when the mark says, when the tune started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TuneMark {
    /// The tune's process.
    pub pid: u32,
    /// When it started (Unix ms); `None` for a mark that does not say.
    pub started_unix_ms: Option<u64>,
}

impl TuneMark {
    /// Whether the marked tune still runs: its pid, held by a process that already ran when
    /// the mark was made.
    pub fn alive(&self, alive: impl Alive) -> bool {
        alive(self.pid, self.started_unix_ms.unwrap_or(u64::MAX))
    }

    /// The tune's changes in `all` still in place: its pid's, from its start on (all of the
    /// pid's when the mark has no start time).
    pub fn in_place<'a>(&self, all: &'a [Summary]) -> Vec<&'a Summary> {
        let since = self.started_unix_ms.unwrap_or(0);
        in_place_by(all, self.pid)
            .into_iter()
            .filter(|s| s.started_unix_ms >= since)
            .collect()
    }
}

/// Classifies a transaction given the time and which processes are alive: its owner must
/// be the process that began it, its watchdog one that ran before the deadline.
pub fn attention(s: &Summary, now_unix_ms: u64, alive: impl Alive) -> Option<Problem> {
    let problem = attention_this_boot(s, now_unix_ms, alive)?;
    let rebooted = s
        .boot
        .as_ref()
        .is_some_and(|then| crate::txn::boot_id().is_some_and(|now| *then != now));
    Some(match rebooted {
        true => Problem::MadeBeforeReboot,
        false => problem,
    })
}

/// [`attention`] as if the change were made in this boot.
fn attention_this_boot(s: &Summary, now_unix_ms: u64, alive: impl Alive) -> Option<Problem> {
    match s.phase {
        Phase::Applying | Phase::Reverting if !alive(s.owner_pid, s.owner_since_unix_ms) => {
            Some(Problem::Interrupted)
        }
        Phase::Pending { deadline_unix_ms } => {
            let watchdog_alive = s
                .watchdog_pid
                .is_some_and(|pid| alive(pid, deadline_unix_ms));
            // The watchdog gets a grace period to take the lock and finish its revert.
            let late = now_unix_ms > deadline_unix_ms + 5_000;
            Some(if late && !watchdog_alive {
                Problem::Overdue
            } else {
                Problem::Pending
            })
        }
        Phase::RolledBack { complete: false }
        | Phase::Reverted {
            complete: false, ..
        } => Some(Problem::Incomplete),
        _ => None,
    }
}

/// Transactions that need a revert before anything else changes (everything but `Pending`).
pub fn needing_recovery(all: &[Summary], now_unix_ms: u64, alive: impl Alive) -> Vec<Attention> {
    all.iter()
        .filter_map(|s| {
            let problem = attention(s, now_unix_ms, &alive)?;
            (problem != Problem::Pending).then(|| Attention {
                id: s.id.clone(),
                problem,
            })
        })
        .collect()
}

/// Changes by process `pid` that are (or may be) still in effect.
pub fn in_place_by(all: &[Summary], pid: u32) -> Vec<&Summary> {
    all.iter()
        .filter(|s| s.owner_pid == pid)
        .filter(|s| revertible(std::slice::from_ref(*s)).is_some())
        .collect()
}

/// The changes tunes left in place when they were killed: those of every marked tune
/// (`tunes`, as [`StateDir::tune_marks`] found them) that is no longer alive. A change that
/// needs recovery for another reason is left to [`needing_recovery`].
pub fn left_by_killed_tunes(
    all: &[Summary],
    tunes: &[TuneMark],
    now_unix_ms: u64,
    alive: impl Alive,
) -> Vec<Attention> {
    tunes
        .iter()
        .filter(|t| !t.alive(&alive))
        .flat_map(|t| t.in_place(all))
        .filter(|s| attention(s, now_unix_ms, &alive).is_none())
        .map(|s| Attention {
            id: s.id.clone(),
            problem: Problem::LeftByKilledTune,
        })
        .collect()
}

/// The transaction `nictune revert` undoes: the newest one whose changes are (or may be)
/// still in place, or that never ended. One that stopped before its first write (a crash
/// between its `begin` and its first `intent`) has nothing to restore, but it is still
/// picked, so the revert can close it and changes can proceed.
pub fn revertible(all: &[Summary]) -> Option<&Summary> {
    all.iter().rev().find(|s| match s.phase {
        Phase::Applying | Phase::Reverting => true,
        Phase::Applied
        | Phase::Pending { .. }
        | Phase::Confirmed
        | Phase::RolledBack { complete: false }
        | Phase::Reverted {
            complete: false, ..
        } => !s.attempted.is_empty(),
        Phase::RolledBack { complete: true } | Phase::Reverted { complete: true, .. } => false,
    })
}

/// What one `nictune revert` undoes, newest first: the change [`revertible`] picks and, when
/// the process that made it was a tune (or a `serve` change session) that is gone, every
/// other change that process left in place since it started ([`TuneMark::in_place`]). Such
/// a tune's transactions — the testbed's two ends, this host's interface, the host-wide
/// settings — were one candidate, meant to last one measurement, so they go back together.
/// `killed` is the mark of a tune that no longer runs; it counts when it marks the newest
/// change's process and says when that tune started (without that, a change of another
/// process that had the same pid could not be told apart, so the newest goes alone).
pub fn revert_group(all: &[Summary], killed: Option<TuneMark>) -> Vec<&Summary> {
    let Some(newest) = revertible(all) else {
        return Vec::new();
    };
    let mark = killed.filter(|m| m.pid == newest.owner_pid && m.started_unix_ms.is_some());
    let Some(mark) = mark else {
        return vec![newest];
    };
    let group: Vec<&Summary> = mark.in_place(all).into_iter().rev().collect();
    match group.first() {
        Some(first) if first.id == newest.id => group,
        // The newest change predates the mark (the clock stepped back): it alone.
        _ => vec![newest],
    }
}

/// The changes of a transaction restored by a revert, last first.
pub fn restore_list(s: &Summary) -> Vec<(usize, &Change)> {
    s.steps_to_restore()
        .into_iter()
        .map(|i| (i, &s.changes[i]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::RevertBy;

    fn txn(id: &str, owner: u32, netns: Option<&str>, phase: Phase) -> Summary {
        Summary {
            id: id.into(),
            started_unix_ms: 0,
            netns: netns.map(str::to_string),
            iface: None,
            changes: Vec::new(),
            preserve: Vec::new(),
            boot: None,
            identity: None,
            attempted: vec![0],
            effective: Default::default(),
            undone: Vec::new(),
            phase,
            owner_pid: owner,
            owner_since_unix_ms: 0,
            watchdog_pid: None,
            defects: Vec::new(),
            revert_notes: Default::default(),
        }
    }

    /// A mark that does not say when its tune started.
    fn mark(pid: u32) -> TuneMark {
        TuneMark {
            pid,
            started_unix_ms: None,
        }
    }

    /// A killed tune's pid, taken since by a process that started later, still leaves the
    /// tune's changes flagged (and an apply killed mid-way still interrupted): the process
    /// holding the pid is not the one that journaled them.
    #[test]
    fn a_pid_reused_by_a_later_process_does_not_keep_a_dead_ones_changes_alive() {
        let all = vec![
            timed("210-20", 20, 210, Phase::Applied),
            timed("230-20", 20, 230, Phase::Applying),
        ];
        // pid 20 is held now by a process that started at t = 500.
        let reused = |pid: u32, t: u64| pid == 20 && t >= 500;
        let tune = TuneMark {
            pid: 20,
            started_unix_ms: Some(200),
        };
        assert!(!tune.alive(reused));
        let left = left_by_killed_tunes(&all, &[tune], 1_000, reused);
        assert_eq!(
            left,
            [Attention {
                id: "210-20".into(),
                problem: Problem::LeftByKilledTune
            }]
        );
        let stuck = needing_recovery(&all, 1_000, reused);
        assert_eq!(
            stuck,
            [Attention {
                id: "230-20".into(),
                problem: Problem::Interrupted
            }]
        );
        // A mark that does not say when its tune started: the pid alone decides.
        assert!(mark(20).alive(reused));
        // The same process all along: alive, nothing flagged.
        let same = |pid: u32, _t: u64| pid == 20;
        assert!(left_by_killed_tunes(&all, &[tune], 1_000, same).is_empty());
        assert!(needing_recovery(&all, 1_000, same).is_empty());
    }

    /// A revert that is running is not interrupted: its process started long after the
    /// change (an hour here), so it is judged by when the revert began, not the change.
    #[test]
    fn a_revert_at_work_is_judged_by_when_it_began_not_the_change() {
        let mut s = txn("1000-10", 30, None, Phase::Reverting);
        s.started_unix_ms = 1_000;
        // pid 30 is the reverter, which started at t = 3_600_000.
        let reverter = |pid: u32, t: u64| pid == 30 && t >= 3_600_000;
        s.owner_since_unix_ms = 3_600_500;
        assert_eq!(attention(&s, 3_601_000, reverter), None);
        // An older journal's revert said no time: the pid alone.
        s.owner_since_unix_ms = u64::MAX;
        assert_eq!(attention(&s, 3_601_000, reverter), None);
        // The reverter is gone (its pid now another's, started later): interrupted.
        s.owner_since_unix_ms = 3_600_500;
        let reused = |pid: u32, t: u64| pid == 30 && t >= 3_700_000;
        let found = attention(&s, 3_701_000, reused);
        assert_eq!(found, Some(Problem::Interrupted));
    }

    fn sample() -> Vec<Summary> {
        let reverted = Phase::Reverted {
            by: RevertBy::User,
            complete: true,
        };
        vec![
            txn("1-10", 10, None, Phase::Applied),
            txn("2-20", 20, Some("nictune-tb-20-0-s"), reverted),
            txn("3-20", 20, Some("nictune-tb-20-0-s"), Phase::Applied),
            txn("4-20", 20, None, Phase::Applying),
        ]
    }

    #[test]
    fn a_tunes_changes_still_in_place_are_the_revertible_ones_it_owns() {
        let all = sample();
        let ids: Vec<&str> = in_place_by(&all, 20)
            .iter()
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(ids, ["3-20", "4-20"]);
        assert!(in_place_by(&all[..2], 20).is_empty());
    }

    /// Issue #12.2: after `kill -9` of a tune its candidate's changes were plain "applied".
    #[test]
    fn changes_of_a_killed_tune_need_attention_and_a_live_tunes_or_a_plain_apply_do_not() {
        let all = sample();
        let dead = |_, _| false;
        let left = left_by_killed_tunes(&all, &[mark(20)], 0, dead);
        // 4-20 is interrupted (needing_recovery says so); 3-20 is the applied leftover.
        assert_eq!(
            left,
            [Attention {
                id: "3-20".into(),
                problem: Problem::LeftByKilledTune
            }]
        );
        assert!(
            left_by_killed_tunes(&all, &[mark(20)], 0, |_, _| true).is_empty(),
            "running"
        );
        assert!(
            left_by_killed_tunes(&all, &[], 0, dead).is_empty(),
            "pid 10 is no tune"
        );
    }

    /// Issue #15: the message naming a damaged journal's file and lines moved here from the
    /// binary; it must read as before.
    #[test]
    fn a_damaged_journal_names_its_file_and_every_line_left_out() {
        let state = StateDir::new("/var/lib/nictune");
        let mut t = txn("1-10", 10, None, Phase::Applied);
        assert_eq!(state.damage(&t), None);
        t.defects = vec![
            Defect {
                line: 3,
                problem: "names step 99".into(),
            },
            Defect {
                line: 5,
                problem: "names step 7".into(),
            },
        ];
        let damage = state.damage(&t).unwrap();
        assert_eq!(
            damage.to_string(),
            "journal /var/lib/nictune/changes/1-10.jsonl line 3: names step 99; line 5: \
             names step 7; such a line was left out"
        );
    }

    /// A change of `owner` begun at `started` (Unix ms), outside any namespace.
    fn timed(id: &str, owner: u32, started: u64, phase: Phase) -> Summary {
        Summary {
            started_unix_ms: started,
            ..txn(id, owner, None, phase)
        }
    }

    /// A killed tune's changes go back together; the same pid's older change (an `apply`
    /// of another process that had the pid) and a change of another process stay for
    /// reverts of their own.
    #[test]
    fn one_revert_takes_every_change_a_killed_tune_left_since_it_started() {
        let all = vec![
            timed("100-20", 20, 100, Phase::Applied), // an apply that had pid 20 before
            timed("150-10", 10, 150, Phase::Applied), // another process's apply
            timed("210-20", 20, 210, Phase::Applied), // the tune's server end
            timed("220-20", 20, 220, Phase::Applied), // its client end
            timed("230-20", 20, 230, Phase::Applying), // its host-wide settings, killed
        ];
        let ids = |g: Vec<&Summary>| g.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
        let killed_at = |started| {
            Some(TuneMark {
                pid: 20,
                started_unix_ms: started,
            })
        };
        let killed_at_200 = killed_at(Some(200));
        assert_eq!(
            ids(revert_group(&all, killed_at_200)),
            ["230-20", "220-20", "210-20"],
            "newest first, none from before the tune started"
        );
        // The tune is alive (or unmarked): one change at a time, as for an apply.
        assert_eq!(ids(revert_group(&all, None)), ["230-20"]);
        // A mark without its start time cannot tell the tune's changes from older ones.
        assert_eq!(ids(revert_group(&all, killed_at(None))), ["230-20"]);
        // The newest change is an apply's, not the tune's: it goes alone.
        assert_eq!(ids(revert_group(&all[..2], killed_at_200)), ["150-10"]);
        // The newest change is another process's: the tune's wait for their own turn.
        let mut later = all.clone();
        later.push(timed("300-10", 10, 300, Phase::Applied));
        assert_eq!(ids(revert_group(&later, killed_at_200)), ["300-10"]);
        // The clock stepped back: the newest change predates the mark, so it goes alone.
        assert_eq!(ids(revert_group(&all, killed_at(Some(225)))), ["230-20"]);
        assert_eq!(ids(revert_group(&all, killed_at(Some(231)))), ["230-20"]);
        assert!(revert_group(&[], killed_at_200).is_empty());
    }

    #[test]
    fn a_tune_mark_keeps_its_start_time_and_a_second_mark_keeps_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::new(dir.path());
        assert_eq!(state.tune_mark_started(20), None, "no mark");
        state.mark_tune(20, 1_795_239_660_000).unwrap();
        state.mark_tune(20, 1_795_239_669_999).unwrap();
        assert_eq!(state.tune_mark_started(20), Some(1_795_239_660_000));
        let marks = state.tune_marks();
        assert_eq!(
            marks,
            [TuneMark {
                pid: 20,
                started_unix_ms: Some(1_795_239_660_000)
            }]
        );
        // A mark from before marks held the time (empty) says nothing.
        std::fs::write(state.tunes_dir().join("30"), "").unwrap();
        assert_eq!(state.tune_mark_started(30), None);
        std::fs::write(state.tunes_dir().join("31"), "started_unix_ms x\n").unwrap();
        assert_eq!(state.tune_mark_started(31), None);
    }

    /// An applied change journaled under `dir` by `pid` at `started`.
    fn journal_applied(dir: &Path, pid: u32, started: u64) {
        use nictune_host::write::setting::{Key, Object, Setting};
        use nictune_host::write::value::HostValue;
        let id = crate::txn::txn_id(started, pid);
        let records = [
            Record::Begin {
                id: id.clone(),
                pid,
                started_unix_ms: started,
                netns: None,
                iface: None,
                changes: vec![Change {
                    setting: Setting::new(Object::Netns, Key::Sysctl("net.core.somaxconn".into())),
                    old: HostValue::text("4096"),
                    new: HostValue::text("1024"),
                }],
                preserve: Vec::new(),
                boot: None,
                identity: None,
            },
            Record::Intent { step: 0 },
            Record::Applied {
                confirm_deadline_unix_ms: None,
            },
        ];
        let text: String = records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        let changes = dir.join("changes");
        std::fs::create_dir_all(&changes).unwrap();
        std::fs::write(changes.join(format!("{id}.jsonl")), text).unwrap();
    }

    /// A tune ends clean when nothing *it* changed is in place: an older change of another
    /// process that had its pid does not keep its mark.
    #[test]
    fn a_finished_tune_is_unmarked_unless_a_change_of_its_own_is_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::new(dir.path());
        journal_applied(dir.path(), 20, 100);
        state.mark_tune(20, 200).unwrap();
        let all = state.transactions().unwrap();
        assert_eq!(
            in_place_by(&all, 20).len(),
            1,
            "the older change is in place"
        );
        state.unmark_tune_if_clean(20);
        assert!(
            state.tune_marks().is_empty(),
            "only the older process's change"
        );
        state.mark_tune(20, 200).unwrap();
        journal_applied(dir.path(), 20, 210);
        state.unmark_tune_if_clean(20);
        assert_eq!(state.tune_marks().len(), 1, "its own change is in place");
    }

    #[test]
    fn problems_are_recoveries_then_killed_tunes_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::new(dir.path());
        state.mark_tune(20, 0).unwrap();
        let found = state.problems(&sample(), 0, |_, _| false);
        let ids: Vec<(&str, Problem)> = found.iter().map(|a| (a.id.as_str(), a.problem)).collect();
        assert_eq!(
            ids,
            [
                ("4-20", Problem::Interrupted),
                ("3-20", Problem::LeftByKilledTune)
            ]
        );
        assert!(state.problems(&sample(), 0, |_, _| true).is_empty());
    }
}
