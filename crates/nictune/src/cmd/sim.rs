//! `nictune sim`: run a scenario (built-in or a TOML file) in the simulator, optionally
//! swept over parameter values, and print the predicted metrics.
//!
//! Arguments are checked first (scenario found, every `--set`/`--sweep` key and value valid)
//! and only then is anything run. Wall time is measured here, around each run, never inside.

use super::sim_cases::{explain_text, ExplainDoc, KeyDoc};
use crate::output::{Ctx, HintExt, Outcome};
use anyhow::Result;
use nictune_core::metrics::{HostMetrics, Metrics};
use nictune_sim::cases::registry as cases;
use nictune_sim::scenario::sweep::{self, Axis};
use nictune_sim::scenario::value::Value;
use nictune_sim::scenario::{builtin, keys, RunResult, Scenario};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

#[derive(Debug, clap::Args)]
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
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Print the model's assumptions for the scenario and its keys, then exit.
    #[arg(long)]
    pub explain: bool,
}

/// `nictune.sim/v2` for one run.
#[derive(Debug, Serialize)]
struct RunDoc<'a> {
    scenario: &'a str,
    #[serde(flatten)]
    result: &'a RunResult,
}

/// `nictune.sim/v2` for a sweep.
#[derive(Debug, Serialize)]
struct SweepDoc<'a> {
    scenario: &'a str,
    points: &'a [RunResult],
}

#[derive(Debug, Serialize)]
struct ListDoc {
    scenarios: Vec<ListEntry>,
}

#[derive(Debug, Serialize)]
struct ListEntry {
    name: String,
    description: String,
}

#[derive(Debug, Serialize)]
struct KeysDoc {
    keys: Vec<KeyEntry>,
}

#[derive(Debug, Serialize)]
struct KeyEntry {
    key: String,
    default: nictune_sim::scenario::value::Value,
    allowed: String,
    help: String,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    if args.list {
        return list(ctx);
    }
    if let Some(case) = args.scenario.as_deref().and_then(cases::find) {
        return super::sim_cases::run(case, &args, ctx);
    }
    if args.keys {
        return list_keys(ctx);
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
        };
        ctx.emit("sim", &doc, |d| human_run(d.scenario, d.result))?;
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
        points: &results,
    };
    let varying: Vec<&str> = axes.iter().map(|a| a.key.as_str()).collect();
    ctx.emit("sim", &doc, |d| human_sweep(d.scenario, d.points, &varying))?;
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
            let text = nictune_core::input::read_file(path, nictune_core::input::PROFILE)?;
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
    ctx.emit("sim", &doc, |d| {
        let w = d.scenarios.iter().map(|s| s.name.len()).max().unwrap_or(0);
        d.scenarios
            .iter()
            .map(|s| format!("{:w$}  {}\n", s.name, s.description))
            .collect()
    })?;
    Ok(Outcome::Success)
}

fn list_keys(ctx: &Ctx) -> Result<Outcome> {
    let doc = KeysDoc {
        keys: keys::catalog()
            .iter()
            .map(|k| KeyEntry {
                key: k.name.clone(),
                default: k.default.clone(),
                allowed: k.kind.allowed(),
                help: k.help.to_string(),
            })
            .collect(),
    };
    ctx.emit("sim", &doc, |d| {
        let mut s =
            String::from("Host keys exist as client.KEY and server.KEY; hosts.KEY sets both.\n");
        for k in &d.keys {
            let _ = writeln!(
                s,
                "{:34} {:>10}  {} — {}",
                k.key,
                k.default.to_string(),
                k.help,
                k.allowed
            );
        }
        s
    })?;
    Ok(Outcome::Success)
}

/// What every engine scenario assumes, for `--explain` (the full specification is
/// docs/simulator.md).
const ENGINE_EXPLAIN: &str = "\
The engine's model: frames come from a generator or the peer host over a link (serialised at
the line rate, plus propagation); the NIC buffers them on the card, DMAs them into the rx
ring, and raises causes through the 8254x delay timers (RDTR/RADV, TIDV/TADV) and the
interrupt throttle (ITR, read as an interval clock or a minimum gap: `nic`); the driver's
moderation policy (`driver`: e1000 7.0/7.3 InterruptThrottleRate modes, igb, ixgbe,
ixgbevf, DIM) rewrites those registers; NAPI polls `napi.weight` frames per call within
the NET_RX softirq's budgets; the workload (TCP_RR, ping, stream, bulk TCP) runs on the
host's cores with the costs under `cost.*`. Where each mechanism lives and which source it
follows: docs/simulator.md.";

/// `--explain` for an engine scenario: its description, its notes (what its values rest on),
/// the engine's model, and every key with the value this scenario runs with.
fn explain(scenario: &Scenario, ctx: &Ctx) -> Result<Outcome> {
    let resolved = scenario.resolved();
    let notes = if scenario.notes.is_empty() {
        String::new()
    } else {
        format!("{}\n\n", scenario.notes)
    };
    let text = format!(
        "{} — {}\n\n{notes}{ENGINE_EXPLAIN}\n",
        scenario.name, scenario.description
    );
    let doc = ExplainDoc {
        scenario: &scenario.name,
        explain: &text,
        keys: keys::catalog()
            .iter()
            .filter_map(|k| {
                let value = resolved.get(&k.name)?.clone();
                Some(KeyDoc {
                    key: k.name.clone(),
                    default: value,
                    allowed: k.kind.allowed(),
                    help: k.help,
                })
            })
            .collect(),
    };
    ctx.emit("sim", &doc, explain_text)?;
    Ok(Outcome::Success)
}

