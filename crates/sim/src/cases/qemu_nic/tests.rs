use super::*;

const RUN: Nanos = Nanos::from_secs(5);
const SEED: u64 = 1;

fn defaults(nic: QemuNic) -> QemuNicSettings {
    QemuNicSettings::driver_defaults(nic)
}

fn e1000(itr: i64, tx_int_delay: u16) -> QemuNicSettings {
    QemuNicSettings {
        interrupt_throttle_rate: itr,
        tx_int_delay,
        ..defaults(QemuNic::E1000)
    }
}

fn e1000e(itr: i64) -> QemuNicSettings {
    QemuNicSettings {
        interrupt_throttle_rate: itr,
        ..defaults(QemuNic::E1000e)
    }
}

/// The one calibration: the e1000 testbed at driver defaults (InterruptThrottleRate 3). No
/// default-settings figure was measured; the prototype's TCG ceiling for e1000, ≈3,000
/// trans/s, which the fast settings all reach, stands in for it.
fn costs() -> QemuNicCosts {
    static COSTS: std::sync::OnceLock<QemuNicCosts> = std::sync::OnceLock::new();
    *COSTS.get_or_init(|| {
        QemuNicCosts::calibrate(QemuNic::E1000, &defaults(QemuNic::E1000), 3_000.0).unwrap()
    })
}

fn predict(nic: QemuNic, s: QemuNicSettings) -> QemuNicPrediction {
    predict_rr(nic, &s, &costs(), SEED, RUN).unwrap()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b) / b
}

#[test]
fn the_baseline_reproduces_its_calibration() {
    let c = costs();
    // 1/3000 s = 333 µs = 128 µs window + 14.85 µs wake + ≈190 µs of guest work.
    assert!((180_000..200_000).contains(&c.request.0), "{c:?}");
    let p = predict(QemuNic::E1000, defaults(QemuNic::E1000));
    assert!(rel(p.transactions_per_sec, 3_000.0).abs() < 0.01, "{p:?}");
    // Two interrupts per transaction (rx, then the tx write-back), one frame each.
    assert!(rel(p.interrupts_per_sec, 2.0 * p.transactions_per_sec).abs() < 0.01);
    assert!((p.packets_per_interrupt - 1.0).abs() < 0.01);
    // The prototype's TCG p50: ≈200–350 µs.
    assert!((200.0..350.0).contains(&p.p50_us), "{p:?}");
}

#[test]
fn settings_under_the_128us_floor_are_indistinguishable() {
    // 0 (off), 1 and 3 (dynamic: 70000 or 20000/s), 8000, 20000 and 100000/s all program
    // windows below QEMU's 500-unit floor, with the default TxIntDelay or without.
    for tx_int_delay in [8, 0] {
        let base = predict(QemuNic::E1000, e1000(3, tx_int_delay));
        for itr in [0, 1, 8_000, 20_000, 100_000] {
            let p = predict(QemuNic::E1000, e1000(itr, tx_int_delay));
            assert!(
                rel(p.transactions_per_sec, base.transactions_per_sec).abs() < 0.01
                    && rel(p.interrupts_per_sec, base.interrupts_per_sec).abs() < 0.01,
                "ITR {itr}, TxIntDelay {tx_int_delay}: {p:?} vs {base:?}"
            );
        }
    }
    let base = predict(QemuNic::E1000e, e1000e(3));
    for itr in [0, 1, 8_000, 100_000] {
        let p = predict(QemuNic::E1000e, e1000e(itr));
        assert!(rel(p.transactions_per_sec, base.transactions_per_sec).abs() < 0.01);
    }
}

