//! The journal of one transaction: JSON lines appended and flushed to disk (`fsync`) before
//! the write they announce, so a crash at any point leaves enough on disk to put every value
//! back. [`summarize`] replays the records into what happened, purely.
//!
//! A transaction's lines, in order: `begin` (the whole plan with old values), then per step
//! `intent` before the write and `written` after it with the value read back; `applied` or
//! `failed` + `undo`/`undone` + `rolled-back`; later `watchdog`, `confirmed`, or
//! `revert-begin` + `undo`/`undone` + `reverted`.

use crate::plan::{Change, Preserved};
use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "kebab-case")]
pub enum Record {
    Begin {
        id: String,
        pid: u32,
        started_unix_ms: u64,
        netns: Option<String>,
        iface: Option<String>,
        changes: Vec<Change>,
        #[serde(default)]
        preserve: Vec<Preserved>,
    },
    Intent {
        step: usize,
    },
    Written {
        step: usize,
        effective: Value,
    },
    Failed {
        step: usize,
        error: String,
    },
    Undo {
        step: usize,
    },
    Undone {
        step: usize,
        effective: Option<Value>,
        error: Option<String>,
    },
    RolledBack {
        complete: bool,
    },
    Applied {
        confirm_deadline_unix_ms: Option<u64>,
    },
    Watchdog {
        pid: u32,
    },
    Confirmed {
        at_unix_ms: u64,
    },
    RevertBegin {
        pid: u32,
        by: RevertBy,
    },
    Reverted {
        at_unix_ms: u64,
        by: RevertBy,
        complete: bool,
    },
}

/// Who reverted a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RevertBy {
    User,
    Watchdog,
}

/// A journal file open for appending.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
}

