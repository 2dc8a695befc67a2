//! `nictune sim`: run a scenario (built-in or a TOML file) in the simulator, optionally
//! swept over parameter values, and print the predicted metrics.
//!
//! Arguments are checked first (scenario found, every `--set`/`--sweep` key and value valid)
//! and only then is anything run. Wall time is measured here, around each run, never inside.

use crate::output::{Ctx, HintExt, Outcome};
use anyhow::Result;
use nictune_report::sim::{
    engine_explain_doc, explain_text, keys_text, list_text, run_text, sweep_text, KeyEntry,
    KeysDoc, ListDoc, ListEntry,
};
use nictune_sim::cases::registry as cases;
use nictune_sim::scenario::sweep::{self, Axis};
use nictune_sim::scenario::{builtin, keys, RunResult, Scenario};
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

#[derive(Debug, clap::Args)]
// `--connections -5` reaches the flag's own check instead of reading as an unknown flag.
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// A built-in scenario name (see --list) or a scenario TOML file.
    #[arg(value_name = "NAME_OR_FILE", required_unless_present_any = ["list", "keys"])]
    pub scenario: Option<String>,
    /// List the built-in scenarios.
    #[arg(long)]
    pub list: bool,
    /// List every scenario key with its default and what it accepts.
    #[arg(long)]
    pub keys: bool,
    /// Set a scenario key (repeatable), e.g. --set client.itr=0.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Sweep a key over values (repeatable; the cartesian product runs in parallel).
    #[arg(long = "sweep", value_name = "KEY=V1,V2,...")]
    pub sweep: Vec<String>,
    /// Simulated time: seconds (10) or with a unit (10s, 500ms); --set duration=SECONDS too.
    #[arg(long, value_name = "DURATION", value_parser = nictune_core::duration::arg)]
    pub duration: Option<nictune_core::units::Nanos>,
    /// Random seed (same as --set seed=N).
    #[arg(long, value_name = "N")]
    pub seed: Option<String>,
    /// Worker threads for a sweep (default: all cores).
    #[arg(long, value_name = "N",
          value_parser = clap::builder::RangedI64ValueParser::<usize>::new()
              .range(1..=i64::from(nictune_core::cpuset::MAX_CPU) + 1))]
    pub threads: Option<usize>,
    /// Print the model's assumptions for the scenario and its keys, then exit.
    #[arg(long)]
    pub explain: bool,
}

/// `nictune.sim/v3` for one run, and one point of a sweep: the same fields as a case
/// scenario's (`notes` is `[]`: the engine adds none).
#[derive(Debug, Serialize)]
struct RunDoc<'a> {
    scenario: &'a str,
    #[serde(flatten)]
    result: &'a RunResult,
    notes: &'a [String],
}

/// `nictune.sim/v3` for a sweep.
#[derive(Debug, Serialize)]
struct SweepDoc<'a> {
    scenario: &'a str,
    points: Vec<RunDoc<'a>>,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    if args.list {
        return list(ctx);
    }
    if args.keys {
        return list_keys(args.scenario.as_deref(), ctx);
    }
    if let Some(case) = args.scenario.as_deref().and_then(cases::find) {
        return super::sim_cases::run(case, &args, ctx);
    }
    let scenario = load(&args)?;
    if args.explain {
        return explain(&scenario, ctx);
    }
    let axes = args
        .sweep
        .iter()
        .map(|a| Axis::parse(a))
        .collect::<Result<Vec<_>, _>>()
        .hint("write --sweep KEY=V1,V2,... e.g. --sweep server.itr=0,8000,20000")?;
    if axes.is_empty() {
        let result = timed(&scenario)?;
        let doc = RunDoc {
            scenario: &scenario.name,
            result: &result,
            notes: &[],
        };
        ctx.emit("sim", &doc, |d| run_text(d.scenario, d.result))?;
        return Ok(Outcome::Success);
    }
    let points = sweep::points(&scenario, &axes).hint("`nictune sim --keys` lists every key")?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let progress = ctx.progress();
    let results = sweep::run_parallel(&points, threads, progress.as_ref(), timed);
    let results = results.into_iter().collect::<Result<Vec<_>>>()?;
    let doc = SweepDoc {
        scenario: &scenario.name,
        points: results
            .iter()
            .map(|result| RunDoc {
                scenario: &scenario.name,
                result,
                notes: &[],
            })
            .collect(),
    };
    let varying: Vec<&str> = axes.iter().map(|a| a.key.as_str()).collect();
    ctx.emit("sim", &doc, |_| {
        sweep_text(&scenario.name, &results, &varying)
    })?;
    Ok(Outcome::Success)
}

