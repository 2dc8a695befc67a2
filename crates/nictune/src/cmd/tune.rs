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
use anyhow::Result;
use nictune_core::duration;
use nictune_core::privilege::Privilege;
use nictune_core::units::Nanos;
use nictune_live::tune::{Finished, HoldError, Parts, SessionError};
use nictune_tune::fit::{fit_space, Budget, Fitted, FittedSpace, RunLength, TooSmall};
use nictune_tune::objective::Goal;
use nictune_tune::observe::{CpuScope, RateUnit};
use nictune_tune::predict::Predictor;
use nictune_tune::search::SearchPlan;
use nictune_tune::session::{TimeBudget, TuneConfig, TuneError};
use nictune_tune::space::{Capabilities, Space};
use nictune_tune::synthetic::{demo_environment, synthetic, Oracle, State};
use std::path::{Path, PathBuf};

mod check;
mod guest;
mod iface;
mod live;
mod write;

pub use check::{check, Checked, TargetArg, Workload};
use write::human;
pub use write::write_outputs;

/// `nictune tune`'s arguments; boxed so the `Command` enum stays small.
#[derive(Debug, clap::Args)]
#[command(after_help = TUNE_HELP)]
// `--connections -5` reaches the flag's own check instead of reading as an unknown flag.
#[command(allow_negative_numbers = true)]
pub struct Args {
    #[command(flatten)]
    pub opts: Box<Opts>,
}

/// The options themselves, as typed.
#[derive(Debug, clap::Args)]
pub struct Opts {
    /// Tune one of nictune's own testbeds (created and removed by nictune; needs root):
    /// `veth` (the default when no --iface is given) joins two namespaces; `e1000` and
    /// `e1000e` boot a QEMU guest running Linux's own driver on an emulated Intel NIC and
    /// search its InterruptThrottleRate and TxIntDelay, or with --runtime its rx-usecs and
    /// NAPI settings (set up with scripts/install-guest).
    #[arg(long, value_enum, value_name = "KIND", num_args = 0..=1, default_missing_value = "veth",
          conflicts_with_all = ["iface", "peer"])]
    pub testbed: Option<crate::cmd::testbed::TestbedArg>,
    /// Tune this interface, measured against a `nictune serve` peer. Needs root.
    #[arg(long, value_name = "IF", requires = "peer")]
    pub iface: Option<String>,
    /// The `nictune serve` peer for --iface.
    #[arg(long, value_name = "HOST[:PORT]", requires = "iface")]
    pub peer: Option<String>,
    /// With --iface: the interface lives in this network namespace (as `ip -n NAME`).
    #[arg(long, value_name = "NAME", requires = "iface")]
    pub netns: Option<String>,
    /// With --peer: file holding the peer's token (else $NICTUNE_TOKEN), as for `nictune bench`.
    #[arg(long, value_name = "FILE", requires = "peer")]
    pub token_file: Option<PathBuf>,
    /// With --iface: allow tuning the interface that carries the default route or this SSH
    /// session.
    #[arg(long, requires = "iface")]
    pub force: bool,
    /// With --iface: search the driver's module parameters (e1000/e1000e
    /// InterruptThrottleRate × TxIntDelay) instead of the run-time settings. Every candidate
    /// reloads the driver, taking all its ports down for seconds.
    #[arg(long, requires = "iface")]
    pub reload_driver: bool,
    /// With --testbed e1000|e1000e: search the driver's run-time settings instead of its
    /// module parameters: ethtool rx-usecs (its modes and fixed timers) × NAPI
    /// gro-flush-timeout × defer-hard-irqs, made through the guest's own `nictune serve
    /// --allow-changes eth0` without reloading the driver.
    #[arg(long, requires = "testbed")]
    pub runtime: bool,
    /// Tune the far end too. With --iface/--peer: through the peer's `nictune serve
    /// --allow-changes IFACE` (journaled there, put back when the tune ends or goes away).
    /// With --testbed e1000|e1000e: a second guest with the same NIC is the peer. Every
    /// setting is tried on this end, on the peer and on both.
    #[arg(long, conflicts_with = "synthetic")]
    pub both_ends: bool,
    /// Try only these values of KEY (repeatable), e.g. --only e1000.InterruptThrottleRate=100,2000.
    #[arg(long, value_name = "KEY=V1,V2,…")]
    pub only: Vec<String>,
    /// What "best" means.
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Latency)]
    pub objective: ObjectiveArg,
    /// Traffic to measure with: rr (1-byte TCP request/response), stream (bulk TCP), mixed,
    /// or a workload FILE.
    #[arg(long, value_name = "rr|stream|mixed|FILE", default_value = "rr")]
    pub workload: String,
    /// How much to measure: a number of runs (e.g. 72), or the search's wall time (e.g. 3m,
    /// 90s), which also pays for switching between candidates (driver reloads, settling).
    #[arg(long, value_name = "N|DURATION", default_value = "3m")]
    pub budget: String,
    /// Length of each measurement run: seconds (2) or with a unit (2s, 500ms).
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = duration::arg)]
    pub duration: Nanos,
    /// Traffic before each run, not measured (`--warm-up` is an old spelling); at least 3 s
    /// for the first run after a change that settles only at the driver's next watchdog pass
    /// (e1000/e1000e rx-usecs 4).
    #[arg(long, value_name = "DURATION", default_value = "500ms", value_parser = duration::arg,
          alias = "warm-up")]
    pub warmup: Nanos,
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
    /// With --apply: revert unless `nictune confirm` runs within this time (default 5m).
    #[arg(long, value_name = "DURATION", requires = "apply", value_parser = duration::arg)]
    pub confirm_within: Option<Nanos>,
    /// Demonstration: search a synthetic model with seeded noise instead of a host. Needs no
    /// root, changes nothing, and every output is labelled SYNTHETIC. Not a tune.
    #[arg(long, conflicts_with_all = ["iface", "peer", "testbed"])]
    pub synthetic: bool,
    /// With --synthetic: the noise seed.
    #[arg(long, default_value_t = 1, requires = "synthetic")]
    pub seed: u64,
    #[command(flatten)]
    pub state: crate::cmd::apply::StateArgs,
}

