//! The live tune on the built-in testbed: build it, hold the change lock, run the loop with
//! the apply engine as the [`Target`](nictune_tune::session::Target) and the bench engine as
//! the [`Measurer`](nictune_tune::session::Measurer), remove the testbed whatever happens.
//!
//! Order of cleanup on every path (success, error, Ctrl-C): the loop restores the settings
//! as found and reads them back; the target reverts anything still open and stops its
//! namespace threads; the testbed's namespaces are deleted; the lock is released.

use super::measure::BenchMeasurer;
use super::nshost::NsHost;
use super::target::{End, LiveTarget};
use super::{execute, Checked, Parts, Workload};
use crate::cmd::apply::{now_unix_ms, refuse_if_unfinished, render::utc};
use crate::output::{Ctx, HintExt, Outcome};
use anyhow::Result;
use nictune_apply::state::StateDir;
use nictune_bench::cancel::Cancel;
use nictune_bench::{LiveMeasurer, Target as BenchTarget, TestKind, Testbed};
use nictune_tune::knob::Knob;
use nictune_tune::results::{Environment, TargetKind};
use nictune_tune::session::TuneConfig;
use std::collections::BTreeSet;
use std::path::Path;

/// How many of the bench engine's distinct caveats the environment lists.
const MAX_BENCH_NOTES: usize = 6;

/// Runs a tune on a fresh testbed with journals under `state_dir`.
pub fn run_testbed(
    c: &Checked,
    config: &TuneConfig,
    state_dir: &Path,
    ctx: &Ctx,
) -> Result<Outcome> {
    let test = test_kind(&c.workload)?;
    let state = StateDir::new(state_dir);
    refuse_if_unfinished(&state)?;
    let lock = state
        .try_lock()
        .hint("another nictune change is running; see `nictune status`")?;
    let cancel = Cancel::new();
    cancel.on_signals()?;
    let bed = Testbed::create().hint("the testbed needs root, `ip` (iproute2) and ethtool")?;
    let started_at = utc(now_unix_ms()).replace(' ', "T");
    let outcome = tune_on(
        c,
        config,
        &bed,
        (&state, &lock),
        test,
        &cancel,
        started_at,
        ctx,
    );
    let removed = bed.destroy();
    let outcome = outcome?;
    removed.hint("the tune finished but its testbed namespaces could not be removed; `ip netns list` shows them")?;
    Ok(outcome)
}

#[allow(clippy::too_many_arguments)]
fn tune_on(
    c: &Checked,
    config: &TuneConfig,
    bed: &Testbed,
    (state, lock): (&StateDir, &nictune_apply::state::Lock),
    test: TestKind,
    cancel: &Cancel,
    started_at: String,
    ctx: &Ctx,
) -> Result<Outcome> {
    let names = bed.names();
    let ends = vec![
        End {
            host: NsHost::start(&names.server_ns)?,
            iface: names.server_if.clone(),
        },
        End {
            host: NsHost::start(&names.client_ns)?,
            iface: names.client_if.clone(),
        },
    ];
    let mut target = LiveTarget::new(state, lock, ends, knobs(config));
    let live = LiveMeasurer {
        target: BenchTarget::Testbed(bed),
        cancel: cancel.clone(),
    };
    let cpus = (0..super::testbed_cpus()).collect();
    let mut measurer = BenchMeasurer::new(live, test, cpus);
    let stop = || cancel.is_cancelled();
    let parts = Parts {
        config,
        predictor: None,
        environment: environment(bed, test, started_at),
        cancel: &stop,
    };
    execute(c, &mut target, &mut measurer, parts, ctx, |m, env| {
        env.notes
            .extend(m.warnings.iter().take(MAX_BENCH_NOTES).cloned());
    })
}

/// Every knob some candidate sets: what the target snapshots and verifies.
fn knobs(config: &TuneConfig) -> Vec<Knob> {
    let set: BTreeSet<Knob> = config
        .candidates
        .iter()
        .flat_map(|c| c.settings.iter().map(|s| s.knob))
        .collect();
    set.into_iter().collect()
}

/// The bench test for a workload; mixed and workload files are not measured live yet.
fn test_kind(w: &Workload) -> Result<TestKind> {
    match w {
        Workload::Rr => Ok(TestKind::Rr),
        Workload::Stream => Ok(TestKind::Stream),
        Workload::Mixed | Workload::File(_) => {
            let what = match w {
                Workload::File(p) => p.display().to_string(),
                _ => "mixed".into(),
            };
            let message =
                format!("--workload {what}: a live tune measures rr or stream in this build");
            Err(anyhow::Error::new(nictune_core::error::Hinted::new(
                message,
                "use --workload rr (latency) or --workload stream (throughput)",
            )))
        }
    }
}

/// What the report says about where and how it was measured.
fn environment(bed: &Testbed, test: TestKind, started_at: String) -> Environment {
    let n = bed.names();
    let mut notes = vec![
        "Client and server share this machine: CPU figures are the whole machine's busy time \
         per unit of work, client and server together."
            .to_string(),
        "busy_read and busy_poll are host-wide sysctls: they were changed for the whole \
         machine during the tune (journaled) and restored."
            .to_string(),
    ];
    notes.push(if bed.napi_mode() {
        "veth in NAPI mode (GRO on, TSO off on both ends): the per-NAPI settings act on the \
         measured traffic."
            .into()
    } else {
        "veth NOT in NAPI mode: traffic took the per-CPU backlog, so per-NAPI settings had no \
         effect."
            .into()
    });
    notes.extend(bed.warnings().iter().cloned());
    Environment {
        target: TargetKind::Testbed,
        target_name: format!(
            "veth {} ({}) ↔ {} ({})",
            n.client_if, n.client_ns, n.server_if, n.server_ns
        ),
        workload: match test {
            TestKind::Stream => "TCP stream, 16 KiB writes, 1 connection".into(),
            _ => "TCP request/response, 1 B / 1 B, 1 connection".into(),
        },
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|s| s.trim().to_string()),
        cpus: std::thread::available_parallelism()
            .ok()
            .map(|n| n.get() as u32),
        nictune_version: env!("CARGO_PKG_VERSION").into(),
        started_at: Some(started_at),
        notes,
    }
}
