//! The three user-level operations over the state directory: apply a plan, confirm a pending
//! change, revert the last change. The caller holds the [`Lock`] and passes the time.

use crate::engine::{self, ApplyError, Left, Restored, StepResult};
use crate::identity::Identities;
use crate::journal::{Phase, Record, RevertBy, Summary};
use crate::plan::{Plan, Preserved};
use crate::state::{Lock, StateDir, StateError};
use nictune_host::write::setting::Setting;
use nictune_host::write::HostWrite;
use serde::Serialize;

/// Wall-clock milliseconds since the Unix epoch (0 on a clock set before it): the time
/// every transaction is stamped with.
pub fn now_unix_ms() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// Unix milliseconds as `YYYY-MM-DD HH:MM:SSZ` (civil-from-days, proleptic Gregorian).
pub fn utc(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02}Z")
}

/// Transaction times for one session that makes many (a tune's candidates, a serve peer's
/// changes): now, but strictly increasing, so transactions made within one millisecond keep
/// unique, ordered ids.
#[derive(Debug, Clone, Default)]
pub struct TxnClock {
    last_ms: u64,
}

impl TxnClock {
    /// The next transaction's time.
    pub fn next_ms(&mut self) -> u64 {
        self.last_ms = now_unix_ms().max(self.last_ms + 1);
        self.last_ms
    }
}

/// Who is applying, where, and when.
#[derive(Debug, Clone)]
pub struct ApplyRequest {
    /// The applying process; with the time it makes the transaction id.
    pub pid: u32,
    /// The start time, Unix milliseconds (`now_unix_ms` or a [`TxnClock`]).
    pub now_unix_ms: u64,
    /// The network namespace this process runs in (`--netns`), journaled so a revert from
    /// outside can enter it; `None` for the initial one.
    pub netns: Option<String>,
    /// The interface the plan was resolved for; `None` when the request named none (only
    /// keys that need no interface: sysctls, IRQ affinity).
    pub iface: Option<String>,
    /// `--confirm-within`, in milliseconds.
    pub confirm_within_ms: Option<u64>,
}

/// A transaction that went through.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    /// The transaction id (`txn_id`), also its journal's name.
    pub id: String,
    /// Each change as written and read back, in apply order.
    pub steps: Vec<StepResult>,
    /// When the watchdog reverts unless confirmed, Unix milliseconds; `None` without
    /// `--confirm-within`.
    pub confirm_deadline_unix_ms: Option<u64>,
}

