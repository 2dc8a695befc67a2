//! The transaction: for each change, journal the intent, write, read back and journal the
//! effective value; on any failure undo what was started, last first, and verify.
//!
//! Undo runs in reverse order and then re-reads every restored setting, re-writing any that an
//! earlier-stage restore disturbed (restoring a channel count recreates queues and drops their
//! RPS masks, which were restored before it). The journal is written before each host write,
//! so [`restore`] can finish the job after a crash from the journal alone.

use crate::identity::{locate, Identities, Place, Renamed, Renumbered};
use crate::journal::{Journal, Record};
use crate::plan::{Change, Preserved};
use nictune_host::write::setting::Setting;
use nictune_host::write::value::HostValue;
use nictune_host::write::{HostError, HostWrite};
use serde::Serialize;
use std::collections::BTreeMap;

/// The result of one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepResult {
    /// The setting written.
    pub setting: Setting,
    /// Its value before the write, as the plan read it.
    pub old: HostValue,
    /// The value written.
    pub new: HostValue,
    /// What the host reports after the write. Differs from `new` when the driver rounds.
    pub effective: HostValue,
}

/// The result of undoing one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Restored {
    /// The setting restored: a step's, or one the plan preserved.
    pub setting: Setting,
    /// The value to put back: the step's old value, or the preserved one.
    pub wanted: HostValue,
    /// The value read back after the restore, if it could be read.
    pub effective: Option<HostValue>,
    /// Why the restore write or read failed.
    pub error: Option<String>,
    /// The IRQ the value went to instead of the journaled one: the line that carries the
    /// recorded action name now (`null`: where the journal says).
    pub renumbered: Option<Renumbered>,
    /// The name the value went to instead of the journaled one: the recorded device's, which
    /// was renamed since (`null`: where the journal says).
    pub renamed: Option<Renamed>,
    /// Why nothing was written: the object is gone or now another device's
    /// ([`crate::identity`]); `null` when it was written.
    pub left_out: Option<String>,
    /// The setting was no longer at the value the change left when the revert came: someone
    /// or something (irqbalance, a script, another tool) changed it since. The revert put
    /// the old value back all the same; `null` when it was as the change left it, or when
    /// that is not known (a rollback, or a step whose read-back the journal lacks).
    pub drifted: Option<Drift>,
}

/// A setting found changed since the change that a revert undoes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// What the change left in place: its read-back after the write.
    pub left: HostValue,
    /// What the revert found there before it wrote.
    pub found: HostValue,
}

impl Restored {
    /// The value read back is the wanted one, or there is nothing of the change's left to
    /// restore (the object is gone or another device's: [`Restored::left_out`]).
    pub fn ok(&self) -> bool {
        self.left_out.is_some() || self.effective.as_ref() == Some(&self.wanted)
    }

    /// Written and read back as wanted.
    pub fn written(&self) -> bool {
        self.left_out.is_none() && self.ok()
    }
}

/// Why an apply did not complete.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// Stopped before the first write (journaling failed, or a signal): nothing was changed.
    #[error("{cause}; nothing was changed")]
    NothingChanged {
        /// Why it stopped, for the user.
        cause: String,
    },
    /// Stopped part-way and every step started was put back.
    #[error("{cause}; rolled back: every value written is back as it was")]
    RolledBack {
        /// The step that failed (the number of steps for a failure after the last one).
        step: usize,
        /// Why it stopped, for the user.
        cause: String,
        /// One per written step, last step first, then one per preserved setting, each
        /// verified after all were restored (all `ok`).
        restored: Vec<Restored>,
    },
    /// Stopped part-way and some values could not be put back.
    #[error(
        "{cause}; rollback incomplete, still changed: {}",
        failed_names(restored)
    )]
    RollbackIncomplete {
        /// The step that failed (the number of steps for a failure after the last one).
        step: usize,
        /// Why it stopped, for the user.
        cause: String,
        /// One per written step, last step first, then one per preserved setting, each
        /// verified after all were restored; those not `ok` are still changed.
        restored: Vec<Restored>,
    },
}

