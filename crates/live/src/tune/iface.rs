//! The live tune of a real interface (`--iface IF --peer HOST[:PORT]`): the candidates are
//! what the driver reports ([`crate::caps`]), applied through the apply engine on `IF` one
//! journaled transaction at a time, and measured by the bench engine against a `nictune
//! serve` peer; with both ends, the peer's settings go through its change session.
//!
//! Order of work (the binary enters `--netns` first, while the process is still
//! single-threaded, and refuses the interface that carries the default route or this SSH
//! session): read the snapshot and the capabilities ([`capabilities`]; the binary checks the
//! budget against them before anything changes), claim the peer ([`claim_peer`]), take the
//! change lock, run the loop, which restores the settings as found ([`tune_interface`]).

use super::Parts;
use super::{hold, knobs, knobs_on, run, started_at, workload_label, Finished, Held, HoldError};
use super::{Released, SessionError, MAX_BENCH_NOTES};
use crate::caps::capabilities_for;
use crate::{BenchMeasurer, LiveTarget};
use nictune_bench::changes::ChangeClient;
use nictune_bench::protocol::Grant;
use nictune_bench::{BenchError, LiveMeasurer, PeerTarget, ServerSide, TestKind};
use nictune_core::error::Hinted;
use nictune_core::progress::Progress;
use nictune_host::snapshot::{self, HostSnapshot};
use nictune_linux::host::LinuxHost;
use nictune_tune::ends::BothEnds;
use nictune_tune::knob::{Driver, End};
use nictune_tune::results::{Environment, TargetKind};
use nictune_tune::session::TuneConfig;
use nictune_tune::space::Capabilities;
use std::path::Path;

/// The interface, its namespace and the peer, as typed.
#[derive(Debug, Clone, Copy)]
pub struct Where<'a> {
    /// `--iface`.
    pub iface: &'a str,
    /// The namespace the process runs in and journals under: `--netns` (already entered)
    /// or a named one it was started in; `None` for the host's own.
    pub netns: Option<&'a str>,
    /// `--peer`, as typed (for the report).
    pub peer: &'a str,
}

/// Why a tune of an interface failed.
#[derive(Debug, thiserror::Error)]
pub enum IfaceError {
    /// The interface is not in this namespace.
    #[error(
        "--iface {iface}: no such interface in {}; nothing was changed",
        netns.as_ref().map_or("this namespace".to_string(), |n| format!("namespace {n}"))
    )]
    NoSuchIface {
        /// The interface.
        iface: String,
        /// The namespace entered, if any.
        netns: Option<String>,
    },
    /// Its driver has no module parameters a tune knows (`--reload-driver`).
    #[error(transparent)]
    Capabilities(Hinted),
    /// The peer's change session could not be claimed (`--both-ends`).
    #[error("--both-ends: claiming the peer's change session")]
    Claim(#[source] BenchError),
    /// The peer cannot take the module parameters the search would try there.
    #[error(
        "--both-ends with --reload-driver tries {driver} module parameters on the peer, but \
         the peer's {peer_iface} is driven by {} and it {} reloads",
        peer_driver.as_deref().unwrap_or("an unknown driver"),
        if *reload { "allows" } else { "does not allow" }
    )]
    PeerCannotReload {
        /// The driver whose parameters the search tries.
        driver: String,
        /// The peer's interface.
        peer_iface: String,
        /// The peer's driver, when it knows it.
        peer_driver: Option<String>,
        /// Whether the peer allows reloads.
        reload: bool,
    },
    /// The host could not be held ([`hold`]).
    #[error(transparent)]
    Hold(HoldError),
    /// The tune loop failed, or moving its journals did.
    #[error(transparent)]
    Session(SessionError),
}

/// The snapshot of `at.iface` and what a tune may change on it: its run-time knobs, or with
/// `reload_driver` its driver's module parameters.
pub fn capabilities(
    at: &Where<'_>,
    reload_driver: bool,
) -> Result<(HostSnapshot, Capabilities), IfaceError> {
    let snap = snapshot::build(&LinuxHost::live(), &[at.iface.to_string()]);
    let caps = match snap.nic(at.iface) {
        Some(nic) => {
            capabilities_for(&snap, nic, reload_driver).map_err(IfaceError::Capabilities)?
        }
        None => {
            return Err(IfaceError::NoSuchIface {
                iface: at.iface.to_string(),
                netns: at.netns.map(str::to_string),
            })
        }
    };
    Ok((snap, caps))
}

/// Claims the peer's change session for `--both-ends`, and checks that it can take what the
/// search will try there: the same driver's module parameters need `--allow-reload` and the
/// same driver on the peer.
pub fn claim_peer(peer: &PeerTarget, caps: &Capabilities) -> Result<ChangeClient, IfaceError> {
    let client = ChangeClient::open(peer).map_err(IfaceError::Claim)?;
    let grant = client.grant();
    if let Some(driver) = caps.module_params {
        if !grant.reload || grant.driver.as_deref() != Some(driver.name()) {
            return Err(IfaceError::PeerCannotReload {
                driver: driver.to_string(),
                peer_iface: grant.iface.clone(),
                peer_driver: grant.driver.clone(),
                reload: grant.reload,
            });
        }
    }
    Ok(client)
}

/// What the report says about the peer's end.
pub fn peer_note(grant: &Grant) -> String {
    format!(
        "Both ends were tuned: settings marked `peer:` were made on the peer's {} ({}) by its \
         `nictune serve --allow-changes`, journaled there and put back when the tune ended; \
         recommended-peer.toml holds what to apply there.",
        grant.iface,
        grant.driver.as_deref().unwrap_or("driver unknown")
    )
}

