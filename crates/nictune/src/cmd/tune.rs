//! `nictune tune`: a measured search for the best moderation settings, with a report.
//!
//! Arguments are checked in two stages. First what was typed, without touching the system:
//! every value is parsed by a small `check_*` function whose error names the flag, the value,
//! what is allowed and a hint (exit 2). Then the target is resolved: a real tune changes host
//! settings and builds a namespace testbed, so it needs root, and without it the command exits
//! 2 saying why and pointing at `nictune sim`.
//!
//! `--synthetic` runs the whole pipeline on a model with seeded noise instead of a host: it
//! shows what the outputs look like without root, and everything it writes says SYNTHETIC.
//! It is never presented as a tune of this machine.

use crate::output::{Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use nictune_core::envelope::Envelope;
use nictune_core::error::InvalidInput;
use nictune_core::units::Nanos;
use nictune_report::format::{num, pct};
use nictune_report::report_html;
use nictune_tune::objective::{Goal, Limit, Objective};
use nictune_tune::observe::{CpuScope, RateUnit};
use nictune_tune::predict::Predictor;
use nictune_tune::profile::recommended_toml;
use nictune_tune::results::Environment;
use nictune_tune::results::TuneResults;
use nictune_tune::search::SearchPlan;
use nictune_tune::session::{self, Controls, Measurer, StopRequest, Target, TuneConfig, TuneError};
use nictune_tune::space::{Capabilities, Space};
use nictune_tune::synthetic::{demo_environment, synthetic, Oracle, State};
use std::path::{Path, PathBuf};

/// `nictune tune`'s arguments; boxed so the `Command` enum stays small.
#[derive(Debug, clap::Args)]
#[command(after_help = TUNE_HELP)]
pub struct Args {
    #[command(flatten)]
    pub opts: Box<Opts>,
}

/// The options themselves, as typed.
#[derive(Debug, clap::Args)]
pub struct Opts {
    /// Tune nictune's own veth testbed (two namespaces, created and removed by nictune).
    /// The default when no --iface is given. Needs root.
    #[arg(long, conflicts_with_all = ["iface", "peer"])]
    pub testbed: bool,
    /// Tune this interface, measured against a `nictune serve` peer. Needs root.
    #[arg(long, value_name = "IF", requires = "peer")]
    pub iface: Option<String>,
    /// The `nictune serve` peer for --iface.
    #[arg(long, value_name = "HOST[:PORT]", requires = "iface")]
    pub peer: Option<String>,
    /// What "best" means.
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Latency)]
    pub objective: ObjectiveArg,
    /// Traffic to measure with: rr (1-byte TCP request/response), stream (bulk TCP), mixed,
    /// or a workload FILE.
    #[arg(long, value_name = "rr|stream|mixed|FILE", default_value = "rr")]
    pub workload: String,
    /// How much to measure: a number of runs (e.g. 72) or a duration (e.g. 3m, 90s).
    #[arg(long, value_name = "N|DURATION", default_value = "3m")]
    pub budget: String,
    /// Length of each measurement run.
    #[arg(long, value_name = "DURATION", default_value = "2s")]
    pub duration: String,
    /// Traffic before each run, not measured.
    #[arg(long, value_name = "DURATION", default_value = "500ms")]
    pub warm_up: String,
    /// For --objective latency: the lowest acceptable rate, as a percentage of the settings as
    /// found (90%) or an absolute rate in the workload's unit (8000).
    #[arg(long, value_name = "PCT%|RATE", default_value = "90%")]
    pub rate_floor: String,
    /// For --objective cpu: the highest acceptable p99, as a percentage of the settings as found
    /// (110%) or a latency (200us).
    #[arg(long, value_name = "PCT%|LATENCY", default_value = "110%")]
    pub p99_ceiling: String,
    /// Rank the candidates with the simulator, calibrated on the first runs, before measuring;
    /// the report shows predicted against measured.
    #[arg(long)]
    pub predict: bool,
    /// Where results.json, recommended.toml and report.html go (created if missing; files in
    /// it are overwritten).
    #[arg(long, value_name = "DIR", default_value = "nictune-tune")]
    pub out: PathBuf,
    /// Apply the recommendation afterwards through the apply engine, with auto-revert.
    #[arg(long, conflicts_with = "synthetic")]
    pub apply: bool,
    /// With --apply: revert unless `nictune confirm` runs within this time.
    #[arg(long, value_name = "DURATION", requires = "apply")]
    pub confirm_within: Option<String>,
    /// Demonstration: search a synthetic model with seeded noise instead of a host. Needs no
    /// root, changes nothing, and every output is labelled SYNTHETIC. Not a tune.
    #[arg(long, conflicts_with_all = ["iface", "peer", "testbed"])]
    pub synthetic: bool,
    /// With --synthetic: the noise seed.
    #[arg(long, default_value_t = 1, requires = "synthetic")]
    pub seed: u64,
}

