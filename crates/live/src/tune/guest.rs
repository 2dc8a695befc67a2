//! The live tune on the real-driver testbed: boot a guest running the driver, start
//! `nictune serve` in it, run the tune loop with the guest's module parameters as the
//! [`Target`](nictune_tune::session::Target) (changed by `nictune apply` in the guest) and
//! the bench engine against the guest as the measurer, predict every candidate with the
//! simulator's QEMU NIC model, and remove the guest whatever happens. With both ends, a
//! second guest serves and takes the peer's settings through its change session.
//!
//! The host's own settings are never touched: every change happens in the guests' kernels.

use super::SessionError;
use super::{knobs, knobs_on, run, started_at, workload_label, Finished, Parts, Released};
use crate::tune::iface::peer_note;
use crate::BenchMeasurer;
use nictune_bench::accounting::rates_by_label;
use nictune_bench::cancel::Cancel;
use nictune_bench::changes::ChangeClient;
use nictune_bench::{BenchError, BenchResult, LiveMeasurer, ServerSide, TestKind, TestbedInfo};
use nictune_core::privilege::Privilege;
use nictune_core::progress::Progress;
use nictune_tune::candidate::Candidate;
use nictune_tune::ends::{BothEnds, Served};
use nictune_tune::knob::{Driver, End};
use nictune_tune::predict::Predictor;
use nictune_tune::results::{Environment, TargetKind};
use nictune_tune::session::TuneConfig;
use nictune_vm::bed::caveat;
use nictune_vm::pair::{GuestClient, VmPair};
use nictune_vm::tune::{effect_check, GuestTarget, QemuPredictor};
use nictune_vm::{BedOptions, Nic, VmBed, VmError};
use std::path::Path;
use std::time::Duration;

/// How many of the bench engine's distinct caveats the environment lists.
const MAX_NOTES: usize = 8;

/// A tune of a real-driver guest, as the binary checked it.
#[derive(Debug)]
pub struct GuestTune<'a> {
    /// The candidates, plan and run lengths.
    pub config: &'a TuneConfig,
    /// Request/response or stream.
    pub test: TestKind,
    /// The driver, and so the emulated NIC.
    pub driver: Driver,
    /// `--both-ends`: a second guest serves and takes the peer's settings.
    pub both_ends: bool,
    /// `--runtime`: the candidates are run-time settings (ethtool, NAPI), made through each
    /// guest's own `nictune serve --allow-changes eth0` session instead of a reload.
    pub runtime: bool,
    /// The process's privilege (booting a guest needs root).
    pub privilege: Privilege,
    /// The nictune binary the guests run.
    pub nictune: &'a Path,
    /// The output directory.
    pub out: &'a Path,
}