/// Why an apply failed; `Apply` says whether the host was put back.
#[derive(Debug, thiserror::Error)]
pub enum TxnError {
    /// The journal could not be created or its `begin` record written: nothing was changed.
    #[error(transparent)]
    State(#[from] StateError),
    /// The transaction started and did not complete; `source` says what was put back.
    #[error("change {id} did not apply")]
    Apply {
        /// The transaction id.
        id: String,
        /// The failure and its rollback.
        #[source]
        source: ApplyError,
    },
    /// `now + --confirm-within` overflows a `u64` of milliseconds.
    #[error("a confirmation time of {within_ms} ms puts the deadline past the end of time; nothing was changed")]
    DeadlineOutOfRange {
        /// `--confirm-within`, in milliseconds.
        within_ms: u64,
    },
}

impl TxnError {
    /// What the failed apply left on the host.
    pub fn left(&self) -> Left {
        match self {
            TxnError::Apply { source, .. } => source.left(),
            TxnError::State(_) | TxnError::DeadlineOutOfRange { .. } => Left::Nothing,
        }
    }
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
    apply_plan_begun(state, lock, plan, req, host, &|| false, &mut |_| Ok(()))
}

/// [`apply_plan`] that rolls back when `stop` says so before a step (a signal arrived), and
/// calls `begun` with the change's id once its `begin` record is on disk and before the first
/// write: the auto-revert watchdog starts there, so that a kill
/// part-way through the writes still leaves it to put them back. An error from `begun` ends
/// the change before any write (journaled as rolled back, nothing changed).
pub fn apply_plan_begun(
    state: &StateDir,
    lock: &Lock,
    plan: &Plan,
    req: &ApplyRequest,
    host: &mut impl HostWrite,
    stop: &dyn Fn() -> bool,
    begun: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<Option<Applied>, TxnError> {
    if plan.is_noop() {
        return Ok(None);
    }
    let id = txn_id(req.now_unix_ms, req.pid);
    let touched = plan.changes.iter().map(|c| &c.setting);
    let touched = touched.chain(plan.preserve.iter().map(|p| &p.setting));
    let identity = Identities::record(touched, host, plan.known.as_ref());
    let begin = Record::Begin {
        id: id.clone(),
        pid: req.pid,
        started_unix_ms: req.now_unix_ms,
        netns: req.netns.clone(),
        iface: req.iface.clone(),
        changes: plan.changes.clone(),
        preserve: plan.preserve.clone(),
        boot: boot_id(),
        identity: Some(identity.clone()),
    };
    let deadline = confirm_deadline(req)?;
    let mut journal = state.begin(&begin, lock)?;
    if let Err(e) = begun(&id) {
        let cause = format!("{e}, before the first write");
        let _ = journal.append(&Record::Failed {
            step: 0,
            error: cause.clone(),
        });
        let _ = journal.append(&Record::RolledBack { complete: true });
        return Err(TxnError::Apply {
            id,
            source: ApplyError::NothingChanged { cause },
        });
    }
    let steps = engine::apply(
        (&plan.changes, &plan.preserve, Some(&identity)),
        host,
        &mut journal,
        (deadline, stop),
    )
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

/// Replaces transaction `open` (applied, still in place) by `plan` in one transaction
/// ([`crate::plan::rebase`]): what differs is written once, instead of `open`'s values being put
/// back and the new ones written after (for a module parameter, one driver reload instead of
/// two). Then `open` is closed without writes: the new transaction's old values are those
/// from before `open`, so its revert restores the host as it was before both.
///
/// Returns `None`, leaving `open` in place, when nothing differs. When the new transaction
/// fails and rolls back, its written steps go back to the values from before `open` and
/// `open` stays listed as in place: reverting it writes those same values, so the host ends
/// as found either way. A crash between the two journals leaves both open; reverting them,
/// newest first, writes the values from before `open` twice.
pub fn replace_plan(
    state: &StateDir,
    lock: &Lock,
    open: &Summary,
    plan: &Plan,
    req: &ApplyRequest,
    host: &mut impl HostWrite,
) -> Result<Option<Applied>, TxnError> {
    let rebased = crate::plan::rebase(plan, open);
    if rebased.is_noop() {
        return Ok(None);
    }
    let applied = apply_plan(state, lock, &rebased, req, host)?;
    if let Some(a) = &applied {
        let why = format!("replaced by change {}", a.id);
        let at = (RevertBy::Replacement, req.pid, req.now_unix_ms);
        close_unwritten(state, lock, open, &why, at)?;
    }
    Ok(applied)
}

/// The deadline counts from the start; the writes take milliseconds, and a deadline that
/// moved with a slow write would surprise the person waiting on it.
fn confirm_deadline(req: &ApplyRequest) -> Result<Option<u64>, TxnError> {
    let Some(within) = req.confirm_within_ms else {
        return Ok(None);
    };
    match req.now_unix_ms.checked_add(within) {
        Some(deadline) => Ok(Some(deadline)),
        None => Err(TxnError::DeadlineOutOfRange { within_ms: within }),
    }
}

/// Records the watchdog's pid in a pending transaction's journal.
pub fn record_watchdog(state: &StateDir, id: &str, pid: u32) -> Result<(), StateError> {
    Ok(state.open_journal(id)?.append(&Record::Watchdog { pid })?)
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
    let mut journal = state.open_journal(&pending.id)?;
    journal.append(&Record::Confirmed {
        at_unix_ms: now_unix_ms,
    })?;
    Ok(Some(pending.id.clone()))
}

/// What a revert did.
#[derive(Debug, Clone, Serialize)]
pub struct Reverted {
    /// The transaction reverted.
    pub id: String,
    /// The user or the watchdog.
    pub by: RevertBy,
    /// One per restored step, last step first, then one per preserved setting; empty when
    /// nothing had to be written.
    pub restored: Vec<Restored>,
    /// Every restore read back its wanted value.
    pub complete: bool,
    /// Why nothing had to be written, when that is the case (`null` otherwise).
    pub note: Option<String>,
    /// The values were restored but the journal could not record the end of the revert, so
    /// it still lists the change as in place; a later revert (same values) records it.
    /// `null` when the journal recorded it.
    pub unrecorded: Option<String>,
    /// The change's journal recorded what identified its interfaces and IRQs, and each was
    /// checked before it was written ([`crate::identity`]); false for a journal from an
    /// older nictune, restored by name and number as before.
    pub identity_recorded: bool,
}

/// Restores the values from before `txn` (from its journal), last change first. A change
/// that stopped before its first write has nothing to restore: it is closed without writes.
///
/// The host is restored even when the journal cannot be appended to (a full disk must not
/// keep the old values from coming back): a failed `revert-begin` or `undo` record costs
/// detail only, and a failed `reverted` record is reported in [`Reverted::unrecorded`].
pub fn revert(
    state: &StateDir,
    lock: &Lock,
    txn: &Summary,
    host: &mut impl HostWrite,
    by: RevertBy,
    pid: u32,
    now_unix_ms: u64,
) -> Result<Reverted, StateError> {
    let kept = Kept {
        gone: &|_| false,
        why: "",
    };
    revert_kept(state, lock, txn, host, (by, pid, now_unix_ms), kept)
}

/// Settings a revert leaves out because their object is gone (an interface removed since the
/// change), with the reason the revert's note gives.
pub struct Kept<'a> {
    /// Whether a setting's object is gone.
    pub gone: &'a dyn Fn(&Setting) -> bool,
    /// Why, for the note.
    pub why: &'a str,
}

impl std::fmt::Debug for Kept<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept")
            .field("why", &self.why)
            .finish_non_exhaustive()
    }
}

