//! The tune loop: snapshot → for each run: apply → warm up → measure → record → restore.
//!
//! The host's settings are restored, and read back to prove it, when the loop ends, when any
//! step fails, when the user cancels (the binary turns Ctrl-C into the `cancel` flag) and when the loop panics (a drop
//! guard). A crash of the whole process is the apply engine's journal's job: the real
//! [`Target`] journals every write, so `nictune revert` restores afterwards.
//!
//! Side effects sit behind two traits: a [`Target`] changes settings, a [`Measurer`] runs
//! traffic. Tests use fakes; the binary passes the apply engine and the bench engine.

use crate::candidate::Candidate;
use crate::fit::{fit_space_switching, runs_affordable, seconds, Budget, RunLength};
use crate::knob::Setting;
use crate::objective::Objective;
use crate::observe::{CpuScope, Observation, RateUnit};
use crate::predict::{rank_by_prediction, Predictor};
use crate::readback::{any_not_taken, merge, ReadBack};
use crate::search::{successive_halving, Evaluate, SearchError, SearchPlan, SearchRecord};
use nictune_core::metrics::Metrics;
use nictune_core::progress::Progress;
use nictune_core::units::Nanos;
use std::sync::atomic::{AtomicBool, Ordering};

/// Changes the settings of the host under test.
///
/// A live implementation must keep the *snapshot* recoverable if the process dies mid-tune:
/// after a crash, `nictune revert` has to put back the settings as found, not merely undo the
/// last candidate's change (which would leave the previous candidate's values in place). With
/// the apply engine that means one journaled restore point for the whole tune, or a revert
/// that walks back every transaction the tune made.
pub trait Target {
    /// Everything needed to put the settings back exactly as found. Compared after the final
    /// restore: a fresh snapshot must equal the first.
    type Snapshot: PartialEq + std::fmt::Debug;
    /// Reads the current settings.
    fn snapshot(&mut self) -> Result<Self::Snapshot, TargetError>;
    /// Applies `settings` (journaled by the real target) and returns those whose value read
    /// back after the write differs from the one asked ([`ReadBack`]: not taken, the host
    /// kept its value; or adjusted, the driver rounded it); empty when all read back as
    /// asked. The loop measures the candidate all the same, marks it, and never recommends
    /// one with a setting not taken.
    fn apply(&mut self, settings: &[Setting]) -> Result<Vec<ReadBack>, TargetError>;
    /// Puts every setting back as in `snapshot`.
    fn restore(&mut self, snapshot: &Self::Snapshot) -> Result<(), TargetError>;
    /// How long the target runs with traffic after `settings` were made before it behaves as
    /// it then stays ([`crate::knob::Setting::settle_time`]): the first run after a change
    /// warms up at least this long. Zero unless a target knows better.
    fn settle_time(&self, settings: &[Setting]) -> Nanos {
        let _ = settings;
        Nanos::ZERO
    }
    /// The same wait for settings put back as found: `undone` are the previous candidate's
    /// settings that the change to the next candidate returned to their values in
    /// `snapshot` (their own values are the ones undone). `rx-usecs 4` as found on an e1000
    /// stalls after being written back just as after being set. Zero unless a target knows
    /// better.
    fn settle_time_as_found(&self, snapshot: &Self::Snapshot, undone: &[Setting]) -> Nanos {
        let _ = (snapshot, undone);
        Nanos::ZERO
    }
}

/// Runs traffic and measures it.
pub trait Measurer {
    /// Runs traffic for `duration` and discards the results (caches, sockets, CPU clocks).
    fn warm_up(&mut self, candidate: &Candidate, duration: Nanos) -> Result<(), MeasureError>;
    /// Measures for `duration` with threads placed as `candidate.placement` says.
    fn measure(&mut self, candidate: &Candidate, duration: Nanos) -> Result<Metrics, MeasureError>;
}

/// What a [`Target`] operation was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetOp {
    /// [`Target::snapshot`]: reading the settings as found.
    Snapshot,
    /// [`Target::apply`]: making a candidate's settings.
    Apply,
    /// [`Target::restore`]: putting the snapshot back (between candidates, or at the end).
    Restore,
}

