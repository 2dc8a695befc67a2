//! `nictune sim` for the Simulator II case scenarios (`seed-freebsd-polling`,
//! `seed-ixgbevf-sriov`, `seed-isa-ttcp`, `seed-isa-nfs`, `seed-igb-router`, `dim-bulk`): the
//! same flags and the same `nictune.sim/v3` document as the engine's scenarios, plus
//! `--explain` (the model's assumptions) and `notes` (what the metrics do not say, such as
//! interfaces that failed to start).

use super::sim::Args;
use crate::output::{Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use nictune_report::sim::{case_explain_doc, explain_text, run_text, sweep_text, with_notes};
use nictune_sim::cases::registry::{CaseRun, CaseScenario};
use nictune_sim::scenario::error::ScenarioError;
use nictune_sim::scenario::sweep::{run_parallel, Axis};
use nictune_sim::scenario::value::ParamValue;
use nictune_sim::scenario::RunResult;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

#[derive(Debug, Serialize)]
struct CaseDoc<'a> {
    scenario: &'a str,
    #[serde(flatten)]
    result: &'a RunResult,
    notes: &'a [String],
}

#[derive(Debug, Serialize)]
struct CaseSweepDoc<'a> {
    scenario: &'a str,
    points: Vec<CaseDoc<'a>>,
}

const HINT: &str = "`nictune sim NAME --explain` lists the scenario's keys with what they accept";

/// Runs (or explains) a case scenario.
pub fn run(case: &'static CaseScenario, args: &Args, ctx: &Ctx) -> Result<Outcome> {
    if args.explain {
        return explain(case, ctx);
    }
    let base = settings(case, args)?;
    let axes = args
        .sweep
        .iter()
        .map(|a| Axis::parse(a))
        .collect::<Result<Vec<_>, _>>()
        .hint("write --sweep KEY=V1,V2,...")?;
    let points = expand(case, base, &axes)?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let progress = ctx.progress();
    let runs = run_parallel(&points, threads, progress.as_ref(), |set| timed(case, set));
    let runs = runs.into_iter().collect::<Result<Vec<_>>>()?;
    if axes.is_empty() {
        let r = &runs[0];
        let doc = CaseDoc {
            scenario: case.name,
            result: &r.result,
            notes: &r.notes,
        };
        ctx.emit("sim", &doc, |d| {
            with_notes(run_text(d.scenario, d.result), d.notes)
        })?;
    } else {
        let doc = CaseSweepDoc {
            scenario: case.name,
            points: runs
                .iter()
                .map(|r| CaseDoc {
                    scenario: case.name,
                    result: &r.result,
                    notes: &r.notes,
                })
                .collect(),
        };
        let varying: Vec<&str> = axes.iter().map(|a| a.key.as_str()).collect();
        let results: Vec<RunResult> = runs.iter().map(|r| r.result.clone()).collect();
        ctx.emit("sim", &doc, |_| sweep_text(case.name, &results, &varying))?;
    }
    Ok(Outcome::Success)
}

/// --set, --duration and --seed, checked before anything runs.
fn settings(case: &CaseScenario, args: &Args) -> Result<BTreeMap<String, ParamValue>> {
    let mut set = BTreeMap::new();
    for a in &args.set {
        let (k, v) = a
            .split_once('=')
            .ok_or_else(|| ScenarioError::Assignment(a.clone()))
            .hint(HINT)?;
        let v = binding_file(k.trim(), v.trim())?;
        case.assign(&mut set, k.trim(), &v).hint(HINT)?;
    }
    if let Some(d) = args.duration {
        case.assign(&mut set, "duration", &d.as_secs_f64().to_string())
            .hint("give a simulated time, e.g. --duration 10s")?;
    }
    if let Some(s) = &args.seed {
        case.assign(&mut set, "seed", s)
            .hint("give a non-negative integer")?;
    }
    Ok(set)
}

/// `binding=FILE` reads the map from the file (the simulator itself never touches files).
fn binding_file(key: &str, value: &str) -> Result<String> {
    if key != "binding" || matches!(value, "default" | "spread") {
        return Ok(value.to_string());
    }
    nictune_core::input::read_file(Path::new(value), nictune_core::input::BINDING)
        .hint("binding is default, spread, or a file with lines like `igb7:que 0 12`")
        .with_context(|| format!("reading binding map {value}"))
}

fn expand(
    case: &CaseScenario,
    base: BTreeMap<String, ParamValue>,
    axes: &[Axis],
) -> Result<Vec<BTreeMap<String, ParamValue>>> {
    let mut out = vec![base];
    for axis in axes {
        let mut next = Vec::new();
        for set in &out {
            for v in &axis.values {
                let mut p = set.clone();
                case.assign(&mut p, &axis.key, v).hint(HINT)?;
                next.push(p);
            }
        }
        out = next;
    }
    Ok(out)
}

fn timed(case: &CaseScenario, set: &BTreeMap<String, ParamValue>) -> Result<CaseRun> {
    let start = Instant::now();
    let mut run = case.run(set).hint(HINT)?;
    run.result.engine.wall_seconds = Some(start.elapsed().as_secs_f64());
    Ok(run)
}

fn explain(case: &'static CaseScenario, ctx: &Ctx) -> Result<Outcome> {
    ctx.emit("sim", &case_explain_doc(case), explain_text)?;
    Ok(Outcome::Success)
}
