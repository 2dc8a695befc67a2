//! The guest as what `nictune tune --testbed e1000|e1000e` searches: a [`GuestTarget`]
//! that changes the driver's module parameters with `nictune apply` *inside the guest*
//! (journaled there, reloading the real driver), a [`QemuPredictor`] that predicts each
//! candidate with the simulator's model of QEMU's e1000/e1000e moderation, and
//! [`effect_check`], which compares the interrupt rate a setting promises with the rate
//! measured on the NIC's own vectors.
//!
//! Each candidate is applied over the one before as its own transaction in the guest; the
//! settings as found are applied again at the end, and the whole guest is removed with the
//! testbed, so nothing a candidate set can outlive the tune.

use crate::bed::VmBed;
use nictune_core::metrics::{HostMetrics, LatencySummary, Metrics};
use nictune_core::units::Nanos;
use nictune_host::modparams;
use nictune_sim::cases::qemu_nic::{self, QemuNic, QemuNicCosts, QemuNicSettings};
use nictune_tune::candidate::Candidate;
use nictune_tune::knob::{Driver, End, Knob, KnobValue, ModuleParam, Setting};
use nictune_tune::predict::{PredictError, Predictor};
use nictune_tune::readback::ReadBack;
use nictune_tune::session::{Target, TargetError, TargetOp};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// The guest's state directory for the tune's transactions.
const GUEST_STATE_DIR: &str = "/run/nictune-tune";
/// A reload, the link coming back and the journal: well under this.
const APPLY_TIMEOUT: Duration = Duration::from_secs(90);

/// A guest that the tune's target and its measurer both call into (the agent serves one
/// request at a time).
pub type SharedBed<'a> = Mutex<&'a mut VmBed>;

/// Locks a shared guest, also after a panic while it was held.
pub fn lock<'g, 'a>(bed: &'g SharedBed<'a>) -> MutexGuard<'g, &'a mut VmBed> {
    bed.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Module parameters as the guest's driver runs with them, by catalog key; an empty value
/// is the driver's default (not given at load).
pub type GuestSnapshot = BTreeMap<String, String>;

/// The guest's driver module parameters, changed through `nictune apply` in the guest.
#[derive(Debug)]
pub struct GuestTarget<'a> {
    bed: &'a SharedBed<'a>,
    /// Every knob some candidate sets: what is snapshot and written each time.
    knobs: Vec<Knob>,
    /// The settings as found, once read.
    found: Option<GuestSnapshot>,
    /// What the guest runs with now, as far as this target set it: a run of the same
    /// candidate again needs no call into the guest.
    current: Option<GuestSnapshot>,
}

impl<'a> GuestTarget<'a> {
    /// A target over `bed` for candidates that set `knobs` (module parameters only).
    pub fn new(bed: &'a SharedBed<'a>, knobs: Vec<Knob>) -> GuestTarget<'a> {
        GuestTarget {
            bed,
            knobs,
            found: None,
            current: None,
        }
    }

    fn fail(op: TargetOp, object: &str, reason: impl ToString) -> TargetError {
        TargetError {
            op,
            object: object.into(),
            reason: reason.to_string(),
        }
    }

    /// Applies `values` (key → value, empty = driver default) as one transaction.
    fn apply_values(&mut self, op: TargetOp, values: &GuestSnapshot) -> Result<(), TargetError> {
        if self.current.as_ref() == Some(values) {
            return Ok(());
        }
        // Unknown until the guest confirms: a failed apply may have changed part of it.
        self.current = None;
        let args: Vec<String> = values
            .iter()
            .map(|(k, v)| format!("{k}={}", if v.is_empty() { "default" } else { v }))
            .collect();
        // No check by effect in the guest: the run that follows counts the same vectors
        // (`effect_check`), and the guest's own check would wait for traffic that only that
        // run brings — up to 4 s a candidate.
        let mut argv = vec![
            "nictune",
            "apply",
            "--quiet",
            "--no-effect-check",
            "--state-dir",
            GUEST_STATE_DIR,
        ];
        argv.extend(args.iter().map(String::as_str));
        let reply = lock(self.bed)
            .run(&argv, APPLY_TIMEOUT)
            .map_err(|e| Self::fail(op, "the guest", e))?;
        match reply.code {
            Some(0) => {
                self.current = Some(values.clone());
                Ok(())
            }
            code => Err(Self::fail(
                op,
                &args.join(" "),
                format!(
                    "`nictune apply` in the guest exited {}: {}",
                    code.unwrap_or(-1),
                    reply.stderr.trim()
                ),
            )),
        }
    }
}

