//! Fitting a search into the user's budget. A budget that does not cover one run per
//! candidate plus the finals at the requested run length is not refused: the runs are
//! shortened (down to [`SHORTEST`]) and then the finals trimmed, and the result says what
//! that costs in confidence. Only a budget that cannot hold even the shortest runs with
//! the smallest finals is refused.
//!
//! The cost is stated from how the noise of a measured rate shrinks with the measured
//! time: the mean of n roughly independent per-transaction samples has a standard error
//! that goes as 1/√n (the central limit theorem), and n grows with the measured time, so
//! the relative noise of a rate goes as 1/√duration. Halving the measured time makes each
//! figure about 1.4× noisier.
//!
//! A budget too small for one shortest run per candidate is not refused either
//! ([`fit_space`]): the search measures a subset of the candidates, chosen so that every
//! level of every setting (and every placement) is in at least one measured candidate, and
//! says which part of the space went unmeasured. Only a budget that cannot hold the baseline
//! and two candidates is refused.
//!
//! A time budget also pays for switching between candidates (a driver reload takes seconds):
//! [`fit_space_switching`] fits with that time before every run, which shortening the runs
//! does not shrink. The tune loop measures it on its first switch
//! ([`crate::session::TimeBudget`]) and fits again when the plan made without it would not
//! hold.

use crate::candidate::{Candidate, Placement};
use crate::knob::Setting;
use crate::search::SearchPlan;
use nictune_core::units::Nanos;
use std::collections::BTreeSet;

/// How much to measure: a number of runs, or wall time that buys runs of warm-up plus
/// measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// A number of runs (each one warm-up plus measurement), as given to `--budget`.
    Runs(usize),
    /// Wall time for runs; the number of runs is this divided by the run length.
    Time(Nanos),
}

/// The shortest run a fitted search uses: 0.5 s measured after 0.2 s of warm-up. Below
/// about half a second a closed-loop RR run on veth counts a few thousand transactions at
/// most on a loaded host, and one scheduler hiccup moves the figure by whole percents.
pub const SHORTEST: RunLength = RunLength {
    duration: Nanos::from_millis(500),
    warm_up: Nanos::from_millis(200),
};

/// One run's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLength {
    /// Measured time, after the warm-up.
    pub duration: Nanos,
    /// Time the workload runs before measurement starts; not counted in the result.
    pub warm_up: Nanos,
}

impl RunLength {
    /// Warm-up plus measurement.
    pub fn total(&self) -> Nanos {
        self.duration + self.warm_up
    }

    /// Runs `budget` buys at this length.
    pub fn runs_in(&self, budget: Budget) -> usize {
        match budget {
            Budget::Runs(n) => n,
            Budget::Time(t) => (t.0 / self.total().0.max(1)) as usize,
        }
    }
}

/// Runs `budget` pays for at `run` length (warm-up plus measurement) when each run also
/// costs `switch` (time spent putting the candidate in place before it, starting the
/// traffic). A budget of runs counts runs only.
pub(crate) fn runs_affordable(budget: Budget, run: Nanos, switch: Nanos) -> usize {
    match budget {
        Budget::Runs(n) => n,
        Budget::Time(t) => (t.0 / (run.0 + switch.0).max(1)) as usize,
    }
}

fn affordable(budget: Budget, run: RunLength, switch: Nanos) -> usize {
    runs_affordable(budget, run.total(), switch)
}

/// A search that fits: its plan, its run length and what fitting changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The search's shape and its budget in runs at [`Fitted::run`] length.
    pub plan: SearchPlan,
    /// The run length to use: as asked, or shortened (never below [`SHORTEST`]).
    pub run: RunLength,
    /// One line per change from what was asked (empty when nothing changed).
    pub notes: Vec<String>,
}