/// A tune of an interface, as the binary resolved it.
#[derive(Debug)]
pub struct IfaceTune<'a> {
    /// The candidates, plan and run lengths (from [`capabilities`]).
    pub config: &'a TuneConfig,
    /// Request/response or stream.
    pub test: TestKind,
    /// The interface, its namespace and the peer.
    pub at: Where<'a>,
    /// The snapshot [`capabilities`] read.
    pub snapshot: &'a HostSnapshot,
    /// The peer to measure against.
    pub peer: &'a PeerTarget,
    /// With `--both-ends`: the peer's claimed change session ([`claim_peer`]).
    pub peer_changes: Option<ChangeClient>,
    /// Where the candidates are journaled.
    pub state_dir: &'a Path,
    /// The output directory, where the candidates' journals move.
    pub out: &'a Path,
}

/// How a tune of an interface ended: its outcome, and (both ends) the peer's release of its
/// settings, checked after the outcome is written and shown. `held` keeps the journals and
/// the change locks for what follows (`--apply`); this tune's mark is already cleared.
#[derive(Debug)]
pub struct IfaceEnd {
    /// The results, or why there are none.
    pub outcome: Result<Finished, IfaceError>,
    /// With both ends: the peer putting its settings back (the keys it restored).
    pub released: Released,
    /// The state directory and the locks, still held.
    pub held: Held,
}

/// Tunes `t.at.iface` against `t.peer`, journaling under `t.state_dir` and reporting each run
/// to `progress`. `Err` when the host could not be held (nothing was changed).
pub fn tune_interface(
    mut t: IfaceTune<'_>,
    progress: &dyn Progress,
) -> Result<IfaceEnd, IfaceError> {
    let held = hold(t.state_dir).map_err(IfaceError::Hold)?;
    let environment = environment(&t.at, t.snapshot, t.test, started_at());
    let peer_changes = t.peer_changes.take();
    let (outcome, released) = tune_on(&t, (&held, progress), environment, peer_changes);
    held.state.unmark_tune_if_clean(std::process::id());
    Ok(IfaceEnd {
        outcome,
        released,
        held,
    })
}

fn tune_on(
    t: &IfaceTune<'_>,
    (held, progress): (&Held, &dyn Progress),
    mut environment: Environment,
    peer_changes: Option<ChangeClient>,
) -> (Result<Finished, IfaceError>, Released) {
    let (state, lock) = (&held.state, &held.locks.state);
    let local = (t.at.iface.to_string(), t.at.netns.map(str::to_string));
    let driver = t
        .snapshot
        .nic(t.at.iface)
        .and_then(|n| n.driver.value().cloned());
    let driver = driver.as_deref().and_then(Driver::from_name);
    let target = LiveTarget::local(state, lock, local, knobs(t.config)).on_driver(driver);
    let live = LiveMeasurer {
        server: ServerSide::Peer(t.peer),
        cancel: held.cancel.clone(),
    };
    // One unpinned placement (see caps): no CPUs to pick from.
    let mut measurer = BenchMeasurer::new(live, t.test, Vec::new());
    let stop = || held.cancel.is_cancelled();
    let notes = |m: &BenchMeasurer<LiveMeasurer>, env: &mut Environment| {
        env.notes
            .extend(m.warnings.iter().take(MAX_BENCH_NOTES).cloned());
    };
    if let Some(client) = &peer_changes {
        environment.notes.push(peer_note(client.grant()));
    }
    let parts = Parts {
        config: t.config,
        predictor: None,
        environment,
        cancel: &stop,
        journals: Some((state, lock)),
        out: t.out,
        progress,
    };
    let Some(client) = peer_changes else {
        let outcome = run(&mut { target }, &mut measurer, parts, notes);
        return (outcome.map_err(IfaceError::Session), None);
    };
    let peer_driver = client.grant().driver.as_deref().and_then(Driver::from_name);
    let mut both = BothEnds::new(target, client, &knobs_on(t.config, End::Peer));
    if let Some(d) = peer_driver {
        both.peer = both.peer.on_driver(d);
    }
    let outcome = run(&mut both, &mut measurer, parts, notes);
    let released = both.peer.session.release();
    (outcome.map_err(IfaceError::Session), Some(released))
}

/// What the report says about where and how it was measured.
fn environment(
    at: &Where<'_>,
    snap: &HostSnapshot,
    test: TestKind,
    started: String,
) -> Environment {
    let driver = snap
        .nic(at.iface)
        .and_then(|n| n.driver.value().cloned())
        .unwrap_or_else(|| "driver unknown".into());
    let place = at
        .netns
        .map_or(String::new(), |n| format!(" in namespace {n}"));
    let mut notes = vec![
        "CPU figures are this host's busy time per unit of work (the client side); the \
         peer's CPU is not counted."
            .to_string(),
        "Candidates come from what the driver reported; each was applied as a journaled \
         transaction that replaced the last one's (only what differed was written) and \
         kept the settings as found for the final revert."
            .to_string(),
    ];
    if snap.sysctl_u64("net.core.busy_read").is_none() {
        notes.push(
            "busy polling was not tried: the busy_read/busy_poll sysctls are host-wide and \
             not visible in this namespace."
                .into(),
        );
    }
    Environment {
        target: TargetKind::Interface,
        target_name: format!("{} ({driver}){place} → peer {}", at.iface, at.peer),
        workload: workload_label(test),
        kernel: snap.kernel.value().map(|k| k.trim().to_string()),
        cpus: Some(snap.cpus.len() as u32),
        nictune_version: env!("CARGO_PKG_VERSION").into(),
        started_at: Some(started),
        notes,
    }
}