const TUNE_HELP: &str = "\
The loop: snapshot the settings, then for each candidate apply (journaled), warm up, measure,
record; the settings as found are restored at the end and on any failure. Successive halving
spends the budget: every candidate once, the best third again, the finalists on fresh runs.
A recommendation is made only when it beats the settings as found beyond run-to-run noise.

Examples:
  sudo nictune tune --budget 3m --out results
  sudo nictune tune --objective cpu --p99-ceiling 200us
  nictune tune --synthetic --out demo        # what the report looks like, no root";

/// `--objective`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ObjectiveArg {
    /// Lowest p99 with the rate above --rate-floor.
    Latency,
    /// Highest rate.
    Throughput,
    /// Lowest CPU per unit of work with p99 under --p99-ceiling.
    Cpu,
    /// Best geometric mean of p99, CPU per unit and 1/rate, relative to the settings as found.
    Balanced,
}

impl From<ObjectiveArg> for Goal {
    fn from(o: ObjectiveArg) -> Goal {
        match o {
            ObjectiveArg::Latency => Goal::Latency,
            ObjectiveArg::Throughput => Goal::Throughput,
            ObjectiveArg::Cpu => Goal::Cpu,
            ObjectiveArg::Balanced => Goal::Balanced,
        }
    }
}

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    Runs(usize),
    Time(Nanos),
}

/// What to measure with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workload {
    Rr,
    Stream,
    Mixed,
    File(PathBuf),
}

/// Where the numbers come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetArg {
    Testbed,
    Interface { iface: String, peer: String },
    Synthetic { seed: u64 },
}

/// Everything typed, checked, before anything touches the system.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub target: TargetArg,
    pub objective: Objective,
    pub workload: Workload,
    pub budget: Budget,
    pub duration: Nanos,
    pub warm_up: Nanos,
    pub predict: bool,
    pub out: PathBuf,
    pub apply: Option<Option<Nanos>>,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    let checked = check(&args.opts)?;
    match &checked.target {
        TargetArg::Synthetic { seed } => {
            let config = tune_config(&checked, &Capabilities::veth_testbed(2))?;
            run_synthetic(&checked, &config, *seed, ctx)
        }
        TargetArg::Testbed => {
            // The testbed's space is known before touching anything: check the budget first.
            tune_config(&checked, &Capabilities::veth_testbed(testbed_cpus()))?;
            require_root(effective_uid())?;
            live_tune_unavailable()
        }
        TargetArg::Interface { .. } => {
            require_root(effective_uid())?;
            live_tune_unavailable()
        }
    }
}

/// CPUs the testbed can pin client and server to (two are enough for both placements).
fn testbed_cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(2) as u32)
}

/// What the search will do on a target with `caps`; refuses a budget that cannot cover the
/// space (one run per candidate plus the finals) unless `--predict` will prune it.
pub fn tune_config(c: &Checked, caps: &Capabilities) -> Result<TuneConfig> {
    let per_run = c.duration + c.warm_up;
    let plan = SearchPlan::with_budget(runs_for(c.budget, per_run));
    let candidates = Space::from_capabilities(caps).with_baseline();
    let needed = plan.minimum_budget(candidates.len());
    if plan.budget < needed && !c.predict {
        let minimum_s = per_run.as_secs_f64() * needed as f64;
        return Err(BudgetTooSmall {
            runs: plan.budget,
            candidates: candidates.len(),
            needed,
        })
        .hint(format!(
            "use --budget {needed} (about {minimum_s:.0} s at {} s per run), or add --predict \
             to measure only the candidates the simulator ranks best",
            per_run.as_secs_f64()
        ));
    }
    Ok(TuneConfig {
        candidates,
        baseline: 0,
        objective: c.objective,
        plan,
        unit: rate_unit(&c.workload),
        scope: match c.target {
            TargetArg::Interface { .. } => CpuScope::PerHost,
            _ => CpuScope::SharedMachine,
        },
        warm_up: c.warm_up,
        duration: c.duration,
    })
}