/// [`revert`], leaving out the settings `kept` says went with their object: nothing is
/// written for them, the note says why, and the change closes once the rest is back — a
/// removed interface no longer keeps it open (and every later apply refused) for good.
pub fn revert_kept(
    state: &StateDir,
    lock: &Lock,
    txn: &Summary,
    host: &mut impl HostWrite,
    (by, pid, now_unix_ms): (RevertBy, u32, u64),
    kept: Kept<'_>,
) -> Result<Reverted, StateError> {
    if txn.attempted.is_empty() {
        let why = "it stopped before its first write, so nothing of it is in place";
        return close_unwritten(state, lock, txn, why, (by, pid, now_unix_ms));
    }
    let all = txn.steps_to_restore();
    let (steps, gone): (Vec<usize>, Vec<usize>) = all
        .iter()
        .partition(|&&s| !(kept.gone)(&txn.changes[s].setting));
    if steps.is_empty() {
        return close_unwritten(state, lock, txn, kept.why, (by, pid, now_unix_ms));
    }
    let preserve: Vec<Preserved> = txn
        .preserve
        .iter()
        .filter(|p| !(kept.gone)(&p.setting))
        .cloned()
        .collect();
    let mut journal = state.open_journal(&txn.id)?;
    let at_unix_ms = Some(now_unix_ms);
    let _ = journal.append(&Record::RevertBegin {
        pid,
        by,
        at_unix_ms,
    });
    let undo = (&txn.changes[..], &preserve[..], txn.identity.as_ref());
    let mut restored = engine::restore(undo, &steps, &txn.effective, host, &mut journal);
    // The steps left out as gone, listed as such (after the rest, last first).
    restored.extend(gone.iter().map(|&s| {
        let c = &txn.changes[s];
        Restored {
            setting: c.setting.clone(),
            wanted: c.old.clone(),
            effective: None,
            error: None,
            renumbered: None,
            renamed: None,
            left_out: Some(kept.why.to_string()),
            drifted: None,
        }
    }));
    let complete = restored.iter().all(Restored::ok);
    let end = journal.append(&Record::Reverted {
        at_unix_ms: now_unix_ms,
        by,
        complete,
        left_out: notes(&restored, |r| Some(format!(": {}", r.left_out.as_ref()?))),
        renumbered: notes(&restored, |r| {
            let to = r.renumbered.as_ref()?;
            Some(format!(" → irq {} ({})", to.irq, to.name))
        }),
        renamed: notes(&restored, |r| {
            Some(format!(" → {}", r.renamed.as_ref()?.to))
        }),
        drifted: notes(&restored, |r| {
            let d = r.drifted.as_ref()?;
            Some(format!(": {} since, not {}", d.found, d.left))
        }),
    });
    Ok(Reverted {
        id: txn.id.clone(),
        by,
        restored,
        complete,
        note: (!gone.is_empty()).then(|| kept.why.to_string()),
        unrecorded: end.err().map(|e| e.to_string()),
        identity_recorded: txn.identity.is_some(),
    })
}

