//! Stage one of `nictune tune`'s arguments: every value as typed, checked without touching
//! the system. Each `check_*` function's error names the flag, the value, what is allowed and
//! a hint; a bad value exits 2 before anything runs.

use super::Opts;
use crate::cmd::source::{check_iface_name, check_netns_name};
use crate::cmd::testbed::TestbedArg;
use crate::output::HintExt;
use anyhow::Result;
use nictune_core::duration;
use nictune_core::error::InvalidInput;
use nictune_core::units::Nanos;
use nictune_tune::objective::{Limit, Objective};
use std::path::{Path, PathBuf};

pub use nictune_tune::fit::Budget;

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
    /// The real-driver testbed: a QEMU guest running this driver.
    Guest(nictune_tune::knob::Driver),
    Interface {
        iface: String,
        peer: String,
    },
    Synthetic {
        seed: u64,
    },
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
    /// `--both-ends`: the peer's settings are searched too.
    pub both_ends: bool,
    /// `--reload-driver`: an interface's module parameters are searched.
    pub reload_driver: bool,
    /// `--runtime`: a real-driver guest's run-time settings are searched.
    pub runtime: bool,
    /// `--only KEY=V1,V2`: the levels kept per key.
    pub only: Vec<(String, Vec<String>)>,
}

/// Stage one: every value as typed.
pub fn check(a: &Opts) -> Result<Checked> {
    let duration = check_duration("--duration", a.duration, Nanos::MILLI)?;
    let warm_up = check_duration("--warmup", a.warmup, Nanos::ZERO)?;
    let mut objective = Objective::new(a.objective.into());
    objective.rate_floor = check_limit("--rate-floor", &a.rate_floor, parse_plain)?;
    objective.p99_ceiling = check_limit("--p99-ceiling", &a.p99_ceiling, parse_latency_us)?;
    let apply = if a.apply {
        Some(
            a.confirm_within
                .map(|w| check_duration("--confirm-within", w, Nanos::MILLI))
                .transpose()?,
        )
    } else {
        None
    };
    let target = target(a)?;
    check_both_ends(a.both_ends, &target)?;
    check_runtime(a.runtime, &target)?;
    if a.both_ends && a.predict {
        let why = "--predict cannot be used with --both-ends: the simulator has no model of \
                   both ends' NICs yet";
        return Err(anyhow::Error::new(nictune_core::error::Hinted::new(
            why,
            "drop --predict",
        )));
    }
    Ok(Checked {
        target,
        objective,
        workload: check_workload(&a.workload)?,
        budget: check_budget(&a.budget)?,
        duration,
        warm_up,
        predict: a.predict,
        out: a.out.clone(),
        apply,
        both_ends: a.both_ends,
        reload_driver: a.reload_driver,
        runtime: a.runtime,
        only: a
            .only
            .iter()
            .map(|o| check_only(o))
            .collect::<Result<_>>()?,
    })
}

/// `--both-ends` needs a far end whose settings can change: a `serve --allow-changes` peer,
/// or the real-driver testbed's second guest.
fn check_both_ends(both_ends: bool, target: &TargetArg) -> Result<()> {
    if !(both_ends && matches!(target, TargetArg::Testbed)) {
        return Ok(());
    }
    Err(InvalidInput::new(
        "--both-ends",
        "--testbed veth",
        "--iface IF --peer HOST, or --testbed e1000|e1000e",
    ))
    .hint("the veth testbed already changes both of its ends alike; drop --both-ends")
}

/// `--runtime` chooses between a real-driver guest's two spaces; the veth testbed has only
/// run-time settings.
fn check_runtime(runtime: bool, target: &TargetArg) -> Result<()> {
    if !runtime || matches!(target, TargetArg::Guest(_)) {
        return Ok(());
    }
    Err(InvalidInput::new(
        "--runtime",
        "--testbed veth",
        "--testbed e1000|e1000e",
    ))
    .hint("the veth testbed searches run-time settings already; drop --runtime")
}

/// `--only KEY=V1,V2,…`: a key and at least one value, as the catalog writes them.
fn check_only(text: &str) -> Result<(String, Vec<String>)> {
    let bad = || {
        Err(InvalidInput::new(
            "--only",
            text,
            "KEY=V1,V2,… with at least one value",
        ))
        .hint("e.g. --only e1000.InterruptThrottleRate=100,2000")
    };
    let Some((key, values)) = text.split_once('=') else {
        return bad();
    };
    let values: Vec<String> = values
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect();
    if key.trim().is_empty() || values.is_empty() {
        return bad();
    }
    // Any spelling the catalog knows (`rx-usecs`, `channels.combined`) names its key.
    let key = nictune_core::catalog::lookup(key.trim()).map_or(key.trim(), |e| e.key.as_str());
    Ok((key.to_string(), values))
}