/// The budget does not cover the space.
#[derive(Debug, thiserror::Error)]
#[error("--budget buys {runs} runs, but {candidates} candidates need at least {needed} (one run each, the best third again, five fresh runs per finalist)")]
pub struct BudgetTooSmall {
    pub runs: usize,
    pub candidates: usize,
    pub needed: usize,
}

fn rate_unit(w: &Workload) -> RateUnit {
    match w {
        Workload::Stream => RateUnit::Bits,
        Workload::Rr | Workload::Mixed | Workload::File(_) => RateUnit::Transactions,
    }
}

/// Stage one: every value as typed.
pub fn check(a: &Opts) -> Result<Checked> {
    let duration = check_duration("--duration", &a.duration)?;
    let warm_up = check_duration("--warm-up", &a.warm_up)?;
    let mut objective = Objective::new(a.objective.into());
    objective.rate_floor = check_limit("--rate-floor", &a.rate_floor, parse_plain)?;
    objective.p99_ceiling = check_limit("--p99-ceiling", &a.p99_ceiling, parse_latency_us)?;
    let apply = if a.apply {
        let within = a.confirm_within.as_deref();
        Some(
            within
                .map(|w| check_duration("--confirm-within", w))
                .transpose()?,
        )
    } else {
        None
    };
    Ok(Checked {
        target: target(a)?,
        objective,
        workload: check_workload(&a.workload)?,
        budget: check_budget(&a.budget)?,
        duration,
        warm_up,
        predict: a.predict,
        out: a.out.clone(),
        apply,
    })
}

fn target(a: &Opts) -> Result<TargetArg> {
    if a.synthetic {
        return Ok(TargetArg::Synthetic { seed: a.seed });
    }
    match (&a.iface, &a.peer) {
        (Some(iface), Some(peer)) => {
            check_peer(peer)?;
            Ok(TargetArg::Interface {
                iface: iface.clone(),
                peer: peer.clone(),
            })
        }
        _ => Ok(TargetArg::Testbed),
    }
}

fn invalid(what: &str, value: &str, allowed: &str) -> InvalidInput {
    InvalidInput {
        what: what.into(),
        value: value.into(),
        allowed: allowed.into(),
    }
}

/// `90s`, `3m`, `500ms`, `1h`, or bare seconds; more than zero and at most a day.
pub fn parse_duration(s: &str) -> Option<Nanos> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = if split == 0 {
        return None;
    } else {
        s.split_at(split)
    };
    let n: f64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    let secs = n * scale;
    (secs > 0.0 && secs <= 86_400.0).then(|| Nanos::from_secs_f64(secs))
}

fn check_duration(flag: &str, s: &str) -> Result<Nanos> {
    let bare = s.parse::<f64>().ok().map(|secs| format!("{secs}s"));
    parse_duration(bare.as_deref().unwrap_or(s))
        .ok_or_else(|| {
            invalid(
                flag,
                s,
                "a duration above 0 and up to 24h: 500ms, 2s, 3m, 1h",
            )
        })
        .hint(format!("for example {flag} 2s"))
}

/// A number of runs (at least 1, at most 10 000) or a duration.
fn check_budget(s: &str) -> Result<Budget> {
    if let Ok(n) = s.parse::<usize>() {
        if (1..=10_000).contains(&n) {
            return Ok(Budget::Runs(n));
        }
    }
    parse_duration(s)
        .map(Budget::Time)
        .ok_or_else(|| {
            invalid(
                "--budget",
                s,
                "a number of runs from 1 to 10000, or a duration up to 24h (90s, 3m, 1h)",
            )
        })
        .hint("for example --budget 3m, or --budget 72 for 72 runs")
}

