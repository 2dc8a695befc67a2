//! The tune loop against a fake host and a fake bench: every way out of the loop — the end, a
//! failed apply, a failed measurement, a cancel, a panic — leaves the host as found.

use nictune_core::metrics::Metrics;
use nictune_core::progress::NoProgress;
use nictune_core::units::Nanos;
use nictune_tune::candidate::{Candidate, Placement};
use nictune_tune::fit::RunLength;
use nictune_tune::knob::{Knob, KnobValue, Setting};
use nictune_tune::objective::{Goal, Objective};
use nictune_tune::observe::{CpuScope, RateUnit};
use nictune_tune::readback::ReadBack;
use nictune_tune::search::SearchPlan;
use nictune_tune::session::{
    run, Controls, MeasureError, Measurer, StepError, Target, TargetError, TargetOp, TimeBudget,
    TuneConfig, TuneError,
};
use nictune_tune::space::{Capabilities, Space};
use nictune_tune::synthetic::{synthetic, State, SyntheticBench, SyntheticHost};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

/// A host that was tuned by hand before: settings the tune must put back.
fn found_state() -> State {
    State::from([
        (Knob::GroFlushTimeout, KnobValue::Duration(Nanos(5_000))),
        (Knob::BusyRead, KnobValue::Duration(Nanos::ZERO)),
    ])
}

/// Wraps the synthetic target and fails (or panics, or cancels) at a chosen step.
struct Faulty {
    inner: SyntheticHost,
    bench: SyntheticBench,
    applies: usize,
    measures: usize,
    fail_apply_at: Option<usize>,
    fail_measure_at: Option<usize>,
    panic_measure_at: Option<usize>,
    fail_restore: bool,
    /// Restore "succeeds" but leaves busy_read as it is (a write the kernel ignored).
    restore_forgets_busy_read: bool,
    restores: usize,
    cancel_at: Option<(usize, &'static AtomicBool)>,
    /// Candidates with this setting take [`SETTLE`] to settle after a change.
    settles: Option<Setting>,
    /// This knob's value as found takes [`SETTLE`] to settle after being put back.
    settles_as_found: Option<Knob>,
    /// Each apply takes this long (a driver reload).
    apply_takes: std::time::Duration,
    /// Each measurement takes this long besides (starting the traffic, the samples).
    measure_takes: std::time::Duration,
    /// Applies (`apply`, `restore`) and warm-ups (`warm <id> <ns>`), in order.
    log: Vec<String>,
}

/// How long [`Faulty::settles`]'s candidates take to settle.
const SETTLE: Nanos = Nanos::from_secs(3);

impl Faulty {
    fn new() -> Faulty {
        let (inner, bench) = synthetic(42, found_state());
        Faulty {
            inner,
            bench,
            applies: 0,
            measures: 0,
            fail_apply_at: None,
            fail_measure_at: None,
            panic_measure_at: None,
            fail_restore: false,
            restore_forgets_busy_read: false,
            restores: 0,
            cancel_at: None,
            settles: None,
            settles_as_found: None,
            apply_takes: std::time::Duration::ZERO,
            measure_takes: std::time::Duration::ZERO,
            log: Vec::new(),
        }
    }
}

impl Target for Faulty {
    type Snapshot = State;
    fn snapshot(&mut self) -> Result<State, TargetError> {
        self.inner.snapshot()
    }
    fn apply(&mut self, settings: &[Setting]) -> Result<Vec<ReadBack>, TargetError> {
        self.applies += 1;
        self.log.push("apply".into());
        std::thread::sleep(self.apply_takes);
        if self.fail_apply_at == Some(self.applies) {
            // Half-applied: the first setting went in before the failure.
            self.inner.apply(&settings[..1])?;
            return Err(TargetError {
                op: TargetOp::Apply,
                object: settings[1].knob.key().into(),
                reason: "injected failure".into(),
            });
        }
        self.inner.apply(settings)
    }
    fn restore(&mut self, snapshot: &State) -> Result<(), TargetError> {
        self.restores += 1;
        self.log.push("restore".into());
        if self.fail_restore {
            return Err(TargetError {
                op: TargetOp::Restore,
                object: "napi.gro-flush-timeout".into(),
                reason: "injected failure".into(),
            });
        }
        if self.restore_forgets_busy_read {
            let mut partial = snapshot.clone();
            match self.inner.state().get(&Knob::BusyRead) {
                Some(v) => partial.insert(Knob::BusyRead, *v),
                None => partial.remove(&Knob::BusyRead),
            };
            return self.inner.restore(&partial);
        }
        self.inner.restore(snapshot)
    }
}

/// The fake bench is the same object, so it sees the fake host's settings.
struct Bench<'a>(&'a std::cell::RefCell<Faulty>);