#[test]
fn an_itr_window_paces_one_transaction_per_window() {
    // TxIntDelay 0: the window is ITR alone. Each expiry raises the waiting request together
    // with the previous reply's write-back and opens the next window: one transaction, one
    // interrupt and two frames per window.
    for (itr, window_us) in [(2_000, 499.97), (500, 1999.87), (100, 9999.87)] {
        let p = predict(QemuNic::E1000, e1000(itr, 0));
        let per_window = p.transactions_per_sec * window_us * 1e-6;
        assert!((per_window - 1.0).abs() < 0.01, "ITR {itr}: {p:?}");
        assert!(rel(p.interrupts_per_sec, p.transactions_per_sec).abs() < 0.01);
        assert!((p.packets_per_interrupt - 2.0).abs() < 0.02);
        assert!(rel(p.p50_us, window_us).abs() < 0.02, "ITR {itr}: {p:?}");
    }
}

#[test]
fn tx_int_delay_8_lets_tx_edges_open_short_windows_and_partly_defeats_itr() {
    // With IDE set, a tx write-back edge arms min(TADV·4, ITR) = 128 units → the 128 µs
    // floor, so after the reply's interrupt the next request waits 128 µs, not 10 ms, and
    // only every other request meets a 10 ms window.
    let strict = predict(QemuNic::E1000, e1000(100, 0));
    let leaky = predict(QemuNic::E1000, e1000(100, 8));
    assert!(
        leaky.transactions_per_sec > 1.8 * strict.transactions_per_sec,
        "{leaky:?} vs {strict:?}"
    );
    // Prototype: "ITR 100 still ≈ 250 ints/s" — three interrupts per two transactions here.
    assert!(
        (200.0..320.0).contains(&leaky.interrupts_per_sec),
        "{leaky:?}"
    );
    assert!(rel(leaky.interrupts_per_sec, 1.5 * leaky.transactions_per_sec).abs() < 0.02);
}

#[test]
fn e1000e_throttles_rx_and_tx_separately_and_expiries_do_not_rearm() {
    let c = predict(QemuNic::E1000, defaults(QemuNic::E1000));
    let e = predict(QemuNic::E1000e, defaults(QemuNic::E1000e));
    // The tx vector's window does not hold the next request: the period is the guest's
    // work plus the host turnaround, not work plus 128 µs (prototype: ≈4,000–4,500 vs 3,000).
    assert!(
        e.transactions_per_sec > 1.25 * c.transactions_per_sec,
        "{e:?}"
    );
    let v = e.vectors.unwrap();
    assert!(rel(v.rx, e.transactions_per_sec).abs() < 0.01);
    assert!(rel(v.tx, e.transactions_per_sec).abs() < 0.01);
    assert_eq!(v.other, 0.0);
    assert!(c.vectors.is_none());
    // ITR 2000 (500 µs): a request held to the expiry is sent without a new window, so the
    // next one goes at once and opens one: two transactions per window plus a round trip,
    // well above the one per window of e1000.
    let fixed = predict(QemuNic::E1000e, e1000e(2_000));
    let one_per_window = 1e6 / 499.97;
    assert!(
        fixed.transactions_per_sec > 1.2 * one_per_window,
        "{fixed:?}"
    );
    assert!(
        fixed.transactions_per_sec < 2.0 * one_per_window,
        "{fixed:?}"
    );
}

#[test]
fn e1000e_ignores_the_delay_timers_under_msix() {
    let base = predict(QemuNic::E1000e, e1000e(2_000));
    let delays = QemuNicSettings {
        rx_int_delay: 0,
        rx_abs_int_delay: 0,
        tx_int_delay: 0,
        tx_abs_int_delay: 1_000,
        ..e1000e(2_000)
    };
    assert_eq!(predict(QemuNic::E1000e, delays), base);
}

#[test]
fn rx_usecs_maps_onto_the_throttle_modes_and_rates() {
    let as_usecs = |us| QemuNicSettings {
        rx_usecs: Some(us),
        ..e1000(3, 0)
    };
    assert_eq!(
        predict(QemuNic::E1000, as_usecs(500)),
        predict(QemuNic::E1000, e1000(2_000, 0))
    );
    assert_eq!(
        predict(QemuNic::E1000, as_usecs(3)),
        predict(QemuNic::E1000, e1000(3, 0))
    );
    for bad in [2, 5, 9, 10_001] {
        assert_eq!(
            predict_rr(QemuNic::E1000, &as_usecs(bad), &costs(), SEED, RUN),
            Err(QemuNicError::RxUsecs(bad))
        );
    }
    assert!(matches!(
        predict_rr(QemuNic::E1000, &e1000(50, 8), &costs(), SEED, RUN),
        Err(QemuNicError::Itr(_))
    ));
}