fn check_workload(s: &str) -> Result<Workload> {
    match s {
        "rr" => Ok(Workload::Rr),
        "stream" => Ok(Workload::Stream),
        "mixed" => Ok(Workload::Mixed),
        path if Path::new(path).is_file() => Ok(Workload::File(path.into())),
        _ => Err(invalid(
            "--workload",
            s,
            "rr, stream, mixed, or the path of an existing workload file",
        ))
        .hint("rr is 1-byte TCP request/response, the case most sensitive to moderation"),
    }
}

/// `90%` (of the settings as found) or an absolute value parsed by `absolute`.
fn check_limit(flag: &str, s: &str, absolute: fn(&str) -> Option<f64>) -> Result<Limit> {
    let parsed = match s.strip_suffix('%') {
        Some(p) => p
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|p| *p > 0.0 && *p <= 10_000.0)
            .map(|p| Limit::OfBaseline(p / 100.0)),
        None => absolute(s).filter(|v| *v > 0.0).map(Limit::Absolute),
    };
    parsed
        .ok_or_else(|| {
            invalid(
                flag,
                s,
                "a percentage of the settings as found (90%) or a positive absolute value",
            )
        })
        .hint(format!("for example {flag} 90%"))
}

fn parse_plain(s: &str) -> Option<f64> {
    s.trim().parse().ok()
}

/// A latency in µs: `200us`, `200µs`, `1ms`, or a bare number of µs.
fn parse_latency_us(s: &str) -> Option<f64> {
    let s = s.trim();
    for (suffix, scale) in [("us", 1.0), ("µs", 1.0), ("ms", 1e3)] {
        if let Some(n) = s.strip_suffix(suffix) {
            return n.trim().parse::<f64>().ok().map(|v| v * scale);
        }
    }
    s.parse().ok()
}

/// `HOST` or `HOST:PORT` with a port from 1 to 65535.
fn check_peer(s: &str) -> Result<()> {
    let bad = || {
        Err(invalid(
            "--peer",
            s,
            "HOST or HOST:PORT with a port from 1 to 65535",
        ))
        .hint("for example --peer 198.18.0.2:7447, where `nictune serve` listens")
    };
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => (h, Some(p)),
        _ => (s, None),
    };
    if host.is_empty() || host.contains(char::is_whitespace) {
        return bad();
    }
    match port.map(str::parse::<u16>) {
        None | Some(Ok(1..=65535)) => Ok(()),
        _ => bad(),
    }
}

/// The effective uid, from /proc/self/status (no unsafe call needed); `None` if unreadable.
fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// Why a tune needs root.
#[derive(Debug, thiserror::Error)]
#[error("`nictune tune` needs root: it changes NIC and kernel settings (journaled and restored) and builds a network-namespace testbed; running as uid {uid}")]
pub struct NeedsRoot {
    pub uid: String,
}

/// Stage two's first step: a live tune needs root.
pub fn require_root(uid: Option<u32>) -> Result<()> {
    match uid {
        Some(0) => Ok(()),
        other => Err(NeedsRoot {
            uid: other.map_or("unknown".into(), |u| u.to_string()),
        })
        .hint(
            "run it with sudo; for a what-if without root use `nictune sim`, and `nictune tune \
             --synthetic` shows what a tune's report looks like",
        ),
    }
}

/// The bench and apply engines are not wired into tune in this build.
#[derive(Debug, thiserror::Error)]
#[error("live tuning is not available in this build: the measurement (bench) and apply engines are not wired into `nictune tune` yet; nothing was changed")]
pub struct LiveTuneUnavailable;

fn live_tune_unavailable() -> Result<Outcome> {
    Err(LiveTuneUnavailable).hint(
        "`nictune tune --synthetic --out DIR` runs the search on a model and writes the \
         three output files, labelled SYNTHETIC",
    )
}

/// Runs per budget: a time budget buys runs of warm-up plus measurement.
fn runs_for(budget: Budget, per_run: Nanos) -> usize {
    match budget {
        Budget::Runs(n) => n,
        Budget::Time(t) => (t.0 / per_run.0.max(1)) as usize,
    }
}