/// A target operation failed.
#[derive(Debug, thiserror::Error)]
#[error("{op:?} of {object} failed: {reason}")]
pub struct TargetError {
    /// What was being done.
    pub op: TargetOp,
    /// On what: a setting key, an interface, `settings`.
    pub object: String,
    /// Why.
    pub reason: String,
}

/// A measurement failed.
#[derive(Debug, thiserror::Error)]
#[error("measuring {candidate} failed: {reason}")]
pub struct MeasureError {
    /// The candidate's id.
    pub candidate: String,
    /// Why.
    pub reason: String,
}

/// Why one run failed.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// Putting the candidate's settings in place failed (restoring the snapshot before it, or
    /// applying its settings).
    #[error(transparent)]
    Apply(TargetError),
    /// Warming up or measuring the candidate failed.
    #[error(transparent)]
    Measure(MeasureError),
    /// The stop request was set before the run; nothing was changed for it.
    #[error("cancelled")]
    Cancelled,
}

/// Why the tune failed. The settings were restored unless the error is [`TuneError::Restore`].
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// The first snapshot failed; nothing was changed.
    #[error("reading the settings to restore later failed")]
    Snapshot(#[source] TargetError),
    /// A run failed or was cancelled; the search's error says which candidate and why.
    #[error("the search stopped; the settings as found were restored")]
    Search(#[source] SearchError<StepError>),
    /// `--predict`: calibrating the model on the baseline's measured runs failed.
    #[error("calibrating the predictor failed; the settings as found were restored")]
    Calibrate(#[source] crate::predict::PredictError),
    /// Restoring failed: the host may be left changed. `after` is what failed first, if any.
    #[error("RESTORING THE SETTINGS FAILED{}; run `nictune revert`", after_text(.after))]
    Restore {
        /// The restore that failed.
        #[source]
        source: TargetError,
        /// The error that ended the tune before the restore, if any (`None`: the search itself
        /// succeeded).
        after: Option<Box<TuneError>>,
    },
}

fn after_text(after: &Option<Box<TuneError>>) -> String {
    after
        .as_ref()
        .map(|e| format!(" after: {e}"))
        .unwrap_or_default()
}

/// What the loop needs besides the two traits.
#[derive(Debug, Clone)]
pub struct TuneConfig {
    /// The candidates; `candidates[baseline]` is the host as found.
    pub candidates: Vec<Candidate>,
    /// Index of the host-as-found candidate in `candidates`.
    pub baseline: usize,
    /// What "best" means and its constraints.
    pub objective: Objective,
    /// How many runs the search may spend and how.
    pub plan: SearchPlan,
    /// Whether the rate is transactions/s or bit/s (the workload's kind).
    pub unit: RateUnit,
    /// Whether client and server are separate machines (CPU adds up) or one (counted once).
    pub scope: CpuScope,
    /// Traffic before each measurement, discarded.
    pub warm_up: Nanos,
    /// Length of each measurement.
    pub duration: Nanos,
    /// What fitting the search into its budget changed ([`crate::fit`]); carried into the
    /// results' notes.
    pub notes: Vec<String>,
    /// Candidates of the space left out to fit the budget ([`crate::fit::fit_space`]): not
    /// in `candidates`, but counted in the results' space size.
    pub left_out: usize,
    /// The budget was wall time (`--budget 3m`): what a run takes beyond its warm-up and
    /// measurement — putting the candidate in place (a driver reload), a settle's longer
    /// warm-up, starting the traffic — is spent from `plan` too, in runs of warm-up plus
    /// measurement ([`crate::search::Evaluate::spent_between_runs`]), so the search ends
    /// near the time asked for; and the loop times one switch before the search and fits
    /// the search again when the plan cannot pay for its switches ([`TimeBudget`]). `None`:
    /// a budget of runs, which counts runs only.
    pub time_budget: Option<TimeBudget>,
}

/// A budget of wall time as asked, kept so the loop can fit the search again once it knows
/// what a run costs on this target besides its warm-up and measurement.
///
/// The fit before the loop ([`crate::fit::fit_space`]) knows the run length but not that
/// cost: on the real-driver testbed every candidate is a driver reload and each run starts
/// traffic through the guest, 4.3 s besides a 2.5 s run, and a 5-minute budget fitted
/// without it ran 5 min 54 s. So before the search the loop puts the first candidate in
/// place and the settings as found back, measures the settings as found once (kept as the
/// baseline's first run), and — when the smallest search with that cost before every run
/// would not fit the time left — fits again with it
/// ([`crate::fit::fit_space_switching`]): shorter runs, then smaller finals, then a subset
/// of the candidates, each said in the notes (the probe's run is then dropped: its length
/// may have changed). With a predictor the pruning keeps what the time pays for at that
/// cost instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeBudget {
    /// The wall time asked for (`--budget 5m`).
    pub wall: Nanos,
    /// The run length asked for (`--duration`, `--warmup`), before any fitting.
    pub asked: RunLength,
}

/// What the loop measured. Candidate indices refer to `candidates`.
#[derive(Debug, Clone)]
pub struct TuneRun {
    /// The configuration the search ran under: as given, or fitted again to the switching
    /// cost the loop measured ([`TimeBudget`]): its plan, run length, notes and left-out
    /// count are the ones the results report.
    pub config: TuneConfig,
    /// The candidates searched (after `--predict` pruning), baseline included.
    pub candidates: Vec<Candidate>,
    /// Index of the host-as-found candidate in `candidates` (0 after `--predict` pruning).
    pub baseline: usize,
    /// The search's rounds, finalists and observations.
    pub record: SearchRecord,
    /// Every run's full metrics, by candidate.
    pub metrics: Vec<Vec<Metrics>>,
    /// The prediction of each candidate (with `--predict`).
    pub predicted: Vec<Option<Metrics>>,
    /// How many candidates the space held before pruning.
    pub space_size: usize,
    /// What each candidate's settings read back as, by candidate, where it differs from what
    /// was asked ([`Target::apply`]; over every time the candidate was put in place).
    pub read_back: Vec<Vec<ReadBack>>,
}

/// Whether the user asked to stop (Ctrl-C, SIGTERM, SIGHUP): asked before every run.
pub trait StopRequest {
    /// `true` when the loop must stop before the next run; restoring follows.
    fn requested(&self) -> bool;
}

impl StopRequest for AtomicBool {
    fn requested(&self) -> bool {
        self.load(Ordering::Relaxed)
    }
}

impl<F: Fn() -> bool> StopRequest for F {
    fn requested(&self) -> bool {
        self()
    }
}

/// The progress sink and the stop request the loop checks between runs. The binary passes
/// its progress bar and the Ctrl-C / SIGTERM / SIGHUP flag the bench engine registers.
#[derive(Clone, Copy)]
pub struct Controls<'a> {
    /// Where the loop reports each run (one step per run of the budget).
    pub progress: &'a dyn Progress,
    /// Checked before every run; when set, the loop stops with [`StepError::Cancelled`] and
    /// restores.
    pub cancel: &'a dyn StopRequest,
}