/// A journal could not be written or read.
#[derive(Debug, thiserror::Error)]
#[error("{op} journal {path}: {source}")]
pub struct JournalError {
    pub op: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl Journal {
    /// Creates a new journal (failing if it exists) and makes its directory entry durable.
    pub fn create(path: &Path) -> Result<Journal, JournalError> {
        let err = |source| JournalError {
            op: "creating",
            path: path.to_path_buf(),
            source,
        };
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path)
            .map_err(err)?;
        if let Some(dir) = path.parent() {
            File::open(dir).and_then(|d| d.sync_all()).map_err(err)?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Opens an existing journal to append to it.
    pub fn open(path: &Path) -> Result<Journal, JournalError> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|source| JournalError {
                op: "opening",
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Journal {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as a line and waits until it is on disk.
    pub fn append(&mut self, record: &Record) -> Result<(), JournalError> {
        let mut line = serde_json::to_string(record).expect("journal records always serialise");
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|source| JournalError {
                op: "writing",
                path: self.path.clone(),
                source,
            })
    }
}

/// Parses journal text. A last line cut short by a crash is ignored; so is any line that is
/// not a record (a journal must stay readable for recovery whatever happened to it).
pub fn parse(text: &str) -> Vec<Record> {
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Where a transaction stands, from its records alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "phase", rename_all = "kebab-case")]
pub enum Phase {
    /// Writing (or rolling back after a failure); no end record yet.
    Applying,
    /// Applied without `--confirm-within`: kept.
    Applied,
    /// Applied, waiting for `nictune confirm` until the deadline.
    Pending {
        deadline_unix_ms: u64,
    },
    Confirmed,
    /// A step failed and the earlier ones were undone.
    RolledBack {
        complete: bool,
    },
    /// A revert started and has not finished.
    Reverting,
    Reverted {
        by: RevertBy,
        complete: bool,
    },
}

/// What the records of one transaction say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub id: String,
    pub started_unix_ms: u64,
    pub netns: Option<String>,
    pub iface: Option<String>,
    pub changes: Vec<Change>,
    pub preserve: Vec<Preserved>,
    /// Steps whose write was started (an `intent` line exists).
    pub attempted: Vec<usize>,
    /// Value read back after each written step.
    pub effective: BTreeMap<usize, Value>,
    /// Steps restored by the last rollback or revert.
    pub undone: Vec<usize>,
    pub phase: Phase,
    /// The process that last worked on the journal: the applier, reverter or watchdog.
    pub owner_pid: u32,
    pub watchdog_pid: Option<u32>,
}

/// Replays records into a summary; `None` without a `begin` record.
pub fn summarize(records: &[Record]) -> Option<Summary> {
    let Some(Record::Begin {
        id,
        pid,
        started_unix_ms,
        netns,
        iface,
        changes,
        preserve,
    }) = records.first()
    else {
        return None;
    };
    let mut s = Summary {
        id: id.clone(),
        started_unix_ms: *started_unix_ms,
        netns: netns.clone(),
        iface: iface.clone(),
        changes: changes.clone(),
        preserve: preserve.clone(),
        attempted: Vec::new(),
        effective: BTreeMap::new(),
        undone: Vec::new(),
        phase: Phase::Applying,
        owner_pid: *pid,
        watchdog_pid: None,
    };
    records[1..].iter().for_each(|r| replay(&mut s, r));
    Some(s)
}

fn replay(s: &mut Summary, record: &Record) {
    match record {
        Record::Begin { .. } | Record::Failed { .. } | Record::Undo { .. } => {}
        Record::Intent { step } => s.attempted.push(*step),
        Record::Written { step, effective } => {
            s.effective.insert(*step, effective.clone());
        }
        Record::Undone {
            step, error: None, ..
        } => s.undone.push(*step),
        Record::Undone { .. } => {}
        Record::RolledBack { complete } => {
            s.phase = Phase::RolledBack {
                complete: *complete,
            }
        }
        Record::Applied {
            confirm_deadline_unix_ms: Some(d),
        } => {
            s.phase = Phase::Pending {
                deadline_unix_ms: *d,
            }
        }
        Record::Applied {
            confirm_deadline_unix_ms: None,
        } => s.phase = Phase::Applied,
        Record::Watchdog { pid } => s.watchdog_pid = Some(*pid),
        Record::Confirmed { .. } => s.phase = Phase::Confirmed,
        Record::RevertBegin { pid, .. } => {
            s.phase = Phase::Reverting;
            s.owner_pid = *pid;
            s.undone.clear();
        }
        Record::Reverted { by, complete, .. } => {
            s.phase = Phase::Reverted {
                by: *by,
                complete: *complete,
            }
        }
    }
}

impl Summary {
    /// Steps to restore on revert, last first: those started and not yet restored.
    pub fn steps_to_restore(&self) -> Vec<usize> {
        let mut steps: Vec<usize> = self
            .attempted
            .iter()
            .copied()
            // A step beyond the plan is a damaged journal line, not something to restore.
            .filter(|s| *s < self.changes.len() && !self.undone.contains(s))
            .collect();
        steps.sort_unstable();
        steps.dedup();
        steps.reverse();
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setting::{Key, Napi, Setting, Target};

    fn begin() -> Record {
        let setting = Setting::new(
            Target::Napi {
                iface: "v0".into(),
                index: 0,
            },
            Key::Napi(Napi::DeferHardIrqs),
        );
        Record::Begin {
            id: "1-7".into(),
            pid: 7,
            started_unix_ms: 1,
            netns: Some("n".into()),
            iface: Some("v0".into()),
            changes: vec![Change {
                setting,
                old: Value::Int(0),
                new: Value::Int(2),
            }],
            preserve: Vec::new(),
        }
    }

    #[test]
    fn a_damaged_intent_step_beyond_the_plan_is_not_restored() {
        let records = [
            begin(),
            Record::Intent { step: 0 },
            Record::Intent { step: usize::MAX },
        ];
        let s = summarize(&records).unwrap();
        assert_eq!(s.steps_to_restore(), [0]);
    }

    #[test]
    fn a_torn_last_line_is_ignored_and_the_crash_is_visible() {
        let mut text = serde_json::to_string(&begin()).unwrap() + "\n";
        text += &(serde_json::to_string(&Record::Intent { step: 0 }).unwrap() + "\n");
        text += "{\"record\":\"writ";
        let records = parse(&text);
        assert_eq!(records.len(), 2);
        let s = summarize(&records).unwrap();
        assert_eq!(s.phase, Phase::Applying);
        assert_eq!(s.steps_to_restore(), [0]);
    }

    #[test]
    fn phases_follow_the_records() {
        let applied = Record::Applied {
            confirm_deadline_unix_ms: Some(9),
        };
        let s = summarize(&[begin(), Record::Intent { step: 0 }, applied.clone()]).unwrap();
        assert_eq!(
            s.phase,
            Phase::Pending {
                deadline_unix_ms: 9
            }
        );
        let s = summarize(&[begin(), applied, Record::Confirmed { at_unix_ms: 5 }]).unwrap();
        assert_eq!(s.phase, Phase::Confirmed);
        let revert = Record::RevertBegin {
            pid: 8,
            by: RevertBy::User,
        };
        let s = summarize(&[begin(), Record::Intent { step: 0 }, revert]).unwrap();
        assert_eq!((s.phase, s.owner_pid), (Phase::Reverting, 8));
    }

    #[test]
    fn records_survive_a_file_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut j = Journal::create(&path).unwrap();
        j.append(&begin()).unwrap();
        j.append(&Record::Intent { step: 0 }).unwrap();
        drop(j);
        Journal::open(&path)
            .unwrap()
            .append(&Record::Written {
                step: 0,
                effective: Value::Int(2),
            })
            .unwrap();
        assert!(Journal::create(&path).is_err(), "never overwrite a journal");
        let records = parse(&std::fs::read_to_string(&path).unwrap());
        assert_eq!(records.len(), 3);
        assert_eq!(summarize(&records).unwrap().effective[&0], Value::Int(2));
    }
}
