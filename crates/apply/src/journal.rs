//! The journal of one transaction: JSON lines appended and flushed to disk (`fsync`) before
//! the write they announce, so a crash at any point leaves enough on disk to put every value
//! back. [`summarize`] replays the records into what happened, purely.
//!
//! A transaction's lines, in order: `begin` (the whole plan with old values), then per step
//! `intent` before the write and `written` after it with the value read back; `applied` or
//! `failed` + `undo`/`undone` + `rolled-back`; later `watchdog`, `confirmed`, or
//! `revert-begin` + `undo`/`undone` + `reverted`.

use crate::fs::{AppendFile, Fs};
use crate::identity::Identities;
use crate::plan::{Change, Preserved};
use nictune_host::write::value::HostValue;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "kebab-case")]
pub enum Record {
    /// The first line: the whole plan, with the old values undo restores.
    Begin {
        /// The transaction id, `<start ms, zero-padded to 13 digits>-<pid>` (`txn::txn_id`);
        /// also the journal's file name.
        id: String,
        /// The applying process.
        pid: u32,
        /// When the apply started, Unix milliseconds.
        started_unix_ms: u64,
        /// The network namespace the applier ran in (`--netns`, or a testbed end); `None`
        /// for the initial one. A revert must run there to reach the interface.
        netns: Option<String>,
        /// The interface the plan was resolved for; `None` when the request named none (only
        /// keys that need no interface: sysctls, IRQ affinity).
        iface: Option<String>,
        /// The writes, in apply order; steps are indexes into this list.
        changes: Vec<Change>,
        /// Settings the changes may disturb, with their values before the apply; absent in
        /// journals written before it existed, hence the default.
        #[serde(default)]
        preserve: Vec<Preserved>,
        /// The kernel's boot id when the apply started (`/proc/sys/kernel/random/boot_id`):
        /// every setting nictune writes lasts until the next reboot, so a change from another
        /// boot has nothing left to restore. Absent in older journals.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        boot: Option<String>,
        /// What identified each interface and IRQ of the changes and preserved settings
        /// ([`crate::identity`]): a revert checks it before it writes. Absent in journals
        /// from before it was recorded, which are restored by name and number.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        identity: Option<Identities>,
    },
    /// Step `step` is about to be written (appended before the write).
    Intent {
        /// Index into the `begin` record's changes.
        step: usize,
    },
    /// Step `step` was written and read back.
    Written {
        /// Index into the `begin` record's changes.
        step: usize,
        /// The value read back after the write (a driver may round what it was given).
        effective: HostValue,
    },
    /// The apply stopped at step `step`; rollback follows.
    Failed {
        /// The step that failed or was not reached; equal to the number of changes when
        /// every step was written and the end could not be recorded (or a signal came).
        step: usize,
        /// Why, as shown to the user.
        error: String,
    },
    /// Step `step` is about to be restored to its old value.
    Undo {
        /// Index into the `begin` record's changes.
        step: usize,
    },
    /// Step `step` was restored, or restoring it failed.
    Undone {
        /// Index into the `begin` record's changes.
        step: usize,
        /// The value read back after the restore; `None` when it failed.
        effective: Option<HostValue>,
        /// Why the restore failed; `None` when it succeeded.
        error: Option<String>,
    },
    /// A failed apply's rollback finished.
    RolledBack {
        /// Every written step was restored (true also when nothing had been written).
        complete: bool,
    },
    /// Every step was written: the change is in place.
    Applied {
        /// Unix milliseconds by which `nictune confirm` must run before the watchdog
        /// reverts; `None` without `--confirm-within` (the change is kept).
        confirm_deadline_unix_ms: Option<u64>,
    },
    /// An auto-revert watchdog process took charge of the pending change.
    Watchdog {
        /// The watchdog's process id.
        pid: u32,
    },
    /// The pending change was confirmed and is kept.
    Confirmed {
        /// When, Unix milliseconds.
        at_unix_ms: u64,
    },
    /// A revert started; `undo`/`undone` lines follow.
    RevertBegin {
        /// The reverting process, which now owns the journal.
        pid: u32,
        /// The user or the watchdog.
        by: RevertBy,
        /// When the revert started, Unix milliseconds: the reverting process was running
        /// then, which tells it from a later one reusing its pid. Absent in older journals.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at_unix_ms: Option<u64>,
    },
    /// A revert finished.
    Reverted {
        /// When, Unix milliseconds.
        at_unix_ms: u64,
        /// The user or the watchdog.
        by: RevertBy,
        /// Every step to restore was restored.
        complete: bool,
        /// Settings not written, each `<setting>: <why>` (the object gone, or now another
        /// device's); absent when none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        left_out: Vec<String>,
        /// IRQ values written to another number, each `<setting> → irq N (<name>)`: the line
        /// that carries the recorded name now; absent when none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        renumbered: Vec<String>,
        /// Interface values written under the name their device has now, each
        /// `<setting> → <name>`: the recorded device, renamed since; absent when none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        renamed: Vec<String>,
        /// Settings found changed since the change (and put back all the same), each
        /// `<setting>: <found> since, not <left>`; absent when none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        drifted: Vec<String>,
    },
}