impl std::fmt::Debug for Controls<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controls")
            .field("stop_requested", &self.cancel.requested())
            .finish_non_exhaustive()
    }
}

/// Runs the tune and restores the settings as found, whatever happens.
pub fn run<T: Target, M: Measurer>(
    target: &mut T,
    measurer: &mut M,
    config: &TuneConfig,
    predictor: Option<&mut dyn Predictor>,
    controls: Controls<'_>,
) -> Result<TuneRun, TuneError> {
    let snapshot = target.snapshot().map_err(TuneError::Snapshot)?;
    let mut guard = Restoring {
        target,
        snapshot,
        armed: true,
    };
    controls.progress.start(config.plan.budget as u64, "tune");
    let result = search(&mut guard, measurer, config, predictor, controls);
    controls.progress.finish();
    match (result, guard.restore_now()) {
        (Ok(run), Ok(())) => Ok(run),
        (Err(e), Ok(())) => Err(e),
        (Ok(_), Err(source)) => Err(TuneError::Restore {
            source,
            after: None,
        }),
        (Err(e), Err(source)) => Err(TuneError::Restore {
            source,
            after: Some(Box::new(e)),
        }),
    }
}

/// Restores the snapshot when dropped unless already restored (covers panics).
struct Restoring<'a, T: Target> {
    target: &'a mut T,
    snapshot: T::Snapshot,
    armed: bool,
}