fn target(a: &Opts) -> Result<TargetArg> {
    if a.synthetic {
        return Ok(TargetArg::Synthetic { seed: a.seed });
    }
    match (&a.iface, &a.peer) {
        (Some(iface), Some(peer)) => {
            check_iface_name(iface)?;
            if let Some(name) = &a.netns {
                check_netns_name(name)?;
            }
            check_peer(peer)?;
            Ok(TargetArg::Interface {
                iface: iface.clone(),
                peer: peer.clone(),
            })
        }
        _ => Ok(match a.testbed.and_then(TestbedArg::nic) {
            Some(nictune_vm::Nic::E1000) => TargetArg::Guest(nictune_tune::knob::Driver::E1000),
            Some(nictune_vm::Nic::E1000e) => TargetArg::Guest(nictune_tune::knob::Driver::E1000e),
            None => TargetArg::Testbed,
        }),
    }
}

/// The longest measurement, warm-up, budget or confirmation window: a day.
const DAY: Nanos = Nanos::from_secs(86_400);

/// A duration flag (already in the one grammar, [`duration`]) from `min` to a day.
fn check_duration(flag: &str, value: Nanos, min: Nanos) -> Result<Nanos> {
    duration::in_range(flag, value, min, DAY).hint(format!("for example {flag} 2s"))
}

/// A number of runs (at least 1, at most 10 000) or a duration.
fn check_budget(s: &str) -> Result<Budget> {
    if let Ok(n) = s.parse::<usize>() {
        if (1..=10_000).contains(&n) {
            return Ok(Budget::Runs(n));
        }
    }
    duration::parse_with_unit(s)
        .ok()
        .filter(|t| (Nanos::MILLI..=DAY).contains(t))
        .map(Budget::Time)
        .ok_or_else(|| {
            InvalidInput::new(
                "--budget",
                s,
                "a number of runs from 1 to 10000, or a duration up to 24h with a unit (90s, 3m, 1h)",
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
        _ => Err(InvalidInput::new(
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
            InvalidInput::new(
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
        Err(InvalidInput::new(
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

/// Parses `argv` as `nictune tune`'s options and checks them (for tests).
#[cfg(test)]
pub(super) fn parse_args(argv: &[&str]) -> Result<Checked> {
    use clap::Parser;
    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: super::Args,
    }
    let cli = Cli::try_parse_from(std::iter::once("tune").chain(argv.iter().copied()))?;
    check(&cli.args.opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_tune::objective::Goal;

    fn parse(argv: &[&str]) -> Result<Checked> {
        parse_args(argv)
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
        let run = nictune_tune::fit::RunLength {
            duration: c.duration,
            warm_up: c.warm_up,
        };
        assert_eq!(run.runs_in(c.budget), 72);
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
        let m = message(parse(&["--duration=0"]));
        assert!(
            m.contains("--duration") && m.contains("from 1ms to 1day"),
            "{m}"
        );
        let m = message(parse(&["--workload", "/no/such/file"]));
        assert!(m.contains("rr, stream, mixed"), "{m}");
        let m = message(parse(&["--rate-floor", "lots"]));
        assert!(m.contains("a percentage of the settings as found"), "{m}");
        let m = message(parse(&["--iface", "eth9", "--peer", "host:99999"]));
        assert!(m.contains("port from 1 to 65535"), "{m}");
        let m = message(parse(&["--warmup", "soon"]));
        assert!(m.contains("--warmup") && m.contains("e.g. 2s"), "{m}");
        let err = parse(&["--warmup", "2d"]).unwrap_err();
        let hinted = err
            .chain()
            .find_map(|e| e.downcast_ref::<nictune_core::error::Hinted>());
        assert!(hinted.is_some(), "the range error carries a hint");
    }

    #[test]
    fn durations_are_bare_seconds_or_with_a_unit_and_warm_up_is_an_alias() {
        let c = parse(&["--duration", "2", "--warm-up", "0.5"]).unwrap();
        assert_eq!(
            (c.duration, c.warm_up),
            (Nanos::from_secs(2), Nanos::from_millis(500))
        );
        let c = parse(&["--duration", "2s", "--warmup", "0"]).unwrap();
        assert_eq!((c.duration, c.warm_up), (Nanos::from_secs(2), Nanos::ZERO));
        let c = parse(&["--apply", "--confirm-within", "30"]).unwrap();
        assert_eq!(c.apply, Some(Some(Nanos::from_secs(30))));
    }

    #[test]
    fn only_names_the_catalog_key_whatever_the_spelling() {
        let (key, values) = check_only("channels.combined=1, 2").unwrap();
        assert_eq!(
            (key.as_str(), values),
            ("channel.combined", vec!["1".to_string(), "2".into()])
        );
        assert_eq!(check_only("rx-usecs=0").unwrap().0, "coalesce.rx-usecs");
        assert!(check_only("rx-usecs=").is_err());
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
}