/// Why no search fits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--budget buys {runs} runs{}{}, but even the smallest search (the settings as found and {} \
     of the {candidates} candidates, one run each, and fresh runs for two finalists) needs {needed}",
    if *.timed {
        format!(
            " even at the shortest run length ({} s measured after {} s warm-up)",
            .shortest.duration.as_secs_f64(),
            .shortest.warm_up.as_secs_f64()
        )
    } else {
        String::new()
    },
    if *.switch > Nanos::ZERO {
        format!(" with {} of switching before each", seconds(*.switch))
    } else {
        String::new()
    },
    FEWEST_CANDIDATES - 1
)]
pub struct TooSmall {
    /// Runs the budget buys (at [`TooSmall::shortest`] for a time budget).
    pub runs: usize,
    /// The shortest run length fitting may use: [`SHORTEST`], or the asked length when that
    /// is shorter still.
    pub shortest: RunLength,
    /// Candidates to search, baseline included.
    pub candidates: usize,
    /// Runs the smallest search needs (one each, the best third again, two finalists at three
    /// fresh runs).
    pub needed: usize,
    /// A time budget (already tried at the shortest run length).
    pub timed: bool,
    /// The smallest budget that fits, in runs, and in time at the shortest length (with
    /// [`TooSmall::switch`] before each run).
    pub minimum: (usize, Nanos),
    /// Time spent switching to the candidate before each run (zero when not known).
    pub switch: Nanos,
}

/// `4.1 s` or `8 ms`: a switching time for notes, to a tenth of a second from 1 s up.
pub(crate) fn seconds(t: Nanos) -> String {
    match t < Nanos::from_secs(1) {
        true => format!("{} ms", (t.0 as f64 / 1e6).round()),
        false => format!("{:.1} s", t.as_secs_f64()),
    }
}

/// Fits a search over `candidates` (baseline included) at `asked` run length into
/// `budget`, each run costing `switch` besides: as asked if it covers the space; otherwise
/// shorter runs (a time budget), then smaller finals (three finalists at five runs → two at
/// three). The plan's budget counts runs of warm-up plus measurement only: the search pays
/// switching from it as it goes ([`crate::search::Evaluate::spent_between_runs`]).
fn fit(
    budget: Budget,
    asked: RunLength,
    candidates: usize,
    switch: Nanos,
) -> Result<Fitted, TooSmall> {
    let plan = SearchPlan::with_budget(asked.runs_in(budget));
    if affordable(budget, asked, switch) >= plan.minimum_budget(candidates) {
        return Ok(Fitted {
            plan,
            run: asked,
            notes: Vec::new(),
        });
    }
    for trimmed in [false, true] {
        let mut plan = SearchPlan::with_budget(0);
        if trimmed {
            (plan.finalists, plan.final_reps) = (2, 3);
        }
        let needed = plan.minimum_budget(candidates);
        let Some(run) = run_for(budget, asked, needed, switch) else {
            continue;
        };
        plan.budget = run.runs_in(budget);
        let mut notes = Vec::new();
        if run != asked {
            notes.push(shortened(asked, run, budget, candidates, needed, switch));
        }
        if trimmed {
            notes.push(format!(
                "The finals were trimmed to fit: {} finalists at {} fresh runs each (instead of 3 at 5), so the winner's lead is judged on fewer runs.",
                plan.finalists, plan.final_reps
            ));
        }
        return Ok(Fitted { plan, run, notes });
    }
    let mut plan = SearchPlan::with_budget(0);
    (plan.finalists, plan.final_reps) = (2, 3);
    let needed = plan.minimum_budget(candidates);
    let shortest = shortest(asked);
    let timed = matches!(budget, Budget::Time(_));
    let switch = if timed { switch } else { Nanos::ZERO };
    Err(TooSmall {
        runs: affordable(budget, shortest, switch),
        shortest,
        candidates,
        needed,
        timed,
        minimum: (
            needed,
            Nanos((shortest.total().0 + switch.0) * needed as u64),
        ),
        switch,
    })
}

