//! The live tune on the real-driver testbed: boot a guest running the driver, start
//! `nictune serve` in it, run the tune loop with the guest's module parameters as the
//! [`Target`](nictune_tune::session::Target) (changed by `nictune apply` in the guest) and
//! the bench engine against the guest as the measurer, predict every candidate with the
//! simulator's QEMU NIC model, and remove the guest whatever happens.
//!
//! The host's own settings are never touched: every change happens in the guest's kernel.

use super::live::{knobs, knobs_on, test_kind};
use super::{execute, Checked, Parts};
use crate::cmd::apply::{now_unix_ms, render::utc};
use crate::cmd::testbed;
use crate::output::{Ctx, Outcome};
use anyhow::{Context, Result};
use nictune_bench::accounting::rates_by_label;
use nictune_bench::cancel::Cancel;
use nictune_bench::changes::ChangeClient;
use nictune_bench::{BenchResult, LiveMeasurer, ServerSide, TestKind, TestbedInfo};
use nictune_live::BenchMeasurer;
use nictune_tune::candidate::Candidate;
use nictune_tune::ends::BothEnds;
use nictune_tune::knob::Driver;
use nictune_tune::knob::End;
use nictune_tune::predict::Predictor;
use nictune_tune::results::{Environment, TargetKind};
use nictune_tune::session::TuneConfig;
use nictune_vm::pair::{GuestClient, VmPair};
use nictune_vm::tune::{effect_check, GuestTarget, QemuPredictor};
use nictune_vm::Nic;
use std::time::Duration;

/// How many of the bench engine's distinct caveats the environment lists.
const MAX_NOTES: usize = 8;

/// Runs a tune against a fresh guest running `driver`.
pub fn run_guest(c: &Checked, config: &TuneConfig, driver: Driver, ctx: &Ctx) -> Result<Outcome> {
    let test = test_kind(&c.workload)?;
    let cancel = Cancel::new();
    cancel
        .on_signals()
        .context("installing the Ctrl-C handler")?;
    let nic = match driver {
        Driver::E1000 => Nic::E1000,
        Driver::E1000e => Nic::E1000e,
    };
    if c.both_ends {
        let mut pair = testbed::start_pair(nic, 2 * lifetime(config), ctx.privilege)?;
        let started_at = utc(now_unix_ms()).replace(' ', "T");
        let outcome = tune_pair(c, config, &mut pair, test, &cancel, started_at, ctx);
        let removed = pair.destroy();
        let outcome = outcome?;
        removed.context("the tune finished but its guests could not be removed")?;
        return Ok(outcome);
    }
    let mut bed = testbed::start_guest(nic, lifetime(config), ctx.privilege)?;
    let started_at = utc(now_unix_ms()).replace(' ', "T");
    let outcome = tune_guest(
        c,
        config,
        &mut bed,
        (driver, test),
        &cancel,
        started_at,
        ctx,
    );
    let removed = bed.destroy();
    let outcome = outcome?;
    removed.context("the tune finished but its guest could not be removed")?;
    Ok(outcome)
}

/// Long enough for every run, a driver reload per candidate and the boot, twice over; the
/// guest powers itself off after it even if this process is killed.
fn lifetime(config: &TuneConfig) -> Duration {
    let per_run = (config.duration + config.warm_up).as_secs_f64();
    let runs = config.plan.budget as f64;
    let reloads = config.candidates.len() as f64 * 2.0;
    Duration::from_secs_f64(2.0 * (runs * (per_run + 1.0) + reloads * 5.0) + 120.0)
}

