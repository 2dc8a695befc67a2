//! The live host's side of `apply`, `confirm`, `revert`, the watchdog and the live tunes:
//! which earlier changes block a new one (with the processes running now), reverting one
//! journaled change on this host in the network namespace it was made in, and verifying an
//! applied change by its effect on the interrupt rates.

use nictune_apply::desired::Desired;
use nictune_apply::identity;
use nictune_apply::journal::{Phase, RevertBy, Summary};
use nictune_apply::state::{Attention, Lock, StateDir, StateError};
use nictune_apply::txn::{self, Reverted};
use nictune_bench::effect::{self, Effect};
use nictune_host::write::setting::Key;
use nictune_linux::netns::{self, NetnsError};
use nictune_linux::write::{detach, module, LinuxWriter};
use std::path::Path;

/// Every change under `state` (whose transactions are `all`) that must be reverted before
/// another starts, as of now: interrupted, overdue, incompletely restored, or left in place
/// by a tune that was killed.
pub fn problems(state: &StateDir, all: &[Summary]) -> Vec<Attention> {
    state.problems(all, txn::now_unix_ms(), detach::alive_at)
}

/// Why a new change may not start yet.
#[derive(Debug, thiserror::Error)]
pub enum Unfinished {
    /// The state directory could not be read.
    #[error(transparent)]
    State(#[from] StateError),
    /// An earlier change needs a revert first ([`problems`]).
    #[error("change {} is {} and must be reverted first", .0.id, .0.problem)]
    NeedsRevert(Attention),
    /// An earlier change waits for `nictune confirm` (the id).
    #[error("change {0} is waiting for confirmation")]
    Pending(String),
}

/// Refuses while an earlier change under `state` is unfinished or waiting for confirmation.
pub fn check_finished(state: &StateDir) -> Result<(), Unfinished> {
    let all = state.transactions()?;
    if let Some(a) = problems(state, &all).into_iter().next() {
        return Err(Unfinished::NeedsRevert(a));
    }
    match all
        .iter()
        .find(|s| matches!(s.phase, Phase::Pending { .. }))
    {
        Some(p) => Err(Unfinished::Pending(p.id.clone())),
        None => Ok(()),
    }
}

/// Forgets the marks of killed tunes whose changes are all reverted (a killed tune with
/// changes still in place blocks new changes, [`check_finished`], until they are).
pub fn forget_clean_killed_tunes(state: &StateDir) -> Result<(), StateError> {
    let all = state.transactions()?;
    for mark in state.tune_marks() {
        if !mark.alive(detach::alive_at) && mark.in_place(&all).is_empty() {
            let _ = std::fs::remove_file(state.tunes_dir().join(mark.pid.to_string()));
        }
    }
    Ok(())
}

/// Reverting a change failed.
#[derive(Debug, thiserror::Error)]
pub enum RevertError {
    /// Entering the change's network namespace failed (it needs root).
    #[error(transparent)]
    Enter(NetnsError),
    /// Restoring or journaling failed.
    #[error(transparent)]
    State(#[from] StateError),
}

/// Reverts `target` (by the user or the watchdog) while `lock` is held: enters the change's
/// network namespace — the named one it was journaled with, or the host's own when it has
/// none and this process runs elsewhere (`ip netns exec`) — and restores its values through
/// the live writer; when that namespace is gone (its settings went with it), or the change
/// was made before the last boot, closes the change without writing.
pub fn revert(
    state: &StateDir,
    lock: &Lock,
    target: &Summary,
    by: RevertBy,
) -> Result<Reverted, RevertError> {
    let pid = std::process::id();
    if let (Some(then), Some(now)) = (&target.boot, txn::boot_id()) {
        if *then != now {
            // IRQ numbers and interface names may now belong to other devices: writing the
            // old values would change those, and everything this change set is gone anyway.
            let why = "it was made before the machine last booted, and the reboot reset every \
                       setting it wrote";
            let at = (by, pid, txn::now_unix_ms());
            return Ok(txn::close_unwritten(state, lock, target, why, at)?);
        }
    }
    if let Some(name) = &target.netns {
        if !Path::new(netns::NETNS_RUN_DIR).join(name).exists() {
            let why = format!("network namespace {name} is gone, and its settings with it");
            let at = (by, pid, txn::now_unix_ms());
            return Ok(txn::close_unwritten(state, lock, target, &why, at)?);
        }
        netns::enter(name).map_err(RevertError::Enter)?;
    } else if netns::current().map_err(RevertError::Enter)? != netns::Current::Initial {
        netns::enter_init().map_err(RevertError::Enter)?;
    }
    let mut host = LinuxWriter::live();
    let now = txn::now_unix_ms();
    // The change's interface removed since (a VF or USB NIC gone, a veth deleted): its
    // settings went with it, and reverting them would fail for ever and keep the change —
    // and with it every later apply — blocked. Read here, in the change's namespace. One
    // renamed since is not gone: the restore finds it under its new name.
    let ids = target.identity.as_ref();
    let gone = target.iface.as_deref().filter(|i| {
        !Path::new("/sys/class/net").join(i).exists()
            && identity::new_name(ids, i, &mut host).is_none()
    });
    let Some(gone) = gone else {
        return Ok(txn::revert(state, lock, target, &mut host, by, pid, now)?);
    };
    let why = format!(
        "interface {gone} is gone, and its settings with it (no interface is the device it \
         was under another name)"
    );
    let kept = txn::Kept {
        gone: &|s| s.target.iface() == Some(gone),
        why: &why,
    };
    Ok(txn::revert_kept(
        state,
        lock,
        target,
        &mut host,
        (by, pid, now),
        kept,
    )?)
}

/// How long [`verify_by_effect`] counts interrupts.
const EFFECT_WINDOW: std::time::Duration = std::time::Duration::from_secs(1);

/// How long [`verify_by_effect`] waits, after a driver reload or a port reset, for a port to
/// pass traffic again before it counts.
const TRAFFIC_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Waits, at most [`TRAFFIC_WAIT`], until `port` has both sent and received a packet since
/// the call. A reloaded or reset port has its carrier before it has traffic again (its
/// neighbours are resolved anew, TCP's retransmissions have backed off): a window over that
/// silence would judge nothing. Returns at once where the counters cannot be read.
fn wait_for_traffic(port: &str) {
    // The port's packet counters, from this namespace's /proc/net/dev.
    let read = || {
        let text = std::fs::read_to_string("/proc/thread-self/net/dev").ok()?;
        let all = nictune_host::procfs::parse_net_dev(&text).ok()?;
        let c = all.into_iter().find(|c| c.name == port)?;
        Some((c.rx_packets, c.tx_packets))
    };
    let Some((rx, tx)) = read() else {
        return;
    };
    let end = std::time::Instant::now() + TRAFFIC_WAIT;
    while std::time::Instant::now() < end {
        if read().is_some_and(|(r, t)| r > rx && t > tx) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Verify by effect, after a change of `iface` to `settings` was applied: where the settings
/// promise a most interrupts per second per vector (a fixed InterruptThrottleRate; rx-usecs
/// on ITR drivers), counts the interface's vectors for 1 s — `iface`, or every
/// port a module parameter reloaded; after a reload, or a ring or channel change (which
/// resets the port on many drivers: e1000e's `e1000e_set_ringparam` takes it down and up),
/// once the port passes traffic again (at most 3 s). A check that cannot run is left out:
/// the change itself succeeded and was read back.
pub fn verify_by_effect(iface: Option<&str>, settings: &[Desired]) -> Vec<Effect> {
    let mut ports: Vec<String> = iface.into_iter().map(str::to_string).collect();
    let mut reset = false;
    for d in settings {
        match &d.key {
            Key::ModuleParam { module, .. } => {
                ports.extend(module::ports_bound(module));
                reset = true;
            }
            Key::Ring(_) | Key::Channels(_) => reset = true,
            _ => {}
        }
    }
    ports.sort();
    ports.dedup();
    ports
        .iter()
        .filter_map(|port| {
            let driver = module::driver_of(port);
            let cap = effect::promised_cap(settings, driver.as_deref())?;
            if reset {
                wait_for_traffic(port);
            }
            effect::check(port, cap, EFFECT_WINDOW).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_apply::state::Problem;

    #[test]
    fn a_change_waiting_for_confirmation_blocks_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::new(dir.path());
        assert!(check_finished(&state).is_ok(), "an empty directory");
        let text = format!("{}", Unfinished::Pending("1-7".into()));
        assert_eq!(text, "change 1-7 is waiting for confirmation");
        let a = Attention {
            id: "1-7".into(),
            problem: Problem::Interrupted,
        };
        let text = Unfinished::NeedsRevert(a).to_string();
        assert_eq!(text, "change 1-7 is interrupted and must be reverted first");
    }
}