/// The synthetic demonstration: the same loop, outputs and summary as a live tune, over the
/// synthetic host and bench (and the noiseless surface as the predictor).
fn run_synthetic(c: &Checked, config: &TuneConfig, seed: u64, ctx: &Ctx) -> Result<Outcome> {
    let (mut host, mut bench) = synthetic(seed, State::new());
    let mut oracle = Oracle;
    let predictor: Option<&mut dyn Predictor> = if c.predict { Some(&mut oracle) } else { None };
    let never = || false;
    let parts = Parts {
        config,
        predictor,
        environment: demo_environment(),
        cancel: &never,
    };
    execute(c, &mut host, &mut bench, parts, ctx)
}

/// What a tune needs besides the target and the measurer.
struct Parts<'a> {
    config: &'a TuneConfig,
    predictor: Option<&'a mut dyn Predictor>,
    environment: Environment,
    /// Set by Ctrl-C / SIGTERM in a live tune.
    cancel: &'a dyn StopRequest,
}

/// Runs the tune loop on `target` and `measurer` (restoring the settings as found whatever
/// happens), writes the three files and prints the summary. The live path calls this with
/// the apply engine's target and the bench engine's measurer.
fn execute<T: Target, M: Measurer>(
    c: &Checked,
    target: &mut T,
    measurer: &mut M,
    parts: Parts<'_>,
    ctx: &Ctx,
) -> Result<Outcome> {
    let progress = ctx.progress();
    let controls = Controls {
        progress: progress.as_ref(),
        cancel: parts.cancel,
    };
    let run = session::run(target, measurer, parts.config, parts.predictor, controls)
        .map_err(with_recovery_hint)?;
    let results = TuneResults::build(&run, parts.config, parts.environment);
    write_outputs(&c.out, &results)?;
    ctx.emit("tune", &results, |r| human(r, &c.out))?;
    Ok(Outcome::Success)
}

/// A failed tune's error with what to do next: nothing when the settings were restored,
/// `nictune revert` when restoring failed.
fn with_recovery_hint(e: TuneError) -> anyhow::Error {
    let hint = match e {
        TuneError::Restore { .. } => {
            "restoring failed: run `nictune revert` to put back the settings from the journal"
        }
        _ => "the settings as found were restored; nothing was left changed",
    };
    anyhow::Error::new(nictune_core::error::Hinted::new(e, hint))
}