/// The shortest run fitting uses: [`SHORTEST`], unless the asked runs are shorter already
/// (fitting never lengthens a run).
fn shortest(asked: RunLength) -> RunLength {
    if asked.total() < SHORTEST.total() {
        asked
    } else {
        SHORTEST
    }
}

/// The fewest candidates a screened search measures: the baseline and two others, so that
/// there is something to compare and two finalists.
pub const FEWEST_CANDIDATES: usize = 3;

/// A search fitted into the budget with the candidates it will measure.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedSpace {
    /// The plan and run length, as `fit` returns them for [`FittedSpace::candidates`].
    pub fitted: Fitted,
    /// The candidates to search, baseline first: all of them, or the screened subset.
    pub candidates: Vec<Candidate>,
}

/// Fits a search over `candidates` (baseline first) into `budget` like `fit`; where even
/// the shortest runs with trimmed finals cannot cover them all, measures the largest subset
/// that fits, chosen by [`cover`], and says so in the notes. Refused only when not even the
/// baseline and two candidates fit ([`FEWEST_CANDIDATES`]).
pub fn fit_space(
    budget: Budget,
    asked: RunLength,
    candidates: Vec<Candidate>,
) -> Result<FittedSpace, TooSmall> {
    fit_space_switching(budget, asked, candidates, Nanos::ZERO)
}

/// [`fit_space`] where each run of a time budget also costs `switch`: the time to put the
/// candidate in place (a driver reload, a settle's longer warm-up, starting the traffic),
/// which shorter runs do not save.
pub fn fit_space_switching(
    budget: Budget,
    asked: RunLength,
    candidates: Vec<Candidate>,
    switch: Nanos,
) -> Result<FittedSpace, TooSmall> {
    let all = candidates.len();
    let refused = match fit(budget, asked, all, switch) {
        Ok(fitted) => return Ok(FittedSpace { fitted, candidates }),
        Err(e) => e,
    };
    let mut trimmed = SearchPlan::with_budget(0);
    (trimmed.finalists, trimmed.final_reps) = (2, 3);
    let floor = shortest(asked);
    let runs = affordable(budget, floor, refused.switch);
    let Some(k) = (FEWEST_CANDIDATES..all)
        .rev()
        .find(|&k| trimmed.minimum_budget(k) <= runs)
    else {
        let needed = trimmed.minimum_budget(FEWEST_CANDIDATES.min(all));
        return Err(TooSmall {
            needed,
            minimum: (
                needed,
                Nanos((floor.total().0 + refused.switch.0) * needed as u64),
            ),
            ..refused
        });
    };
    let chosen = cover(&candidates, k);
    let mut fitted = fit(budget, asked, chosen.len(), switch)?;
    let complete = refused.minimum;
    fitted.notes.push(format!(
        "Only {} of the {all} candidates fit the budget, even at the shortest runs with trimmed finals{}: \
         they were chosen so that every level of every setting (and every placement) is measured \
         at least once, and the settings as found are among them; the other {} combinations were \
         not measured, so the best may be among them. --budget {}s (or {} runs) measures them all.",
        chosen.len(),
        switching(switch),
        all - chosen.len(),
        complete.1.as_secs_f64().ceil(),
        complete.0
    ));
    let candidates = chosen.into_iter().map(|i| candidates[i].clone()).collect();
    Ok(FittedSpace { fitted, candidates })
}