impl Measurer for Bench<'_> {
    fn warm_up(&mut self, c: &Candidate, d: Nanos) -> Result<(), MeasureError> {
        let mut f = self.0.borrow_mut();
        f.log.push(format!("warm {} {}", c.id(), d.0));
        f.bench.warm_up(c, d)
    }
    fn measure(&mut self, c: &Candidate, d: Nanos) -> Result<Metrics, MeasureError> {
        let mut f = self.0.borrow_mut();
        f.measures += 1;
        std::thread::sleep(f.measure_takes);
        let n = f.measures;
        if f.panic_measure_at == Some(n) {
            drop(f);
            panic!("injected panic in the bench");
        }
        if let Some((at, flag)) = f.cancel_at {
            if n == at {
                flag.store(true, Ordering::Relaxed);
            }
        }
        if f.fail_measure_at == Some(n) {
            return Err(MeasureError {
                candidate: c.id(),
                reason: "injected failure".into(),
            });
        }
        f.bench.measure(c, d)
    }
}

/// Target side of the shared fake.
struct Host<'a>(&'a std::cell::RefCell<Faulty>);

impl Target for Host<'_> {
    type Snapshot = State;
    fn snapshot(&mut self) -> Result<State, TargetError> {
        self.0.borrow_mut().snapshot()
    }
    fn apply(&mut self, s: &[Setting]) -> Result<Vec<ReadBack>, TargetError> {
        self.0.borrow_mut().apply(s)
    }
    fn restore(&mut self, s: &State) -> Result<(), TargetError> {
        self.0.borrow_mut().restore(s)
    }
    fn settle_time(&self, settings: &[Setting]) -> Nanos {
        let f = self.0.borrow();
        match f.settles {
            Some(k) if settings.contains(&k) => SETTLE,
            _ => Nanos::ZERO,
        }
    }
    fn settle_time_as_found(&self, snapshot: &State, undone: &[Setting]) -> Nanos {
        let f = self.0.borrow();
        match f.settles_as_found {
            Some(k) if snapshot.contains_key(&k) && undone.iter().any(|s| s.knob == k) => SETTLE,
            _ => Nanos::ZERO,
        }
    }
}

fn config(budget: usize) -> TuneConfig {
    let space = Space::from_capabilities(&Capabilities::veth_testbed(2));
    let mut candidates = vec![Candidate::baseline(Placement::Cross)];
    candidates.extend(space.candidates());
    TuneConfig {
        candidates,
        baseline: 0,
        objective: Objective::new(Goal::Latency),
        plan: SearchPlan::with_budget(budget),
        unit: RateUnit::Transactions,
        scope: CpuScope::SharedMachine,
        warm_up: Nanos::from_millis(500),
        duration: Nanos::from_secs(2),
        notes: Vec::new(),
        left_out: 0,
        time_budget: None,
    }
}

fn tune(fake: &std::cell::RefCell<Faulty>, budget: usize) -> Result<(), TuneError> {
    let cancel: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let cancel_at = fake.borrow().cancel_at.map(|(at, _)| at);
    if let Some(at) = cancel_at {
        fake.borrow_mut().cancel_at = Some((at, cancel));
    }
    let controls = Controls {
        progress: &NoProgress,
        cancel,
    };
    run(
        &mut Host(fake),
        &mut Bench(fake),
        &config(budget),
        None,
        controls,
    )
    .map(|_| ())
}

#[test]
fn a_time_budget_pays_for_slow_applies_with_runs_and_a_budget_of_runs_does_not() {
    let tune_with = |timed: bool| {
        let fake = std::cell::RefCell::new(Faulty::new());
        // Runs of 4 ms (the fake bench returns at once, so a run takes no time but its
        // apply); every apply takes 8 ms, two runs' worth.
        fake.borrow_mut().apply_takes = std::time::Duration::from_millis(8);
        let wall = timed.then_some(Nanos(RUN_4MS.total().0 * 120));
        let (run, _) = tune_under(&fake, &timed_config(RUN_4MS, 120, wall), None);
        let applies = fake.borrow().applies;
        (run.record, applies)
    };
    let (runs, _) = tune_with(false);
    assert_eq!(runs.spent_between_runs, 0);
    assert!(runs.measurements > 100, "{}", runs.measurements);
    let (timed, applies) = tune_with(true);
    // A run with an apply takes 8 ms against the 4 ms a run is counted as: at least one
    // run's worth per apply went to the budget (a sleep never ends early).
    let (between, made) = (timed.spent_between_runs, timed.measurements);
    assert!(between + 1 >= applies, "{between} for {applies} applies");
    assert!(made < runs.measurements, "{made} runs");
    assert!(made + between <= 120 + 8, "{made} runs + {between}");
}

