//! Successive halving with repeated finals: how a tune spends its budget of measurements.
//!
//! A grid that measures every candidate five times spends most of its time on settings that
//! one run already shows are bad (a 100 µs flush timer with deferral triples p99, testbed-notes
//! §6). Successive halving measures every candidate once, keeps the best third, measures
//! those again, and so on; the few finalists and the baseline are then repeated until their
//! 95 % intervals mean something, with runs interleaved (finalist A, B, C, baseline, A, ...)
//! so slow drift in the machine does not favour whoever ran first.
//!
//! The finalists are judged on their finals runs only. The earlier runs chose them, and a
//! candidate chosen for a lucky run would carry that luck into the verdict (the winner's
//! curse: over 24 identical candidates, judging on all runs claimed an improvement in about
//! one search in ten; tests/search.rs measures the rate).
//!
//! The search is pure: it asks an [`Evaluate`] for one run of candidate `i` at a time.

use crate::objective::Objective;
use crate::observe::Observation;
use crate::summary::{rank, reference_of, Summary};
use serde::{Deserialize, Serialize};

/// Runs one measurement of a candidate, by index.
pub trait Evaluate {
    /// Why a run failed (the search stops at the first failure).
    type Error;
    /// One run of candidate `index`.
    fn evaluate(&mut self, index: usize) -> Result<Observation, Self::Error>;
    /// Whole runs' worth of the budget spent since the last call on something other than
    /// runs (a time budget also pays for switching between candidates: driver reloads, a
    /// settle's longer warm-up). Zero unless the evaluator counts such time.
    fn spent_between_runs(&mut self) -> usize {
        0
    }
    /// Whether candidate `index` must not reach the finals (a setting of it was not taken:
    /// what was measured was another point). Ranked after every other candidate of its
    /// round, so it is kept only when too few others are left. False unless the evaluator
    /// knows better.
    fn excluded(&self, index: usize) -> bool {
        let _ = index;
        false
    }
}

/// How the budget is spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchPlan {
    /// Total measurements (runs) allowed, baseline included.
    pub budget: usize,
    /// Keep 1/`eta` of the candidates after each round.
    pub eta: usize,
    /// Candidates that reach the finals.
    pub finalists: usize,
    /// Runs each finalist and the baseline have after the finals.
    pub final_reps: usize,
    /// No candidate is judged on more runs than this (a finalist's fresh runs, the
    /// baseline's all); leftover budget is not spent.
    pub max_reps: usize,
}

impl SearchPlan {
    /// Defaults for `budget` runs: thirds, three finalists at five runs, at most ten runs.
    pub fn with_budget(budget: usize) -> SearchPlan {
        SearchPlan {
            budget,
            eta: 3,
            finalists: 3,
            final_reps: 5,
            max_reps: 10,
        }
    }

    /// The smallest budget that runs every one of `candidates` once and still holds the
    /// finals (baseline included).
    pub fn minimum_budget(&self, candidates: usize) -> usize {
        let others = candidates.saturating_sub(1);
        let rounds: usize = round_sizes(others, self.eta, self.finalists).iter().sum();
        rounds + self.finals_reserve(others) + 2.min(self.final_reps)
    }

    /// Runs the finals need after the rounds: `final_reps` fresh runs per finalist, and the
    /// baseline topped up from its first two.
    fn finals_reserve(&self, others: usize) -> usize {
        let finalists = self.finalists.min(others);
        finalists * self.final_reps + self.final_reps.saturating_sub(2)
    }
}

/// Why the search could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError<E> {
    /// The budget does not cover one run per candidate plus the finals.
    #[error("a budget of {budget} runs is too small for {candidates} candidates: at least {needed} are needed")]
    BudgetTooSmall {
        /// Runs the plan allows ([`SearchPlan::budget`]).
        budget: usize,
        /// Candidates to search, baseline included.
        candidates: usize,
        /// [`SearchPlan::minimum_budget`] for that many candidates.
        needed: usize,
    },
    /// A run failed.
    #[error("measuring candidate {index} failed")]
    Run {
        /// The candidate whose run failed, as an index into the searched candidates.
        index: usize,
        /// The [`Evaluate::Error`] the run returned.
        #[source]
        source: E,
    },
}