/// The indices of `k` of `candidates` (at least the baseline, index 0): greedily, the
/// candidate that adds the most settings and placements not yet in a chosen one (the first
/// in the space's order on a tie), until every level is in one; then the rest spread evenly
/// over the candidates left. Sorted, so the baseline stays first.
pub fn cover(candidates: &[Candidate], k: usize) -> Vec<usize> {
    let k = k.clamp(1, candidates.len().max(1)).min(candidates.len());
    let items = |c: &Candidate| -> Vec<Item> {
        let mut v: Vec<Item> = c.settings.iter().copied().map(Item::Setting).collect();
        v.push(Item::Placement(c.placement));
        v
    };
    let mut uncovered: BTreeSet<Item> = candidates.iter().skip(1).flat_map(items).collect();
    let mut chosen: BTreeSet<usize> = (0..k.min(1)).collect();
    while chosen.len() < k && !uncovered.is_empty() {
        let gain = |i: &usize| {
            items(&candidates[*i])
                .iter()
                .filter(|x| uncovered.contains(*x))
                .count()
        };
        let best = (1..candidates.len())
            .filter(|i| !chosen.contains(i))
            .max_by_key(|i| (gain(i), std::cmp::Reverse(*i)));
        let Some(best) = best.filter(|i| gain(i) > 0) else {
            break;
        };
        for x in items(&candidates[best]) {
            uncovered.remove(&x);
        }
        chosen.insert(best);
    }
    let left: Vec<usize> = (1..candidates.len())
        .filter(|i| !chosen.contains(i))
        .collect();
    let missing = k - chosen.len();
    for j in 0..missing {
        chosen.insert(left[j * left.len() / missing]);
    }
    chosen.into_iter().collect()
}

/// What a candidate contributes to the cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Item {
    Setting(Setting),
    Placement(Placement),
}

/// The longest run length, no longer than `asked` and no shorter than [`shortest`], at
/// which `budget` buys `needed` runs; `None` when even the shortest does not.
fn run_for(budget: Budget, asked: RunLength, needed: usize, switch: Nanos) -> Option<RunLength> {
    let Budget::Time(t) = budget else {
        return (needed <= asked.runs_in(budget)).then_some(asked);
    };
    let per_run = Nanos((t.0 / needed.max(1) as u64).saturating_sub(switch.0));
    if per_run >= asked.total() {
        return Some(asked);
    }
    if per_run < SHORTEST.total() || shortest(asked) == asked {
        return None;
    }
    // Keep the asked warm-up's share of the run (at least the shortest warm-up), in whole
    // milliseconds so that the runs still fit after rounding.
    let share = asked.warm_up.0 as f64 / asked.total().0 as f64;
    let ms = |n: f64| Nanos::from_millis((n / 1e6).floor() as u64);
    let warm_up = ms(per_run.0 as f64 * share).max(SHORTEST.warm_up);
    let duration = ms((per_run.0 - warm_up.0) as f64);
    (duration >= SHORTEST.duration).then_some(RunLength { duration, warm_up })
}

/// `, with 4.1 s of switching to the candidate before each run` when `switch` is known.
fn switching(switch: Nanos) -> String {
    match switch > Nanos::ZERO {
        true => format!(
            ", with {} of switching to the candidate before each run",
            seconds(switch)
        ),
        false => String::new(),
    }
}