impl<T: Target> Restoring<'_, T> {
    /// Restores the snapshot, then reads the settings again to prove it.
    fn restore_now(&mut self) -> Result<(), TargetError> {
        self.armed = false;
        self.target.restore(&self.snapshot)?;
        let after = self.target.snapshot()?;
        if after != self.snapshot {
            return Err(TargetError {
                op: TargetOp::Restore,
                object: "settings".into(),
                reason: format!(
                    "read back after restoring: {after:?}, expected {:?}",
                    self.snapshot
                ),
            });
        }
        Ok(())
    }
}

impl<T: Target> Drop for Restoring<'_, T> {
    fn drop(&mut self) {
        if self.armed {
            // Best effort during unwinding; the journal covers what this cannot.
            let _ = self.target.restore(&self.snapshot);
        }
    }
}

/// Optional prediction and pruning, then the search.
fn search<T: Target, M: Measurer>(
    guard: &mut Restoring<'_, T>,
    measurer: &mut M,
    config: &TuneConfig,
    predictor: Option<&mut dyn Predictor>,
    controls: Controls<'_>,
) -> Result<TuneRun, TuneError> {
    let mut eval = LoopEval {
        guard,
        measurer,
        config: config.clone(),
        candidates: config.candidates.clone(),
        metrics: vec![Vec::new(); config.candidates.len()],
        read_back: vec![Vec::new(); config.candidates.len()],
        applied: None,
        controls,
        between: Nanos::ZERO,
        pending_settle: None,
    };
    // Before the search, so that the run length may still change.
    let (switch, base_runs) = match config.time_budget {
        Some(time) => eval.price_a_run(time, predictor.is_none())?,
        None => (None, Vec::new()),
    };
    let (baseline, prior, predicted) = match predictor {
        Some(p) => eval.predict_and_prune(p, switch, base_runs)?,
        None => {
            let n = eval.candidates.len();
            let mut prior = vec![Vec::new(); n];
            prior[eval.config.baseline] = base_runs;
            (eval.config.baseline, prior, vec![None; n])
        }
    };
    let plan = eval.config.plan;
    let record = successive_halving(prior, baseline, &plan, &config.objective, &mut eval)
        .map_err(TuneError::Search)?;
    Ok(TuneRun {
        config: eval.config,
        candidates: eval.candidates,
        baseline,
        record,
        metrics: eval.metrics,
        predicted,
        space_size: config.candidates.len() + config.left_out,
        read_back: eval.read_back,
    })
}

/// The search's view of the loop: one run = apply (when needed) → warm up → measure.
struct LoopEval<'g, 'a, T: Target, M: Measurer> {
    guard: &'g mut Restoring<'a, T>,
    measurer: &'g mut M,
    /// The configuration as given, or as fitted again to the measured switching cost.
    config: TuneConfig,
    /// Candidates in search order (pruned and reordered by `--predict`).
    candidates: Vec<Candidate>,
    metrics: Vec<Vec<Metrics>>,
    /// What each candidate's settings read back as where it differs from what was asked.
    read_back: Vec<Vec<ReadBack>>,
    /// The candidate whose settings are in place, to skip re-applying them.
    applied: Option<usize>,
    controls: Controls<'g>,
    /// Wall time runs took beyond warm-up plus measurement, not yet spent from the budget
    /// ([`TuneConfig::time_budget`] only).
    between: Nanos,
    /// The settle of a change made before the search ([`LoopEval::price_a_run`] puts the
    /// settings as found back): the first run warms up for it.
    pending_settle: Option<Nanos>,
}

