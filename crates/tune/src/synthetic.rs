//! A synthetic target: a fake host whose "measurements" come from a small closed-form response
//! surface with seeded noise. NOT a measurement and NOT the simulator.
//!
//! It exists so the whole tune pipeline (search, statistics, loop, results, report) can be
//! tested end to end with a known optimum, and so `nictune tune --synthetic` can show what a
//! report looks like without root. Everything it produces is labelled
//! [`TargetKind::Synthetic`].
//! The host and the bench are two objects sharing the settings, as the real ones share a
//! machine.
//!
//! The surface is shaped after the veth sweep of testbed-notes §6 (1-byte TCP RR, 2 vCPUs),
//! so its optimum is where that sweep's was, but it is a caricature: one round-trip time per
//! placement, a flush-timer wait that only counts when deferral is on, busy polling that
//! spins every CPU. Noise is multiplicative and normal, σ 6 % across CPUs and 3 % on one CPU
//! (§6 "Noise band": ±10 % and ±5 % spreads over three runs).

use crate::candidate::{Candidate, Placement};
use crate::knob::{Knob, KnobValue, Setting};
use crate::objective::{Goal, Objective};
use crate::observe::{CpuScope, RateUnit};
use crate::predict::{PredictError, Predictor};
use crate::readback::ReadBack;
use crate::results::{Environment, TargetKind, TuneResults};
use crate::search::SearchPlan;
use crate::session::{
    run, Controls, MeasureError, Measurer, Target, TargetError, TuneConfig, TuneError,
};
use crate::space::{Capabilities, Space};
use nictune_core::metrics::{CoreSplit, CpuSplit, HostMetrics, LatencySummary, Metrics};
use nictune_core::progress::NoProgress;
use nictune_core::units::Nanos;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;

/// The fake host's settings: knob → value; absent means the kernel default (0 / off).
pub type State = BTreeMap<Knob, KnobValue>;

/// A fake host (the [`Target`]) and a fake bench (the [`Measurer`]) sharing its settings.
pub fn synthetic(seed: u64, found: State) -> (SyntheticHost, SyntheticBench) {
    let state = Rc::new(RefCell::new(found));
    let host = SyntheticHost {
        state: Rc::clone(&state),
    };
    let bench = SyntheticBench {
        state,
        rng: Noise::new(seed),
        measurements: 0,
    };
    (host, bench)
}

/// The fake host: settings in memory.
#[derive(Debug, Clone)]
pub struct SyntheticHost {
    state: Rc<RefCell<State>>,
}

impl SyntheticHost {
    /// The settings currently "in place".
    pub fn state(&self) -> State {
        self.state.borrow().clone()
    }
}

impl Target for SyntheticHost {
    type Snapshot = State;

    fn snapshot(&mut self) -> Result<State, TargetError> {
        Ok(self.state())
    }

    /// Takes every setting as asked.
    fn apply(&mut self, settings: &[Setting]) -> Result<Vec<ReadBack>, TargetError> {
        let mut state = self.state.borrow_mut();
        for s in settings {
            state.insert(s.knob, s.value);
        }
        Ok(Vec::new())
    }

    fn restore(&mut self, snapshot: &State) -> Result<(), TargetError> {
        *self.state.borrow_mut() = snapshot.clone();
        Ok(())
    }
}

/// The fake bench: the surface at the host's current settings, with noise.
#[derive(Debug, Clone)]
pub struct SyntheticBench {
    state: Rc<RefCell<State>>,
    rng: Noise,
    /// How many runs were measured.
    pub measurements: usize,
}

impl SyntheticBench {
    /// The noiseless metrics of `placement` with the host's current settings.
    pub fn expected(&self, placement: Placement) -> Metrics {
        surface(&self.state.borrow(), placement, 1.0)
    }
}

impl Measurer for SyntheticBench {
    fn warm_up(&mut self, _: &Candidate, _: Nanos) -> Result<(), MeasureError> {
        Ok(())
    }