/// One elimination round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    /// Candidates measured in this round.
    pub measured: Vec<usize>,
    /// Runs each got in this round.
    pub reps: usize,
    /// Candidates kept for the next round, best first.
    pub kept: Vec<usize>,
}

/// What the search did and measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    /// Every run of every candidate, by candidate index (empty when never measured).
    pub runs: Vec<Vec<Observation>>,
    /// The elimination rounds in order.
    pub rounds: Vec<Round>,
    /// The finalists, best first by their finals runs (baseline not included).
    pub finalists: Vec<usize>,
    /// For each candidate, the index into its runs where its finals runs start (its run
    /// count for candidates that did not reach the finals).
    pub finals_from: Vec<usize>,
    /// Runs made in total.
    pub measurements: usize,
    /// Runs' worth of the budget that went on switching between candidates instead
    /// ([`Evaluate::spent_between_runs`]; a time budget only).
    #[serde(default)]
    pub spent_between_runs: usize,
}

/// Runs successive halving over the candidates `prior` has a slot for, of which `baseline` is
/// the host as found, spending at most `plan.budget` runs including those already in `prior`
/// (a `--predict` tune measures the baseline first to calibrate the model).
pub fn successive_halving<E: Evaluate>(
    prior: Vec<Vec<Observation>>,
    baseline: usize,
    plan: &SearchPlan,
    objective: &Objective,
    eval: &mut E,
) -> Result<SearchRecord, SearchError<E::Error>> {
    let candidates = prior.len();
    let needed = plan.minimum_budget(candidates);
    if plan.budget < needed {
        return Err(SearchError::BudgetTooSmall {
            budget: plan.budget,
            candidates,
            needed,
        });
    }
    let mut s = State::new(prior, plan, objective, eval);
    let first = 2
        .min(plan.final_reps)
        .saturating_sub(s.runs[baseline].len());
    s.run_interleaved(&[baseline], first)?;
    let others: Vec<usize> = (0..candidates).filter(|&i| i != baseline).collect();
    let survivors = s.eliminate(others, baseline)?;
    let finalists: Vec<usize> = survivors.into_iter().take(plan.finalists).collect();
    let finals_from: Vec<usize> = s.runs.iter().map(Vec::len).collect();
    s.finals(&finalists, baseline)?;
    let mut record = SearchRecord {
        runs: s.runs,
        rounds: s.rounds,
        finalists,
        finals_from,
        measurements: s.spent,
        spent_between_runs: s.between,
    };
    let judged = record.judged_runs(baseline);
    record.finalists = rank_runs(&judged, &record.finalists, baseline, objective);
    Ok(record)
}

impl SearchRecord {
    /// The runs each candidate is judged on: the finalists' finals runs, everyone else's
    /// runs (the baseline's all of them: nothing selected it).
    pub fn judged_runs(&self, baseline: usize) -> Vec<Vec<Observation>> {
        self.runs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let fresh = i != baseline && self.finalists.contains(&i);
                let from = if fresh { self.finals_from[i] } else { 0 };
                r[from.min(r.len())..].to_vec()
            })
            .collect()
    }
}

/// `ids` best first by `runs`, relative to the baseline's runs.
fn rank_runs(
    runs: &[Vec<Observation>],
    ids: &[usize],
    baseline: usize,
    objective: &Objective,
) -> Vec<usize> {
    let reference = reference_of(&runs[baseline]);
    let summaries: Vec<Summary> = runs
        .iter()
        .map(|r| Summary::of(r, objective, &reference))
        .collect();
    rank(ids, &summaries, objective)
}

/// The search in progress.
struct State<'a, E: Evaluate> {
    plan: &'a SearchPlan,
    objective: &'a Objective,
    eval: &'a mut E,
    runs: Vec<Vec<Observation>>,
    rounds: Vec<Round>,
    /// Runs made.
    spent: usize,
    /// Runs' worth of budget spent between runs ([`Evaluate::spent_between_runs`]).
    between: usize,
}

