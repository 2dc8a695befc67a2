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

use crate::search::SearchPlan;
use nictune_core::units::Nanos;

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
    "--budget buys {runs} runs{}, but {candidates} candidates need at least {needed} (one run \
     each, the best third again, and fresh runs for two finalists)",
    if *.timed { " even at the shortest run length (0.5 s measured after 0.2 s warm-up)" } else { "" }
)]
pub struct TooSmall {
    /// Runs the budget buys (at [`SHORTEST`] for a time budget).
    pub runs: usize,
    /// Candidates to search, baseline included.
    pub candidates: usize,
    /// Runs the smallest search needs (one each, the best third again, two finalists at three
    /// fresh runs).
    pub needed: usize,
    /// A time budget (already tried at the shortest run length).
    pub timed: bool,
    /// The smallest budget that fits, in runs, and in time at the shortest length.
    pub minimum: (usize, Nanos),
}

/// Fits a search over `candidates` (baseline included) at `asked` run length into
/// `budget`: as asked if it covers the space; otherwise shorter runs (a time budget), then
/// smaller finals (three finalists at five runs → two at three).
pub fn fit(budget: Budget, asked: RunLength, candidates: usize) -> Result<Fitted, TooSmall> {
    let plan = SearchPlan::with_budget(asked.runs_in(budget));
    if plan.budget >= plan.minimum_budget(candidates) {
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
        let Some(run) = run_for(budget, asked, needed) else {
            continue;
        };
        plan.budget = run.runs_in(budget);
        let mut notes = Vec::new();
        if run != asked {
            notes.push(shortened(asked, run, budget, candidates, needed));
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
    Err(TooSmall {
        runs: SHORTEST.runs_in(budget),
        candidates,
        needed,
        timed: matches!(budget, Budget::Time(_)),
        minimum: (needed, Nanos(SHORTEST.total().0 * needed as u64)),
    })
}

/// The longest run length, no longer than `asked` and no shorter than [`SHORTEST`], at
/// which `budget` buys `needed` runs; `None` when even the shortest does not.
fn run_for(budget: Budget, asked: RunLength, needed: usize) -> Option<RunLength> {
    let Budget::Time(t) = budget else {
        return (needed <= asked.runs_in(budget)).then_some(asked);
    };
    let per_run = Nanos(t.0 / needed.max(1) as u64);
    if per_run >= asked.total() {
        return Some(asked);
    }
    if per_run < SHORTEST.total() {
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

fn shortened(
    asked: RunLength,
    run: RunLength,
    budget: Budget,
    candidates: usize,
    needed: usize,
) -> String {
    let noise = (asked.duration.as_secs_f64() / run.duration.as_secs_f64()).sqrt();
    let spent = match budget {
        Budget::Time(t) => format!("{} s", t.as_secs_f64()),
        Budget::Runs(n) => format!("{n} runs"),
    };
    format!(
        "Runs were shortened to fit the budget of {spent} ({candidates} candidates need at least {needed} runs): {} s measured after {} s warm-up instead of {} s after {} s. Each figure is about {noise:.1}× as noisy (noise shrinks with the square root of the measured time), so close candidates are less likely to be told apart; a larger --budget buys the asked length back.",
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
        let f = fit(Budget::Time(Nanos::from_secs(180)), ASKED, 20).unwrap();
        assert_eq!((f.run, f.plan.budget, f.notes.len()), (ASKED, 72, 0));
    }

    #[test]
    fn a_short_time_budget_shortens_the_runs_and_says_what_it_costs() {
        let budget = Budget::Time(Nanos::from_secs(60));
        let needed = SearchPlan::with_budget(0).minimum_budget(40);
        let f = fit(budget, ASKED, 40).unwrap();
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
        let f = fit(Budget::Time(t), ASKED, 30).unwrap();
        assert_eq!((f.plan.finalists, f.plan.final_reps), (2, 3));
        assert_eq!(f.run, SHORTEST);
        assert_eq!(f.notes.len(), 2, "{:?}", f.notes);
        // One run less: refused, naming the minimum.
        let e = fit(Budget::Time(Nanos(t.0 - shortest.0)), ASKED, 30).unwrap_err();
        assert_eq!(e.needed, trimmed);
        assert_eq!(e.minimum, (trimmed, t));
    }

    #[test]
    fn the_shortest_length_in_the_refusal_is_the_one_used() {
        let e = fit(Budget::Time(Nanos::from_secs(1)), ASKED, 30).unwrap_err();
        let text = e.to_string();
        let shortest = format!(
            "{} s measured after {} s warm-up",
            SHORTEST.duration.as_secs_f64(),
            SHORTEST.warm_up.as_secs_f64()
        );
        assert!(text.contains(&shortest), "{text}");
        let e = fit(Budget::Runs(3), ASKED, 30).unwrap_err();
        assert!(!e.to_string().contains("shortest"), "{e}");
    }

    #[test]
    fn a_run_count_budget_keeps_the_run_length_and_trims_the_finals() {
        let mut small = SearchPlan::with_budget(0);
        (small.finalists, small.final_reps) = (2, 3);
        let trimmed = small.minimum_budget(30);
        let f = fit(Budget::Runs(trimmed), ASKED, 30).unwrap();
        assert_eq!(f.run, ASKED);
        assert_eq!(f.plan.final_reps, 3);
        assert!(fit(Budget::Runs(trimmed - 1), ASKED, 30).is_err());
    }
}