#[test]
fn a_full_tune_restores_the_settings_as_found() {
    let fake = std::cell::RefCell::new(Faulty::new());
    tune(&fake, 80).unwrap();
    let f = fake.borrow();
    assert_eq!(f.inner.state(), found_state());
    assert!(f.measures <= 80 && f.measures >= 60, "{} runs", f.measures);
    assert!(f.applies > 0);
}

/// Checks every warm-up in `log`: [`SETTLE`] exactly when a change came before it and
/// `settles(previous id, id)` holds, else the configured 500 ms. Returns how many long
/// warm-ups and how many short ones after a change there were.
fn check_warm_ups(log: &[String], settles: impl Fn(Option<&str>, &str) -> bool) -> (usize, usize) {
    let (mut changed, mut previous, mut long, mut short_after_change) = (false, None, 0, 0);
    for e in log {
        if e == "apply" || e == "restore" {
            changed = true;
            continue;
        }
        let (id, ns) = e["warm ".len()..].rsplit_once(' ').unwrap();
        let want = match changed && settles(previous, id) {
            true => SETTLE,
            false => Nanos::from_millis(500),
        };
        assert_eq!(ns.parse::<u64>().unwrap(), want.0, "{e} in {log:#?}");
        long += usize::from(want == SETTLE);
        short_after_change += usize::from(changed && want != SETTLE);
        changed = false;
        previous = Some(id);
    }
    (long, short_after_change)
}

#[test]
fn the_first_run_after_a_change_that_settles_warms_up_until_it_has() {
    let fake = std::cell::RefCell::new(Faulty::new());
    let busy = Setting::new(Knob::BusyRead, KnobValue::Duration(Nanos::from_micros(50)));
    fake.borrow_mut().settles = Some(busy);
    tune(&fake, 80).unwrap();
    let f = fake.borrow();
    let (long, short_after_change) = check_warm_ups(&f.log, |_, id| id.contains("busy_read=50µs"));
    // Both kinds of change happened, and the baseline's second run followed no change.
    assert!(long > 0 && short_after_change > 0, "{:#?}", f.log);
    assert_eq!(f.log[1..3], ["warm as found @cross-cpu 500000000"; 2]);
}

#[test]
fn the_first_run_after_a_setting_that_settles_went_back_as_found_warms_up_until_it_has() {
    let fake = std::cell::RefCell::new(Faulty::new());
    // gro-flush-timeout as found (5 µs) settles after being written back: the run after a
    // candidate that set it and before one that sets it again.
    fake.borrow_mut().settles_as_found = Some(Knob::GroFlushTimeout);
    tune(&fake, 80).unwrap();
    let f = fake.borrow();
    let sets_it = |id: &str| id.contains("gro-flush=");
    let (long, short_after_change) = check_warm_ups(&f.log, |previous, id| {
        previous.is_some_and(sets_it) && !sets_it(id)
    });
    assert!(long > 0 && short_after_change > 0, "{:#?}", f.log);
}

#[test]
fn a_failed_apply_mid_loop_restores_everything() {
    let fake = std::cell::RefCell::new(Faulty::new());
    fake.borrow_mut().fail_apply_at = Some(7);
    let err = tune(&fake, 80).unwrap_err();
    assert!(
        matches!(&err, TuneError::Search(s) if matches!(std::error::Error::source(s), Some(e) if e.to_string().contains("injected"))),
        "{err:?}"
    );
    let f = fake.borrow();
    assert_eq!(f.applies, 7, "the loop stops at the failure");
    assert_eq!(f.inner.state(), found_state());
}

#[test]
fn a_failed_measurement_mid_loop_restores_everything() {
    let fake = std::cell::RefCell::new(Faulty::new());
    fake.borrow_mut().fail_measure_at = Some(12);
    let err = tune(&fake, 80).unwrap_err();
    assert!(matches!(err, TuneError::Search(_)), "{err:?}");
    assert_eq!(fake.borrow().measures, 12);
    assert_eq!(fake.borrow().inner.state(), found_state());
}