impl Target for GuestTarget<'_> {
    type Snapshot = GuestSnapshot;

    fn snapshot(&mut self) -> Result<GuestSnapshot, TargetError> {
        let mut out = GuestSnapshot::new();
        for knob in self.knobs.clone() {
            let Knob::Module(driver, param) = knob else {
                let why = "the real-driver testbed changes module parameters only";
                return Err(Self::fail(TargetOp::Snapshot, knob.key(), why));
            };
            let record = self.record(driver)?;
            out.insert(
                knob.key().into(),
                record.get(param.name()).cloned().unwrap_or_default(),
            );
        }
        self.found.get_or_insert_with(|| out.clone());
        self.current = Some(out.clone());
        Ok(out)
    }

    /// Module parameters read back from the record nictune in the guest keeps of its last
    /// reload, so none differs from the value asked; a value not taken would make the guest's
    /// `nictune apply` exit 1, which fails the candidate.
    fn apply(&mut self, settings: &[Setting]) -> Result<Vec<ReadBack>, TargetError> {
        let mut values = self
            .found
            .clone()
            .ok_or_else(|| Self::fail(TargetOp::Apply, "settings", "no snapshot taken"))?;
        for s in settings {
            values.insert(s.knob.key().into(), s.knob.render(s.value));
        }
        self.apply_values(TargetOp::Apply, &values)
            .map(|()| Vec::new())
    }

    fn restore(&mut self, snapshot: &GuestSnapshot) -> Result<(), TargetError> {
        self.apply_values(TargetOp::Restore, snapshot)
    }

    /// `InterruptThrottleRate=4` runs at the idle link's rate until the watchdog's pass after
    /// the carrier's ([`nictune_tune::knob::Setting::settle_time`]).
    fn settle_time(&self, settings: &[Setting]) -> Nanos {
        nictune_tune::knob::settle_time(None, settings)
    }

    /// The same for a module parameter put back as found: the reload restarts the wait.
    fn settle_time_as_found(&self, snapshot: &GuestSnapshot, undone: &[Setting]) -> Nanos {
        let entries = snapshot.iter().map(|(k, v)| (k.as_str(), v.clone()));
        nictune_tune::knob::settle_time_as_found(None, entries, undone)
    }
}

impl GuestTarget<'_> {
    /// The parameters nictune in the guest recorded at its last reload of `driver` (none
    /// before the first: the driver was loaded at boot with its defaults).
    fn record(&mut self, driver: Driver) -> Result<modparams::Params, TargetError> {
        let path = format!("{}/{}", modparams::RECORD_DIR, driver.name());
        let reply = lock(self.bed)
            .run(&["cat", &path], Duration::from_secs(10))
            .map_err(|e| Self::fail(TargetOp::Snapshot, &path, e))?;
        let text = if reply.code == Some(0) {
            reply.stdout
        } else {
            String::new()
        };
        Ok(modparams::parse_record(&text))
    }
}

/// The simulator's model of QEMU's emulated NIC under the guest's driver, calibrated on the
/// baseline (the driver's defaults) and predicting every other candidate.
#[derive(Debug)]
pub struct QemuPredictor {
    nic: QemuNic,
    costs: Option<QemuNicCosts>,
}

