//! The live tunes themselves: the tune loop (`nictune_tune::session`) run with this crate's
//! adapters on the namespace testbed ([`testbed`]), a real interface against a `nictune
//! serve` peer ([`iface`]) and the real-driver guests ([`guest`]), each returning its
//! [`Finished`] results for the binary to write and render.
//!
//! Every live tune ends the same way ([`run`]): the loop restores the settings as found
//! (whatever happens), the candidates' closed journals move beside the results, and the
//! results are built with the environment the report shows. What a tune holds while it runs
//! on the host ([`hold`]): the journals, both change locks, a mark of the running tune, and
//! the Ctrl-C / SIGTERM / SIGHUP flag.

pub mod guest;
pub mod iface;
pub mod testbed;

use crate::changes::{self, Unfinished};
use nictune_apply::state::{LiveLocks, Lock, StateDir, StateError};
use nictune_bench::cancel::Cancel;
use nictune_bench::TestKind;
use nictune_core::progress::Progress;
use nictune_tune::knob::{End, Knob, Setting};
use nictune_tune::predict::Predictor;
use nictune_tune::results::{Environment, TuneResults};
use nictune_tune::session::{self, Controls, Measurer, StopRequest, Target, TuneConfig, TuneError};
use std::collections::BTreeSet;
use std::path::Path;

/// How many of the bench engine's distinct caveats a host tune's environment lists.
const MAX_BENCH_NOTES: usize = 6;

/// A finished tune: its results, and how many candidate journals moved to `<out>/journal`.
#[derive(Debug)]
pub struct Finished {
    /// What the report, `results.json` and the recommended profiles are written from.
    pub results: TuneResults,
    /// Closed candidate journals moved beside the results (0 without journals).
    pub moved_journals: usize,
}

/// With both ends: the peer putting its settings back when the tune ended (the keys it
/// restored); `None` for a tune of one end.
pub type Released = Option<Result<Vec<String>, nictune_bench::BenchError>>;

/// What a tune needs besides its target and measurer.
pub struct Parts<'a> {
    /// The candidates, the plan and the run lengths.
    pub config: &'a TuneConfig,
    /// Ranks or predicts candidates (`--predict`, the real-driver model).
    pub predictor: Option<&'a mut dyn Predictor>,
    /// Where and how it is measured, as the report says.
    pub environment: Environment,
    /// Set by Ctrl-C / SIGTERM / SIGHUP in a live tune.
    pub cancel: &'a dyn StopRequest,
    /// A host tune's state directory and change lock: when the tune ends with every setting
    /// as found, its candidates' journals move to `<out>/journal`.
    pub journals: Option<(&'a StateDir, &'a Lock)>,
    /// The output directory (`--out`).
    pub out: &'a Path,
    /// Where the loop reports each run.
    pub progress: &'a dyn Progress,
}

impl std::fmt::Debug for Parts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parts")
            .field("out", &self.out)
            .field("journals", &self.journals.is_some())
            .finish_non_exhaustive()
    }
}

/// The loop failed, or only moving its journals did.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The tune loop failed (restoring, when [`TuneError::Restore`], failed too).
    #[error(transparent)]
    Tune(TuneError),
    /// The tune finished and restored every setting; only moving its journals failed.
    #[error(transparent)]
    Journals(StateError),
}

/// Runs the tune loop on `target` and `measurer` (restoring the settings as found whatever
/// happens), adds what `notes` takes from the measurer to the environment, moves the
/// candidates' closed journals to `<out>/journal` and builds the results. Every live tune and
/// the synthetic demonstration end here.
pub fn run<T: Target, M: Measurer>(
    target: &mut T,
    measurer: &mut M,
    parts: Parts<'_>,
    notes: impl FnOnce(&M, &mut Environment),
) -> Result<Finished, SessionError> {
    let controls = Controls {
        progress: parts.progress,
        cancel: parts.cancel,
    };
    let run = session::run(target, measurer, parts.config, parts.predictor, controls)
        .map_err(SessionError::Tune)?;
    let mut environment = parts.environment;
    notes(measurer, &mut environment);
    let moved = match parts.journals {
        Some((state, lock)) => move_journals(state, lock, parts.out)?,
        None => 0,
    };
    if moved > 0 {
        environment.notes.push(format!(
            "The journals of the {moved} candidate changes, every one reverted, are in journal/ \
             beside this report (`nictune status --all --state-dir {}/journal`).",
            parts.out.display()
        ));
    }
    Ok(Finished {
        results: TuneResults::build(&run, environment),
        moved_journals: moved,
    })
}

/// Moves this process's closed journals (its candidates, applied and reverted in full) from
/// the state directory to `<out>/journal`, where `nictune status --state-dir` reads them, so
/// the host's state directory keeps only what still matters.
fn move_journals(state: &StateDir, lock: &Lock, out: &Path) -> Result<usize, SessionError> {
    let dest = StateDir::new(out.join("journal"));
    state
        .move_closed(std::process::id(), &dest, lock)
        .map_err(SessionError::Journals)
}