/// Writes results.json, recommended.toml and report.html into `dir`.
pub fn write_outputs(dir: &Path, results: &TuneResults) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the output directory {}", dir.display()))?;
    let json = Envelope::v1("tune", results).to_json()?;
    let files = [
        ("results.json", json + "\n"),
        ("recommended.toml", recommended_toml(results)),
        ("report.html", report_html(results)),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// The few lines a terminal shows; the report has the rest.
fn human(r: &TuneResults, out: &Path) -> String {
    let rec = &r.recommendation;
    let mut lines = Vec::new();
    if r.environment.target == nictune_tune::results::TargetKind::Synthetic {
        lines.push("SYNTHETIC DEMONSTRATION: numbers from a model, not measured.".to_string());
    }
    lines.push(rec.headline.clone());
    if rec.settings.is_empty() {
        lines.push(format!("Best measured: {}", rec.best_id));
    } else {
        lines.push(format!("Recommended: {}", rec.settings.join(" ")));
        lines.push(format!("Placement measured: {}", rec.placement));
    }
    for c in rec.changes.iter().filter(|c| c.significant) {
        lines.push(format!(
            "  {:<22} {:>7} → {:<7} {:<14} {}",
            c.metric,
            num(c.baseline),
            num(c.best),
            c.unit,
            pct(c.change_pct)
        ));
    }
    lines.push(format!(
        "{} of {} candidates measured in {} runs.",
        r.search.measured, r.search.space_size, r.search.measurements
    ));
    lines.push(format!(
        "Wrote {0}/results.json, {0}/recommended.toml, {0}/report.html",
        out.display()
    ));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn parse(argv: &[&str]) -> Result<Checked> {
        let cli = Cli::try_parse_from(std::iter::once("tune").chain(argv.iter().copied()))?;
        check(&cli.args.opts)
    }

    fn message(r: Result<Checked>) -> String {
        format!("{:#}", r.unwrap_err())
    }

    #[test]
    fn defaults_tune_the_testbed_for_latency_with_a_three_minute_budget() {
        let c = parse(&[]).unwrap();
        assert_eq!(c.target, TargetArg::Testbed);
        assert_eq!(c.objective.goal, Goal::Latency);
        assert_eq!(c.budget, Budget::Time(Nanos::from_secs(180)));
        assert_eq!(runs_for(c.budget, c.duration + c.warm_up), 72);
        assert_eq!(c.apply, None);
    }

    #[test]
    fn budgets_are_runs_or_durations() {
        assert_eq!(check_budget("72").unwrap(), Budget::Runs(72));
        assert_eq!(
            check_budget("90s").unwrap(),
            Budget::Time(Nanos::from_secs(90))
        );
        assert_eq!(
            check_budget("1h").unwrap(),
            Budget::Time(Nanos::from_secs(3600))
        );
        let m = message(parse(&["--budget", "0"]));
        assert!(m.contains("--budget: \"0\" is not allowed"), "{m}");
        assert!(message(parse(&["--budget", "3 weeks"])).contains("a duration up to 24h"));
    }

    #[test]
    fn bad_values_name_the_flag_what_is_allowed_and_a_hint() {
        let m = message(parse(&["--duration=-1s"]));
        assert!(m.contains("--duration") && m.contains("500ms, 2s"), "{m}");
        let m = message(parse(&["--workload", "/no/such/file"]));
        assert!(m.contains("rr, stream, mixed"), "{m}");
        let m = message(parse(&["--rate-floor", "lots"]));
        assert!(m.contains("a percentage of the settings as found"), "{m}");
        let m = message(parse(&["--iface", "eth9", "--peer", "host:99999"]));
        assert!(m.contains("port from 1 to 65535"), "{m}");
        let err = parse(&["--warm-up", "soon"]).unwrap_err();
        let hinted = err
            .chain()
            .find_map(|e| e.downcast_ref::<nictune_core::error::Hinted>());
        assert!(hinted.is_some(), "the error carries a hint");
    }

    #[test]
    fn limits_are_relative_or_absolute() {
        let c = parse(&["--objective", "cpu", "--p99-ceiling", "200us"]).unwrap();
        assert_eq!(c.objective.p99_ceiling, Limit::Absolute(200.0));
        let c = parse(&["--rate-floor", "80%"]).unwrap();
        assert_eq!(c.objective.rate_floor, Limit::OfBaseline(0.8));
        assert_eq!(parse_latency_us("1ms"), Some(1000.0));
    }

    #[test]
    fn a_budget_too_small_for_the_space_is_refused_before_anything_runs() {
        let caps = Capabilities::veth_testbed(2);
        let c = parse(&["--budget", "30"]).unwrap();
        let text = format!("{:#}", tune_config(&c, &caps).unwrap_err());
        assert!(text.contains("25 candidates need at least 52"), "{text}");
        // --predict prunes to what the budget covers instead.
        let c = parse(&["--budget", "30", "--predict"]).unwrap();
        assert_eq!(tune_config(&c, &caps).unwrap().plan.budget, 30);
        let c = parse(&["--workload", "stream"]).unwrap();
        assert_eq!(tune_config(&c, &caps).unwrap().unit, RateUnit::Bits);
    }

    #[test]
    fn conflicting_targets_are_usage_errors() {
        assert!(parse(&["--testbed", "--iface", "eth0", "--peer", "h"]).is_err());
        assert!(parse(&["--iface", "eth0"]).is_err(), "--iface needs --peer");
        assert!(parse(&["--synthetic", "--apply"]).is_err());
        assert!(
            parse(&["--confirm-within", "30s"]).is_err(),
            "needs --apply"
        );
        let c = parse(&["--apply", "--confirm-within", "30s"]).unwrap();
        assert_eq!(c.apply, Some(Some(Nanos::from_secs(30))));
    }

    #[test]
    fn without_root_the_error_explains_and_points_at_sim() {
        let err = require_root(Some(1000)).unwrap_err();
        let text = format!("{err:#}");
        assert!(
            text.contains("needs root") && text.contains("uid 1000"),
            "{text}"
        );
        let hint = err
            .chain()
            .find_map(|e| e.downcast_ref::<nictune_core::error::Hinted>())
            .unwrap()
            .hint()
            .to_string();
        assert!(hint.contains("nictune sim"), "{hint}");
        assert!(require_root(Some(0)).is_ok());
        assert!(require_root(None).is_err());
    }
}