/// What a failed change left on the host: the exit-code contract of `apply` (2, 3, 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Left {
    /// Nothing was written.
    Nothing,
    /// Something was written and every value was put back.
    AllPutBack,
    /// Some values are still changed; the error names them.
    SomeChanged,
}

impl ApplyError {
    /// What the failure left on the host, for the exit code.
    pub fn left(&self) -> Left {
        match self {
            ApplyError::NothingChanged { .. } => Left::Nothing,
            ApplyError::RolledBack { .. } => Left::AllPutBack,
            ApplyError::RollbackIncomplete { .. } => Left::SomeChanged,
        }
    }

    /// The settings still changed (empty unless [`Left::SomeChanged`]).
    pub fn still_changed(&self) -> Vec<&Setting> {
        match self {
            ApplyError::RollbackIncomplete { restored, .. } => restored
                .iter()
                .filter(|r| !r.ok())
                .map(|r| &r.setting)
                .collect(),
            _ => Vec::new(),
        }
    }
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
/// `stop` is asked before each step and before the end: when it says so (a signal arrived),
/// the steps written are rolled back.
///
/// A step is written only after its `intent` record is on disk, and the change counts as
/// applied only once its `applied` record is: when either cannot be journaled, every step
/// written so far is rolled back, so a journal error never leaves values changed silently.
pub fn apply(
    (changes, preserve, ids): (&[Change], &[Preserved], Option<&Identities>),
    host: &mut impl HostWrite,
    journal: &mut Journal,
    (confirm_deadline_unix_ms, stop): (Option<u64>, &dyn Fn() -> bool),
) -> Result<Vec<StepResult>, ApplyError> {
    let mut done = Vec::with_capacity(changes.len());
    let undo = |failure: Failure, host: &mut _, journal: &mut _| {
        roll_back((changes, preserve, ids), failure, host, journal)
    };
    for group in groups(changes.iter().map(|c| &c.setting)) {
        let (first, last) = (*group.start(), *group.end());
        let name = |step: usize| format!("step {} ({})", step + 1, changes[step].setting);
        let names = || {
            let all: Vec<String> = group.clone().map(name).collect();
            all.join(", ")
        };
        if stop() {
            let cause = format!("interrupted by a signal before {}", names());
            return Err(undo(Failure::before(first, cause), host, journal));
        }
        for step in group.clone() {
            if let Err(e) = journal.append(&Record::Intent { step }) {
                let cause = format!("journaling {} failed before its write: {e}", name(step));
                return Err(undo(Failure::before(first, cause), host, journal));
            }
        }
        let items: Vec<(&Setting, &HostValue)> = group
            .clone()
            .map(|i| (&changes[i].setting, &changes[i].new))
            .collect();
        match write_and_read_all(host, &items) {
            Ok(effective) => {
                for (step, effective) in group.clone().zip(effective) {
                    journal_best_effort(
                        journal,
                        &Record::Written {
                            step,
                            effective: effective.clone(),
                        },
                    );
                    let change = &changes[step];
                    done.push(StepResult {
                        setting: change.setting.clone(),
                        old: change.old.clone(),
                        new: change.new.clone(),
                        effective,
                    });
                }
            }
            Err(e) => {
                let cause = format!("{} failed ({e})", names());
                return Err(undo(Failure::at(last, cause), host, journal));
            }
        }
    }
    let all = changes.len();
    if stop() {
        let cause = format!("interrupted by a signal after all {all} step(s), before the end");
        return Err(undo(Failure::before(all, cause), host, journal));
    }
    let end = Record::Applied {
        confirm_deadline_unix_ms,
    };
    if let Err(e) = journal.append(&end) {
        let cause = format!("journaling the end of the change failed after all {all} step(s): {e}");
        return Err(undo(Failure::before(all, cause), host, journal));
    }
    Ok(done)
}

fn write_and_read(
    host: &mut impl HostWrite,
    setting: &Setting,
    value: &HostValue,
) -> Result<HostValue, HostError> {
    host.write(setting, value)?;
    host.read(setting)
}

/// Writes settings that go together ([`HostWrite::write_all`]: one reload for the
/// parameters of one module), then reads each back.
fn write_and_read_all(
    host: &mut impl HostWrite,
    items: &[(&Setting, &HostValue)],
) -> Result<Vec<HostValue>, HostError> {
    host.write_all(items)?;
    items.iter().map(|(s, _)| host.read(s)).collect()
}

/// `settings` cut into runs of consecutive indexes written by one operation
/// ([`Setting::written_with`]); every other setting is a run of its own.
fn groups<'a>(
    settings: impl IntoIterator<Item = &'a Setting>,
) -> Vec<std::ops::RangeInclusive<usize>> {
    let mut runs: Vec<std::ops::RangeInclusive<usize>> = Vec::new();
    let mut previous: Option<&Setting> = None;
    for (i, s) in settings.into_iter().enumerate() {
        match runs.last_mut() {
            Some(run) if previous.is_some_and(|p| p.written_with(s)) => {
                *run = *run.start()..=i;
            }
            _ => runs.push(i..=i),
        }
        previous = Some(s);
    }
    runs
}