/// Every knob some candidate sets: what the target snapshots and verifies.
pub fn knobs(config: &TuneConfig) -> Vec<Knob> {
    knobs_where(config, |_| true)
}

/// The knobs some candidate sets on `end`.
pub fn knobs_on(config: &TuneConfig, end: End) -> Vec<Knob> {
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

/// The workload as the report names it.
pub fn workload_label(test: TestKind) -> String {
    match test {
        TestKind::Stream => "TCP stream, 16 KiB writes, 1 connection".into(),
        _ => "TCP request/response, 1 B / 1 B, 1 connection".into(),
    }
}

/// The start of a tune as the report records it: UTC, `YYYY-MM-DDTHH:MM:SSZ`.
pub fn started_at() -> String {
    nictune_apply::txn::utc(nictune_apply::txn::now_unix_ms()).replace(' ', "T")
}

/// What a live tune of the host holds while it runs (marked in the state directory): the
/// journals, both change locks, and the Ctrl-C / SIGTERM / SIGHUP flag.
#[derive(Debug)]
pub struct Held {
    /// The state directory the candidates are journaled in.
    pub state: StateDir,
    /// The change locks, held until this is dropped.
    pub locks: LiveLocks,
    /// Set by Ctrl-C, SIGTERM or SIGHUP.
    pub cancel: Cancel,
}

/// Why a live tune could not take hold of the host.
#[derive(Debug, thiserror::Error)]
pub enum HoldError {
    /// An earlier change is unfinished, or a killed tune's changes are in place.
    #[error(transparent)]
    Unfinished(Unfinished),
    /// The change locks could not be taken (busy, or the state directory is not writable).
    #[error(transparent)]
    Lock(StateError),
    /// Reading the state directory, or marking this tune in it, failed.
    #[error(transparent)]
    State(StateError),
    /// The Ctrl-C / SIGTERM / SIGHUP handler could not be installed.
    #[error(transparent)]
    Signals(std::io::Error),
}

/// Refuses while an earlier change is unfinished or a killed tune's changes are in place,
/// then takes the locks, marks this tune under `state_dir` and catches Ctrl-C / SIGTERM /
/// SIGHUP.
pub fn hold(state_dir: &Path) -> Result<Held, HoldError> {
    let state = StateDir::new(state_dir);
    changes::check_finished(&state).map_err(HoldError::Unfinished)?;
    changes::forget_clean_killed_tunes(&state).map_err(HoldError::State)?;
    let locks = state.lock_live(1).map_err(HoldError::Lock)?;
    state
        .mark_tune(std::process::id(), nictune_apply::txn::now_unix_ms())
        .map_err(HoldError::State)?;
    let cancel = Cancel::new();
    cancel.on_signals().map_err(HoldError::Signals)?;
    Ok(Held {
        state,
        locks,
        cancel,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_core::units::Nanos;
    use nictune_tune::objective::{Goal, Objective};
    use nictune_tune::observe::{CpuScope, RateUnit};
    use nictune_tune::search::SearchPlan;
    use nictune_tune::space::{Capabilities, Space};
    use nictune_tune::synthetic::{demo_environment, synthetic, State};

    fn config(caps: &Capabilities) -> TuneConfig {
        let candidates = Space::from_capabilities(caps).with_baseline();
        TuneConfig {
            plan: SearchPlan::with_budget(
                SearchPlan::with_budget(0).minimum_budget(candidates.len()),
            ),
            candidates,
            baseline: 0,
            objective: Objective::new(Goal::Latency),
            unit: RateUnit::Transactions,
            scope: CpuScope::SharedMachine,
            warm_up: Nanos::from_millis(100),
            duration: Nanos::from_millis(500),
            notes: Vec::new(),
            left_out: 0,
            time_budget: None,
        }
    }

    #[test]
    fn the_knobs_are_those_some_candidate_sets_on_each_end() {
        let config = config(&Capabilities::real_driver_testbed(
            nictune_tune::knob::Driver::E1000,
        ));
        let all = knobs(&config);
        assert!(!all.is_empty());
        assert_eq!(knobs_on(&config, End::Local), all);
        assert!(knobs_on(&config, End::Peer).is_empty());
    }

    #[test]
    fn a_run_over_the_fakes_builds_results_and_moves_no_journals_without_them() {
        let config = config(&Capabilities::veth_testbed(2));
        let (mut host, mut bench) = synthetic(7, State::new());
        let out = std::env::temp_dir();
        let parts = Parts {
            config: &config,
            predictor: None,
            environment: demo_environment(),
            cancel: &|| false,
            journals: None,
            out: &out,
            progress: &nictune_core::progress::NoProgress,
        };
        let mut noted = false;
        let done = run(&mut host, &mut bench, parts, |_, env| {
            noted = true;
            env.notes.push("from the measurer".into());
        })
        .unwrap();
        assert!(noted);
        assert_eq!(done.moved_journals, 0);
        let notes = &done.results.environment.notes;
        assert!(notes.iter().any(|n| n == "from the measurer"), "{notes:?}");
    }
}