impl QemuPredictor {
    /// An uncalibrated model of the NIC QEMU emulates for `driver`'s guest.
    pub fn new(driver: Driver) -> QemuPredictor {
        QemuPredictor {
            nic: match driver {
                Driver::E1000 => QemuNic::E1000,
                Driver::E1000e => QemuNic::E1000e,
            },
            costs: None,
        }
    }

    /// The model's settings for `candidate`: the driver's defaults with its module
    /// parameters over them, the device's NAPI deferral (`napi.defer-hard-irqs`,
    /// `napi.gro-flush-timeout`), and `coalesce.rx-usecs` (the model's `rx_usecs`: the
    /// InterruptThrottleRate value `e1000_set_coalesce` amounts to, which on e1000e
    /// `e1000e_write_itr` writes into every MSI-X vector's EITR, as `e1000_configure_msix`
    /// does for the module parameter). On e1000e the model does not follow the driver's
    /// stale `rx_ring->itr_val`: when a dynamic-mode rate change is still pending as ethtool
    /// runs, the RX vector's next interrupt writes the old rate back (the `doctor` rule
    /// `e1000e-dynamic-itr`); the effect check names the vector when that happens.
    fn settings(&self, candidate: &Candidate) -> Result<QemuNicSettings, String> {
        let mut s = QemuNicSettings::driver_defaults(self.nic);
        // The tune warms mode 4 up until the watchdog's pass with traffic.
        s.after_watchdog_pass = true;
        for setting in &candidate.settings {
            let (param, n) = match (setting.knob, setting.value) {
                (Knob::Module(_, param), KnobValue::Count(n)) => (param, n),
                (Knob::RxUsecs, KnobValue::Duration(d)) => {
                    let us = u32::try_from(d.0 / 1_000).map_err(|e| e.to_string())?;
                    s.rx_usecs = Some(us);
                    continue;
                }
                (Knob::DeferHardIrqs, KnobValue::Count(n)) => {
                    s.napi_defer_hard_irqs = u32::try_from(n).map_err(|e| e.to_string())?;
                    continue;
                }
                (Knob::GroFlushTimeout, KnobValue::Duration(d)) => {
                    s.gro_flush_timeout = d;
                    continue;
                }
                _ => {
                    return Err(format!(
                        "the QEMU NIC model has no mechanism for {} on {:?}",
                        setting.knob, self.nic
                    ))
                }
            };
            let small = || u16::try_from(n).map_err(|_| format!("{} out of range", setting.knob));
            match param {
                ModuleParam::InterruptThrottleRate => {
                    s.interrupt_throttle_rate = i64::try_from(n).map_err(|e| e.to_string())?
                }
                ModuleParam::TxIntDelay => s.tx_int_delay = small()?,
                ModuleParam::TxAbsIntDelay => s.tx_abs_int_delay = small()?,
                ModuleParam::RxIntDelay => s.rx_int_delay = small()?,
                ModuleParam::RxAbsIntDelay => s.rx_abs_int_delay = small()?,
            }
        }
        Ok(s)
    }
}

/// Simulated seconds per prediction (the model's first tenth is warm-up).
const PREDICT_SECONDS: u64 = 5;
/// The model's seed: predictions are deterministic and the same for every tune.
const PREDICT_SEED: u64 = 1;