const TUNE_HELP: &str = "\
The loop: snapshot the settings, then for each candidate apply (journaled), warm up, measure,
record; the settings as found are restored at the end and on any failure. Successive halving
spends the budget: every candidate once, the best third again, the finalists on fresh runs.
A recommendation is made only when it beats the settings as found beyond run-to-run noise.

Examples:
  sudo nictune tune --budget 3m --out results
  sudo nictune tune --objective cpu --p99-ceiling 200us
  sudo nictune tune --testbed e1000 --budget 5m --out e1000   # Linux's e1000 driver in QEMU
  sudo nictune tune --testbed e1000 --runtime --out e1000-rt  # its ethtool and NAPI settings
  sudo NICTUNE_TOKEN=... nictune tune --iface eth1 --peer 198.18.0.2 --apply --confirm-within 5m
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

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    let checked = check(&args.opts)?;
    match &checked.target {
        TargetArg::Synthetic { seed } => {
            let config = tune_config(&checked, &Capabilities::veth_testbed(2))?;
            run_synthetic(&checked, &config, *seed, ctx)
        }
        TargetArg::Testbed => {
            // The testbed's space is known before touching anything: check the budget first.
            let config = tune_config(&checked, &Capabilities::veth_testbed(testbed_cpus()))?;
            refuse_apply_on_testbed(&checked)?;
            refuse_live_predict(&checked)?;
            root_for_live_tune(ctx.privilege)?;
            live::run_testbed(&checked, &config, &args.opts.state.state_dir, ctx)
        }
        TargetArg::Guest(driver) => {
            let caps = match checked.runtime {
                true => Capabilities::real_driver_runtime(*driver),
                false => Capabilities::real_driver_testbed(*driver),
            };
            let config = tune_config(&checked, &caps)?;
            refuse_apply_on_testbed(&checked)?;
            root_for_live_tune(ctx.privilege)?;
            guest::run_guest(&checked, &config, *driver, ctx)
        }
        TargetArg::Interface { .. } => {
            refuse_predict_on_interface(&checked)?;
            root_for_live_tune(ctx.privilege)?;
            iface::run_interface(&checked, &args.opts, ctx)
        }
    }
}

/// CPUs the testbed can pin client and server to (two are enough for both placements).
fn testbed_cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(2) as u32)
}

