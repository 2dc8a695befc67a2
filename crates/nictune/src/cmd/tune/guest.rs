//! The live tune on the real-driver testbed: boot a guest running the driver, start
//! `nictune serve` in it, run the tune loop with the guest's module parameters as the
//! [`Target`](nictune_tune::session::Target) (changed by `nictune apply` in the guest) and
//! the bench engine against the guest as the measurer, predict every candidate with the
//! simulator's QEMU NIC model, and remove the guest whatever happens.
//!
//! The host's own settings are never touched: every change happens in the guest's kernel.

use super::live::{knobs, test_kind};
use super::measure::BenchMeasurer;
use super::{execute, Checked, Parts};
use crate::cmd::apply::{now_unix_ms, render::utc};
use crate::cmd::testbed;
use crate::output::{Ctx, Outcome};
use anyhow::{Context, Result};
use nictune_bench::cancel::Cancel;
use nictune_bench::{BenchResult, LiveMeasurer, Target as BenchTarget, TestKind, TestbedInfo};
use nictune_tune::candidate::Candidate;
use nictune_tune::knob::Driver;
use nictune_tune::predict::Predictor;
use nictune_tune::results::{Environment, TargetKind};
use nictune_tune::session::TuneConfig;
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
    let mut bed = testbed::start_guest(nic, lifetime(config))?;
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
        target: BenchTarget::Peer(&peer),
        cancel: cancel.clone(),
    };
    let mut measurer = BenchMeasurer::new(live, test, vec![0, 1]);
    measurer.check = Some(throttle_in_effect);
    let mut target = GuestTarget::new(bed, knobs(config));
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

/// Verify by effect: a fixed throttle rate must show in the interrupts the guest counted
/// on each of the NIC's vectors.
fn throttle_in_effect(candidate: &Candidate, result: &BenchResult) -> Option<String> {
    let server = result.accounting.get("server")?;
    effect_check(candidate, &server.nic_vectors_per_sec)
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
