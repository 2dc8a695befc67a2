//! The state directory (default `/var/lib/nictune`): one journal per transaction under
//! `changes/`, and a `lock` file so only one change runs at a time.
//!
//! Machine facts (the time, whether a process is alive) are arguments, so the decisions here
//! are testable without a clock or a process table.

use crate::journal::{parse, summarize, Journal, JournalError, Phase, Record, Summary};
use crate::plan::Change;
use serde::Serialize;
use std::fs::{self, File, TryLockError};
use std::path::{Path, PathBuf};

/// The default state directory.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/nictune";
/// The environment variable that overrides it (a `--state-dir` flag overrides both).
pub const STATE_DIR_ENV: &str = "NICTUNE_STATE_DIR";

/// A state-directory operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("another nictune change is running (lock {path} is held)")]
    Busy { path: PathBuf },
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// The state directory.
#[derive(Debug, Clone)]
pub struct StateDir {
    root: PathBuf,
}

/// Held while a change runs; released on drop.
#[derive(Debug)]
#[must_use = "the lock is released when this is dropped"]
pub struct Lock {
    _file: File,
}

impl StateDir {
    pub fn new(root: impl Into<PathBuf>) -> StateDir {
        StateDir { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn changes_dir(&self) -> PathBuf {
        self.root.join("changes")
    }

    fn io<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> StateError + 'a {
        move |source| StateError::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }

    /// Creates the directories if missing.
    pub fn ensure(&self) -> Result<(), StateError> {
        let dir = self.changes_dir();
        fs::create_dir_all(&dir).map_err(StateDir::io("creating", &dir))
    }

    /// Takes the change lock without waiting.
    pub fn try_lock(&self) -> Result<Lock, StateError> {
        self.ensure()?;
        let path = self.root.join("lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(StateDir::io("opening", &path))?;
        match file.try_lock() {
            Ok(()) => Ok(Lock { _file: file }),
            Err(TryLockError::WouldBlock) => Err(StateError::Busy { path }),
            Err(TryLockError::Error(e)) => Err(StateDir::io("locking", &path)(e)),
        }
    }

    /// Takes the change lock, retrying for up to `attempts` × 50 ms (confirm and the
    /// watchdog wait briefly for an apply that is finishing).
    pub fn lock_waiting(&self, attempts: u32) -> Result<Lock, StateError> {
        let mut last = None;
        for _ in 0..attempts.max(1) {
            match self.try_lock() {
                Err(StateError::Busy { path }) => last = Some(path),
                other => return other,
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Err(StateError::Busy {
            path: last.unwrap_or_else(|| self.root.join("lock")),
        })
    }

    /// Starts a transaction: writes its `begin` record (the plan with old values) to disk.
    pub fn begin(&self, begin: &Record, _lock: &Lock) -> Result<Journal, StateError> {
        let Record::Begin { id, .. } = begin else {
            unreachable!("begin() takes a Begin record");
        };
        let mut journal = Journal::create(&self.journal_path(id))?;
        journal.append(begin)?;
        Ok(journal)
    }

    pub fn journal_path(&self, id: &str) -> PathBuf {
        self.changes_dir().join(format!("{id}.jsonl"))
    }

    /// Every transaction on disk, oldest first.
    pub fn transactions(&self) -> Result<Vec<Summary>, StateError> {
        let dir = self.changes_dir();
        let entries = match fs::read_dir(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            other => other.map_err(StateDir::io("listing", &dir))?,
        };
        let mut all = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                let text = nictune_core::input::read_file(&path, nictune_core::input::JOURNAL)
                    .map_err(|e| StateDir::io("reading", &path)(std::io::Error::other(e)))?;
                all.extend(summarize(&parse(&text)));
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
            if fs::rename(&from, &to).is_err() {
                // Another file system: copy, then remove the original.
                fs::copy(&from, &to).map_err(StateDir::io("copying", &from))?;
                fs::remove_file(&from).map_err(StateDir::io("removing", &from))?;
            }
            moved += 1;
        }
        Ok(moved)
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
    pub id: String,
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
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Problem::Interrupted => "interrupted",
            Problem::Overdue => "overdue (not confirmed in time and no watchdog is alive)",
            Problem::Incomplete => "incompletely restored",
            Problem::Pending => "waiting for confirmation",
        })
    }
}

/// Classifies a transaction given the time and which processes are alive.
pub fn attention(s: &Summary, now_unix_ms: u64, alive: impl Fn(u32) -> bool) -> Option<Problem> {
    match s.phase {
        Phase::Applying | Phase::Reverting if !alive(s.owner_pid) => Some(Problem::Interrupted),
        Phase::Pending { deadline_unix_ms } => {
            let watchdog_alive = s.watchdog_pid.is_some_and(&alive);
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
pub fn needing_recovery(
    all: &[Summary],
    now_unix_ms: u64,
    alive: impl Fn(u32) -> bool,
) -> Vec<Attention> {
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

/// The transaction `nictune revert` undoes: the newest one whose changes are (or may be)
/// still in place.
pub fn revertible(all: &[Summary]) -> Option<&Summary> {
    all.iter().rev().find(|s| {
        !s.attempted.is_empty()
            && matches!(
                s.phase,
                Phase::Applying
                    | Phase::Applied
                    | Phase::Pending { .. }
                    | Phase::Confirmed
                    | Phase::Reverting
                    | Phase::RolledBack { complete: false }
                    | Phase::Reverted {
                        complete: false,
                        ..
                    }
            )
    })
}

/// The changes of a transaction restored by a revert, last first.
pub fn restore_list(s: &Summary) -> Vec<(usize, &Change)> {
    s.steps_to_restore()
        .into_iter()
        .map(|i| (i, &s.changes[i]))
        .collect()
}