/// What the search will do on a target with `caps`. A budget that does not cover the space
/// (one run per candidate plus the finals) at the asked run length is fitted — shorter
/// runs, then smaller finals, each said in the results' notes — unless `--predict` will
/// prune the space instead; only a budget too small even for that is refused.
pub fn tune_config(c: &Checked, caps: &Capabilities) -> Result<TuneConfig> {
    let mut space = Space::from_capabilities(caps);
    for (key, values) in &c.only {
        space.restrict(key, values).hint(
            "--only names a key this tune varies and some of its levels; `nictune tune --help`",
        )?;
    }
    if c.both_ends {
        space = space.on_both_ends();
    }
    let candidates = space.with_baseline();
    let all = candidates.len();
    let asked = RunLength {
        duration: c.duration,
        warm_up: c.warm_up,
    };
    let FittedSpace { fitted, candidates } = if c.predict {
        // The simulator ranks the space and the budget measures its best.
        let plan = SearchPlan::with_budget(asked.runs_in(c.budget));
        let fitted = Fitted {
            plan,
            run: asked,
            notes: Vec::new(),
        };
        FittedSpace { fitted, candidates }
    } else {
        fit_space(c.budget, asked, candidates).map_err(|e| too_small(c, e))?
    };
    // Said before the search starts (and kept in the results' notes).
    for note in &fitted.notes {
        eprintln!("note: {note}");
    }
    let left_out = all - candidates.len();
    Ok(TuneConfig {
        candidates,
        baseline: 0,
        objective: c.objective,
        plan: fitted.plan,
        unit: rate_unit(&c.workload),
        scope: match c.target {
            // The guest's vCPU and the host's CPUs are different machines' time.
            TargetArg::Interface { .. } | TargetArg::Guest(_) => CpuScope::PerHost,
            _ => CpuScope::SharedMachine,
        },
        warm_up: fitted.run.warm_up,
        duration: fitted.run.duration,
        notes: fitted.notes,
        left_out,
        time_budget: match c.budget {
            Budget::Time(wall) => Some(TimeBudget { wall, asked }),
            Budget::Runs(_) => None,
        },
    })
}

/// The refusal of a budget that no fitting covers, with the smallest that does.
fn too_small(c: &Checked, e: TooSmall) -> anyhow::Error {
    let (runs, time) = e.minimum;
    let hint = format!(
        "use --budget {}s (or --budget {runs} runs){}",
        time.as_secs_f64().ceil(),
        match can_predict(c) {
            true => ", or add --predict to measure only the candidates the simulator ranks best",
            false => ", or fewer levels with --only KEY=V1,V2",
        }
    );
    Err::<(), _>(e).hint(hint).unwrap_err()
}

/// Whether `--predict` could prune this tune: a simulator model exists for the target (the
/// veth testbed; one real-driver guest) and the workload (request/response).
fn can_predict(c: &Checked) -> bool {
    let target = matches!(c.target, TargetArg::Testbed | TargetArg::Synthetic { .. })
        || matches!(c.target, TargetArg::Guest(_)) && !c.both_ends;
    target && c.workload == Workload::Rr
}

fn rate_unit(w: &Workload) -> RateUnit {
    match w {
        Workload::Stream => RateUnit::Bits,
        Workload::Rr | Workload::Mixed | Workload::File(_) => RateUnit::Transactions,
    }
}

/// Stage two's first step: a live tune needs root.
fn root_for_live_tune(privilege: Privilege) -> Result<()> {
    let what = format!(
        "`nictune tune` needs root: it changes NIC and kernel settings (journaled and \
         restored) and builds a network-namespace testbed; running as uid {}",
        privilege.euid()
    );
    crate::output::require_root(
        privilege,
        &what,
        "run it with sudo; for a what-if without root use `nictune sim`, and `nictune tune \
         --synthetic` shows what a tune's report looks like",
    )
}

/// The testbed is removed when the tune ends, so there is nothing to apply a result to.
#[derive(Debug, thiserror::Error)]
#[error("--apply cannot be used with the testbed: its namespaces are removed when the tune ends, so there is nothing left to apply the recommendation to")]
pub struct ApplyOnTestbed;

/// The veth testbed model predicts request/response only.
#[derive(Debug, thiserror::Error)]
#[error("--predict on the testbed needs --workload rr: the simulator's veth model predicts 1-byte TCP request/response only; nothing was changed")]
pub struct LivePredictUnavailable;

fn refuse_live_predict(c: &Checked) -> Result<()> {
    match c.predict && !matches!(c.workload, Workload::Rr) {
        true => Err(LivePredictUnavailable).hint(
            "use --workload rr with --predict, or drop --predict (with a budget that covers \
             the space: the error for a small --budget names the minimum)",
        ),
        false => Ok(()),
    }
}