/// Finds the scenario and applies --set, --duration and --seed.
fn load(args: &Args) -> Result<Scenario> {
    let name = args.scenario.as_deref().unwrap_or_default();
    let mut scenario = match builtin::get(name) {
        Ok(s) => s,
        Err(not_found) => {
            let path = Path::new(name);
            if !path.exists() {
                return Err(not_found).hint(
                    "`nictune sim --list` shows the built-in scenarios; or give a TOML file",
                );
            }
            let text = nictune_core::input::read_file(path, nictune_core::input::SCENARIO)?;
            let stem = path
                .file_stem()
                .map_or(name.into(), |s| s.to_string_lossy());
            Scenario::from_toml(&stem, &text).hint("`nictune sim --keys` lists every key")?
        }
    };
    for a in &args.set {
        scenario
            .assign(a)
            .hint("`nictune sim --keys` lists every key with what it accepts")?;
    }
    if let Some(d) = args.duration {
        scenario
            .set("duration", &d.as_secs_f64().to_string())
            .hint("give a simulated time from 1µs to 1h, e.g. --duration 10s")?;
    }
    if let Some(s) = &args.seed {
        scenario
            .set("seed", s)
            .hint("give a non-negative integer")?;
    }
    Ok(scenario)
}

/// Runs one scenario and measures its wall time around the run.
fn timed(scenario: &Scenario) -> Result<RunResult> {
    let start = Instant::now();
    let mut result = scenario
        .run()
        .hint("`nictune sim --keys` lists every key with what it accepts")?;
    result.engine.wall_seconds = Some(start.elapsed().as_secs_f64());
    Ok(result)
}

fn list(ctx: &Ctx) -> Result<Outcome> {
    let doc = ListDoc {
        scenarios: builtin::list()
            .into_iter()
            .map(|(name, description)| ListEntry { name, description })
            .chain(cases::all().iter().map(|c| ListEntry {
                name: c.name.to_string(),
                description: c.description.to_string(),
            }))
            .collect(),
    };
    ctx.emit("sim", &doc, list_text)?;
    Ok(Outcome::Success)
}

/// `--keys`: every key — the engine's, then each case scenario's under its name — or, with a
/// scenario named, the keys that scenario takes.
fn list_keys(scenario: Option<&str>, ctx: &Ctx) -> Result<Outcome> {
    let engine = keys::catalog().iter().map(|k| KeyEntry {
        key: k.name.clone(),
        default: k.default.clone(),
        allowed: k.kind.allowed(),
        help: k.help.to_string(),
        scenario: None,
    });
    let case_keys = |case: &'static cases::CaseScenario| {
        case.keys().into_iter().map(move |k| KeyEntry {
            key: k.name,
            default: k.default,
            allowed: k.kind.allowed(),
            help: k.help.to_string(),
            scenario: Some(case.name.to_string()),
        })
    };
    let keys = match scenario {
        None => engine
            .chain(cases::all().iter().flat_map(case_keys))
            .collect(),
        Some(name) => match cases::find(name) {
            Some(case) => case_keys(case).collect(),
            // An engine scenario or a file: the engine's keys (the file is not read).
            None => engine.collect(),
        },
    };
    ctx.emit("sim", &KeysDoc { keys }, keys_text)?;
    Ok(Outcome::Success)
}

/// `--explain` for an engine scenario: its description, its notes, the engine's model, and
/// every key with the value this scenario runs with.
fn explain(scenario: &Scenario, ctx: &Ctx) -> Result<Outcome> {
    ctx.emit("sim", &engine_explain_doc(scenario), explain_text)?;
    Ok(Outcome::Success)
}