impl Predictor for QemuPredictor {
    fn calibrate(
        &mut self,
        baseline: &Candidate,
        measured: &[Metrics],
    ) -> Result<(), PredictError> {
        let fail = |reason: String| PredictError {
            what: format!("the QEMU NIC model from {}", baseline.id()),
            reason,
        };
        if !baseline.is_baseline() {
            return Err(fail(
                "the model calibrates from the driver's defaults (the baseline)".into(),
            ));
        }
        let rates: Vec<f64> = measured
            .iter()
            .filter_map(|m| m.transactions_per_sec)
            .collect();
        if rates.is_empty() {
            return Err(fail("the baseline runs report no transaction rate".into()));
        }
        let rate = rates.iter().sum::<f64>() / rates.len() as f64;
        // The guest's interrupts over the same runs, when counted: they fix how late QEMU's
        // main loop ends a moderation window (the model's docs); the rate alone otherwise.
        let ints: Vec<f64> = measured
            .iter()
            .filter_map(|m| m.hosts.get("server")?.interrupts_per_sec)
            .filter(|&i| i > 0.0)
            .collect();
        let defaults = QemuNicSettings::driver_defaults(self.nic);
        let costs = match ints.len() == measured.len() {
            true => {
                let ints = ints.iter().sum::<f64>() / ints.len() as f64;
                QemuNicCosts::calibrate_with_interrupts(self.nic, &defaults, rate, ints)
            }
            false => QemuNicCosts::calibrate(self.nic, &defaults, rate),
        }
        .map_err(|e| fail(e.to_string()))?;
        self.costs = Some(costs);
        Ok(())
    }

    fn predict(&self, candidate: &Candidate) -> Result<Metrics, PredictError> {
        let fail = |reason: String| PredictError {
            what: candidate.id(),
            reason,
        };
        let costs = self
            .costs
            .as_ref()
            .ok_or_else(|| fail("the model is not calibrated".into()))?;
        let settings = self.settings(candidate).map_err(fail)?;
        let p = qemu_nic::predict_rr(
            self.nic,
            &settings,
            costs,
            PREDICT_SEED,
            Nanos::from_secs(PREDICT_SECONDS),
        )
        .map_err(|e| fail(e.to_string()))?;
        let server = HostMetrics {
            interrupts_per_sec: Some(p.interrupts_per_sec),
            packets_per_interrupt: Some(p.packets_per_interrupt),
            ..HostMetrics::default()
        };
        Ok(Metrics {
            transactions_per_sec: Some(p.transactions_per_sec),
            latency_us: Some(LatencySummary {
                p50: p.p50_us,
                p99: p.p99_us,
                ..LatencySummary::default()
            }),
            hosts: [("server".to_string(), server)].into_iter().collect(),
            ..Metrics::default()
        })
    }
}

/// How far a measured vector may exceed a fixed throttle rate (the rule `nictune apply`
/// verifies by).
const EFFECT_TOLERANCE: f64 = nictune_bench::effect::TOLERANCE;