/// After a record is on disk the host write happens regardless; a later record that fails to
/// land only costs detail (the restore list comes from `intent` lines, which are strict).
fn journal_best_effort(journal: &mut Journal, record: &Record) {
    let _ = journal.append(record);
}

/// Where an apply stopped: steps `0..written` were started (their intent is on disk).
struct Failure {
    step: usize,
    written: usize,
    cause: String,
}

impl Failure {
    /// Step `step` failed in its write: it may have half taken effect.
    fn at(step: usize, cause: String) -> Failure {
        Failure {
            step,
            written: step + 1,
            cause,
        }
    }

    /// Stopped before step `step` was written.
    fn before(step: usize, cause: String) -> Failure {
        Failure {
            step,
            written: step,
            cause,
        }
    }
}

fn roll_back(
    undo: (&[Change], &[Preserved], Option<&Identities>),
    Failure {
        step,
        written,
        cause,
    }: Failure,
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
    if written == 0 {
        journal_best_effort(journal, &Record::RolledBack { complete: true });
        return ApplyError::NothingChanged { cause };
    }
    let steps: Vec<usize> = (0..written).rev().collect();
    // Written moments ago by this very process: nothing to compare for drift.
    let restored = restore(undo, &steps, &BTreeMap::new(), host, journal);
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
///
/// Each setting is looked up against the identities `ids` recorded right before it is
/// written ([`crate::identity::locate`]): an IRQ renumbered since goes to its new number, an
/// interface renamed since to its new name, an object gone or now another device's is left
/// out ([`Restored::left_out`]), never written.
///
/// `left` holds what each step left in place (its read-back after the write, from the
/// journal); a step found at another value right before its restore — neither that nor the
/// old value it goes back to — is written all the same and reported [`Restored::drifted`].
/// Empty: no such check (a rollback).
pub fn restore(
    (changes, preserve, ids): (&[Change], &[Preserved], Option<&Identities>),
    steps: &[usize],
    left: &BTreeMap<usize, HostValue>,
    host: &mut impl HostWrite,
    journal: &mut Journal,
) -> Vec<Restored> {
    let mut drifts: BTreeMap<usize, Drift> = BTreeMap::new();
    for run in groups(steps.iter().map(|&s| &changes[s].setting)) {
        let run: Vec<(usize, Setting)> = steps[run]
            .iter()
            .filter_map(|&s| {
                Some((
                    s,
                    locate(ids, &changes[s].setting, host).setting(&changes[s].setting)?,
                ))
            })
            .collect();
        for (step, at) in &run {
            let Some(left) = left.get(step) else {
                continue;
            };
            // Found at the old value already (a revert killed part-way put it back, or
            // someone did): nothing to undo there, nor to report.
            match host.read(at) {
                Ok(found) if found != *left && found != changes[*step].old => {
                    let left = left.clone();
                    drifts.insert(*step, Drift { left, found });
                }
                _ => {}
            }
        }
        for &(step, _) in &run {
            journal_best_effort(journal, &Record::Undo { step });
        }
        let items: Vec<(&Setting, &HostValue)> =
            run.iter().map(|(s, at)| (at, &changes[*s].old)).collect();
        match write_and_read_all(host, &items) {
            Ok(values) => {
                for (&(step, _), v) in run.iter().zip(values) {
                    journal_best_effort(journal, &undone(step, &Ok(v)));
                }
            }
            Err(e) => {
                for &(step, _) in &run {
                    journal_best_effort(journal, &undone(step, &Err(e.clone())));
                }
            }
        }
    }
    let mut forward: Vec<usize> = steps.to_vec();
    forward.sort_unstable();
    let mut results: Vec<(usize, Restored)> = forward
        .iter()
        .map(|&s| {
            let mut r = verify_or_rewrite(&changes[s], ids, host);
            r.drifted = drifts.remove(&s);
            (s, r)
        })
        .collect();
    results.sort_by_key(|(s, _)| std::cmp::Reverse(*s));
    let collateral = restore_preserved(preserve, ids, host);
    results
        .into_iter()
        .map(|(_, r)| r)
        .chain(collateral)
        .collect()
}

/// Puts back each preserved setting that is no longer at its value, those written together
/// (the parameters of one module) in one write, and reads every one back.
fn restore_preserved(
    preserve: &[Preserved],
    ids: Option<&Identities>,
    host: &mut impl HostWrite,
) -> Vec<Restored> {
    let mut differs: Vec<(Setting, &HostValue)> = Vec::new();
    for p in preserve {
        let Some(at) = locate(ids, &p.setting, host).setting(&p.setting) else {
            continue;
        };
        if host.read(&at).is_ok_and(|v| v != p.value) {
            differs.push((at, &p.value));
        }
    }
    for run in groups(differs.iter().map(|(at, _)| at)) {
        let items: Vec<(&Setting, &HostValue)> =
            differs[run].iter().map(|(at, v)| (at, *v)).collect();
        // A failed write shows in the read-back below, which writes once more.
        let _ = host.write_all(&items);
    }
    preserve
        .iter()
        .map(|p| {
            let change = Change {
                setting: p.setting.clone(),
                old: p.value.clone(),
                new: p.value.clone(),
            };
            verify_or_rewrite(&change, ids, host)
        })
        .collect()
}

fn undone(step: usize, result: &Result<HostValue, HostError>) -> Record {
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

/// Reads one restored setting (where it is now: [`crate::identity::locate`]); if it is not
/// the old value, writes it once more.
fn verify_or_rewrite(
    change: &Change,
    ids: Option<&Identities>,
    host: &mut impl HostWrite,
) -> Restored {
    let place = locate(ids, &change.setting, host);
    let at = place.setting(&change.setting);
    let mut restored = Restored {
        setting: change.setting.clone(),
        wanted: change.old.clone(),
        effective: None,
        error: None,
        renumbered: None,
        renamed: None,
        left_out: None,
        drifted: None,
    };
    match place {
        Place::LeftOut(why) => restored.left_out = Some(why),
        Place::Moved(r) => restored.renumbered = Some(r),
        Place::Renamed(r) => restored.renamed = Some(r),
        Place::Here => {}
    }
    let Some(at) = at else {
        return restored;
    };
    let result = match host.read(&at) {
        Ok(v) if v == change.old => Ok(v),
        _ => write_and_read(host, &at, &change.old),
    };
    restored.effective = result.as_ref().ok().cloned();
    restored.error = result.err().map(|e| e.to_string());
    restored
}
