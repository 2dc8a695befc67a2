//! A driver that keeps or rounds a value: the tune marks the point, never recommends one whose
//! setting was not taken, and recommends an adjusted one with the value that was measured.
//!
//! The fake host holds one knob, `coalesce.rx-usecs`; its fake driver keeps what it had for
//! values at or above [`KEEPS_FROM`] and rounds others up to a multiple of 8 µs. The fake
//! bench measures the host's state, not the candidate asked for: p99 = (200 − rx-usecs) µs,
//! halved when client and server share a CPU, with a small run-to-run jitter.

use nictune_core::metrics::{LatencySummary, Metrics};
use nictune_core::progress::NoProgress;
use nictune_core::units::Nanos;
use nictune_tune::candidate::{Candidate, Placement};
use nictune_tune::knob::{Knob, KnobValue, Setting};
use nictune_tune::objective::{Goal, Objective};
use nictune_tune::observe::{CpuScope, RateUnit};
use nictune_tune::profile::recommended_toml;
use nictune_tune::readback::{fold, HostReadBack, ReadBack, Taken};
use nictune_tune::results::{Environment, PointValue, TargetKind, TuneResults};
use nictune_tune::search::SearchPlan;
use nictune_tune::session::{
    run, Controls, MeasureError, Measurer, Target, TargetError, TuneConfig,
};
use nictune_tune::verdict::Verdict;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;

/// The driver keeps its value when asked for this many µs or more.
const KEEPS_FROM: u64 = 50;

fn us(n: u64) -> KnobValue {
    KnobValue::Duration(Nanos::from_micros(n))
}

fn rx(n: u64) -> Setting {
    Setting::new(Knob::RxUsecs, us(n))
}

/// The host: rx-usecs in µs, shared with the bench.
struct Host {
    rx_usecs: Rc<Cell<u64>>,
    found: u64,
}

impl Target for Host {
    type Snapshot = u64;
    fn snapshot(&mut self) -> Result<u64, TargetError> {
        Ok(self.rx_usecs.get())
    }
    fn apply(&mut self, settings: &[Setting]) -> Result<Vec<ReadBack>, TargetError> {
        let mut host = Vec::new();
        for s in settings {
            let KnobValue::Duration(d) = s.value else {
                unreachable!("rx-usecs is a time")
            };
            let (before, asked) = (self.rx_usecs.get(), d.0 / 1_000);
            let read = match asked >= KEEPS_FROM {
                true => before,
                false => asked.div_ceil(8) * 8,
            };
            self.rx_usecs.set(read);
            host.push(HostReadBack {
                object: "eth0".into(),
                key: s.knob.key().into(),
                before: before.to_string(),
                written: asked.to_string(),
                read: read.to_string(),
            });
        }
        Ok(fold(settings, &host).expect("the fake reads back numbers"))
    }
    fn restore(&mut self, _: &u64) -> Result<(), TargetError> {
        self.rx_usecs.set(self.found);
        Ok(())
    }
}

/// The bench: measures what the host has in place.
struct Bench {
    rx_usecs: Rc<Cell<u64>>,
    runs: u64,
}

impl Measurer for Bench {
    fn warm_up(&mut self, _: &Candidate, _: Nanos) -> Result<(), MeasureError> {
        Ok(())
    }
    fn measure(&mut self, c: &Candidate, _: Nanos) -> Result<Metrics, MeasureError> {
        self.runs += 1;
        let jitter = 1.0 + 0.01 * ((self.runs % 5) as f64 - 2.0);
        let shared = match c.placement {
            Placement::Same => 0.5,
            _ => 1.0,
        };
        let p99 = (200.0 - self.rx_usecs.get() as f64) * shared * jitter;
        Ok(Metrics {
            transactions_per_sec: Some(10_000.0),
            latency_us: Some(LatencySummary {
                p50: p99 / 2.0,
                p99,
                ..LatencySummary::default()
            }),
            ..Metrics::default()
        })
    }
}