/// The simulator has a model of the veth testbed only, not of a real interface's driver.
#[derive(Debug, thiserror::Error)]
#[error("--predict cannot be used with --iface: the simulator models the veth testbed only, not this interface's driver; nothing was changed")]
pub struct PredictOnInterface;

fn refuse_predict_on_interface(c: &Checked) -> Result<()> {
    match c.predict {
        true => Err(PredictOnInterface).hint(
            "drop --predict (with a budget that covers the space: the error for a small \
             --budget names the minimum)",
        ),
        false => Ok(()),
    }
}

fn refuse_apply_on_testbed(c: &Checked) -> Result<()> {
    match c.apply {
        Some(_) => Err(ApplyOnTestbed).hint(
            "drop --apply; the testbed's recommended.toml is evidence of what the settings \
             do, and `nictune apply --profile FILE --iface IF` applies a profile to a real \
             interface",
        ),
        None => Ok(()),
    }
}

/// The synthetic demonstration: the same loop, outputs and summary as a live tune, over the
/// synthetic host and bench (and the noiseless surface as the predictor).
fn run_synthetic(c: &Checked, config: &TuneConfig, seed: u64, ctx: &Ctx) -> Result<Outcome> {
    let (mut host, mut bench) = synthetic(seed, State::new());
    let mut oracle = Oracle;
    let predictor: Option<&mut dyn Predictor> = if c.predict { Some(&mut oracle) } else { None };
    let never = || false;
    let progress = ctx.progress();
    let parts = Parts {
        config,
        predictor,
        environment: demo_environment(),
        cancel: &never,
        journals: None,
        out: &c.out,
        progress: progress.as_ref(),
    };
    let finished =
        nictune_live::tune::run(&mut host, &mut bench, parts, |_, _| {}).map_err(session_error)?;
    finish(c, &finished, ctx)
}

/// What every tune ends with: the three files written, and the summary (or the results as
/// JSON) printed.
fn finish(c: &Checked, finished: &Finished, ctx: &Ctx) -> Result<Outcome> {
    let results = &finished.results;
    write_outputs(&c.out, results)?;
    ctx.emit("tune", results, |r| {
        human(r, &c.out, finished.moved_journals)
    })?;
    Ok(Outcome::Success)
}

/// A failed tune loop's error with what to do next.
fn session_error(e: SessionError) -> anyhow::Error {
    match e {
        SessionError::Tune(e) => with_recovery_hint(e),
        SessionError::Journals(e) => anyhow::Error::new(nictune_core::error::Hinted::new(
            e,
            "the tune finished and restored every setting; only moving its journals failed",
        )),
    }
}

/// Why a live tune could not take hold of the host, with the hint `apply` gives for the same.
fn hold_error(e: HoldError, state_dir: &Path) -> anyhow::Error {
    match e {
        HoldError::Unfinished(e) => crate::cmd::apply::unfinished_error(e),
        HoldError::Lock(e) => crate::cmd::apply::state_error(e, state_dir),
        HoldError::State(e) => anyhow::Error::new(e),
        HoldError::Signals(e) => anyhow::Error::new(e),
    }
}

/// A failed tune's error with what to do next: nothing when the settings were restored,
/// `nictune revert` when restoring failed.
/// A restore that failed leaves values changed: exit 4, as `apply` does.
fn with_recovery_hint(e: TuneError) -> anyhow::Error {
    let restore_failed = matches!(e, TuneError::Restore { .. });
    let hint = match restore_failed {
        true => "restoring failed: run `nictune revert` to put back the settings from the journal",
        false => "the settings as found were restored; nothing was left changed",
    };
    let error = anyhow::Error::new(nictune_core::error::Hinted::new(e, hint));
    match restore_failed {
        true => crate::output::ExitWith::wrap(error, crate::output::EXIT_PARTIAL_NOT_ROLLED_BACK),
        false => error,
    }
}

#[cfg(test)]
mod tests {
    use super::check::parse_args as parse;
    use super::*;

    /// The exit-code contract: a tune whose restore failed left values changed (exit 4, as
    /// `apply`); any other failure restored them (exit 2).
    #[test]
    fn a_failed_restore_exits_4_and_other_failures_2() {
        use nictune_tune::session::{TargetError, TargetOp};
        let restore = TuneError::Restore {
            source: TargetError {
                op: TargetOp::Restore,
                object: "eth1 coalesce.rx-usecs".into(),
                reason: "refused by the kernel".into(),
            },
            after: None,
        };
        let e = with_recovery_hint(restore);
        assert_eq!(crate::output::exit_code(&e), 4, "{e:#}");
        assert!(
            format!("{e:#}").contains("RESTORING THE SETTINGS FAILED"),
            "{e:#}"
        );
        let search = TuneError::Snapshot(TargetError {
            op: TargetOp::Snapshot,
            object: "settings".into(),
            reason: "no such device".into(),
        });
        assert_eq!(crate::output::exit_code(&with_recovery_hint(search)), 2);
    }

