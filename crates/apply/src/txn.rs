//! The three user-level operations over the state directory: apply a plan, confirm a pending
//! change, revert the last change. The caller holds the [`Lock`] and passes the time.

use crate::engine::{self, ApplyError, Restored, StepResult};
use crate::host::HostWrite;
use crate::journal::{Journal, Phase, Record, RevertBy, Summary};
use crate::plan::Plan;
use crate::state::{Lock, StateDir, StateError};
use serde::Serialize;

/// Who is applying, where, and when.
#[derive(Debug, Clone)]
pub struct ApplyRequest {
    pub pid: u32,
    pub now_unix_ms: u64,
    pub netns: Option<String>,
    pub iface: Option<String>,
    /// `--confirm-within`, in milliseconds.
    pub confirm_within_ms: Option<u64>,
}

/// A transaction that went through.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    pub id: String,
    pub steps: Vec<StepResult>,
    pub confirm_deadline_unix_ms: Option<u64>,
}

/// Why an apply failed; `Apply` says whether the host was put back.
#[derive(Debug, thiserror::Error)]
pub enum TxnError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error("change {id} did not apply")]
    Apply {
        id: String,
        #[source]
        source: ApplyError,
    },
}

/// The transaction id: start time and pid, sortable and unique under the lock.
pub fn txn_id(now_unix_ms: u64, pid: u32) -> String {
    format!("{now_unix_ms:013}-{pid}")
}

/// Journals and applies `plan`. Does nothing (and writes no journal) for an empty plan.
pub fn apply_plan(
    state: &StateDir,
    lock: &Lock,
    plan: &Plan,
    req: &ApplyRequest,
    host: &mut impl HostWrite,
) -> Result<Option<Applied>, TxnError> {
    if plan.is_noop() {
        return Ok(None);
    }
    let id = txn_id(req.now_unix_ms, req.pid);
    let begin = Record::Begin {
        id: id.clone(),
        pid: req.pid,
        started_unix_ms: req.now_unix_ms,
        netns: req.netns.clone(),
        iface: req.iface.clone(),
        changes: plan.changes.clone(),
        preserve: plan.preserve.clone(),
    };
    let mut journal = state.begin(&begin, lock)?;
    // The deadline counts from the start; the writes take milliseconds, and a deadline that
    // moved with a slow write would surprise the person waiting on it.
    let deadline = req.confirm_within_ms.map(|ms| req.now_unix_ms + ms);
    let steps = engine::apply(&plan.changes, &plan.preserve, host, &mut journal, deadline)
        .map_err(|source| TxnError::Apply {
            id: id.clone(),
            source,
        })?;
    Ok(Some(Applied {
        id,
        steps,
        confirm_deadline_unix_ms: deadline,
    }))
}

/// Records the watchdog's pid in a pending transaction's journal.
pub fn record_watchdog(state: &StateDir, id: &str, pid: u32) -> Result<(), StateError> {
    Ok(Journal::open(&state.journal_path(id))?.append(&Record::Watchdog { pid })?)
}

/// Confirms the pending transaction, if there is one. Returns its id.
pub fn confirm(
    state: &StateDir,
    _lock: &Lock,
    now_unix_ms: u64,
) -> Result<Option<String>, StateError> {
    let all = state.transactions()?;
    let Some(pending) = all
        .iter()
        .rev()
        .find(|s| matches!(s.phase, Phase::Pending { .. }))
    else {
        return Ok(None);
    };
    let mut journal = Journal::open(&state.journal_path(&pending.id))?;
    journal.append(&Record::Confirmed {
        at_unix_ms: now_unix_ms,
    })?;
    Ok(Some(pending.id.clone()))
}

/// What a revert did.
#[derive(Debug, Clone, Serialize)]
pub struct Reverted {
    pub id: String,
    pub by: RevertBy,
    pub restored: Vec<Restored>,
    pub complete: bool,
    /// Why nothing had to be written, when that is the case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Restores the values from before `txn` (from its journal), last change first.
pub fn revert(
    state: &StateDir,
    _lock: &Lock,
    txn: &Summary,
    host: &mut impl HostWrite,
    by: RevertBy,
    pid: u32,
    now_unix_ms: u64,
) -> Result<Reverted, StateError> {
    let mut journal = Journal::open(&state.journal_path(&txn.id))?;
    journal.append(&Record::RevertBegin { pid, by })?;
    let steps = txn.steps_to_restore();
    let restored = engine::restore(&txn.changes, &txn.preserve, &steps, host, &mut journal);
    let complete = restored.iter().all(Restored::ok);
    journal.append(&Record::Reverted {
        at_unix_ms: now_unix_ms,
        by,
        complete,
    })?;
    Ok(Reverted {
        id: txn.id.clone(),
        by,
        restored,
        complete,
        note: None,
    })
}

/// Closes a change whose objects no longer exist (its network namespace was deleted, and
/// every setting in it with it): journals it as reverted without writing anything.
pub fn close_vanished(
    state: &StateDir,
    _lock: &Lock,
    txn: &Summary,
    why: &str,
    (by, pid, now_unix_ms): (RevertBy, u32, u64),
) -> Result<Reverted, StateError> {
    let mut journal = Journal::open(&state.journal_path(&txn.id))?;
    journal.append(&Record::RevertBegin { pid, by })?;
    journal.append(&Record::Reverted {
        at_unix_ms: now_unix_ms,
        by,
        complete: true,
    })?;
    let note = Some(why.to_string());
    Ok(Reverted {
        id: txn.id.clone(),
        by,
        restored: Vec::new(),
        complete: true,
        note,
    })
}
