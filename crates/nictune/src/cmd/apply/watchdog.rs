//! The auto-revert watchdog: a detached `nictune revert --watchdog ID` that sleeps until the
//! change's deadline and reverts it unless it was confirmed (or reverted) by then.

use super::{now_unix_ms, revert_txn};
use crate::output::Outcome;
use anyhow::{Context, Result};
use nictune_apply::journal::{Phase, RevertBy, Summary};
use nictune_apply::state::{LiveLocks, StateDir, StateError};
use nictune_apply::txn;
use nictune_linux::write::detach;
use std::time::Duration;

/// How often the watchdog looks at the journal: a confirm is noticed within this time.
const POLL: Duration = Duration::from_millis(200);

/// Starts the watchdog for change `id` and records its pid in the journal.
pub fn start(state: &StateDir, id: &str) -> Result<u32> {
    let exe = std::env::current_exe().context("finding the nictune executable for the watchdog")?;
    let root = state.root().to_string_lossy().into_owned();
    let args = ["revert", "--watchdog", id, "--state-dir", &root].map(String::from);
    let log = state.root().join("watchdog.log");
    // Its own scope where systemd runs the machine: ending the SSH session (logind's
    // KillUserProcesses) or the unit that ran `apply` must not end the safety net.
    let unit = format!("nictune-watchdog-{id}");
    let systemd_run = detach::systemd_run();
    let (pid, placement) =
        detach::spawn_detached_scoped(&exe, &args, &log, &unit, systemd_run.as_deref())
            .with_context(|| {
                format!("starting the auto-revert watchdog (log {})", log.display())
            })?;
    // Where it runs decides what can end it: said in its log (appended, as its own output is).
    let placed = match &placement {
        detach::Placement::Scope(unit) => format!("in its own systemd scope {unit}"),
        detach::Placement::Caller => "in the control group of the apply that started it (no \
                                      systemd scope: ending that session or unit ends it too)"
            .to_string(),
    };
    let line = format!("nictune watchdog for change {id}: pid {pid}, {placed}\n");
    let _ = std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    txn::record_watchdog(state, id, pid)?;
    Ok(pid)
}

/// [`start`] as the `begun` callback of [`txn::apply_plan_begun`] takes it: the watchdog
/// starts once the change's begin record is on disk and before its first write, and a
/// watchdog that cannot start stops the change before any write, with this reason.
pub fn start_before_writes(state: &StateDir, id: &str) -> Result<u32, String> {
    start(state, id).map_err(|e| format!("starting the auto-revert watchdog failed ({e:#})"))
}

/// The watchdog's life: while the apply writes, wait for it; if it dies part-way, revert at
/// once; once the change is pending, wait for the deadline and revert unless it was
/// confirmed (or reverted) by then.
pub fn run(state: &StateDir, id: &str) -> Result<Outcome> {
    // Without a session of its own a closing terminal could take the watchdog with it.
    detach::become_session_leader().context("watchdog: leaving the terminal's session")?;
    let clock = SteadyWall::new(now_unix_ms, detach::boot_clock);
    let mut told = false;
    loop {
        // Only this change's journal is read. An error reading it (a transient EIO, a
        // full disk's half-written line) does not end the safety net: it is said once and
        // the journal read again at the next poll, the revert included.
        let now = clock.now();
        let next = match find(state, id).map(|txn| due(&txn, now)) {
            Ok(Due::Wait(at)) => at,
            Ok(Due::Done) => return Ok(Outcome::Success),
            Ok(Due::Now) => match revert_now(state, id, &clock) {
                Err(e) if e.downcast_ref::<NoJournal>().is_none() => {
                    eprintln!("nictune watchdog: change {id} is due: {e:#}; trying again");
                    now + POLL_MS
                }
                done => return done,
            },
            Err(e) if e.downcast_ref::<NoJournal>().is_some() => return Err(e),
            Err(e) => {
                if !std::mem::replace(&mut told, true) {
                    eprintln!("nictune watchdog: change {id}: {e:#}; reading it again");
                }
                now + POLL_MS
            }
        };
        std::thread::sleep(Duration::from_millis(next.saturating_sub(now).min(POLL_MS)));
    }
}

/// [`POLL`] in milliseconds.
const POLL_MS: u64 = POLL.as_millis() as u64;

/// The wall clock as it read when the watchdog started, advanced by the time elapsed since
/// on the boot clock: Unix milliseconds that a step of the wall clock does not move. The
/// deadline was set on the wall clock a moment before the watchdog started (the request's
/// time plus `--confirm-within`), so it passes after that much real time, wherever NTP or
/// `date -s` sets the wall clock meanwhile: a clock stepped back an hour would otherwise
/// keep an unconfirmed change an hour longer, one stepped forward revert it at once.
struct SteadyWall<B: Fn() -> Duration> {
    wall_at_start: u64,
    boot_at_start: Duration,
    boot: B,
}

impl<B: Fn() -> Duration> SteadyWall<B> {
    fn new(wall: impl Fn() -> u64, boot: B) -> Self {
        SteadyWall {
            wall_at_start: wall(),
            boot_at_start: boot(),
            boot,
        }
    }

