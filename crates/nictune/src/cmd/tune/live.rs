//! The live tune on the built-in testbed: build it, hold the change lock, run the loop with
//! the apply engine as the [`Target`](nictune_tune::session::Target) and the bench engine as
//! the [`Measurer`](nictune_tune::session::Measurer), remove the testbed whatever happens.
//!
//! Order of cleanup on every path (success, error, Ctrl-C): the loop restores the settings
//! as found and reads them back; the target reverts anything still open and stops its
//! namespace threads; the testbed's namespaces are deleted; the lock is released.

use super::{execute, Checked, Parts, Workload};
use crate::cmd::apply::{lock_live, now_unix_ms, refuse_if_unfinished, render::utc};
use crate::output::{Ctx, HintExt, Outcome};
use anyhow::Result;
use nictune_apply::state::{LiveLocks, StateDir};
use nictune_bench::cancel::Cancel;
use nictune_bench::{LiveMeasurer, ServerSide, TestKind, Testbed};
use nictune_linux::write::ns::NsHost;
use nictune_live::BenchMeasurer;
use nictune_live::{LiveTarget, NsEnd};
use nictune_tune::knob::{End, Knob, Setting};
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
    let Held {
        state,
        locks,
        cancel,
    } = hold(state_dir)?;
    let lock = &locks.state;
    let bed = Testbed::create(ctx.privilege)
        .hint("the testbed needs root and a kernel with network namespaces and veth")
        .and_then(require_napi_mode);
    let bed = bed.inspect_err(|_| state.unmark_tune_if_clean(std::process::id()))?;
    let started_at = utc(now_unix_ms()).replace(' ', "T");
    let outcome = tune_on(
        c,
        config,
        &bed,
        (&state, lock),
        test,
        &cancel,
        started_at,
        ctx,
    );
    let removed = bed.destroy();
    state.unmark_tune_if_clean(std::process::id());
    let outcome = outcome?;
    removed.hint("the tune finished but its testbed namespaces could not be removed; `ip netns list` shows them")?;
    Ok(outcome)
}

/// The testbed's search space is per-NAPI settings and busy polling: without veth NAPI
/// instances every candidate would fail to plan. Says why NAPI mode is off instead.
fn require_napi_mode(bed: Testbed) -> Result<Testbed> {
    if bed.napi_mode() {
        return Ok(bed);
    }
    Err(not_in_napi_mode(bed.warnings()))
}

/// The error for a testbed out of NAPI mode, carrying why (the testbed's warnings).
fn not_in_napi_mode(why: &[String]) -> anyhow::Error {
    let message = format!(
        "the testbed's veth pair is not in NAPI mode, so the per-NAPI settings a tune tries \
         would have nothing to act on: {}",
        why.join("; ")
    );
    anyhow::Error::new(nictune_core::error::Hinted::new(
        message,
        "this kernel's veth needs GRO on (and TSO off) to run its NAPI instances; \
         tune a real interface with --iface instead",
    ))
}

/// What a live tune holds while it runs (marked in the state directory): the journals, the
/// change locks, and the
/// Ctrl-C / SIGTERM / SIGHUP flag.
pub(super) struct Held {
    pub state: StateDir,
    pub locks: LiveLocks,
    pub cancel: Cancel,
}

/// Refuses while an earlier change is unfinished or a killed tune's changes are in place,
/// then takes the lock, marks this tune and catches Ctrl-C / SIGTERM / SIGHUP.
pub(super) fn hold(state_dir: &Path) -> Result<Held> {
    let state = StateDir::new(state_dir);
    refuse_if_unfinished(&state)?;
    nictune_live::changes::forget_clean_killed_tunes(&state)?;
    let locks = lock_live(&state, 1)?;
    state.mark_tune(std::process::id())?;
    let cancel = Cancel::new();
    cancel.on_signals()?;
    Ok(Held {
        state,
        locks,
        cancel,
    })
}

/// The workload as the report names it.
pub(super) fn workload_label(test: TestKind) -> String {
    match test {
        TestKind::Stream => "TCP stream, 16 KiB writes, 1 connection".into(),
        _ => "TCP request/response, 1 B / 1 B, 1 connection".into(),
    }
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
        NsEnd {
            host: NsHost::start(&names.server_ns)?,
            iface: names.server_if.clone(),
        },
        NsEnd {
            host: NsHost::start(&names.client_ns)?,
            iface: names.client_if.clone(),
        },
    ];
    let mut target = LiveTarget::new(state, lock, ends, knobs(config));
    let live = LiveMeasurer {
        server: ServerSide::Testbed(bed),
        cancel: cancel.clone(),
    };
    let cpus = (0..super::testbed_cpus()).collect();
    let mut measurer = BenchMeasurer::new(live, test, cpus);
    let stop = || cancel.is_cancelled();
    let mut model = nictune_live::VethPredictor::default();
    let predictor: Option<&mut dyn nictune_tune::predict::Predictor> =
        c.predict.then_some(&mut model);
    let parts = Parts {
        config,
        predictor,
        environment: environment(bed, test, started_at),
        cancel: &stop,
        journals: Some((state, lock)),
    };
    execute(c, &mut target, &mut measurer, parts, ctx, |m, env| {
        env.notes
            .extend(m.warnings.iter().take(MAX_BENCH_NOTES).cloned());
    })
}

/// Every knob some candidate sets: what the target snapshots and verifies.
pub(super) fn knobs(config: &TuneConfig) -> Vec<Knob> {
    knobs_where(config, |_| true)
}

/// The knobs some candidate sets on `end`.
pub(super) fn knobs_on(config: &TuneConfig, end: End) -> Vec<Knob> {
    knobs_where(config, |s| s.end == end)
}

fn knobs_where(config: &TuneConfig, keep: impl Fn(&Setting) -> bool) -> Vec<Knob> {
    let set: BTreeSet<Knob> = config
        .candidates
        .iter()
        .flat_map(|c| c.settings.iter().filter(|s| keep(s)).map(|s| s.knob))
        .collect();
    set.into_iter().collect()
}

/// The bench test for a workload; mixed and workload files are not measured live yet.
pub(super) fn test_kind(w: &Workload) -> Result<TestKind> {
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
        workload: workload_label(test),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_napi_mode_the_error_says_why_not_that_a_device_has_no_napi() {
        let why = [
            "veth NAPI mode not enabled: in network namespace \"nictune-tb-1-0-c\": \
                    ethtool features set rx-gro on on nt1x0c: Operation not supported"
                .to_string(),
        ];
        let text = format!("{:#}", not_in_napi_mode(&why));
        assert!(text.contains("not in NAPI mode"), "{text}");
        assert!(text.contains("Operation not supported"), "{text}");
        assert!(!text.contains("has no NAPI instances"), "{text}");
    }
}