impl<T: Target, M: Measurer> LoopEval<'_, '_, T, M> {
    /// Puts candidate `index`'s settings in place. A candidate that leaves a knob the
    /// previous one set untouched starts from the settings as found, so nothing leaks from
    /// one candidate into the next.
    /// Returns how long the target then takes to settle ([`Target::settle_time`] of what
    /// was made, [`Target::settle_time_as_found`] of what went back), or `None` when nothing
    /// changed.
    fn put_in_place(&mut self, index: usize) -> Result<Option<Nanos>, TargetError> {
        if self.applied == Some(index) {
            return Ok(None);
        }
        let previous = self.applied.take().map(|i| &self.candidates[i]);
        let c = &self.candidates[index];
        // The previous candidate's settings this one does not make: they go back as found.
        let undone: Vec<Setting> = previous
            .map(|p| &p.settings[..])
            .unwrap_or_default()
            .iter()
            .filter(|s| c.value_on(s.end, s.knob).is_none())
            .cloned()
            .collect();
        let g = &mut *self.guard;
        if c.is_baseline() || !undone.is_empty() {
            g.target.restore(&g.snapshot)?;
        }
        if !c.is_baseline() {
            let read_back = g.target.apply(&c.settings)?;
            merge(&mut self.read_back[index], read_back);
        }
        self.applied = Some(index);
        let settle = g.target.settle_time(&c.settings);
        Ok(Some(
            settle.max(g.target.settle_time_as_found(&g.snapshot, &undone)),
        ))
    }

    /// Times what a run costs beyond its warm-up and measurement ([`TimeBudget`]): one
    /// switch each way between the settings as found and the first other candidate, then one
    /// run of the settings as found (the traffic's own start and stop, the samples). Returns
    /// that cost (the mean switch plus the run's overhead: in the search every run follows a
    /// switch) and the probe run's observation, kept as the baseline's first run; `None` and
    /// no runs when there is no other candidate. With `refit`, fits the search again when the
    /// plan cannot pay that cost before every run, and drops the probe run (its length may
    /// have changed); else the probe's time is paid from the budget like any run's.
    fn price_a_run(
        &mut self,
        time: TimeBudget,
        refit: bool,
    ) -> Result<(Option<Nanos>, Vec<Observation>), TuneError> {
        let base = self.config.baseline;
        let Some(first) = (0..self.candidates.len()).find(|&i| i != base) else {
            return Ok((None, Vec::new()));
        };
        let started = std::time::Instant::now();
        // Each switch's settle beyond the warm-up: the run after it warms up that much longer.
        let mut longer = [Nanos::ZERO; 2];
        for (k, index) in [first, base].into_iter().enumerate() {
            if self.controls.cancel.requested() {
                return Err(run_error(index, StepError::Cancelled));
            }
            self.controls.progress.message(&self.candidates[index].id());
            let settle = self
                .put_in_place(index)
                .map_err(|e| run_error(index, StepError::Apply(e)))?;
            longer[k] = settle
                .unwrap_or(Nanos::ZERO)
                .saturating_sub(self.config.warm_up);
            // The settings as found are in place last; their settle is the probe run's.
            self.pending_settle = settle;
        }
        let switched = elapsed(started);
        let run_started = std::time::Instant::now();
        let obs = self
            .evaluate(base)
            .map_err(|source| run_error(base, source))?;
        let run = self.run_length();
        // The probe run's own overhead, without the settle it warmed up for.
        let overhead = elapsed(run_started)
            .saturating_sub(run)
            .saturating_sub(longer[1]);
        let per_run = Nanos((switched.0 + longer[0].0 + longer[1].0) / 2 + overhead.0);
        let left = time
            .wall
            .saturating_sub(switched)
            .saturating_sub(elapsed(run_started));
        let n = self.candidates.len();
        // The probe's run is the baseline's first of the smallest search.
        let holds = runs_affordable(Budget::Time(left), run, per_run) + 1
            >= self.config.plan.minimum_budget(n);
        // Fitting keeps the baseline first ([`crate::fit::cover`]).
        let refitted = !holds && refit && base == 0 && self.refit(time.asked, left, per_run);
        if !refitted {
            self.between += switched;
            return Ok((Some(per_run), vec![obs]));
        }
        // The new plan is the time left after the probe: nothing of it is owed.
        self.between = Nanos::ZERO;
        Ok((Some(per_run), Vec::new()))
    }

