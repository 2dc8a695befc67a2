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

/// A run of the e1000 testbed: `nictune tune --testbed e1000` (1 s after 0.2–0.3 s of
/// warm-up, on the 2-vCPU build VM while other work ran on it), the candidate's module
/// parameters, the transactions/s and the interrupts/s of the guest's INTx line `eth0` counted
/// over the same interval.
struct Measured {
    itr: i64,
    tx_int_delay: u16,
    trans: f64,
    ints: f64,
}

const fn run(itr: i64, tx_int_delay: u16, trans: f64, ints: f64) -> Measured {
    Measured {
        itr,
        tx_int_delay,
        trans,
        ints,
    }
}

/// The calibration point: the settings as found (the driver's defaults, InterruptThrottleRate
/// 3 and TxIntDelay 8).
const BASELINE: Measured = run(3, 8, 3398.0, 3677.0);

/// Every other candidate of that tune: held out. Where the settings leave QEMU's 128 µs floor
/// in charge (InterruptThrottleRate 0, 1, 3 and 8000–100000) the rates vary by ±10–15 % and
/// more from run to run — the same settings as the baseline gave 1,939 against 3,398 trans/s.
const HELD_OUT: &[Measured] = &[
    run(4000, 8, 2349.0, 2922.0),
    run(0, 8, 2183.0, 2719.0),
    run(0, 0, 2567.0, 2614.0),
    run(1, 8, 2606.0, 2969.0),
    run(1, 0, 2729.0, 2798.0),
    run(3, 8, 1939.0, 2491.0),
    run(3, 0, 2891.0, 2963.0),
    run(8000, 8, 3313.0, 3931.0),
    run(8000, 0, 2970.0, 3438.0),
    run(20000, 8, 3529.0, 3923.0),
    run(20000, 0, 3157.0, 3801.0),
    run(100000, 8, 3495.0, 3938.0),
    run(100000, 0, 3600.0, 4006.0),
    run(4000, 0, 2588.0, 2672.0),
    run(4, 8, 3216.0, 3599.0),
    run(2000, 8, 2859.0, 3321.0),
    run(4, 0, 2782.0, 2889.0),
    run(2000, 0, 1709.0, 1705.0),
    run(1000, 8, 2482.0, 2834.0),
    run(1000, 0, 923.0, 929.0),
    run(300, 8, 997.0, 1222.0),
    run(300, 0, 296.0, 296.0),
    run(100, 8, 255.0, 346.0),
    run(100, 0, 99.0, 100.0),
];