/// Who reverted a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RevertBy {
    /// `nictune revert`, or a tool reverting on the user's behalf (a tune between candidates).
    User,
    /// The auto-revert watchdog, when the confirmation deadline passed.
    Watchdog,
    /// The next change in the same place, which took over its values from before
    /// ([`crate::txn::replace_plan`]): closed without writes, nothing of it to restore.
    Replacement,
}

/// A journal file open for appending.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: Box<dyn AppendFile>,
    /// The file may end in a torn line (a write failed part-way, or the file was found so):
    /// the next record starts on a new line, so it is not glued to the torn one.
    torn: bool,
}

/// A journal could not be written or read.
#[derive(Debug, thiserror::Error)]
#[error("{op} journal {path}: {source}")]
pub struct JournalError {
    /// What was being done: "creating", "opening", "writing", ….
    pub op: &'static str,
    /// The journal file.
    pub path: PathBuf,
    /// The file-system error.
    #[source]
    pub source: std::io::Error,
}

impl JournalError {
    fn at<'a>(
        op: &'static str,
        path: &'a Path,
    ) -> impl FnOnce(std::io::Error) -> JournalError + 'a {
        move |source| JournalError {
            op,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl Journal {
    /// Creates a new journal (failing if it exists) and makes its directory entry durable.
    pub fn create(fs: &dyn Fs, path: &Path) -> Result<Journal, JournalError> {
        let err = JournalError::at("creating", path);
        let file = fs.create_new(path).map_err(err)?;
        if let Some(dir) = path.parent() {
            fs.sync_dir(dir)
                .map_err(JournalError::at("creating", path))?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            file,
            torn: false,
        })
    }

    /// Opens an existing journal to append to it.
    pub fn open(fs: &dyn Fs, path: &Path) -> Result<Journal, JournalError> {
        let text = fs
            .read_to_string(path)
            .map_err(JournalError::at("opening", path))?;
        let file = fs
            .open_append(path)
            .map_err(JournalError::at("opening", path))?;
        Ok(Journal {
            path: path.to_path_buf(),
            file,
            torn: !text.is_empty() && !text.ends_with('\n'),
        })
    }

    /// The journal file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as a line and waits until it is on disk.
    pub fn append(&mut self, record: &Record) -> Result<(), JournalError> {
        let mut line = if self.torn {
            "\n".to_string()
        } else {
            String::new()
        };
        line += &serde_json::to_string(record).expect("journal records always serialise");
        line.push('\n');
        let written = self.file.write_all(line.as_bytes());
        self.torn = written.is_err();
        written
            .and_then(|()| self.file.sync_data())
            .map_err(JournalError::at("writing", &self.path))
    }
}

/// Parses journal text. A last line cut short by a crash is ignored; so is any line that is
/// not a record (a journal must stay readable for recovery whatever happened to it).
pub fn parse(text: &str) -> Vec<Record> {
    parse_numbered(text).into_iter().map(|(_, r)| r).collect()
}

/// [`parse`], keeping each record's line number (from 1) for messages about it.
pub fn parse_numbered(text: &str) -> Vec<(usize, Record)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| serde_json::from_str(l).ok().map(|r| (i + 1, r)))
        .collect()
}