    /// Fits the search again into `left` with `switch` before every run, over the
    /// candidates fitted so far; the notes of the first fit are replaced by this one's and
    /// the runs so far (the probe's) dropped. False when no fit came out, the plan unchanged.
    fn refit(&mut self, asked: RunLength, left: Nanos, switch: Nanos) -> bool {
        let budget = Budget::Time(left);
        let candidates = self.candidates.clone();
        let fitted =
            fit_space_switching(budget, asked, candidates.clone(), switch).or_else(|too_small| {
                // Not even the smallest search fits: run the smallest, which takes longer
                // than asked, and say so.
                let (_, minimum) = too_small.minimum;
                let mut f = fit_space_switching(Budget::Time(minimum), asked, candidates, switch)?;
                f.fitted.notes.push(format!(
                    "Even the smallest search ({} of the candidates, {} runs) takes about {} s \
                     here with {} of switching to the candidate before each run, more than \
                     the {:.0} s left of the budget: this tune runs over.",
                    f.candidates.len(),
                    too_small.needed,
                    minimum.as_secs_f64().ceil(),
                    seconds(switch),
                    left.as_secs_f64()
                ));
                Ok::<_, crate::fit::TooSmall>(f)
            });
        let Ok(fitted) = fitted else {
            // Unreachable by the figures (the minimum fits itself); keep the plan as it was.
            return false;
        };
        let kept = fitted.candidates.len();
        self.read_back = self.read_back_of(&fitted.candidates);
        let mut notes = vec![format!(
            "A run took {} here besides its warm-up and measurement (switching to the \
             candidate, a settle's longer warm-up, starting the traffic: timed once before the \
             search), so the search was fitted again to pay for that before every run.",
            seconds(switch)
        )];
        notes.extend(fitted.fitted.notes);
        let c = &mut self.config;
        c.left_out += c.candidates.len() - kept;
        c.candidates = fitted.candidates.clone();
        c.plan = fitted.fitted.plan;
        c.warm_up = fitted.fitted.run.warm_up;
        c.duration = fitted.fitted.run.duration;
        c.notes = notes;
        self.candidates = fitted.candidates;
        self.metrics = vec![Vec::new(); kept];
        // The baseline (0: the caller checked) stays first and in place; the others were not
        // measured yet.
        self.applied = Some(0);
        self.controls.progress.start(c.plan.budget as u64, "tune");
        true
    }

    /// Measures the baseline twice (counting `runs`, those it already has), calibrates,
    /// ranks, and keeps what the budget covers (with `switch`, what a run costs beyond its
    /// warm-up and measurement on a time budget, timed before the search). Returns the new
    /// baseline index, the baseline's runs as prior runs, and predictions.
    #[allow(clippy::type_complexity)]
    fn predict_and_prune(
        &mut self,
        predictor: &mut dyn Predictor,
        switch: Option<Nanos>,
        mut runs: Vec<Observation>,
    ) -> Result<(usize, Vec<Vec<Observation>>, Vec<Option<Metrics>>), TuneError> {
        let base = self.config.baseline;
        for _ in runs.len()..2 {
            let obs = self.evaluate(base).map_err(|source| {
                TuneError::Search(SearchError::Run {
                    index: base,
                    source,
                })
            })?;
            runs.push(obs);
        }
        let base_metrics = self.metrics[base].clone();
        predictor
            .calibrate(&self.candidates[base], &base_metrics)
            .map_err(TuneError::Calibrate)?;
        let ranking = rank_by_prediction(
            predictor,
            &self.candidates,
            base,
            &self.config.objective,
            self.config.unit,
            self.config.scope,
        );
        // What one run costs the plan, switching included (1 for a budget of runs), and what
        // went on switching already (the probe's switches), in runs.
        let run = self.run_length().as_secs_f64();
        let in_runs = |t: Nanos| match run > 0.0 {
            true => t.as_secs_f64() / run,
            false => 0.0,
        };
        let cost = 1.0 + switch.map_or(0.0, in_runs);
        let spent = in_runs(self.between);
        let others = ranking.order.len();
        let keep = affordable(&self.config.plan, others, cost, spent);
        if let (Some(s), true) = (switch, keep < others) {
            self.config.notes.push(format!(
                "A run took {} here besides its warm-up and measurement (switching to the \
                 candidate and starting the traffic, timed before the search), so the budget \
                 measures the {keep} of the {others} candidates the model ranks best.",
                seconds(s)
            ));
        }
        let mut chosen = vec![base];
        chosen.extend(ranking.keep(keep));
        self.candidates = chosen.iter().map(|&i| self.candidates[i].clone()).collect();
        self.metrics = chosen.iter().map(|&i| self.metrics[i].clone()).collect();
        self.read_back = chosen.iter().map(|&i| self.read_back[i].clone()).collect();
        self.applied = self
            .applied
            .and_then(|a| chosen.iter().position(|&i| i == a));
        let mut prior = vec![Vec::new(); chosen.len()];
        prior[0] = runs;
        let predicted = chosen
            .iter()
            .map(|&i| ranking.predicted[i].clone())
            .collect();
        Ok((0, prior, predicted))
    }
}