#[test]
fn simplified_mode_settles_on_the_watchdogs_symmetric_rate() {
    // Mode 4: from the idle watchdog's 8000/s (under the floor) to 2000/s for a symmetric RR
    // at the first watchdog pass; with TxIntDelay 0 the run ends between the two regimes.
    let p = predict(QemuNic::E1000, e1000(4, 0));
    let floor = predict(QemuNic::E1000, e1000(3, 0)).transactions_per_sec;
    let paced = predict(QemuNic::E1000, e1000(2_000, 0)).transactions_per_sec;
    assert!(
        p.transactions_per_sec > 0.99 * paced && p.transactions_per_sec < floor,
        "{p:?}"
    );
}

#[test]
fn a_prediction_is_a_function_of_its_seed() {
    let s = e1000e(2_000);
    let a = predict_rr(QemuNic::E1000e, &s, &costs(), 7, RUN).unwrap();
    let b = predict_rr(QemuNic::E1000e, &s, &costs(), 7, RUN).unwrap();
    assert_eq!(a, b);
    let c = predict_rr(QemuNic::E1000e, &s, &costs(), 8, RUN).unwrap();
    assert_ne!(a, c);
    assert!(rel(a.transactions_per_sec, c.transactions_per_sec).abs() < 0.02);
}

#[test]
fn a_five_second_prediction_takes_well_under_50ms() {
    let c = costs();
    // The busiest case: e1000e at its ceiling, ≈20 k transactions and 40 k interrupts.
    let s = defaults(QemuNic::E1000e);
    let fastest = (0..3)
        .map(|_| {
            let t = std::time::Instant::now();
            predict_rr(QemuNic::E1000e, &s, &c, SEED, RUN).unwrap();
            t.elapsed()
        })
        .min()
        .unwrap();
    assert!(
        fastest < std::time::Duration::from_millis(50),
        "{fastest:?}"
    );
}

#[test]
fn calibration_refuses_what_it_cannot_use() {
    let s = defaults(QemuNic::E1000);
    assert_eq!(
        QemuNicCosts::calibrate(QemuNic::E1000, &s, 0.0),
        Err(QemuNicError::NoRate)
    );
    // With no guest work at all a transaction still needs a 128 µs window and a wake-up.
    assert!(matches!(
        QemuNicCosts::calibrate(QemuNic::E1000, &s, 10_000.0),
        Err(QemuNicError::Unreachable { .. })
    ));
    // Another baseline: e1000e at its defaults, 4,200 trans/s, reproduces itself.
    let c = QemuNicCosts::calibrate(QemuNic::E1000e, &defaults(QemuNic::E1000e), 4_200.0).unwrap();
    let p = predict_rr(QemuNic::E1000e, &defaults(QemuNic::E1000e), &c, SEED, RUN).unwrap();
    assert!(rel(p.transactions_per_sec, 4_200.0).abs() < 0.01, "{p:?}");
}

/// A held-out figure of the prototype, the model's value and the relative error.
struct Row {
    point: &'static str,
    measured: f64,
    predicted: f64,
}