impl<'a, E: Evaluate> State<'a, E> {
    fn new(
        runs: Vec<Vec<Observation>>,
        plan: &'a SearchPlan,
        objective: &'a Objective,
        eval: &'a mut E,
    ) -> Self {
        let spent = runs.iter().map(Vec::len).sum();
        // What went on switching before the search (the prior runs' and any timing of a
        // switch) is spent already: the first round's share must not count it as left.
        let between = eval.spent_between_runs();
        State {
            plan,
            objective,
            eval,
            runs,
            rounds: Vec::new(),
            spent,
            between,
        }
    }

    /// The budget used so far: runs made and what went on between them.
    fn used(&self) -> usize {
        self.spent + self.between
    }

    /// What one more run is expected to cost the budget: 1, plus the share of time spent
    /// between runs so far ([`Evaluate::spent_between_runs`]); a run of a round or the
    /// finals is a switch as much as the runs before it were, since both are interleaved.
    fn cost_per_run(&self) -> f64 {
        match self.spent {
            0 => 1.0,
            n => self.used() as f64 / n as f64,
        }
    }

    /// How many runs `budget` units buy at [`State::cost_per_run`].
    fn runs_for(&self, budget: usize) -> usize {
        (budget as f64 / self.cost_per_run()).floor() as usize
    }

    /// `reps` runs of each of `ids`, interleaved: all once, then all again.
    fn run_interleaved(&mut self, ids: &[usize], reps: usize) -> Result<(), SearchError<E::Error>> {
        for _ in 0..reps {
            for &index in ids {
                let obs = self
                    .eval
                    .evaluate(index)
                    .map_err(|source| SearchError::Run { index, source })?;
                self.runs[index].push(obs);
                self.spent += 1;
                self.between += self.eval.spent_between_runs();
            }
        }
        Ok(())
    }

    /// Runs left for the rounds after reserving the finals.
    fn round_budget(&self, candidates: usize) -> usize {
        let left = self.plan.budget.saturating_sub(self.used());
        self.runs_for(left)
            .saturating_sub(self.plan.finals_reserve(candidates))
    }

    /// Elimination rounds until only the finalists are left; returns them best first.
    fn eliminate(
        &mut self,
        mut alive: Vec<usize>,
        baseline: usize,
    ) -> Result<Vec<usize>, SearchError<E::Error>> {
        let sizes = round_sizes(alive.len(), self.plan.eta, self.plan.finalists);
        let others = alive.len();
        for (round, &size) in sizes.iter().enumerate() {
            // What this round may spend: an even share of what is left, less one run for
            // each candidate of every later round (the minimum they need). What is left is
            // read afresh each round: time spent between runs shrinks it.
            let left = self.round_budget(others);
            let later: usize = sizes[round + 1..].iter().sum();
            let share = left.saturating_sub(later) / (sizes.len() - round);
            let reps = (share / size.max(1)).max(1);
            self.run_interleaved(&alive, reps)?;
            let (mut ranked, out): (Vec<usize>, Vec<usize>) = self
                .ranked(&alive, baseline)
                .into_iter()
                .partition(|&i| !self.eval.excluded(i));
            ranked.extend(out);
            let keep = sizes.get(round + 1).copied().unwrap_or(self.plan.finalists);
            let kept: Vec<usize> = ranked.iter().copied().take(keep).collect();
            self.rounds.push(Round {
                measured: alive,
                reps,
                kept: kept.clone(),
            });
            alive = kept;
        }
        Ok(alive)
    }