/// The value of sweep axis `key` in a point's parameters; a `hosts.` key shows the hosts'
/// value (one value when they agree, else each host's).
fn axis_value(params: &std::collections::BTreeMap<String, Value>, key: &str) -> String {
    if let Some(v) = params.get(key) {
        return v.to_string();
    }
    let Some(rest) = key.strip_prefix("hosts.") else {
        return "-".into();
    };
    let per_host: Vec<(&str, &Value)> = keys::HOSTS
        .iter()
        .filter_map(|h| Some((*h, params.get(&format!("{h}.{rest}"))?)))
        .collect();
    match per_host.as_slice() {
        [] => "-".into(),
        [(_, first), others @ ..] if others.iter().all(|(_, v)| v == first) => first.to_string(),
        all => all
            .iter()
            .map(|(h, v)| format!("{h}:{v}"))
            .collect::<Vec<_>>()
            .join("/"),
    }
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

pub(super) fn human_run(name: &str, r: &RunResult) -> String {
    let m = &r.metrics;
    let e = &r.engine;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "scenario {name}: {} s simulated (seed {}, {} events, {} packets, {} s wall)",
        e.sim_seconds,
        e.seed,
        e.events,
        e.packets,
        fmt_opt(e.wall_seconds, 3)
    );
    if let Some(t) = m.transactions_per_sec {
        let _ = writeln!(s, "transactions/s  {t:.2}");
        let interim: Vec<String> = m
            .interim_transactions_per_sec
            .iter()
            .map(|x| format!("{x:.0}"))
            .collect();
        let _ = writeln!(s, "interim (1 s)   {}", interim.join(" "));
    }
    if let Some(l) = &m.latency_us {
        let _ = writeln!(
            s,
            "latency µs      min {:.1}  mean {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}  stddev {:.1}",
            l.min, l.mean, l.p50, l.p90, l.p99, l.p999, l.max, l.stddev
        );
        if is_ping(r) {
            let _ = writeln!(
                s,
                "rtt min/avg/max/mdev = {:.3}/{:.3}/{:.3}/{:.3} ms",
                l.min / 1e3,
                l.mean / 1e3,
                l.max / 1e3,
                l.stddev / 1e3
            );
        }
    }
    let _ = writeln!(s, "throughput      {}", rate(m.throughput_bps));
    s.push_str(&host_table(m));
    s
}

/// Bits per second with a readable unit.
fn rate(bps: Option<f64>) -> String {
    match bps {
        None => "-".into(),
        Some(b) if b >= 1e9 => format!("{:.3} Gb/s", b / 1e9),
        Some(b) if b >= 1e6 => format!("{:.3} Mb/s", b / 1e6),
        Some(b) if b >= 1e3 => format!("{:.3} kb/s", b / 1e3),
        Some(b) => format!("{b:.0} b/s"),
    }
}

fn is_ping(r: &RunResult) -> bool {
    matches!(r.params.get("workload.kind"), Some(nictune_sim::scenario::value::Value::Text(k)) if k == "ping")
}

/// Per-host rows; CPU shares are averaged over the host's cores, `busiest%` is the busiest
/// core's busy share.
fn host_table(m: &Metrics) -> String {
    let mut s = format!(
        "{:8} {:>10} {:>9} {:>6} {:>8} {:>6} {:>6} {:>9} {:>10} {:>8}\n",
        "host",
        "ints/s",
        "pkts/int",
        "irq%",
        "softirq%",
        "user%",
        "idle%",
        "busiest%",
        "drops",
        "squeeze"
    );
    for (name, h) in &m.hosts {
        s.push_str(&host_row(name, h));
    }
    s
}

fn host_row(name: &str, h: &HostMetrics) -> String {
    let pct = |x: f64| format!("{:.1}", x * 100.0);
    let drops: u64 = h.drops.values().sum();
    format!(
        "{:8} {:>10} {:>9} {:>6} {:>8} {:>6} {:>6} {:>9} {:>10} {:>8}\n",
        name,
        fmt_opt(h.interrupts_per_sec, 0),
        fmt_opt(h.packets_per_interrupt, 2),
        pct(h.cpu.irq),
        pct(h.cpu.softirq),
        pct(h.cpu.user),
        pct(h.cpu.idle),
        pct(h.cpu.busiest_core()),
        drops,
        h.time_squeeze.unwrap_or(0)
    )
}

pub(super) fn human_sweep(name: &str, points: &[RunResult], varying: &[&str]) -> String {
    let mut s = format!("scenario {name}: {} points\n", points.len());
    for p in points {
        let params: Vec<String> = varying
            .iter()
            .map(|k| format!("{k}={}", axis_value(&p.params, k)))
            .collect();
        let m = &p.metrics;
        let headline = match m.transactions_per_sec {
            Some(t) => format!("{t:.1} trans/s"),
            None => rate(m.throughput_bps),
        };
        let lat = m.latency_us.map_or("-".into(), |l| {
            format!("mean {:.1} µs p99 {:.1} µs", l.mean, l.p99)
        });
        let ints: Vec<String> = m
            .hosts
            .iter()
            .map(|(n, h)| format!("{n} {} ints/s", fmt_opt(h.interrupts_per_sec, 0)))
            .collect();
        let _ = writeln!(
            s,
            "{}  {headline}  {lat}  {}",
            params.join(" "),
            ints.join(", ")
        );
    }
    s
}