/// How many non-baseline candidates a plan's budget can search when each run costs `cost`
/// runs of the budget (a switch before every run on a time budget; 1 otherwise) and
/// `spent` runs' worth went on switching already.
fn affordable(plan: &SearchPlan, others: usize, cost: f64, spent: f64) -> usize {
    (0..=others)
        .rev()
        .find(|&k| plan.minimum_budget(k + 1) as f64 * cost + spent <= plan.budget as f64)
        .unwrap_or(0)
}

/// Wall time since `started`.
fn elapsed(started: std::time::Instant) -> Nanos {
    Nanos(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX))
}

/// A failed or cancelled step outside the search, reported as the search's own would be.
fn run_error(index: usize, source: StepError) -> TuneError {
    TuneError::Search(SearchError::Run { index, source })
}

impl<T: Target, M: Measurer> Evaluate for LoopEval<'_, '_, T, M> {
    type Error = StepError;

    fn evaluate(&mut self, index: usize) -> Result<Observation, StepError> {
        if self.controls.cancel.requested() {
            return Err(StepError::Cancelled);
        }
        let started = std::time::Instant::now();
        self.controls.progress.message(&self.candidates[index].id());
        let pending = self.pending_settle.take();
        let settle = self
            .put_in_place(index)
            .map_err(StepError::Apply)?
            .or(pending);
        let c = &self.candidates[index];
        let warm_up = self.config.warm_up.max(settle.unwrap_or(Nanos::ZERO));
        if warm_up > Nanos::ZERO {
            self.measurer
                .warm_up(c, warm_up)
                .map_err(StepError::Measure)?;
        }
        let m = self
            .measurer
            .measure(c, self.config.duration)
            .map_err(StepError::Measure)?;
        let obs = Observation::of(&m, self.config.unit, self.config.scope);
        self.metrics[index].push(m);
        self.controls.progress.advance(1);
        if self.config.time_budget.is_some() {
            self.between += elapsed(started).saturating_sub(self.run_length());
        }
        Ok(obs)
    }

    /// A candidate with a setting not taken was measured at another point: the search
    /// keeps it out of the finals while others are left.
    fn excluded(&self, index: usize) -> bool {
        any_not_taken(&self.read_back[index])
    }

    fn spent_between_runs(&mut self) -> usize {
        let run = self.run_length().0.max(1);
        let whole = self.between.0 / run;
        self.between = Nanos(self.between.0 - whole * run);
        self.controls.progress.advance(whole);
        whole as usize
    }
}

impl<T: Target, M: Measurer> LoopEval<'_, '_, T, M> {
    /// What `candidates` (a new list: fitted again) read back as so far, by their place in
    /// the list: a candidate put in place before (timing a switch) keeps what it showed.
    fn read_back_of(&self, candidates: &[Candidate]) -> Vec<Vec<ReadBack>> {
        candidates
            .iter()
            .map(|c| {
                let old = self.candidates.iter().position(|o| o == c);
                old.map(|i| self.read_back[i].clone()).unwrap_or_default()
            })
            .collect()
    }

    /// A run as the budget counts it: warm-up plus measurement.
    fn run_length(&self) -> Nanos {
        self.config.warm_up + self.config.duration
    }
}