fn shortened(
    asked: RunLength,
    run: RunLength,
    budget: Budget,
    candidates: usize,
    needed: usize,
    switch: Nanos,
) -> String {
    let noise = (asked.duration.as_secs_f64() / run.duration.as_secs_f64()).sqrt();
    let spent = match budget {
        Budget::Time(t) => format!("{} s", t.as_secs_f64()),
        Budget::Runs(n) => format!("{n} runs"),
    };
    format!(
        "Runs were shortened to fit the budget of {spent} ({candidates} candidates need at least {needed} runs{}): {} s measured after {} s warm-up instead of {} s after {} s. Each figure is about {noise:.1}× as noisy (noise shrinks with the square root of the measured time), so close candidates are less likely to be told apart; a larger --budget buys the asked length back.",
        switching(switch),
        run.duration.as_secs_f64(),
        run.warm_up.as_secs_f64(),
        asked.duration.as_secs_f64(),
        asked.warm_up.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASKED: RunLength = RunLength {
        duration: Nanos::from_secs(2),
        warm_up: Nanos::from_millis(500),
    };

    #[test]
    fn a_budget_that_covers_the_space_is_used_as_asked() {
        let f = fit(Budget::Time(Nanos::from_secs(180)), ASKED, 20, Nanos::ZERO).unwrap();
        assert_eq!((f.run, f.plan.budget, f.notes.len()), (ASKED, 72, 0));
    }

    #[test]
    fn a_short_time_budget_shortens_the_runs_and_says_what_it_costs() {
        let budget = Budget::Time(Nanos::from_secs(60));
        let needed = SearchPlan::with_budget(0).minimum_budget(40);
        let f = fit(budget, ASKED, 40, Nanos::ZERO).unwrap();
        assert!(f.run.total() < ASKED.total(), "{:?}", f.run);
        assert!(f.run.duration >= SHORTEST.duration && f.run.warm_up >= SHORTEST.warm_up);
        assert!(f.plan.budget >= f.plan.minimum_budget(40), "{f:?}");
        assert!(Nanos(f.run.total().0 * f.plan.budget as u64) <= Nanos::from_secs(60));
        // The longest length that fits: one more millisecond would not.
        let longer = Nanos(f.run.total().0 + 2_000_000);
        assert!(Nanos::from_secs(60).0 / longer.0 < needed as u64, "{f:?}");
        assert_eq!(f.notes.len(), 1);
        let noise = (2.0 / f.run.duration.as_secs_f64()).sqrt();
        assert!(
            f.notes[0].contains(&format!("{noise:.1}× as noisy")),
            "{}",
            f.notes[0]
        );
        assert!(f.notes[0].contains("budget of 60 s"), "{}", f.notes[0]);
    }

    #[test]
    fn below_the_shortest_runs_the_finals_are_trimmed_then_refused() {
        let shortest = SHORTEST.total();
        let base = SearchPlan::with_budget(0).minimum_budget(30);
        let mut small = SearchPlan::with_budget(0);
        (small.finalists, small.final_reps) = (2, 3);
        let trimmed = small.minimum_budget(30);
        assert!(trimmed < base);
        // Enough for the trimmed finals at the shortest length, not for the full ones.
        let t = Nanos(shortest.0 * trimmed as u64);
        let f = fit(Budget::Time(t), ASKED, 30, Nanos::ZERO).unwrap();
        assert_eq!((f.plan.finalists, f.plan.final_reps), (2, 3));
        assert_eq!(f.run, SHORTEST);
        assert_eq!(f.notes.len(), 2, "{:?}", f.notes);
        // One run less: refused, naming the minimum.
        let e = fit(
            Budget::Time(Nanos(t.0 - shortest.0)),
            ASKED,
            30,
            Nanos::ZERO,
        )
        .unwrap_err();
        assert_eq!(e.needed, trimmed);
        assert_eq!(e.minimum, (trimmed, t));
    }

    #[test]
    fn the_shortest_length_in_the_refusal_is_the_one_used() {
        let e = fit(Budget::Time(Nanos::from_secs(1)), ASKED, 30, Nanos::ZERO).unwrap_err();
        let text = e.to_string();
        let shortest = format!(
            "{} s measured after {} s warm-up",
            SHORTEST.duration.as_secs_f64(),
            SHORTEST.warm_up.as_secs_f64()
        );
        assert!(text.contains(&shortest), "{text}");
        let e = fit(Budget::Runs(3), ASKED, 30, Nanos::ZERO).unwrap_err();
        assert!(!e.to_string().contains("shortest"), "{e}");
    }

    /// A space of `a` × `b` levels of two knobs over two placements, baseline first.
    fn space(a: u64, b: u64) -> Vec<Candidate> {
        use crate::knob::{Knob, KnobValue};
        let mut all = vec![Candidate::baseline(Placement::Unpinned)];
        for x in 0..a {
            for y in 0..b {
                for p in [Placement::Unpinned, Placement::Cross] {
                    let s = vec![
                        Setting::new(Knob::RxUsecs, KnobValue::Count(x)),
                        Setting::new(Knob::GroFlushTimeout, KnobValue::Count(y)),
                    ];
                    all.push(Candidate::new(s, p));
                }
            }
        }
        all
    }

    /// Issue #16: `tune --budget` always fits. Below one shortest run per candidate the
    /// search measures a subset in which every level of every setting appears.
    #[test]
    fn a_budget_below_one_run_per_candidate_measures_a_covering_subset() {
        let cands = space(5, 4);
        assert_eq!(cands.len(), 41);
        let budget = Budget::Time(Nanos::from_secs(15));
        let f = fit_space(budget, ASKED, cands.clone()).unwrap();
        let k = f.candidates.len();
        assert!((FEWEST_CANDIDATES..41).contains(&k), "{k}");
        assert_eq!(f.candidates[0], cands[0], "the baseline stays first");
        assert!(f.fitted.plan.budget >= f.fitted.plan.minimum_budget(k));
        let spent = Nanos(f.fitted.run.total().0 * f.fitted.plan.budget as u64);
        assert!(spent <= Nanos::from_secs(15), "{spent:?}");
        for x in 0..5 {
            assert!(
                f.candidates.iter().any(|c| c
                    .settings
                    .iter()
                    .any(|s| s.knob == crate::knob::Knob::RxUsecs
                        && s.value == crate::knob::KnobValue::Count(x))),
                "rx-usecs level {x} unmeasured"
            );
        }
        for p in [Placement::Unpinned, Placement::Cross] {
            assert!(f.candidates.iter().skip(1).any(|c| c.placement == p));
        }
        let note = f.fitted.notes.last().unwrap();
        assert!(
            note.contains(&format!("Only {k} of the 41 candidates")),
            "{note}"
        );
        // Enough for them all: every candidate, no subset note.
        let f = fit_space(Budget::Time(Nanos::from_secs(600)), ASKED, cands.clone()).unwrap();
        assert_eq!(f.candidates, cands);
        // Too little for the baseline and two others: refused, naming that minimum.
        let e = fit_space(Budget::Time(Nanos::from_secs(3)), ASKED, cands).unwrap_err();
        let mut trimmed = SearchPlan::with_budget(0);
        (trimmed.finalists, trimmed.final_reps) = (2, 3);
        assert_eq!(e.needed, trimmed.minimum_budget(FEWEST_CANDIDATES));
    }

    /// Runs asked shorter than [`SHORTEST`] are never lengthened to fit.
    #[test]
    fn runs_shorter_than_the_shortest_keep_their_length() {
        let quick = RunLength {
            duration: Nanos::from_millis(300),
            warm_up: Nanos::from_millis(100),
        };
        let f = fit_space(Budget::Time(Nanos::from_secs(8)), quick, space(5, 4)).unwrap();
        assert_eq!(f.fitted.run, quick);
        assert!(f.candidates.len() < 41 && f.candidates.len() >= FEWEST_CANDIDATES);
        assert!(f.fitted.plan.budget <= 20, "{:?}", f.fitted.plan);
        let e = fit_space(Budget::Time(Nanos::from_secs(2)), quick, space(5, 4)).unwrap_err();
        assert_eq!(e.shortest, quick);
        assert!(
            e.to_string().contains("0.3 s measured after 0.1 s warm-up"),
            "{e}"
        );
    }

    #[test]
    fn the_cover_takes_every_level_then_spreads_the_rest() {
        let cands = space(3, 2);
        let c = cover(&cands, 4);
        assert_eq!(c.len(), 4);
        assert_eq!(c[0], 0);
        let c = cover(&cands, cands.len());
        assert_eq!(c, (0..cands.len()).collect::<Vec<_>>());
        assert_eq!(cover(&cands, 1), [0]);
    }

    /// The real-driver testbed's module-parameter space: 25 candidates, a driver reload of
    /// about 4 s before every run (measured there: 84 runs of 2.5 s spent between 52 runs).
    #[test]
    fn switching_before_each_run_shortens_the_runs_since_it_cannot_be_shortened_itself() {
        let budget = Budget::Time(Nanos::from_secs(300));
        let switch = Nanos::from_secs(4);
        let free = fit(budget, ASKED, 25, Nanos::ZERO).unwrap();
        assert_eq!(
            (free.run, free.plan.budget, free.notes.len()),
            (ASKED, 120, 0)
        );
        let f = fit(budget, ASKED, 25, switch).unwrap();
        let needed = f.plan.minimum_budget(25);
        assert_eq!(needed, 52);
        assert!(f.run.total() < ASKED.total(), "{f:?}");
        // The smallest search with its switches fits the 300 s: 52 × (run + 4 s).
        let spent = (f.run.total().0 + switch.0) * needed as u64;
        assert!(spent <= Nanos::from_secs(300).0, "{f:?}");
        // ... and only just: 2 ms longer runs would not.
        assert!((f.run.total().0 + 2_000_000 + switch.0) * needed as u64 > 300_000_000_000);
        // The plan counts runs of warm-up plus measurement; the search pays the switches.
        assert_eq!(f.plan.budget, affordable(budget, f.run, Nanos::ZERO));
        assert!(f.notes[0].contains("4.0 s of switching"), "{}", f.notes[0]);
        // A budget of runs is a number of runs, whatever switching costs.
        let runs = fit(Budget::Runs(52), ASKED, 25, switch).unwrap();
        assert_eq!((runs.run, runs.plan.budget), (ASKED, 52));
    }

    #[test]
    fn switching_that_even_the_shortest_runs_cannot_pay_for_measures_a_subset_or_is_refused() {
        let cands = space(3, 2);
        assert_eq!(cands.len(), 13);
        let switch = Nanos::from_secs(4);
        let budget = Budget::Time(Nanos::from_secs(100));
        let f = fit_space_switching(budget, ASKED, cands.clone(), switch).unwrap();
        let k = f.candidates.len();
        assert!((FEWEST_CANDIDATES..13).contains(&k), "{k}");
        let plan = f.fitted.plan;
        let spent = (f.fitted.run.total().0 + switch.0) * plan.minimum_budget(k) as u64;
        assert!(spent <= Nanos::from_secs(100).0, "{f:?}");
        let note = f.fitted.notes.last().unwrap();
        assert!(note.contains(&format!("Only {k} of the 13")), "{note}");
        assert!(note.contains("4.0 s of switching"), "{note}");
        // Without switching the same budget measures every candidate.
        let free = fit_space(budget, ASKED, cands.clone()).unwrap();
        assert_eq!(free.candidates.len(), 13);
        // Too little even for three candidates: the refusal's minimum pays the switches.
        let e = fit_space_switching(Budget::Time(Nanos::from_secs(20)), ASKED, cands, switch)
            .unwrap_err();
        let per_run = SHORTEST.total().0 + switch.0;
        assert_eq!(e.minimum, (e.needed, Nanos(per_run * e.needed as u64)));
        assert!(e.to_string().contains("with 4.0 s of switching"), "{e}");
    }

    #[test]
    fn a_run_count_budget_keeps_the_run_length_and_trims_the_finals() {
        let mut small = SearchPlan::with_budget(0);
        (small.finalists, small.final_reps) = (2, 3);
        let trimmed = small.minimum_budget(30);
        let f = fit(Budget::Runs(trimmed), ASKED, 30, Nanos::ZERO).unwrap();
        assert_eq!(f.run, ASKED);
        assert_eq!(f.plan.final_reps, 3);
        assert!(fit(Budget::Runs(trimmed - 1), ASKED, 30, Nanos::ZERO).is_err());
    }
}
