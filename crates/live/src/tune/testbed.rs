//! The live tune on the built-in testbed: build it, hold the change lock, run the loop with
//! the apply engine as the [`Target`](nictune_tune::session::Target) ([`LiveTarget`] on both
//! veth ends and the host) and the bench engine as the
//! [`Measurer`](nictune_tune::session::Measurer), remove the testbed whatever happens.
//!
//! Order of cleanup on every path (success, error, Ctrl-C): the loop restores the settings
//! as found and reads them back; the target reverts anything still open and stops its
//! namespace threads; the testbed's namespaces are deleted; the lock is released.

use super::{hold, knobs, run, started_at, workload_label, Finished, Held, HoldError, Parts};
use super::{SessionError, MAX_BENCH_NOTES};
use crate::{BenchMeasurer, LiveTarget, NsEnd, VethPredictor};
use nictune_apply::state::{Lock, StateDir};
use nictune_bench::cancel::Cancel;
use nictune_bench::{BenchError, LiveMeasurer, ServerSide, TestKind, Testbed};
use nictune_core::privilege::Privilege;
use nictune_core::progress::Progress;
use nictune_linux::netns::NetnsError;
use nictune_linux::write::ns::NsHost;
use nictune_tune::predict::Predictor;
use nictune_tune::results::{Environment, TargetKind};
use nictune_tune::session::TuneConfig;
use std::path::Path;

/// A tune of the veth testbed, as the binary checked it.
#[derive(Debug)]
pub struct TestbedTune<'a> {
    /// The candidates, plan and run lengths.
    pub config: &'a TuneConfig,
    /// Request/response or stream.
    pub test: TestKind,
    /// `--predict`: rank the space with the simulator's veth model first.
    pub predict: bool,
    /// Where the candidates are journaled.
    pub state_dir: &'a Path,
    /// The process's privilege (building the testbed needs root).
    pub privilege: Privilege,
    /// CPUs client and server may be pinned to.
    pub cpus: u32,
    /// The output directory, where the candidates' journals move.
    pub out: &'a Path,
}

/// Why a tune of the testbed failed.
#[derive(Debug, thiserror::Error)]
pub enum TestbedError {
    /// The host could not be held ([`hold`]).
    #[error(transparent)]
    Hold(HoldError),
    /// The testbed could not be built.
    #[error(transparent)]
    Create(BenchError),
    /// The veth pair is not in NAPI mode, so the per-NAPI settings would have nothing to act
    /// on; the testbed's warnings say why.
    #[error(
        "the testbed's veth pair is not in NAPI mode, so the per-NAPI settings a tune tries \
         would have nothing to act on: {}",
        .0.join("; ")
    )]
    NotInNapiMode(Vec<String>),
    /// A thread inside one of the testbed's namespaces could not be started.
    #[error(transparent)]
    Ends(NetnsError),
    /// The tune loop failed, or moving its journals did.
    #[error(transparent)]
    Session(SessionError),
}

/// How a tune of the testbed ended: its outcome, then the testbed's removal (checked after
/// the outcome is written and shown).
#[derive(Debug)]
pub struct TestbedEnd {
    /// The results, or why there are none.
    pub outcome: Result<Finished, TestbedError>,
    /// Removing the testbed's namespaces.
    pub removed: Result<(), BenchError>,
}

/// Runs a tune on a fresh testbed with journals under `t.state_dir`, reporting each run to
/// `progress`; the testbed is removed and this tune's mark cleared whatever happens.
pub fn tune_testbed(
    t: &TestbedTune<'_>,
    progress: &dyn Progress,
) -> Result<TestbedEnd, TestbedError> {
    let Held {
        state,
        locks,
        cancel,
    } = hold(t.state_dir).map_err(TestbedError::Hold)?;
    let bed = Testbed::create(t.privilege)
        .map_err(TestbedError::Create)
        .and_then(require_napi_mode);
    let bed = bed.inspect_err(|_| state.unmark_tune_if_clean(std::process::id()))?;
    let started_at = started_at();
    let outcome = tune_on(
        t,
        &bed,
        (&state, &locks.state),
        (&cancel, progress),
        started_at,
    );
    let removed = bed.destroy();
    state.unmark_tune_if_clean(std::process::id());
    Ok(TestbedEnd { outcome, removed })
}

/// The testbed's search space is per-NAPI settings and busy polling: without veth NAPI
/// instances every candidate would fail to plan. Says why NAPI mode is off instead.
fn require_napi_mode(bed: Testbed) -> Result<Testbed, TestbedError> {
    if bed.napi_mode() {
        return Ok(bed);
    }
    Err(TestbedError::NotInNapiMode(bed.warnings().to_vec()))
}

fn tune_on(
    t: &TestbedTune<'_>,
    bed: &Testbed,
    (state, lock): (&StateDir, &Lock),
    (cancel, progress): (&Cancel, &dyn Progress),
    started_at: String,
) -> Result<Finished, TestbedError> {
    let names = bed.names();
    let end = |ns: &str, iface: &str| -> Result<NsEnd, TestbedError> {
        Ok(NsEnd {
            host: NsHost::start(ns).map_err(TestbedError::Ends)?,
            iface: iface.to_string(),
        })
    };
    let ends = vec![
        end(&names.server_ns, &names.server_if)?,
        end(&names.client_ns, &names.client_if)?,
    ];
    let mut target = LiveTarget::new(state, lock, ends, knobs(t.config));
    let live = LiveMeasurer {
        server: ServerSide::Testbed(bed),
        cancel: cancel.clone(),
    };
    let mut measurer = BenchMeasurer::new(live, t.test, (0..t.cpus).collect());
    let stop = || cancel.is_cancelled();
    let mut model = VethPredictor::default();
    let predictor: Option<&mut dyn Predictor> = t.predict.then_some(&mut model);
    let parts = Parts {
        config: t.config,
        predictor,
        environment: environment(bed, t.test, started_at),
        cancel: &stop,
        journals: Some((state, lock)),
        out: t.out,
        progress,
    };
    run(&mut target, &mut measurer, parts, |m, env| {
        env.notes
            .extend(m.warnings.iter().take(MAX_BENCH_NOTES).cloned());
    })
    .map_err(TestbedError::Session)
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
        let why = vec![
            "veth NAPI mode not enabled: in network namespace \"nictune-tb-1-0-c\": \
                    ethtool features set rx-gro on on nt1x0c: Operation not supported"
                .to_string(),
        ];
        let text = TestbedError::NotInNapiMode(why).to_string();
        assert!(text.contains("not in NAPI mode"), "{text}");
        assert!(text.contains("Operation not supported"), "{text}");
        assert!(!text.contains("has no NAPI instances"), "{text}");
    }
}