fn held_out() -> Vec<Row> {
    let e1 = |itr| predict(QemuNic::E1000, e1000(itr, 0));
    let ee = |itr| predict(QemuNic::E1000e, e1000e(itr));
    let (i100, i500, i2000) = (e1(100), e1(500), e1(2_000));
    let (e2000, e500) = (ee(2_000), ee(500));
    let e_ceiling = predict(QemuNic::E1000e, defaults(QemuNic::E1000e));
    let leaky = predict(QemuNic::E1000, e1000(100, 8));
    let rx = |p: &QemuNicPrediction| p.vectors.unwrap().rx;
    vec![
        Row {
            point: "e1000 ITR 100, TxIntDelay 0: trans/s",
            measured: 99.0,
            predicted: i100.transactions_per_sec,
        },
        Row {
            point: "e1000 ITR 100, TxIntDelay 0: p50 µs",
            measured: 10_090.0,
            predicted: i100.p50_us,
        },
        Row {
            point: "e1000 ITR 500, TxIntDelay 0: trans/s",
            measured: 485.0,
            predicted: i500.transactions_per_sec,
        },
        Row {
            point: "e1000 ITR 2000, TxIntDelay 0: trans/s",
            measured: 1_876.0,
            predicted: i2000.transactions_per_sec,
        },
        Row {
            point: "e1000e ITR 2000: trans/s",
            measured: 2_173.0,
            predicted: e2000.transactions_per_sec,
        },
        Row {
            point: "e1000e ITR 500: trans/s",
            measured: 763.0,
            predicted: e500.transactions_per_sec,
        },
        Row {
            point: "e1000e defaults: trans/s (≈4,000–4,500)",
            measured: 4_250.0,
            predicted: e_ceiling.transactions_per_sec,
        },
        Row {
            point: "e1000 ITR 100, TxIntDelay 0: ints/s",
            measured: 84.0,
            predicted: i100.interrupts_per_sec,
        },
        Row {
            point: "e1000 ITR 500, TxIntDelay 0: ints/s",
            measured: 393.0,
            predicted: i500.interrupts_per_sec,
        },
        Row {
            point: "e1000 ITR 2000, TxIntDelay 0: ints/s",
            measured: 1_524.0,
            predicted: i2000.interrupts_per_sec,
        },
        Row {
            point: "e1000 ITR 100, TxIntDelay 8: ints/s (≈250)",
            measured: 250.0,
            predicted: leaky.interrupts_per_sec,
        },
        Row {
            point: "e1000e ITR 2000: rx vector ints/s",
            measured: 1_838.0,
            predicted: rx(&e2000),
        },
        Row {
            point: "e1000e ITR 500: rx vector ints/s",
            measured: 614.0,
            predicted: rx(&e500),
        },
    ]
}

/// The held-out points whose error exceeds the 15 % target, with the error the module
/// documentation reports for them (in %). Not tuned away: see "Validation" in the module
/// documentation.
const OVER_TARGET: &[(&str, f64)] = &[
    ("e1000e ITR 2000: trans/s", 24.0),
    ("e1000e ITR 500: trans/s", 17.0),
    ("e1000 ITR 100, TxIntDelay 0: ints/s", 19.0),
    ("e1000 ITR 500, TxIntDelay 0: ints/s", 27.0),
    ("e1000 ITR 2000, TxIntDelay 0: ints/s", 31.0),
    ("e1000 ITR 100, TxIntDelay 8: ints/s (≈250)", 16.0),
    ("e1000e ITR 2000: rx vector ints/s", 46.0),
    ("e1000e ITR 500: rx vector ints/s", 45.0),
];

#[test]
fn held_out_prototype_figures_within_15_percent_or_as_documented() {
    let rows = held_out();
    eprintln!(
        "{:48} {:>10} {:>10} {:>7}",
        "point", "measured", "predicted", "error"
    );
    for r in &rows {
        let err = 100.0 * rel(r.predicted, r.measured);
        eprintln!(
            "{:48} {:>10.0} {:>10.0} {:>+6.1}%",
            r.point, r.measured, r.predicted, err
        );
    }
    for r in &rows {
        let err = 100.0 * rel(r.predicted, r.measured);
        match OVER_TARGET.iter().find(|(p, _)| *p == r.point) {
            None => assert!(err.abs() < 15.0, "{}: {err:+.1} %", r.point),
            Some((_, documented)) => assert!(
                (err - documented).abs() < 3.0,
                "{}: {err:+.1} %, documented {documented:+.0} %: update the module docs",
                r.point
            ),
        }
    }
}