/// The one calibration: the e1000 testbed's baseline run.
fn costs() -> QemuNicCosts {
    static COSTS: std::sync::OnceLock<QemuNicCosts> = std::sync::OnceLock::new();
    *COSTS.get_or_init(|| {
        QemuNicCosts::calibrate(QemuNic::E1000, &defaults(QemuNic::E1000), BASELINE.trans).unwrap()
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
    // 1/3398 s = 294 µs = 128 µs window + the main loop's and the vCPU's wake-ups (2 × 14.85
    // µs) + ≈140 µs of guest work.
    assert!((130_000..155_000).contains(&c.request.0), "{c:?}");
    let p = predict(QemuNic::E1000, defaults(QemuNic::E1000));
    assert!(
        rel(p.transactions_per_sec, BASELINE.trans).abs() < 0.01,
        "{p:?}"
    );
    // Two interrupts per transaction (rx, then the tx write-back), one frame each — but for
    // the few replies the server's spread brings inside the rx interrupt's window.
    assert!(rel(p.interrupts_per_sec, 2.0 * p.transactions_per_sec).abs() < 0.05);
    assert!((p.packets_per_interrupt - 1.0).abs() < 0.05);
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
    // TxIntDelay 0: the window is ITR alone, plus the main loop's wake-up. Each expiry raises
    // the waiting request together with the previous reply's write-back and opens the next
    // window: one transaction, one interrupt and two frames per window.
    for (itr, itr_us) in [(2_000, 499.97), (500, 1999.87), (100, 9999.87)] {
        let window_us = itr_us + MAIN_LOOP_WAKE.0 as f64 / 1e3;
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

/// A held-out figure, the model's value for it, and the error (in %) the module documentation
/// reports for it.
struct Row {
    point: String,
    measured: f64,
    predicted: f64,
    documented: f64,
}

impl Row {
    fn error(&self) -> f64 {
        100.0 * rel(self.predicted, self.measured)
    }
}

/// The errors the module documentation's validation table reports, in %: transactions/s and
/// interrupts/s for each held-out run, by InterruptThrottleRate and TxIntDelay.
const DOCUMENTED: &[(i64, u16, f64, f64)] = &[
    (4000, 8, 50.0, 81.0),
    (0, 8, 56.0, 145.0),
    (0, 0, 33.0, 154.0),
    (1, 8, 31.0, 124.0),
    (1, 0, 25.0, 138.0),
    (3, 8, 76.0, 167.0),
    (3, 0, 18.0, 124.0),
    (8000, 8, 3.0, 69.0),
    (8000, 0, 15.0, 94.0),
    (20000, 8, -4.0, 70.0),
    (20000, 0, 8.0, 75.0),
    (100000, 8, -3.0, 69.0),
    (100000, 0, -5.0, 66.0),
    (4000, 0, 45.0, 41.0),
    (4, 8, -20.0, 13.0),
    (2000, 8, -14.0, 10.0),
    (4, 0, -23.0, -10.0),
    (2000, 0, 14.0, 14.0),
    (1000, 8, -39.0, -20.0),
    (1000, 0, 7.0, 6.0),
    (300, 8, -45.0, -33.0),
    (300, 0, 1.0, 1.0),
    (100, 8, -24.0, -16.0),
    (100, 0, 1.0, 0.0),
];

/// The prototype's figures that the testbed's tune did not measure again (e1000e, and a
/// latency), with their documented errors in %. The prototype's interrupt counts were 0.80–0.85
/// of its transaction counts even where QEMU allows no fewer interrupts than transactions, so
/// they were likely taken over another interval than the transactions.
const PROTOTYPE: &[(&str, f64, f64)] = &[
    ("e1000 ITR 100, TxIntDelay 0: p50 µs", 10_090.0, -1.0),
    ("e1000e defaults: trans/s (≈4,000–4,500)", 4_250.0, 18.0),
    ("e1000e ITR 2000: trans/s", 2_173.0, 29.0),
    ("e1000e ITR 500: trans/s", 763.0, 18.0),
    ("e1000e ITR 2000: rx vector ints/s", 1_838.0, 52.0),
    ("e1000e ITR 500: rx vector ints/s", 614.0, 47.0),
];

fn held_out() -> Vec<Row> {
    let mut rows = vec![];
    for m in HELD_OUT {
        let p = predict(QemuNic::E1000, e1000(m.itr, m.tx_int_delay));
        let &(_, _, trans_err, ints_err) = DOCUMENTED
            .iter()
            .find(|(itr, tx, _, _)| (*itr, *tx) == (m.itr, m.tx_int_delay))
            .expect("every held-out run has a documented error");
        let point = format!("e1000 ITR {}, TxIntDelay {}", m.itr, m.tx_int_delay);
        rows.push(Row {
            point: format!("{point}: trans/s"),
            measured: m.trans,
            predicted: p.transactions_per_sec,
            documented: trans_err,
        });
        rows.push(Row {
            point: format!("{point}: ints/s"),
            measured: m.ints,
            predicted: p.interrupts_per_sec,
            documented: ints_err,
        });
    }
    let ee = |itr| predict(QemuNic::E1000e, e1000e(itr));
    let (e2000, e500) = (ee(2_000), ee(500));
    let rx = |p: &QemuNicPrediction| p.vectors.unwrap().rx;
    let predicted = [
        predict(QemuNic::E1000, e1000(100, 0)).p50_us,
        predict(QemuNic::E1000e, defaults(QemuNic::E1000e)).transactions_per_sec,
        e2000.transactions_per_sec,
        e500.transactions_per_sec,
        rx(&e2000),
        rx(&e500),
    ];
    for (&(point, measured, documented), predicted) in PROTOTYPE.iter().zip(predicted) {
        rows.push(Row {
            point: format!("prototype {point}"),
            measured,
            predicted,
            documented,
        });
    }
    rows
}

#[test]
fn held_out_figures_are_as_documented() {
    let rows = held_out();
    eprintln!(
        "{:52} {:>10} {:>10} {:>7}",
        "point", "measured", "predicted", "error"
    );
    for r in &rows {
        eprintln!(
            "{:52} {:>10.0} {:>10.0} {:>+6.1}%",
            r.point,
            r.measured,
            r.predicted,
            r.error()
        );
    }
    for r in &rows {
        assert!(
            (r.error() - r.documented).abs() < 3.0,
            "{}: {:+.1} %, documented {:+.0} %: update the module docs",
            r.point,
            r.error(),
            r.documented
        );
    }
}