/// The `reverted` record's notes of one kind: the setting, then what `what` says of it, for
/// each restored entry it says something of.
fn notes(restored: &[Restored], what: impl Fn(&Restored) -> Option<String>) -> Vec<String> {
    restored
        .iter()
        .filter_map(|r| Some(format!("{}{}", r.setting, what(r)?)))
        .collect()
}

/// Closes a change that left nothing to restore, journaling it as reverted without writing
/// anything to the host: its network namespace was deleted (and every setting in it with
/// it), or it stopped before its first write. `why` says which.
pub fn close_unwritten(
    state: &StateDir,
    _lock: &Lock,
    txn: &Summary,
    why: &str,
    (by, pid, now_unix_ms): (RevertBy, u32, u64),
) -> Result<Reverted, StateError> {
    let mut journal = state.open_journal(&txn.id)?;
    let at_unix_ms = Some(now_unix_ms);
    journal.append(&Record::RevertBegin {
        pid,
        by,
        at_unix_ms,
    })?;
    journal.append(&Record::Reverted {
        at_unix_ms: now_unix_ms,
        by,
        complete: true,
        left_out: Vec::new(),
        renumbered: Vec::new(),
        renamed: Vec::new(),
        drifted: Vec::new(),
    })?;
    let note = Some(why.to_string());
    Ok(Reverted {
        id: txn.id.clone(),
        by,
        restored: Vec::new(),
        complete: true,
        note,
        unrecorded: None,
        identity_recorded: txn.identity.is_some(),
    })
}

/// This boot's id, `/proc/sys/kernel/random/boot_id` (a UUID the kernel makes at each boot);
/// `None` where it cannot be read.
/// Read once per process: it cannot change while the process runs, and `status` asks for
/// every journal.
pub fn boot_id() -> Option<String> {
    static BOOT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    BOOT.get_or_init(|| {
        let path = std::path::Path::new("/proc/sys/kernel/random/boot_id");
        let text = nictune_core::input::read_file(path, nictune_core::input::TOKEN).ok()?;
        let id = text.trim();
        (!id.is_empty()).then(|| id.to_string())
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_matches_known_instants() {
        assert_eq!(utc(0), "1970-01-01 00:00:00Z");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00Z");
        assert_eq!(utc(1_795_239_660_000), "2026-11-21 05:41:00Z");
    }

    /// Issue #13: fields that do not apply are `null`, never missing (`nictune.revert/v2`).
    #[test]
    fn a_revert_without_note_shows_null_fields() {
        let r = Reverted {
            id: "t1".into(),
            by: RevertBy::User,
            restored: Vec::new(),
            complete: true,
            note: None,
            unrecorded: None,
            identity_recorded: true,
        };
        let doc = serde_json::to_value(&r).unwrap();
        assert!(doc["note"].is_null() && doc.get("note").is_some(), "{doc}");
        assert!(doc.get("unrecorded").is_some_and(|v| v.is_null()), "{doc}");
        assert_eq!(doc["by"], "user");
    }
}