    fn measure(&mut self, c: &Candidate, _: Nanos) -> Result<Metrics, MeasureError> {
        let sigma = if c.placement == Placement::Same {
            0.03
        } else {
            0.06
        };
        let factor = (1.0 + sigma * self.rng.normal()).max(0.5);
        self.measurements += 1;
        Ok(surface(&self.state.borrow(), c.placement, factor))
    }
}

/// The noiseless metrics of `state` at `placement` (what a perfect bench would report).
pub fn expected(state: &State, placement: Placement) -> Metrics {
    surface(state, placement, 1.0)
}

/// A whole tune of the synthetic testbed: the 24 testbed candidates plus the baseline,
/// `budget` runs, seeded, ranked first by [`Oracle`] when `predict` is set. For tests; its
/// results say [`TargetKind::Synthetic`] wherever they go.
pub fn demo(seed: u64, goal: Goal, budget: usize, predict: bool) -> Result<TuneResults, TuneError> {
    demo_with(seed, &demo_config(goal, budget), predict)
}

/// A tune of the synthetic target under `config` (whose candidates must be testbed-like):
/// what `nictune tune --synthetic` runs.
pub fn demo_with(seed: u64, config: &TuneConfig, predict: bool) -> Result<TuneResults, TuneError> {
    let (mut host, mut bench) = synthetic(seed, State::new());
    let cancel = AtomicBool::new(false);
    let controls = Controls {
        progress: &NoProgress,
        cancel: &cancel,
    };
    let mut oracle = Oracle;
    let predictor: Option<&mut dyn Predictor> = if predict { Some(&mut oracle) } else { None };
    let run = run(&mut host, &mut bench, config, predictor, controls)?;
    Ok(TuneResults::build(&run, demo_environment()))
}

/// A predictor that knows the synthetic surface without its noise: what a perfectly
/// calibrated simulator would predict for the synthetic target. Never a model of a real host.
#[derive(Debug, Clone, Copy, Default)]
pub struct Oracle;

impl Predictor for Oracle {
    fn calibrate(&mut self, _: &Candidate, _: &[Metrics]) -> Result<(), PredictError> {
        Ok(())
    }

    fn predict(&self, c: &Candidate) -> Result<Metrics, PredictError> {
        let state: State = c.settings.iter().map(|s| (s.knob, s.value)).collect();
        Ok(expected(&state, c.placement))
    }
}

/// The configuration [`demo`] searches with.
pub fn demo_config(goal: Goal, budget: usize) -> TuneConfig {
    let space = Space::from_capabilities(&Capabilities::veth_testbed(2));
    TuneConfig {
        candidates: space.with_baseline(),
        baseline: 0,
        objective: Objective::new(goal),
        plan: SearchPlan::with_budget(budget),
        unit: RateUnit::Transactions,
        scope: CpuScope::SharedMachine,
        warm_up: Nanos::ZERO,
        duration: Nanos::ZERO,
        notes: Vec::new(),
        left_out: 0,
        time_budget: None,
    }
}

/// The environment every synthetic result carries: labelled, with a note saying why.
pub fn demo_environment() -> Environment {
    Environment {
        target: TargetKind::Synthetic,
        target_name: "synthetic veth testbed (a model, not a machine)".into(),
        workload: "TCP request/response, 1 B / 1 B, 1 connection".into(),
        kernel: None,
        cpus: Some(2),
        nictune_version: env!("CARGO_PKG_VERSION").into(),
        started_at: None,
        notes: vec![
            "SYNTHETIC: every number here comes from a closed-form surface with seeded noise, \
             not from a measurement."
                .into(),
        ],
    }
}

fn micros(state: &State, knob: Knob) -> f64 {
    match state.get(&knob) {
        Some(KnobValue::Duration(d)) => d.as_micros_f64(),
        Some(KnobValue::Count(n)) => *n as f64,
        _ => 0.0,
    }
}

