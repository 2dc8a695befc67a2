//! The transaction: for each change, journal the intent, write, read back and journal the
//! effective value; on any failure undo what was started, last first, and verify.
//!
//! Undo runs in reverse order and then re-reads every restored setting, re-writing any that an
//! earlier-stage restore disturbed (restoring a channel count recreates queues and drops their
//! RPS masks, which were restored before it). The journal is written before each host write,
//! so [`restore`] can finish the job after a crash from the journal alone.

use crate::host::{HostError, HostWrite};
use crate::journal::{Journal, JournalError, Record};
use crate::plan::{Change, Preserved};
use crate::setting::Setting;
use crate::value::Value;
use serde::Serialize;

/// The result of one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepResult {
    pub setting: Setting,
    pub old: Value,
    pub new: Value,
    /// What the host reports after the write. Differs from `new` when the driver rounds.
    pub effective: Value,
}

/// The result of undoing one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Restored {
    pub setting: Setting,
    pub wanted: Value,
    /// The value read back after the restore, if it could be read.
    pub effective: Option<Value>,
    /// Why the restore write or read failed.
    pub error: Option<String>,
}

impl Restored {
    pub fn ok(&self) -> bool {
        self.effective.as_ref() == Some(&self.wanted)
    }
}

/// Why an apply did not complete.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// Journaling failed before the first write: nothing was changed.
    #[error("nothing was changed: {0}")]
    Journal(#[from] JournalError),
    /// A step failed and every earlier step was put back.
    #[error("step {} failed ({cause}); it and the {step} step(s) before it were rolled back", step + 1)]
    RolledBack {
        step: usize,
        cause: String,
        restored: Vec<Restored>,
    },
    /// A step failed and some values could not be put back.
    #[error(
        "step {step} failed ({cause}); rollback incomplete: {}",
        failed_names(restored)
    )]
    RollbackIncomplete {
        step: usize,
        cause: String,
        restored: Vec<Restored>,
    },
}

fn failed_names(restored: &[Restored]) -> String {
    let bad: Vec<String> = restored
        .iter()
        .filter(|r| !r.ok())
        .map(|r| r.setting.to_string())
        .collect();
    bad.join(", ")
}

/// Applies `changes` in order, journaling each step. The `begin` record must already be in
/// the journal. Ends with an `applied` record carrying the confirmation deadline, if any.
pub fn apply(
    changes: &[Change],
    preserve: &[Preserved],
    host: &mut impl HostWrite,
    journal: &mut Journal,
    confirm_deadline_unix_ms: Option<u64>,
) -> Result<Vec<StepResult>, ApplyError> {
    let mut done = Vec::with_capacity(changes.len());
    for (step, change) in changes.iter().enumerate() {
        journal.append(&Record::Intent { step })?;
        match write_and_read(host, &change.setting, &change.new) {
            Ok(effective) => {
                journal_best_effort(
                    journal,
                    &Record::Written {
                        step,
                        effective: effective.clone(),
                    },
                );
                done.push(StepResult {
                    setting: change.setting.clone(),
                    old: change.old.clone(),
                    new: change.new.clone(),
                    effective,
                });
            }
            Err(e) => {
                let failure = Failure {
                    step,
                    cause: e.to_string(),
                };
                return Err(roll_back(changes, preserve, failure, host, journal));
            }
        }
    }
    journal.append(&Record::Applied {
        confirm_deadline_unix_ms,
    })?;
    Ok(done)
}

fn write_and_read(
    host: &mut impl HostWrite,
    setting: &Setting,
    value: &Value,
) -> Result<Value, HostError> {
    host.write(setting, value)?;
    host.read(setting)
}

/// After a record is on disk the host write happens regardless; a later record that fails to
/// land only costs detail (the restore list comes from `intent` lines, which are strict).
fn journal_best_effort(journal: &mut Journal, record: &Record) {
    let _ = journal.append(record);
}

struct Failure {
    step: usize,
    cause: String,
}

fn roll_back(
    changes: &[Change],
    preserve: &[Preserved],
    Failure { step, cause }: Failure,
    host: &mut impl HostWrite,
    journal: &mut Journal,
) -> ApplyError {
    journal_best_effort(
        journal,
        &Record::Failed {
            step,
            error: cause.clone(),
        },
    );
    let steps: Vec<usize> = (0..=step).rev().collect();
    let restored = restore(changes, preserve, &steps, host, journal);
    let complete = restored.iter().all(Restored::ok);
    journal_best_effort(journal, &Record::RolledBack { complete });
    if complete {
        ApplyError::RolledBack {
            step,
            cause,
            restored,
        }
    } else {
        ApplyError::RollbackIncomplete {
            step,
            cause,
            restored,
        }
    }
}

/// Puts `changes[step].old` back for each step in `steps` (given last first), journaling each,
/// then re-reads them all in apply order and re-writes any that a later restore disturbed.
/// Last, settings the changes disturbed as a side effect are put back. Returns one entry per
/// step, in the order given, then one per preserved setting.
pub fn restore(
    changes: &[Change],
    preserve: &[Preserved],
    steps: &[usize],
    host: &mut impl HostWrite,
    journal: &mut Journal,
) -> Vec<Restored> {
    for &step in steps {
        journal_best_effort(journal, &Record::Undo { step });
        let change = &changes[step];
        let result = write_and_read(host, &change.setting, &change.old);
        journal_best_effort(journal, &undone(step, &result));
    }
    let mut forward: Vec<usize> = steps.to_vec();
    forward.sort_unstable();
    let mut results: Vec<(usize, Restored)> = forward
        .iter()
        .map(|&s| (s, verify_or_rewrite(&changes[s], host)))
        .collect();
    results.sort_by_key(|(s, _)| std::cmp::Reverse(*s));
    let collateral = preserve.iter().map(|p| {
        let change = Change {
            setting: p.setting.clone(),
            old: p.value.clone(),
            new: p.value.clone(),
        };
        verify_or_rewrite(&change, host)
    });
    results
        .into_iter()
        .map(|(_, r)| r)
        .chain(collateral)
        .collect()
}

fn undone(step: usize, result: &Result<Value, HostError>) -> Record {
    match result {
        Ok(v) => Record::Undone {
            step,
            effective: Some(v.clone()),
            error: None,
        },
        Err(e) => Record::Undone {
            step,
            effective: None,
            error: Some(e.to_string()),
        },
    }
}

/// Reads one restored setting; if it is not the old value, writes it once more.
fn verify_or_rewrite(change: &Change, host: &mut impl HostWrite) -> Restored {
    let current = host.read(&change.setting);
    let result = match current {
        Ok(v) if v == change.old => Ok(v),
        _ => write_and_read(host, &change.setting, &change.old),
    };
    Restored {
        setting: change.setting.clone(),
        wanted: change.old.clone(),
        effective: result.as_ref().ok().cloned(),
        error: result.err().map(|e| e.to_string()),
    }
}