/// A journal line that parses but cannot be nictune's: it names a step the change does not
/// have. It is left out of the summary (so a revert restores the valid steps and never
/// indexes past the plan) and reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Defect {
    /// The line number in the journal file, from 1.
    pub line: usize,
    /// What is wrong with it, for the user.
    pub problem: String,
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
        /// Unix milliseconds after which the watchdog reverts.
        deadline_unix_ms: u64,
    },
    /// Was pending and `nictune confirm` kept it.
    Confirmed,
    /// A step failed and the earlier ones were undone.
    RolledBack {
        /// Every written step was restored.
        complete: bool,
    },
    /// A revert started and has not finished.
    Reverting,
    /// A revert finished.
    Reverted {
        /// The user or the watchdog.
        by: RevertBy,
        /// Every step to restore was restored.
        complete: bool,
    },
}

/// What the records of one transaction say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// The transaction id, as in its `begin` record.
    pub id: String,
    /// When the apply started, Unix milliseconds.
    pub started_unix_ms: u64,
    /// The namespace the apply ran in; `None` for the initial one.
    pub netns: Option<String>,
    /// The interface the plan was for; `None` when the request named none.
    pub iface: Option<String>,
    /// The plan's writes, in apply order.
    pub changes: Vec<Change>,
    /// Settings captured before the apply, restored with the steps.
    pub preserve: Vec<Preserved>,
    /// The boot the change was made in, if its journal says.
    pub boot: Option<String>,
    /// What identified its interfaces and IRQs; `None` in a journal from before they were
    /// recorded.
    pub identity: Option<Identities>,
    /// Steps whose write was started (an `intent` line exists).
    pub attempted: Vec<usize>,
    /// HostValue read back after each written step.
    pub effective: BTreeMap<usize, HostValue>,
    /// Steps restored by the last rollback or revert.
    pub undone: Vec<usize>,
    /// Where the transaction stands after its last record.
    pub phase: Phase,
    /// The process that last worked on the journal: the applier, reverter or watchdog.
    pub owner_pid: u32,
    /// A time the owner was running at, Unix milliseconds: the apply's start, or the
    /// revert's (`u64::MAX` when an older journal's revert did not say: the pid alone then
    /// tells whether it is alive).
    pub owner_since_unix_ms: u64,
    /// The auto-revert watchdog that took charge, from the last `watchdog` record; `None`
    /// if none did.
    pub watchdog_pid: Option<u32>,
    /// Lines left out because they cannot be nictune's.
    pub defects: Vec<Defect>,
    /// What the last finished revert left out and where it wrote renumbered IRQs, from its
    /// `reverted` record.
    pub revert_notes: RevertNotes,
}

/// What a revert did other than restore each value where the journal says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RevertNotes {
    /// Settings not written, each `<setting>: <why>`.
    pub left_out: Vec<String>,
    /// IRQ values written to another number, each `<setting> → irq N (<name>)`.
    pub renumbered: Vec<String>,
    /// Interface values written under their device's new name, each `<setting> → <name>`.
    pub renamed: Vec<String>,
    /// Settings found changed since the change, each `<setting>: <found> since, not <left>`.
    pub drifted: Vec<String>,
}

/// Replays records into a summary; `None` without a `begin` record.
pub fn summarize(records: &[Record]) -> Option<Summary> {
    let numbered: Vec<(usize, Record)> = records
        .iter()
        .cloned()
        .zip(1..)
        .map(|(r, i)| (i, r))
        .collect();
    summarize_numbered(&numbered)
}

/// [`summarize`] over records with their line numbers (see [`parse_numbered`]).
pub fn summarize_numbered(records: &[(usize, Record)]) -> Option<Summary> {
    let Some((
        _,
        Record::Begin {
            id,
            pid,
            started_unix_ms,
            netns,
            iface,
            changes,
            preserve,
            boot,
            identity,
        },
    )) = records.first()
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
        boot: boot.clone(),
        identity: identity.clone(),
        attempted: Vec::new(),
        effective: BTreeMap::new(),
        undone: Vec::new(),
        phase: Phase::Applying,
        owner_pid: *pid,
        owner_since_unix_ms: *started_unix_ms,
        watchdog_pid: None,
        defects: Vec::new(),
        revert_notes: RevertNotes::default(),
    };
    for (line, record) in &records[1..] {
        match step_defect(record, s.changes.len()) {
            Some(problem) => s.defects.push(Defect {
                line: *line,
                problem,
            }),
            None => replay(&mut s, record),
        }
    }
    Some(s)
}