/// Mean round-trip time (µs) and busy cores for `state` at `placement`.
fn rtt_and_busy(state: &State, placement: Placement) -> (f64, f64) {
    let gft = micros(state, Knob::GroFlushTimeout);
    let deferring = micros(state, Knob::DeferHardIrqs) > 0.0;
    let busy = micros(state, Knob::BusyRead) > 0.0;
    let cross = placement != Placement::Same;
    // The flush timer only delays packets while IRQs are deferred (§6: defer alone, or the
    // timer alone, did nothing).
    let timer_wait = if deferring { gft } else { 0.0 };
    match (cross, busy) {
        (true, false) => (105.0 + 1.75 * timer_wait, 0.6),
        (true, true) => (11.0 + 0.03 * timer_wait, 1.94),
        (false, false) => (18.5 + 2.5 * timer_wait, 1.0),
        (false, true) => (115.0 + 0.8 * timer_wait, 1.0),
    }
}

/// The metrics of the surface with every latency scaled by `factor` (noise).
fn surface(state: &State, placement: Placement, factor: f64) -> Metrics {
    let (rtt, busy_cores) = rtt_and_busy(state, placement);
    let mean = rtt * factor;
    let rate = 1e6 / mean;
    let busy_poll = micros(state, Knob::BusyRead) > 0.0;
    let irqs = if busy_poll { 60.0 } else { 2.0 * rate };
    let per_core = vec![core(busy_cores / 2.0, busy_poll); 2];
    let host = HostMetrics {
        interrupts_per_sec: Some(irqs),
        cpu: CpuSplit::from_cores(per_core),
        ..HostMetrics::default()
    };
    Metrics {
        transactions_per_sec: Some(rate),
        interim_transactions_per_sec: vec![rate; 3],
        latency_us: Some(LatencySummary {
            min: mean * 0.6,
            mean,
            p50: mean * 0.95,
            p90: mean * 1.2,
            p99: mean * 1.6,
            p999: mean * 2.2,
            max: mean * 4.0,
            stddev: mean * 0.2,
        }),
        throughput_bps: Some(rate * 8.0 * 2.0),
        hosts: BTreeMap::from([("testbed".to_string(), host)]),
    }
}

/// One core `busy` of the time; busy polling spins in system time, otherwise a third of the
/// work is softirq (the proportions of §6's mpstat columns).
fn core(busy: f64, busy_poll: bool) -> CoreSplit {
    let (softirq, system) = if busy_poll {
        (0.0, busy * 0.95)
    } else {
        (busy * 0.4, busy * 0.35)
    };
    CoreSplit {
        irq: 0.0,
        softirq,
        system: Some(system),
        user: busy - softirq - system,
        idle: 1.0 - busy,
    }
}

/// Seeded standard-normal noise from SplitMix64 (Steele, Lea, Flood 2014): small, seedable,
/// good enough for test noise. Not for anything that needs real randomness.
#[derive(Debug, Clone)]
pub struct Noise(u64);

impl Noise {
    /// A generator seeded with `seed`; the same seed gives the same sequence.
    pub fn new(seed: u64) -> Noise {
        Noise(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surface_reproduces_the_shape_of_the_veth_sweep() {
        let (mut host, bench) = synthetic(1, State::new());
        let base = bench
            .expected(Placement::Cross)
            .transactions_per_sec
            .unwrap();
        let busy = Setting::new(Knob::BusyRead, KnobValue::Duration(Nanos::from_micros(50)));
        host.apply(&[busy]).unwrap();
        let busy_cross = bench
            .expected(Placement::Cross)
            .transactions_per_sec
            .unwrap();
        let busy_same = bench
            .expected(Placement::Same)
            .transactions_per_sec
            .unwrap();
        assert!(
            busy_cross > 8.0 * base,
            "busy polling across CPUs is the big win"
        );
        assert!(busy_same < base, "busy polling on one CPU is harmful");
    }

    #[test]
    fn noise_is_seeded_and_centred() {
        let mut a = Noise::new(7);
        let mut b = Noise::new(7);
        let xs: Vec<f64> = (0..4000).map(|_| a.normal()).collect();
        assert_eq!(
            xs[..10],
            (0..10).map(|_| b.normal()).collect::<Vec<_>>()[..]
        );
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!(mean.abs() < 0.06, "mean {mean}");
        assert!((var - 1.0).abs() < 0.08, "variance {var}");
    }
}