    fn now(&self) -> u64 {
        let elapsed = (self.boot)().saturating_sub(self.boot_at_start);
        self.wall_at_start
            .saturating_add(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
    }
}

/// What the watchdog should do about a change, from its journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Due {
    /// Nothing yet; look again by this Unix ms (the deadline, or the next poll).
    Wait(u64),
    /// Revert it now: its deadline passed unconfirmed, or the process writing or reverting
    /// it died part-way.
    Now,
    /// Nothing left to do: confirmed, rolled back, reverted, or applied without a deadline.
    Done,
}

fn due(txn: &Summary, now: u64) -> Due {
    match txn.phase {
        Phase::Pending { deadline_unix_ms } if now >= deadline_unix_ms => Due::Now,
        Phase::Pending { deadline_unix_ms } => Due::Wait(deadline_unix_ms),
        // The apply (or a revert) is at work: its process holds the change. If it is gone,
        // the watchdog finishes the job (a revert of a revert writes the same old values).
        Phase::Applying | Phase::Reverting => {
            match detach::alive_at(txn.owner_pid, txn.owner_since_unix_ms) {
                true => Due::Wait(now + POLL_MS),
                false => Due::Now,
            }
        }
        _ => Due::Done,
    }
}

/// The change's journal is gone: nothing is left for the watchdog to do or read.
#[derive(Debug, thiserror::Error)]
#[error("watchdog: change {0} has no journal")]
struct NoJournal(String);

fn find(state: &StateDir, id: &str) -> Result<Summary> {
    state
        .transaction(id)?
        .ok_or_else(|| anyhow::Error::new(NoJournal(id.to_string())))
}

/// The locks for the revert, waiting as long as another change holds them (a tune through
/// another state directory may hold the machine-wide one for minutes): the revert is the
/// safety net, so it waits its turn rather than giving up. `None` when the change stopped
/// being pending meanwhile (confirmed or reverted).
fn locks_for_revert(
    state: &StateDir,
    id: &str,
    clock: &SteadyWall<impl Fn() -> Duration>,
) -> Result<Option<LiveLocks>> {
    let mut told = false;
    loop {
        match state.lock_live(200) {
            Ok(locks) => return Ok(Some(locks)),
            Err(StateError::Busy { path, holder }) => {
                if due(&find(state, id)?, clock.now()) != Due::Now {
                    return Ok(None);
                }
                if !std::mem::replace(&mut told, true) {
                    eprintln!(
                        "nictune watchdog: change {id} is due; waiting for {}{} to release it",
                        path.display(),
                        nictune_apply::lock::by(holder)
                    );
                }
            }
            Err(e) => return Err(super::state_error(e, state.root())),
        }
    }
}

fn revert_now(
    state: &StateDir,
    id: &str,
    clock: &SteadyWall<impl Fn() -> Duration>,
) -> Result<Outcome> {
    let Some(locks) = locks_for_revert(state, id, clock)? else {
        return Ok(Outcome::Success);
    };
    let txn = find(state, id)?;
    if due(&txn, clock.now()) != Due::Now {
        return Ok(Outcome::Success);
    }
    let why = match txn.phase {
        Phase::Pending { .. } => "not confirmed in time",
        _ => "left part-way by a process that died",
    };
    let reverted = revert_txn(state, &locks.state, &txn, RevertBy::Watchdog)?;
    for r in &reverted.restored {
        if let Some(d) = &r.drifted {
            eprintln!(
                "nictune watchdog: {} was {} since, not the {} change {id} left (someone or \
                 something else set it); put back to {} all the same",
                r.setting, d.found, d.left, r.wanted
            );
        }
        if let Some(n) = &r.renamed {
            eprintln!(
                "nictune watchdog: {} went to {}, the name its device has now",
                r.setting, n.to
            );
        }
    }
    eprintln!(
        "nictune watchdog: change {id} {why}; reverted {} settings ({}){}",
        reverted.restored.len(),
        if reverted.complete {
            "complete"
        } else {
            "INCOMPLETE, see `nictune status`"
        },
        reverted
            .unrecorded
            .as_ref()
            .map_or_else(String::new, |e| format!(
                "; the journal could not record it ({e}): run `nictune revert` to record it"
            ))
    );
    Ok(if reverted.complete && reverted.unrecorded.is_none() {
        Outcome::Success
    } else {
        Outcome::Problems
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// The deadline passes after the time `--confirm-within` gave, on the boot clock: the
    /// wall clock stepped back an hour or forward a day after the start changes nothing.
    #[test]
    fn a_step_of_the_wall_clock_does_not_move_the_deadline() {
        let start = 1_800_000_000_000;
        let wall = Cell::new(start);
        let boot = Cell::new(Duration::from_secs(5_000));
        let clock = SteadyWall::new(|| wall.get(), || boot.get());
        let deadline = start + 60_000;
        wall.set(start - 3_600_000);
        boot.set(Duration::from_millis(5_059_999));
        assert_eq!(clock.now(), deadline - 1, "not yet after 59.999 s");
        wall.set(start + 86_400_000);
        boot.set(Duration::from_secs(5_060));
        assert_eq!(clock.now(), deadline, "due after 60 s");
    }

    /// A boot clock that reads less than at the start (it cannot, but a bug must not make
    /// the deadline pass early) counts as no time elapsed.
    #[test]
    fn a_boot_clock_behind_its_start_counts_as_no_time() {
        let boot = Cell::new(Duration::from_secs(10));
        let clock = SteadyWall::new(|| 42, || boot.get());
        boot.set(Duration::from_secs(9));
        assert_eq!(clock.now(), 42);
    }
}