/// Why a tune of a guest failed.
#[derive(Debug, thiserror::Error)]
pub enum GuestError {
    /// The Ctrl-C handler could not be installed.
    #[error("installing the Ctrl-C handler")]
    Signals(#[source] std::io::Error),
    /// A guest (or the pair) could not be booted.
    #[error(transparent)]
    Boot(VmError),
    /// `nictune serve` did not start in the measured guest.
    #[error("starting `nictune serve` in the guest")]
    Serve(#[source] VmError),
    /// `nictune serve --allow-changes` did not start in the peer guest.
    #[error("starting `nictune serve --allow-changes` in the peer guest")]
    PeerServe(#[source] VmError),
    /// The peer guest's change session could not be claimed.
    #[error("claiming the peer guest's change session")]
    Claim(#[source] BenchError),
    /// The tune loop failed.
    #[error(transparent)]
    Session(SessionError),
}

/// How a tune of guests ended: its outcome, then (both ends) the peer guest's release of its
/// settings, then the guests' removal — each checked after the outcome is written and shown.
#[derive(Debug)]
pub struct GuestEnd {
    /// The results, or why there are none.
    pub outcome: Result<Finished, GuestError>,
    /// With both ends: the peer guest putting its settings back (the keys it restored).
    pub released: Released,
    /// Removing the guest, or both guests and their bridge.
    pub removed: Result<(), VmError>,
}

/// Runs a tune against a fresh guest running `t.driver` (two with `t.both_ends`), reporting
/// each run to `progress`; the guests are removed whatever happens. `Err` when nothing was
/// booted.
pub fn tune_guest(t: &GuestTune<'_>, progress: &dyn Progress) -> Result<GuestEnd, GuestError> {
    let cancel = Cancel::new();
    cancel.on_signals().map_err(GuestError::Signals)?;
    let nic = match t.driver {
        Driver::E1000 => Nic::E1000,
        Driver::E1000e => Nic::E1000e,
    };
    if t.both_ends {
        let opts = BedOptions::new(nic, t.nictune.to_path_buf(), 2 * lifetime(t.config));
        let mut pair = VmPair::create(&opts, t.privilege).map_err(GuestError::Boot)?;
        let started_at = started_at();
        let (outcome, released) = tune_pair(t, &mut pair, (&cancel, progress), started_at);
        let removed = pair.destroy();
        return Ok(GuestEnd {
            outcome,
            released,
            removed,
        });
    }
    let opts = BedOptions::new(nic, t.nictune.to_path_buf(), lifetime(t.config));
    let mut bed = VmBed::create(&opts, t.privilege).map_err(GuestError::Boot)?;
    let started_at = started_at();
    let (outcome, released) = tune_one(t, &mut bed, (&cancel, progress), started_at);
    let removed = bed.destroy();
    Ok(GuestEnd {
        outcome,
        released,
        removed,
    })
}

/// Long enough for every run, a driver reload per candidate and the boot, twice over; the
/// guest powers itself off after it even if this process is killed.
fn lifetime(config: &TuneConfig) -> Duration {
    let per_run = (config.duration + config.warm_up).as_secs_f64();
    let runs = config.plan.budget as f64;
    let reloads = config.candidates.len() as f64 * 2.0;
    Duration::from_secs_f64(2.0 * (runs * (per_run + 1.0) + reloads * 5.0) + 120.0)
}

fn tune_one(
    t: &GuestTune<'_>,
    bed: &mut VmBed,
    (cancel, progress): (&Cancel, &dyn Progress),
    started_at: String,
) -> (Result<Finished, GuestError>, Released) {
    let served = match t.runtime {
        true => bed.peer_taking_changes(),
        false => bed.peer(),
    };
    let peer = match served {
        Ok(peer) => peer,
        Err(e) => return (Err(GuestError::Serve(e)), None),
    };
    let info = bed.info();
    let live = LiveMeasurer {
        server: ServerSide::Peer(&peer),
        cancel: cancel.clone(),
    };
    let mut measurer = BenchMeasurer::new(live, t.test, vec![0, 1]);
    measurer.check = Some(throttle_in_effect);
    // The model predicts request/response; every point's prediction is reported (a point
    // it has no mechanism for has none).
    let mut model = QemuPredictor::new(t.driver);
    let predictor: Option<&mut dyn Predictor> = (t.test == TestKind::Rr).then_some(&mut model);
    let stop = || cancel.is_cancelled();
    let parts = Parts {
        config: t.config,
        predictor,
        environment: environment(&info, t.test, t.runtime, started_at),
        cancel: &stop,
        journals: None,
        out: t.out,
        progress,
    };
    let notes = |m: &BenchMeasurer<LiveMeasurer<'_>>, env: &mut Environment| {
        env.notes.extend(m.warnings.iter().take(MAX_NOTES).cloned());
    };
    if t.runtime {
        let client = match ChangeClient::open(&peer) {
            Ok(client) => client,
            Err(e) => return (Err(GuestError::Claim(e)), None),
        };
        let mut target = Served::new(client, &knobs(t.config)).on_driver(t.driver);
        let outcome = run(&mut target, &mut measurer, parts, notes);
        let released = target.session.release();
        return (outcome.map_err(GuestError::Session), Some(released));
    }
    let shared = std::sync::Mutex::new(bed);
    let mut target = GuestTarget::new(&shared, knobs(t.config));
    let outcome = run(&mut target, &mut measurer, parts, notes);
    (outcome.map_err(GuestError::Session), None)
}

/// The tune of both ends on a pair of guests: the local guest measures and takes this end's
/// settings through `nictune apply`, the peer guest's server takes the peer's through its
/// change session (claimed from the host, released at the end).
fn tune_pair(
    t: &GuestTune<'_>,
    pair: &mut VmPair,
    (cancel, progress): (&Cancel, &dyn Progress),
    started_at: String,
) -> (Result<Finished, GuestError>, Released) {
    let peer = match pair.serve() {
        Ok(peer) => peer,
        Err(e) => return (Err(GuestError::PeerServe(e)), None),
    };
    let client = match ChangeClient::open(&peer) {
        Ok(client) => client,
        Err(e) => return (Err(GuestError::Claim(e)), None),
    };
    // With run-time settings this end's are made through the measuring guest's own server.
    let this_side = match t.runtime {
        true => match pair
            .local
            .peer_taking_changes()
            .map(|p| ChangeClient::open(&p))
        {
            Ok(Ok(client)) => Some(client),
            Ok(Err(e)) => return (Err(GuestError::Claim(e)), None),
            Err(e) => return (Err(GuestError::Serve(e)), None),
        },
        false => None,
    };
    let info = pair.local.info();
    let mut env = environment(&info, t.test, t.runtime, started_at);
    env.target_name = format!(
        "{0} guest pair: Linux {1} `{0}` on QEMU's {2} ({3}) at both ends of a bridge",
        info.kind, info.guest_kernel, info.nic_model, info.accel
    );
    env.notes.retain(|n| !n.starts_with("Predictions"));
    env.notes.push(peer_note(client.grant()));
    env.notes.push(
        "Two guests on 2 host CPUs: the client ran in the measuring guest (its vCPU and NIC \
         are \"client\"), `nictune serve` in the peer guest (\"server\"). No prediction: the \
         simulator's QEMU model has one emulated NIC."
            .into(),
    );
    let local = std::sync::Mutex::new(&mut pair.local);
    let guest_client = GuestClient::new(&local, peer.addr);
    let mut measurer = BenchMeasurer::new(guest_client, t.test, Vec::new());
    measurer.check = Some(throttle_in_effect_on_both);
    let stop = || cancel.is_cancelled();
    let parts = Parts {
        config: t.config,
        predictor: None,
        environment: env,
        cancel: &stop,
        journals: None,
        out: t.out,
        progress,
    };
    let notes = |m: &BenchMeasurer<GuestClient<'_>>, env: &mut Environment| {
        env.notes.extend(m.warnings.iter().take(MAX_NOTES).cloned());
    };
    let (here, there) = (
        knobs_on(t.config, End::Local),
        knobs_on(t.config, End::Peer),
    );
    if let Some(this_side) = this_side {
        let here = Served::new(this_side, &here).on_driver(t.driver);
        let mut both = BothEnds::new(here, client, &there);
        both.peer = both.peer.on_driver(t.driver);
        let outcome = run(&mut both, &mut measurer, parts, notes);
        // Both sessions are released, whatever either answers.
        let released = [both.local.session.release(), both.peer.session.release()];
        return (
            outcome.map_err(GuestError::Session),
            Some(
                released
                    .into_iter()
                    .collect::<Result<Vec<_>, _>>()
                    .map(|r| r.concat()),
            ),
        );
    }
    let this_end = GuestTarget::new(&local, here);
    let mut both = BothEnds::new(this_end, client, &there);
    let outcome = run(&mut both, &mut measurer, parts, notes);
    let released = both.peer.session.release();
    (outcome.map_err(GuestError::Session), Some(released))
}

/// Verify by effect: a fixed throttle rate must show in the interrupts the guest counted
/// on each of the NIC's vectors.
fn throttle_in_effect(candidate: &Candidate, result: &BenchResult) -> Option<String> {
    let server = result.accounting.get("server")?;
    effect_check(candidate, End::Local, &rates_by_label(&server.nic_vectors))
}

/// The same on a pair: this end's rate against the measuring guest's vectors (the bench
/// client's side), the peer's against the serving guest's.
fn throttle_in_effect_on_both(candidate: &Candidate, result: &BenchResult) -> Option<String> {
    let on = |side: &str, end: End| {
        let acc = result.accounting.get(side)?;
        effect_check(candidate, end, &rates_by_label(&acc.nic_vectors))
    };
    let found: Vec<String> = [on("client", End::Local), on("server", End::Peer)]
        .into_iter()
        .flatten()
        .collect();
    (!found.is_empty()).then(|| found.join("; "))
}

fn environment(
    info: &TestbedInfo,
    test: TestKind,
    runtime: bool,
    started_at: String,
) -> Environment {
    let made = match runtime {
        true => format!(
            "Every setting was made at run time through the guest's own `nictune serve \
             --allow-changes eth0` session (journaled there, the {} driver left loaded: ethtool \
             coalescing over netlink, NAPI settings in sysfs) and put back when it ended; the \
             host's own settings were not touched.",
            info.kind
        ),
        false => format!(
            "Every setting was made in the guest by `nictune apply` (a journaled reload of the \
             {} driver with the module parameters); the host's own settings were not touched.",
            info.kind
        ),
    };
    let mut notes = vec![
        caveat(info),
        made,
        "Interrupts per second are the guest's: its NIC's own vectors, from the guest's \
         /proc/interrupts. CPU figures add the host's (client) and the guest's vCPU (server)."
            .to_string(),
        format!(
            "Guest booted in {:.1} s with {}{}.",
            info.boot_seconds,
            info.accel,
            info.accel_note
                .as_ref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        ),
    ];
    if test == TestKind::Rr {
        notes.push(
            "Predictions: the simulator's model of QEMU's e1000/e1000e interrupt moderation, \
             calibrated on the settings as found (the one calibration point) and predicting \
             every other candidate before it was measured."
                .into(),
        );
    }
    Environment {
        target: TargetKind::RealDriverTestbed,
        target_name: format!(
            "{} guest: Linux {} `{}` on QEMU's {} ({}), ↔ host tap",
            info.kind, info.guest_kernel, info.kind, info.nic_model, info.accel
        ),
        workload: workload_label(test),
        kernel: Some(info.guest_kernel.clone()),
        cpus: Some(1),
        nictune_version: env!("CARGO_PKG_VERSION").into(),
        started_at: Some(started_at),
        notes,
    }
}