/// A tune of `candidates` (the first is the baseline) on the fake, as results.
fn tune(candidates: Vec<Candidate>) -> TuneResults {
    let rx_usecs = Rc::new(Cell::new(0));
    let mut host = Host {
        rx_usecs: Rc::clone(&rx_usecs),
        found: 0,
    };
    let mut bench = Bench { rx_usecs, runs: 0 };
    let config = TuneConfig {
        candidates,
        baseline: 0,
        objective: Objective::new(Goal::Latency),
        plan: SearchPlan::with_budget(30),
        unit: RateUnit::Transactions,
        scope: CpuScope::SharedMachine,
        warm_up: Nanos::ZERO,
        duration: Nanos::from_secs(1),
        notes: Vec::new(),
        left_out: 0,
        time_budget: None,
    };
    let cancel = AtomicBool::new(false);
    let controls = Controls {
        progress: &NoProgress,
        cancel: &cancel,
    };
    let run = run(&mut host, &mut bench, &config, None, controls).unwrap();
    assert_eq!(host.rx_usecs.get(), 0, "restored as found");
    let environment = Environment {
        target: TargetKind::Interface,
        target_name: "eth0 (fake)".into(),
        workload: "fake".into(),
        kernel: None,
        cpus: None,
        nictune_version: "test".into(),
        started_at: None,
        notes: Vec::new(),
    };
    TuneResults::build(&run, environment)
}

/// The one read-back of candidate `c`'s point: how, the values asked and read, the sentence.
fn only_read_back(r: &TuneResults, c: &Candidate) -> (Taken, [PointValue; 2], String) {
    let point = r.point(&c.id()).unwrap();
    let [rb] = &point.read_back[..] else {
        panic!("one read-back expected: {:?}", point.read_back)
    };
    let values = [rb.asked.clone(), rb.read.clone()];
    (rb.taken, values, rb.text.clone())
}

#[test]
fn a_candidate_whose_setting_the_driver_kept_is_marked_and_never_recommended() {
    // rx-usecs 50 on one CPU is not taken: it measures as the settings as found on one CPU,
    // the best point of all (p99 100 µs); rx-usecs 40 across CPUs (p99 160 µs) is real.
    let kept = Candidate::new(vec![rx(KEEPS_FROM)], Placement::Same);
    let real = Candidate::new(vec![rx(40)], Placement::Cross);
    let r = tune(vec![
        Candidate::baseline(Placement::Cross),
        kept.clone(),
        real.clone(),
    ]);
    assert!(r.point(&kept.id()).unwrap().not_taken());
    assert_eq!(
        only_read_back(&r, &kept),
        (
            Taken::NotTaken,
            [50, 0].map(PointValue::Number),
            "coalesce.rx-usecs: asked 50, NOT taken (it kept 0)".into()
        )
    );
    // 40 rounds to 40: taken as asked.
    assert!(r.point(&real.id()).unwrap().read_back.is_empty());
    let rec = &r.recommendation;
    assert_eq!(rec.verdict, Verdict::Improvement);
    assert_eq!(rec.id, real.id());
    assert_eq!(rec.settings, ["coalesce.rx-usecs=40"]);
    assert_eq!(rec.passed_over, [kept.id()]);
    assert!(
        rec.headline.contains(&kept.id()) && rec.headline.contains("NOT taken (it kept 0)"),
        "{}",
        rec.headline
    );
    assert!(
        !recommended_toml(&r).contains("= 50"),
        "{}",
        recommended_toml(&r)
    );
    // The file says so too.
    let json = serde_json::to_value(&r).unwrap();
    let points = json["points"].as_array().unwrap();
    let marked = points.iter().find(|p| p["id"] == kept.id()).unwrap();
    assert_eq!(marked["read_back"][0]["taken"], "not-taken");
}

#[test]
fn a_candidate_whose_value_the_driver_rounded_is_recommended_with_the_value_measured() {
    // 45 µs reads back as 48 (p99 152 µs), the best; 16 µs is taken as asked (p99 184 µs).
    let rounded = Candidate::new(vec![rx(45)], Placement::Cross);
    let other = Candidate::new(vec![rx(16)], Placement::Cross);
    let r = tune(vec![
        Candidate::baseline(Placement::Cross),
        rounded.clone(),
        other,
    ]);
    assert!(!r.point(&rounded.id()).unwrap().not_taken());
    let said = "coalesce.rx-usecs: asked 45, the driver made it 48".to_string();
    assert_eq!(
        only_read_back(&r, &rounded),
        (
            Taken::Adjusted,
            [45, 48].map(PointValue::Number),
            said.clone()
        )
    );
    let rec = &r.recommendation;
    assert_eq!(rec.verdict, Verdict::Improvement);
    assert_eq!(rec.id, rounded.id());
    assert_eq!(rec.settings, ["coalesce.rx-usecs=48"]);
    assert_eq!(rec.adjusted, [said]);
    assert!(rec.passed_over.is_empty());
    let profile = recommended_toml(&r);
    assert!(
        profile.contains("\"coalesce.rx-usecs\" = \"48\""),
        "{profile}"
    );
    assert!(
        profile.contains("asked 45, the driver made it 48"),
        "{profile}"
    );
}