/// Why a record cannot belong to a change of `steps` steps: it names a step past the end.
/// (`failed` may name the end itself: a failure after the last step.)
fn step_defect(record: &Record, steps: usize) -> Option<String> {
    let (name, step, limit) = match record {
        Record::Intent { step } => ("intent", *step, steps),
        Record::Written { step, .. } => ("written", *step, steps),
        Record::Undo { step } => ("undo", *step, steps),
        Record::Undone { step, .. } => ("undone", *step, steps),
        Record::Failed { step, .. } => ("failed", *step, steps + 1),
        _ => return None,
    };
    (step >= limit).then(|| {
        format!(
            "record \"{name}\" names step {step}, but the change has {steps} step(s), numbered 0 to {}",
            steps.saturating_sub(1)
        )
    })
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
        Record::RevertBegin {
            pid, at_unix_ms, ..
        } => {
            s.phase = Phase::Reverting;
            s.owner_pid = *pid;
            s.owner_since_unix_ms = at_unix_ms.unwrap_or(u64::MAX);
            s.undone.clear();
        }
        Record::Reverted {
            by,
            complete,
            left_out,
            renumbered,
            renamed,
            drifted,
            ..
        } => {
            s.phase = Phase::Reverted {
                by: *by,
                complete: *complete,
            };
            s.revert_notes = RevertNotes {
                left_out: left_out.clone(),
                renumbered: renumbered.clone(),
                renamed: renamed.clone(),
                drifted: drifted.clone(),
            };
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
    use crate::fs::StdFs;
    use nictune_host::write::setting::{Key, Napi, Object, Setting};

    fn begin() -> Record {
        let setting = Setting::new(
            Object::Napi {
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
                old: HostValue::Int(0),
                new: HostValue::Int(2),
            }],
            preserve: Vec::new(),
            boot: None,
            identity: None,
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
            at_unix_ms: Some(77),
        };
        let s = summarize(&[begin(), Record::Intent { step: 0 }, revert]).unwrap();
        assert_eq!((s.phase, s.owner_pid), (Phase::Reverting, 8));
        assert_eq!(
            s.owner_since_unix_ms, 77,
            "the reverter was running when it began"
        );
    }

    #[test]
    fn records_survive_a_file_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut j = Journal::create(&StdFs, &path).unwrap();
        j.append(&begin()).unwrap();
        j.append(&Record::Intent { step: 0 }).unwrap();
        drop(j);
        Journal::open(&StdFs, &path)
            .unwrap()
            .append(&Record::Written {
                step: 0,
                effective: HostValue::Int(2),
            })
            .unwrap();
        assert!(
            Journal::create(&StdFs, &path).is_err(),
            "never overwrite a journal"
        );
        let records = parse(&std::fs::read_to_string(&path).unwrap());
        assert_eq!(records.len(), 3);
        assert_eq!(
            summarize(&records).unwrap().effective[&0],
            HostValue::Int(2)
        );
    }

    #[test]
    fn a_record_naming_a_step_past_the_plan_is_a_defect_not_a_step() {
        let mut text = serde_json::to_string(&begin()).unwrap() + "\n";
        text += "{\"record\":\"intent\",\"step\":0}\n";
        text += "{\"record\":\"intent\",\"step\":99}\n";
        let s = summarize_numbered(&parse_numbered(&text)).unwrap();
        assert_eq!(s.attempted, [0]);
        assert_eq!(s.defects.len(), 1);
        assert_eq!(s.defects[0].line, 3);
        assert!(
            s.defects[0]
                .problem
                .contains("names step 99, but the change has 1 step(s)"),
            "{}",
            s.defects[0].problem
        );
    }
}