    #[test]
    fn only_narrows_the_space_and_both_ends_triples_it() {
        let caps = Capabilities::real_driver_testbed(nictune_tune::knob::Driver::E1000);
        let itr = "e1000.InterruptThrottleRate=100,2000";
        let c = parse(&["--testbed", "e1000", "--only", itr, "--budget", "40"]).unwrap();
        assert_eq!(c.only[0].1, ["100", "2000"]);
        // 2 rates × TxIntDelay {8, 0}, plus the settings as found.
        assert_eq!(tune_config(&c, &caps).unwrap().candidates.len(), 5);
        let c = parse(&[
            "--iface",
            "eth1",
            "--peer",
            "h",
            "--both-ends",
            "--only",
            itr,
        ])
        .unwrap();
        assert_eq!(tune_config(&c, &caps).unwrap().candidates.len(), 13);
        let err = format!("{:#}", parse(&["--only", "=1"]).unwrap_err());
        assert!(err.contains("KEY=V1,V2"), "{err}");
        let err = parse(&["--testbed", "e1000", "--only", "coalesce.rx-usecs=50"])
            .and_then(|c| tune_config(&c, &caps).map(drop))
            .unwrap_err();
        assert!(format!("{err:#}").contains("no axis of this tune sets coalesce.rx-usecs"));
    }

    #[test]
    fn runtime_searches_a_guests_ethtool_and_napi_settings_without_reloads() {
        let c = parse(&["--testbed", "e1000", "--runtime", "--budget", "200"]).unwrap();
        assert!(c.runtime);
        let caps = Capabilities::real_driver_runtime(nictune_tune::knob::Driver::E1000);
        let config = tune_config(&c, &caps).unwrap();
        // rx-usecs 0, 1, 3, 4, 10, 50, 125, 500 × gro-flush 3 × defer 2, and as found.
        assert_eq!(config.candidates.len(), 8 * 3 * 2 + 1);
        let c = parse(&[
            "--testbed",
            "e1000",
            "--runtime",
            "--only",
            "rx-usecs=3,500",
            "--only",
            "napi.defer-hard-irqs=0",
            "--only",
            "napi.gro-flush-timeout=0",
        ])
        .unwrap();
        let ids: Vec<String> = tune_config(&c, &caps)
            .unwrap()
            .candidates
            .iter()
            .map(|c| c.id())
            .collect();
        assert_eq!(ids.len(), 3, "{ids:?}");
        assert!(ids[1..].iter().all(|id| id.contains("rx-usecs")), "{ids:?}");
        // Module parameters are the other space.
        let c = parse(&[
            "--testbed",
            "e1000",
            "--runtime",
            "--only",
            "e1000.TxIntDelay=0",
        ])
        .unwrap();
        let err = format!("{:#}", tune_config(&c, &caps).unwrap_err());
        assert!(
            err.contains("no axis of this tune sets e1000.TxIntDelay"),
            "{err}"
        );
        // veth has run-time settings only; --iface chooses with --reload-driver.
        let err = format!(
            "{:#}",
            parse(&["--testbed", "veth", "--runtime"]).unwrap_err()
        );
        assert!(
            err.contains("--runtime") && err.contains("--testbed e1000|e1000e"),
            "{err}"
        );
        assert!(parse(&["--iface", "eth1", "--peer", "h", "--runtime"]).is_err());
        // The model predicts both guests' run-time spaces; not both ends.
        for driver in ["e1000", "e1000e"] {
            let c = parse(&["--testbed", driver, "--runtime", "--predict"]).unwrap();
            assert!(can_predict(&c), "{driver}");
        }
        let c = parse(&["--testbed", "e1000e", "--runtime", "--both-ends"]).unwrap();
        assert!(!can_predict(&c));
    }

    #[test]
    fn both_ends_needs_a_peer_that_can_change() {
        let err = parse(&["--testbed", "veth", "--both-ends"]).unwrap_err();
        let err = format!("{err:#}");
        assert!(
            err.contains("--both-ends") && err.contains("--iface IF --peer HOST"),
            "{err}"
        );
        assert!(
            parse(&["--testbed", "e1000", "--both-ends"])
                .unwrap()
                .both_ends
        );
    }