    /// Gives each finalist `final_reps` fresh runs (those it is judged on: the runs that
    /// chose it would carry their luck into the verdict) and tops the baseline, all of whose
    /// runs are judged, up to `final_reps`; then spends what is left of the budget on them,
    /// round-robin, up to `max_reps` judged runs each.
    fn finals(
        &mut self,
        finalists: &[usize],
        baseline: usize,
    ) -> Result<(), SearchError<E::Error>> {
        let mut group = finalists.to_vec();
        group.push(baseline);
        let before: Vec<usize> = group
            .iter()
            .map(|&i| if i == baseline { 0 } else { self.runs[i].len() })
            .collect();
        let judged = |s: &Self, k: usize| s.runs[group[k]].len() - before[k];
        let target = self.plan.final_reps;
        for _ in 0..target {
            let short: Vec<usize> = (0..group.len())
                .filter(|&k| judged(self, k) < target)
                .map(|k| group[k])
                .collect();
            self.run_interleaved(&short, 1)?;
        }
        while self.runs_for(self.plan.budget.saturating_sub(self.used())) >= group.len()
            && (0..group.len()).all(|k| judged(self, k) < self.plan.max_reps)
        {
            self.run_interleaved(&group, 1)?;
        }
        Ok(())
    }

    /// `ids` best first under the objective, relative to the baseline's runs so far.
    fn ranked(&self, ids: &[usize], baseline: usize) -> Vec<usize> {
        rank_runs(&self.runs, ids, baseline, self.objective)
    }
}

/// How many candidates each round measures, going from `n` to `finalists` by keeping
/// 1/`eta` each time (never fewer than the finalists); always at least one round.
fn round_sizes(n: usize, eta: usize, finalists: usize) -> Vec<usize> {
    let mut sizes = vec![n];
    let mut alive = n;
    while alive > finalists {
        alive = alive.div_ceil(eta).max(finalists);
        sizes.push(alive);
    }
    if sizes.len() > 1 {
        // The last entry is the finalists, who go to the finals, not to another round.
        sizes.pop();
    }
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_shrink_by_eta_down_to_the_finalists() {
        assert_eq!(round_sizes(23, 3, 3), [23, 8]); // 23 → 8 → 3 finalists
        assert_eq!(round_sizes(3, 3, 3), [3]);
        assert_eq!(round_sizes(2, 3, 3), [2]);
        assert_eq!(round_sizes(100, 3, 3), [100, 34, 12, 4]);
    }

    /// p99 = 10 × (index + 1) µs with a little jitter; `excluded` are left out of the finals.
    struct Ladder {
        excluded: Vec<usize>,
        runs: usize,
    }

    impl Evaluate for Ladder {
        type Error = ();
        fn evaluate(&mut self, index: usize) -> Result<Observation, ()> {
            self.runs += 1;
            let p99 = 10.0 * (index + 1) as f64 * (1.0 + 0.01 * (self.runs % 3) as f64);
            Ok(Observation {
                p50_us: None,
                p99_us: Some(p99),
                rate: Some(10_000.0),
                cpu_us_per_unit: None,
                busy_cores: None,
                interrupts_per_sec: None,
            })
        }
        fn excluded(&self, index: usize) -> bool {
            self.excluded.contains(&index)
        }
    }

    #[test]
    fn an_excluded_candidate_reaches_the_finals_only_when_too_few_others_are_left() {
        // Baseline last (the worst); 1 and 2 the best two, but excluded.
        let objective = Objective::new(crate::objective::Goal::Latency);
        let plan = SearchPlan::with_budget(60);
        let search = |excluded: Vec<usize>, n: usize| {
            let mut eval = Ladder { excluded, runs: 0 };
            successive_halving(vec![Vec::new(); n], n - 1, &plan, &objective, &mut eval)
                .unwrap()
                .finalists
        };
        assert_eq!(search(Vec::new(), 9), [0, 1, 2]);
        assert_eq!(search(vec![1, 2], 9), [0, 3, 4]);
        // Three others for three places: the excluded still run, the verdict skips them.
        assert_eq!(search(vec![1, 2], 4), [0, 1, 2]);
    }

    #[test]
    fn minimum_budget_covers_one_run_each_and_the_finals() {
        let plan = SearchPlan::with_budget(0);
        // 23 others once, the 8 kept once more, 3 finalists 5 fresh runs each, baseline 5.
        assert_eq!(plan.minimum_budget(24), 23 + 8 + 15 + 5);
        assert_eq!(plan.minimum_budget(1), 5);
    }
}