#[test]
fn cancelling_stops_before_the_next_run_and_restores() {
    let fake = std::cell::RefCell::new(Faulty::new());
    let placeholder: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    fake.borrow_mut().cancel_at = Some((9, placeholder));
    let err = tune(&fake, 80).unwrap_err();
    match err {
        TuneError::Search(nictune_tune::search::SearchError::Run { source, .. }) => {
            assert!(matches!(source, StepError::Cancelled))
        }
        other => panic!("expected a cancel, got {other:?}"),
    }
    assert_eq!(fake.borrow().measures, 9);
    assert_eq!(fake.borrow().inner.state(), found_state());
}

#[test]
fn a_panic_in_the_bench_still_restores() {
    let fake = std::cell::RefCell::new(Faulty::new());
    fake.borrow_mut().panic_measure_at = Some(5);
    let outcome = catch_unwind(AssertUnwindSafe(|| tune(&fake, 80)));
    assert!(outcome.is_err(), "the panic propagates");
    // Runs 1–2 are the baseline, 3–4 two candidates: the panic hits with the second one's
    // settings in place, so only the drop guard can have put the found values back.
    let f = fake.borrow();
    assert_eq!(f.applies, 3);
    assert_eq!(f.inner.state(), found_state());
}

#[test]
fn a_failed_restore_is_reported_loudly_with_the_first_failure() {
    let fake = std::cell::RefCell::new(Faulty::new());
    fake.borrow_mut().fail_restore = true;
    // The first run puts the baseline in place by restoring, which fails; so does the final
    // restore. Both must be in the error.
    let err = tune(&fake, 80).unwrap_err();
    match &err {
        TuneError::Restore { after, .. } => assert!(after.is_some()),
        other => panic!("expected a restore failure, got {other:?}"),
    }
    assert!(err.to_string().contains("nictune revert"));
}

#[test]
fn a_restore_that_does_not_read_back_is_an_error() {
    let fake = std::cell::RefCell::new(Faulty::new());
    fake.borrow_mut().restore_forgets_busy_read = true;
    let err = tune(&fake, 80).unwrap_err();
    match &err {
        TuneError::Restore { source, after } => {
            assert!(after.is_none(), "the search itself went fine");
            assert!(source.reason.contains("read back"), "{source}");
        }
        other => panic!("expected a restore failure, got {other:?}"),
    }
}

#[test]
fn too_small_a_budget_is_refused_before_any_change() {
    let fake = std::cell::RefCell::new(Faulty::new());
    let err = tune(&fake, 10).unwrap_err();
    assert!(err.to_string().contains("search stopped"), "{err}");
    let source = std::error::Error::source(&err).unwrap().to_string();
    assert!(source.contains("too small"), "{source}");
    let f = fake.borrow();
    assert_eq!((f.applies, f.measures), (0, 0));
    assert_eq!(f.inner.state(), found_state());
}

/// Checks at every measurement that the host holds exactly the settings as found overlaid
/// with the candidate's, then answers like the synthetic bench.
struct Exact {
    host: SyntheticHost,
    bench: SyntheticBench,
    found: State,
    checked: usize,
}

impl Measurer for Exact {
    fn warm_up(&mut self, _: &Candidate, _: Nanos) -> Result<(), MeasureError> {
        Ok(())
    }
    fn measure(&mut self, c: &Candidate, d: Nanos) -> Result<Metrics, MeasureError> {
        let mut want = self.found.clone();
        want.extend(c.settings.iter().map(|s| (s.knob, s.value)));
        assert_eq!(
            self.host.state(),
            want,
            "leftovers while measuring {}",
            c.id()
        );
        self.checked += 1;
        self.bench.measure(c, d)
    }
}