fn tune_guest(
    c: &Checked,
    config: &TuneConfig,
    bed: &mut nictune_vm::VmBed,
    (driver, test): (Driver, TestKind),
    cancel: &Cancel,
    started_at: String,
    ctx: &Ctx,
) -> Result<Outcome> {
    let peer = bed
        .peer()
        .context("starting `nictune serve` in the guest")?;
    let info = testbed::info(bed);
    let live = LiveMeasurer {
        server: ServerSide::Peer(&peer),
        cancel: cancel.clone(),
    };
    let mut measurer = BenchMeasurer::new(live, test, vec![0, 1]);
    measurer.check = Some(throttle_in_effect);
    let shared = std::sync::Mutex::new(bed);
    let mut target = GuestTarget::new(&shared, knobs(config));
    // The model predicts request/response; every point's prediction is reported.
    let mut model = QemuPredictor::new(driver);
    let predictor: Option<&mut dyn Predictor> = (test == TestKind::Rr).then_some(&mut model);
    let stop = || cancel.is_cancelled();
    let parts = Parts {
        config,
        predictor,
        environment: environment(&info, test, started_at),
        cancel: &stop,
        journals: None,
    };
    execute(c, &mut target, &mut measurer, parts, ctx, |m, env| {
        env.notes.extend(m.warnings.iter().take(MAX_NOTES).cloned());
    })
}

/// The tune of both ends on a pair of guests: the local guest measures and takes this end's
/// settings through `nictune apply`, the peer guest's server takes the peer's through its
/// change session (claimed from the host, released at the end).
fn tune_pair(
    c: &Checked,
    config: &TuneConfig,
    pair: &mut VmPair,
    test: TestKind,
    cancel: &Cancel,
    started_at: String,
    ctx: &Ctx,
) -> Result<Outcome> {
    let peer = pair
        .serve()
        .context("starting `nictune serve --allow-changes` in the peer guest")?;
    let client = ChangeClient::open(&peer).context("claiming the peer guest's change session")?;
    let info = testbed::info(&pair.local);
    let mut env = environment(&info, test, started_at);
    env.target_name = format!(
        "{0} guest pair: Linux {1} `{0}` on QEMU's {2} ({3}) at both ends of a bridge",
        info.kind, info.guest_kernel, info.nic_model, info.accel
    );
    env.notes.retain(|n| !n.starts_with("Predictions:"));
    env.notes.push(super::iface::peer_note(client.grant()));
    env.notes.push(
        "Two guests on 2 host CPUs: the client ran in the measuring guest (its vCPU and NIC \
         are \"client\"), `nictune serve` in the peer guest (\"server\"). No prediction: the \
         simulator's QEMU model has one emulated NIC."
            .into(),
    );
    let local = std::sync::Mutex::new(&mut pair.local);
    let guest_client = GuestClient::new(&local, peer.addr);
    let mut measurer = BenchMeasurer::new(guest_client, test, Vec::new());
    measurer.check = Some(throttle_in_effect_on_both);
    let this_end = GuestTarget::new(&local, knobs_on(config, End::Local));
    let mut both = BothEnds::new(this_end, client, &knobs_on(config, End::Peer));
    let stop = || cancel.is_cancelled();
    let parts = Parts {
        config,
        predictor: None,
        environment: env,
        cancel: &stop,
        journals: None,
    };
    let outcome = execute(c, &mut both, &mut measurer, parts, ctx, |m, env| {
        env.notes.extend(m.warnings.iter().take(MAX_NOTES).cloned());
    });
    let released = both.peer.release();
    let outcome = outcome?;
    released.context(
        "the tune finished, but the peer guest did not confirm it put its settings back",
    )?;
    Ok(outcome)
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

fn environment(info: &TestbedInfo, test: TestKind, started_at: String) -> Environment {
    let mut notes = vec![
        testbed::caveat(info),
        format!(
            "Every setting was made in the guest by `nictune apply` (a journaled reload of the \
             {} driver with the module parameters); the host's own settings were not touched.",
            info.kind
        ),
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
        workload: super::live::workload_label(test),
        kernel: Some(info.guest_kernel.clone()),
        cpus: Some(1),
        nictune_version: env!("CARGO_PKG_VERSION").into(),
        started_at: Some(started_at),
        notes,
    }
}