/// Checks a candidate's fixed throttle rate on `end` against the interrupts measured per
/// vector on that end's guest: `Some(warning)` naming each vector that fired faster than the
/// rate allows. A fixed rate is InterruptThrottleRate ≥ 100, or `coalesce.rx-usecs` ≥ 10,
/// which on e1000 and e1000e writes the same register at 10⁶/µs interrupts/s
/// (e1000_ethtool.c#e1000_set_coalesce; on e1000e from the default dynamic mode it reaches
/// the TX vector only, which this check is there to catch). `vectors` are the NIC's vectors
/// (`"<irq>:<name>"` → interrupts/s) from the guest's accounting.
pub fn effect_check(
    candidate: &Candidate,
    end: End,
    vectors: &BTreeMap<String, f64>,
) -> Option<String> {
    let (itr, setting) = candidate
        .settings
        .iter()
        .filter(|s| s.end == end)
        .find_map(|s| match (s.knob, s.value) {
            (Knob::Module(_, ModuleParam::InterruptThrottleRate), KnobValue::Count(n))
                if n >= 100 =>
            {
                Some((n as f64, format!("InterruptThrottleRate {n}")))
            }
            (Knob::RxUsecs, KnobValue::Duration(d)) if d >= Nanos::from_micros(10) => {
                let us = d.0 / 1_000;
                Some((1e9 / d.0 as f64, format!("rx-usecs {us}")))
            }
            _ => None,
        })?;
    let over: Vec<String> = vectors
        .iter()
        .filter(|(_, &rate)| rate > itr * EFFECT_TOLERANCE)
        .map(|(v, rate)| format!("{v} {rate:.0}/s"))
        .collect();
    (!over.is_empty()).then(|| {
        let on = match end {
            End::Local => String::new(),
            End::Peer => " on the peer".into(),
        };
        format!(
            "{}: {setting}{on} caps each vector at {itr:.0} interrupts/s, \
             but {} fired faster: the setting is not in effect on that vector",
            candidate.id(),
            over.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_tune::candidate::Placement;

    /// A candidate of one setting.
    fn one(knob: Knob, value: KnobValue) -> Candidate {
        Candidate::new(vec![Setting::new(knob, value)], Placement::Unpinned)
    }

    fn itr(n: u64) -> Candidate {
        let itr = Knob::Module(Driver::E1000e, ModuleParam::InterruptThrottleRate);
        one(itr, KnobValue::Count(n))
    }

    /// A fixed rate with TxIntDelay 0, so transmit completions open no windows of their own.
    fn itr_no_tidv(n: u64) -> Candidate {
        let mut c = itr(n);
        c.settings.push(Setting::new(
            Knob::Module(Driver::E1000, ModuleParam::TxIntDelay),
            KnobValue::Count(0),
        ));
        c
    }

    #[test]
    fn a_vector_over_its_throttle_rate_is_named() {
        let vectors = vectors(2100.0, 480.0);
        let w = effect_check(&itr(500), End::Local, &vectors).unwrap();
        assert!(
            w.contains("26:eth0-rx-0 2100/s") && !w.contains("tx-0"),
            "{w}"
        );
        assert_eq!(effect_check(&itr(4000), End::Local, &vectors), None);
        assert_eq!(
            effect_check(&itr(3), End::Local, &vectors),
            None,
            "a mode has no fixed cap"
        );
        assert_eq!(
            effect_check(&itr(500), End::Peer, &vectors),
            None,
            "the rate is this end's"
        );
        let mut peer = itr(500);
        peer.settings[0] = peer.settings[0].on(End::Peer);
        let w = effect_check(&peer, End::Peer, &vectors).unwrap();
        assert!(w.contains("500 on the peer"), "{w}");
    }

    #[test]
    fn the_predictor_needs_its_calibration_and_models_module_parameters() {
        let mut p = QemuPredictor::new(Driver::E1000);
        assert!(p.predict(&itr(500)).is_err());
        let base = Candidate::baseline(Placement::Unpinned);
        let measured = Metrics {
            transactions_per_sec: Some(2800.0),
            ..Metrics::default()
        };
        p.calibrate(&base, &[measured]).unwrap();
        let slow = p.predict(&itr_no_tidv(500)).unwrap();
        let fast = p.predict(&itr_no_tidv(2000)).unwrap();
        let leaky = p.predict(&itr(500)).unwrap().transactions_per_sec.unwrap();
        let (s, f) = (
            slow.transactions_per_sec.unwrap(),
            fast.transactions_per_sec.unwrap(),
        );
        assert!(s < f && s <= 520.0, "ITR 500 caps the rate: {s} vs {f}");
        assert!(
            leaky > s * 1.3,
            "TxIntDelay 8 lets TX causes through: {leaky} vs {s}"
        );
        let ints = slow.hosts["server"].interrupts_per_sec.unwrap();
        assert!(ints <= 520.0, "{ints}");
        // Mode 4 is predicted as the tune measures it, after the watchdog's pass with traffic:
        // paced at the RR's 2,000/s like ITR 2000, not at the idle link's 8,000/s.
        let mode_4 = p
            .predict(&itr_no_tidv(4))
            .unwrap()
            .transactions_per_sec
            .unwrap();
        assert!(
            (mode_4 / f - 1.0).abs() < 0.05,
            "{mode_4} vs ITR 2000's {f}"
        );
        assert!(p.settings(&itr(4)).unwrap().after_watchdog_pass);
    }

    /// An e1000e's rx and tx vectors at these interrupts/s.
    fn vectors(rx: f64, tx: f64) -> BTreeMap<String, f64> {
        BTreeMap::from([
            ("26:eth0-rx-0".to_string(), rx),
            ("27:eth0-tx-0".to_string(), tx),
        ])
    }

    fn rx_usecs(us: u64) -> Candidate {
        one(Knob::RxUsecs, KnobValue::Duration(Nanos::from_micros(us)))
    }

    #[test]
    fn rx_usecs_is_checked_as_the_rate_it_writes() {
        let vectors = vectors(1900.0, 950.0);
        // 1000 µs: at most 1000 interrupts/s per vector; the RX vector ignored it.
        let w = effect_check(&rx_usecs(1000), End::Local, &vectors).unwrap();
        assert!(
            w.contains("rx-usecs 1000 caps each vector at 1000 interrupts/s")
                && w.contains("26:eth0-rx-0 1900/s")
                && !w.contains("tx-0"),
            "{w}"
        );
        assert_eq!(effect_check(&rx_usecs(500), End::Local, &vectors), None);
        // 0 is off and 1, 3, 4 are the driver's modes: no fixed cap.
        for mode in [0, 1, 3, 4] {
            assert_eq!(effect_check(&rx_usecs(mode), End::Local, &vectors), None);
        }
    }

    #[test]
    fn the_predictor_takes_rx_usecs_and_napi_deferral_and_declines_what_it_lacks() {
        let base = Candidate::baseline(Placement::Unpinned);
        let measured = Metrics {
            transactions_per_sec: Some(2800.0),
            ..Metrics::default()
        };
        let mut p = QemuPredictor::new(Driver::E1000);
        p.calibrate(&base, std::slice::from_ref(&measured)).unwrap();
        // rx-usecs 2000 writes ITR 500, the module parameter's value: the same prediction.
        let by_usecs = p.predict(&rx_usecs(2000)).unwrap();
        let by_itr = p.predict(&itr(500)).unwrap();
        assert_eq!(by_usecs.transactions_per_sec, by_itr.transactions_per_sec);
        // NAPI deferral is a mechanism of the model: two empty polls 100 µs apart keep the
        // interrupt masked between requests.
        let defer = Candidate::new(
            vec![
                Setting::new(Knob::DeferHardIrqs, KnobValue::Count(2)),
                Setting::new(
                    Knob::GroFlushTimeout,
                    KnobValue::Duration(Nanos::from_micros(100)),
                ),
            ],
            Placement::Unpinned,
        );
        let masked = p.predict(&defer).unwrap();
        let ints = masked.hosts["server"].interrupts_per_sec.unwrap();
        let as_found = p.predict(&base).unwrap().hosts["server"].interrupts_per_sec;
        assert!(ints < as_found.unwrap() / 20.0, "{ints} vs {as_found:?}");
        // On e1000e rx-usecs writes every vector's EITR, as the module parameter does at
        // open: the same prediction, and a fixed rate below the baseline's slows it.
        let mut e1000e = QemuPredictor::new(Driver::E1000e);
        e1000e.calibrate(&base, &[measured]).unwrap();
        let by_usecs = e1000e.predict(&rx_usecs(2000)).unwrap();
        let by_itr = e1000e.predict(&itr(500)).unwrap();
        assert_eq!(by_usecs.transactions_per_sec, by_itr.transactions_per_sec);
        let as_found = e1000e.predict(&base).unwrap().transactions_per_sec.unwrap();
        assert!(by_usecs.transactions_per_sec.unwrap() < as_found / 2.0);
        // What the model has no mechanism for is declined, not guessed.
        let adaptive = Candidate::new(
            vec![Setting::new(Knob::AdaptiveRx, KnobValue::Switch(false))],
            Placement::Unpinned,
        );
        assert!(e1000e.predict(&adaptive).is_err());
    }
}