#[test]
fn no_setting_leaks_from_one_candidate_into_the_next() {
    // Adaptive on sets only adaptive-rx; the fixed-timer levels also set rx-usecs. Without
    // care, rx-usecs from a timer level would stay in place while adaptive is measured.
    let caps = Capabilities {
        coalescing: vec![Knob::RxUsecs],
        adaptive_rx: true,
        cpus: 2,
        ..Capabilities::default()
    };
    let found = State::from([(Knob::RxUsecs, KnobValue::Duration(Nanos::from_micros(3)))]);
    let (mut host, bench) = synthetic(3, found.clone());
    let mut exact = Exact {
        host: host.clone(),
        bench,
        found: found.clone(),
        checked: 0,
    };
    // Reversed, the first round measures the fixed timers just before adaptive on.
    let mut candidates = Space::from_capabilities(&caps).with_baseline();
    candidates[1..].reverse();
    assert!(candidates.last().unwrap().value_of(Knob::RxUsecs).is_none());
    let config = TuneConfig {
        candidates,
        ..config(60)
    };
    let cancel = AtomicBool::new(false);
    let controls = Controls {
        progress: &NoProgress,
        cancel: &cancel,
    };
    run(&mut host, &mut exact, &config, None, controls).unwrap();
    assert!(exact.checked >= 20, "{} runs checked", exact.checked);
    assert_eq!(host.state(), found);
}

/// A time budget the plan made without switching cannot keep when every switch is slow: the
/// loop times one switch each way before the first run and fits the search again, and the
/// search then spends about the time asked, where the plan as made would have run over.
#[test]
fn a_time_budget_is_fitted_again_to_the_switching_cost_timed_before_the_first_run() {
    let asked = RUN_4MS;
    let base = config(1);
    let n = base.candidates.len();
    // Exactly the smallest search at 4 ms a run, nothing to spare for switching.
    let runs = SearchPlan::with_budget(0).minimum_budget(n);
    let wall = Nanos(asked.total().0 * runs as u64);
    let tune_with = |wall: Option<Nanos>| {
        let fake = std::cell::RefCell::new(Faulty::new());
        // Every apply takes 8 ms, two runs' worth.
        fake.borrow_mut().apply_takes = std::time::Duration::from_millis(8);
        tune_under(&fake, &timed_config(asked, runs, wall), None)
    };
    let (fitted, took) = tune_with(Some(wall));
    let c = &fitted.config;
    assert!(c.notes[0].starts_with("A run took"), "{:?}", c.notes);
    // Runs shorter than the shortest are never lengthened, so a subset was measured, still
    // covering every level, and the space size still counts them all.
    let kept = c.candidates.len();
    assert!(kept < n && c.left_out == n - kept, "{kept} of {n}");
    assert_eq!(fitted.space_size, n);
    assert_eq!(fitted.candidates.len(), kept);
    assert!(c
        .notes
        .iter()
        .any(|x| x.contains(&format!("Only {kept} of the {n}"))));
    // The search made the smallest search over the subset and stayed near the time asked.
    // What it may overrun by: the search ends a pass of the finals group once begun, four
    // runs of 4 ms each behind an 8 ms switch, 48 ms of the 208 ms (23 %).
    let record = &fitted.record;
    assert!(record.measurements >= c.plan.minimum_budget(kept));
    assert!(
        took.as_secs_f64() <= wall.as_secs_f64() * 1.25,
        "{took:?} for {wall:?}"
    );
    // Without the refit (a budget of runs), every candidate is measured at least once,
    // each behind its 8 ms apply: well over the same wall time.
    let (as_made, took_as_made) = tune_with(None);
    assert_eq!(as_made.config.candidates.len(), n);
    assert!(took_as_made > took, "{took_as_made:?} against {took:?}");

    // The same when the switches are free but every run costs 8 ms besides its length
    // (starting the traffic on a guest, reading its samples): the probe's run times that.
    let fake = std::cell::RefCell::new(Faulty::new());
    fake.borrow_mut().measure_takes = std::time::Duration::from_millis(8);
    let (fitted, took) = tune_under(&fake, &timed_config(asked, runs, Some(wall)), None);
    assert!(
        fitted.config.candidates.len() < n,
        "{:?}",
        fitted.config.notes
    );
    assert!(
        took.as_secs_f64() <= wall.as_secs_f64() * 1.25,
        "{took:?} for {wall:?}"
    );
}

/// Runs of 4 ms: 1 ms warm-up, 3 ms measured (the fake bench returns at once).
const RUN_4MS: RunLength = RunLength {
    warm_up: Nanos::from_millis(1),
    duration: Nanos::from_millis(3),
};

/// [`config`] with runs of `asked` length and a plan of `runs`; a time budget of `wall`
/// when given.
fn timed_config(asked: RunLength, runs: usize, wall: Option<Nanos>) -> TuneConfig {
    TuneConfig {
        warm_up: asked.warm_up,
        duration: asked.duration,
        time_budget: wall.map(|wall| TimeBudget { wall, asked }),
        ..config(runs)
    }
}