    #[test]
    fn a_budget_too_small_for_the_space_is_refused_before_anything_runs() {
        let caps = Capabilities::veth_testbed(2);
        let c = parse(&["--budget", "4"]).unwrap();
        let text = format!("{:#}", tune_config(&c, &caps).unwrap_err());
        assert!(text.contains("even the smallest search"), "{text}");
        assert!(text.contains("of the 25 candidates"), "{text}");
        // Fewer runs than candidates: a subset is measured, said in the notes.
        let c = parse(&["--budget", "30"]).unwrap();
        let fitted = tune_config(&c, &caps).unwrap();
        assert!(fitted.candidates.len() < 25 && fitted.left_out > 0);
        assert_eq!(fitted.candidates.len() + fitted.left_out, 25);
        assert!(fitted
            .notes
            .iter()
            .any(|n| n.contains("candidates fit the budget")));
        // A short time budget is fitted instead: shorter runs, said in the notes.
        let c = parse(&["--budget", "1m"]).unwrap();
        let fitted = tune_config(&c, &caps).unwrap();
        assert!(fitted.duration < c.duration, "{:?}", fitted.duration);
        assert!(fitted.plan.budget >= fitted.plan.minimum_budget(25));
        assert!(fitted.notes[0].contains("shortened"), "{:?}", fitted.notes);
        // --predict prunes to what the budget covers instead.
        let c = parse(&["--budget", "30", "--predict"]).unwrap();
        assert_eq!(tune_config(&c, &caps).unwrap().plan.budget, 30);
        let c = parse(&["--workload", "stream"]).unwrap();
        assert_eq!(tune_config(&c, &caps).unwrap().unit, RateUnit::Bits);
        // Where no model can prune, the hint points at --only instead.
        let caps = Capabilities::real_driver_testbed(nictune_tune::knob::Driver::E1000);
        let c = parse(&["--testbed", "e1000", "--both-ends", "--budget", "4"]).unwrap();
        let err = tune_config(&c, &caps).unwrap_err();
        let hint = err
            .chain()
            .find_map(|e| e.downcast_ref::<nictune_core::error::Hinted>())
            .map(|h| h.hint().to_string())
            .unwrap();
        assert!(
            hint.contains("--only") && !hint.contains("--predict"),
            "{hint}"
        );
        let err = parse(&["--testbed", "e1000", "--both-ends", "--predict"]).unwrap_err();
        assert!(
            format!("{err:#}").contains("no model of both ends"),
            "{err:#}"
        );
    }

    #[test]
    fn live_options_this_build_cannot_honour_are_refused_before_anything_runs() {
        let c = parse(&["--apply"]).unwrap();
        let text = format!("{:#}", refuse_apply_on_testbed(&c).unwrap_err());
        assert!(
            text.contains("--apply cannot be used with the testbed"),
            "{text}"
        );
        let c = parse(&["--predict", "--workload", "stream", "--budget", "30"]).unwrap();
        let text = format!("{:#}", refuse_live_predict(&c).unwrap_err());
        assert!(text.contains("needs --workload rr"), "{text}");
        let rr = parse(&["--predict", "--budget", "30"]).unwrap();
        assert!(
            refuse_live_predict(&rr).is_ok(),
            "the veth model predicts rr"
        );
        let plain = parse(&[]).unwrap();
        assert!(refuse_apply_on_testbed(&plain).is_ok() && refuse_live_predict(&plain).is_ok());
    }

    #[test]
    fn predict_is_refused_for_a_real_interface() {
        let c = parse(&["--iface", "v0", "--peer", "h", "--predict"]).unwrap();
        let text = format!("{:#}", refuse_predict_on_interface(&c).unwrap_err());
        assert!(
            text.contains("--predict cannot be used with --iface"),
            "{text}"
        );
        let c = parse(&["--iface", "v0", "--peer", "h"]).unwrap();
        assert!(refuse_predict_on_interface(&c).is_ok());
    }

    #[test]
    fn without_root_the_error_explains_and_points_at_sim() {
        let err = root_for_live_tune(Privilege::of_euid(1000)).unwrap_err();
        assert_eq!(
            crate::output::exit_code(&err),
            crate::output::EXIT_NEEDS_ROOT
        );
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
        assert!(root_for_live_tune(Privilege::of_euid(0)).is_ok());
    }
}