/// A whole tune of `fake` under `config` (with `predictor`, if any), checked to leave the
/// settings as found: the run and its wall time.
fn tune_under(
    fake: &std::cell::RefCell<Faulty>,
    config: &TuneConfig,
    predictor: Option<&mut dyn nictune_tune::predict::Predictor>,
) -> (nictune_tune::session::TuneRun, std::time::Duration) {
    let cancel = AtomicBool::new(false);
    let controls = Controls {
        progress: &NoProgress,
        cancel: &cancel,
    };
    let started = std::time::Instant::now();
    let run = run(
        &mut Host(fake),
        &mut Bench(fake),
        config,
        predictor,
        controls,
    )
    .unwrap();
    assert_eq!(fake.borrow().inner.state(), found_state());
    (run, started.elapsed())
}

/// The switch timed before the search puts the settings as found back last; when what went
/// back settles (`rx-usecs 4` as found on an e1000), the first run waits for it as after any
/// other change.
#[test]
fn after_the_switch_timed_before_the_search_the_first_run_warms_up_for_what_went_back() {
    let fake = std::cell::RefCell::new(Faulty::new());
    fake.borrow_mut().settles_as_found = Some(Knob::GroFlushTimeout);
    let mut config = config(80);
    let sets_gro = config
        .candidates
        .iter()
        .position(|c| c.settings.iter().any(|s| s.knob == Knob::GroFlushTimeout))
        .unwrap();
    config.candidates.swap(1, sets_gro);
    let asked = RunLength {
        warm_up: config.warm_up,
        duration: config.duration,
    };
    // Ample time: the plan holds, so nothing is fitted again.
    config.time_budget = Some(TimeBudget {
        wall: Nanos::from_secs(3600),
        asked,
    });
    let (run, _) = tune_under(&fake, &config, None);
    assert_eq!(run.config.candidates, config.candidates);
    let f = fake.borrow();
    let baseline = config.candidates[0].id();
    assert_eq!(
        f.log[..3],
        [
            "apply".to_string(),
            "restore".into(),
            format!("warm {baseline} {}", SETTLE.0)
        ],
        "{:#?}",
        f.log
    );
    // The baseline's second run follows no change.
    assert_eq!(
        f.log[3],
        format!("warm {baseline} 500000000"),
        "{:#?}",
        f.log
    );
}

/// The synthetic surface, exactly: a predictor that ranks as the fake host behaves.
struct Oracle;

impl nictune_tune::predict::Predictor for Oracle {
    fn calibrate(
        &mut self,
        _: &Candidate,
        _: &[Metrics],
    ) -> Result<(), nictune_tune::predict::PredictError> {
        Ok(())
    }
    fn predict(&self, c: &Candidate) -> Result<Metrics, nictune_tune::predict::PredictError> {
        let state: State = c.settings.iter().map(|s| (s.knob, s.value)).collect();
        Ok(nictune_tune::synthetic::expected(&state, c.placement))
    }
}

/// `--predict` on a time budget keeps as many of the best-ranked candidates as the budget
/// pays for with the switch timed before the search: fewer when switching is slow.
#[test]
fn predict_on_a_time_budget_keeps_what_the_time_pays_for_with_its_switches() {
    let asked = RUN_4MS;
    let tune_with = |apply_takes_ms: u64| {
        let fake = std::cell::RefCell::new(Faulty::new());
        fake.borrow_mut().apply_takes = std::time::Duration::from_millis(apply_takes_ms);
        let config = timed_config(asked, 60, Some(Nanos(asked.total().0 * 60)));
        tune_under(&fake, &config, Some(&mut Oracle)).0
    };
    let free = tune_with(0);
    let slow = tune_with(8);
    let (kept_free, kept_slow) = (free.candidates.len(), slow.candidates.len());
    assert!(
        kept_slow < kept_free,
        "{kept_slow} with 8 ms switches, {kept_free} without"
    );
    assert!(
        kept_slow >= 2,
        "the baseline and at least one candidate: {kept_slow}"
    );
    // Pruning is the fitting with --predict: the run length stays as given, and one note
    // says what a run cost and how many of the ranked candidates that left.
    assert_eq!(slow.config.duration, asked.duration);
    let others = free.config.candidates.len() - 1;
    let said = format!(
        "measures the {} of the {others} candidates the model ranks best",
        kept_slow - 1
    );
    assert!(
        slow.config.notes.iter().any(|n| n.contains(&said)),
        "{:?}",
        slow.config.notes
    );
}
