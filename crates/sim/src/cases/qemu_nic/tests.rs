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

/// The one calibration: the e1000 testbed's baseline run, its transactions/s and interrupts/s.
fn costs() -> QemuNicCosts {
    static COSTS: std::sync::OnceLock<QemuNicCosts> = std::sync::OnceLock::new();
    *COSTS.get_or_init(|| {
        QemuNicCosts::calibrate_with_interrupts(
            QemuNic::E1000,
            &defaults(QemuNic::E1000),
            BASELINE.trans,
            BASELINE.ints,
        )
        .unwrap()
    })
}

fn predict(nic: QemuNic, s: QemuNicSettings) -> QemuNicPrediction {
    predict_rr(nic, &s, &costs(), SEED, RUN).unwrap()
}

/// The calibrated guest, with QEMU's main loop as prompt as it can be (one host wake-up): the
/// device's logic without the testbed's load stretching its windows.
fn predict_prompt(nic: QemuNic, s: QemuNicSettings) -> QemuNicPrediction {
    let prompt = QemuNicCosts {
        main_loop_wake: MAIN_LOOP_WAKE,
        ..costs()
    };
    predict_rr(nic, &s, &prompt, SEED, RUN).unwrap()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b) / b
}

#[test]
fn calibration_baseline_reproduced() {
    let c = costs();
    let p = predict(QemuNic::E1000, defaults(QemuNic::E1000));
    assert!(
        rel(p.transactions_per_sec, BASELINE.trans).abs() < 0.01,
        "{p:?}"
    );
    assert!(
        rel(p.interrupts_per_sec, BASELINE.ints).abs() < 0.02,
        "{p:?}"
    );
    // 1/3398 s = 294 µs ≈ the floor's 128 µs window ended ≈140 µs late (≈270 µs), plus a
    // second window for the ≈8 % of transactions whose pair splits: the reply's write-back and
    // the next request mostly wait in the same window and share its interrupt (1.08
    // interrupts, ≈1.85 frames per interrupt), ≈200 µs of guest work fitting in it.
    assert!((120_000..160_000).contains(&c.main_loop_wake.0), "{c:?}");
    assert!((170_000..220_000).contains(&c.request.0), "{c:?}");
    assert!(p.packets_per_interrupt > 1.8, "{p:?}");
    // The prototype's TCG p50: ≈200–350 µs.
    assert!((200.0..350.0).contains(&p.p50_us), "{p:?}");
}

#[test]
fn a_late_window_end_lets_the_reply_and_the_next_request_share_one_interrupt() {
    // With the main loop prompt the floor's window ends before the next request arrives: the
    // reply's write-back is raised alone, then the request in the window the write-back
    // opened — two interrupts per transaction, one frame each.
    let prompt = predict_prompt(QemuNic::E1000, defaults(QemuNic::E1000));
    assert!(
        rel(prompt.interrupts_per_sec, 2.0 * prompt.transactions_per_sec).abs() < 0.05,
        "{prompt:?}"
    );
    assert!((prompt.packets_per_interrupt - 1.0).abs() < 0.05);
    // Ended late, the window that the request's interrupt opened still runs at the reply's
    // TDT write (held) and at the next request's arrival (the edge already pending): one
    // interrupt carries both.
    let late = predict(QemuNic::E1000, defaults(QemuNic::E1000));
    assert!(
        late.interrupts_per_sec < 1.1 * late.transactions_per_sec,
        "{late:?}"
    );
    // And the merged interrupt carries TXDW with IDE set, so with TxIntDelay 8 it opens
    // TADV's floored window, not ITR's: as long as replies keep sharing, a fixed rate of
    // 1000/s does not bind — while with TxIntDelay 0 it does.
    let floor = late.transactions_per_sec;
    let tx8 = predict(QemuNic::E1000, e1000(1_000, 8));
    let tx0 = predict(QemuNic::E1000, e1000(1_000, 0));
    assert!(tx8.transactions_per_sec > 0.75 * floor, "{tx8:?}");
    assert!(tx0.transactions_per_sec < 1_000.0, "{tx0:?}");
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
    // TxIntDelay 0: the window is ITR alone, ended as late as the main loop runs. Each expiry
    // raises the waiting request together with the previous reply's write-back and opens the
    // next window: one transaction, one interrupt and two frames per window.
    for (itr, itr_us) in [(2_000, 499.97), (500, 1999.87), (100, 9999.87)] {
        let window_us = itr_us + costs().main_loop_wake.0 as f64 / 1e3;
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
    // floor, so after the reply's interrupt the next request waits 128 µs, not 10 ms, and —
    // with the main loop prompt, the short window ending before the next reply — only every
    // other request meets a 10 ms window.
    let strict = predict_prompt(QemuNic::E1000, e1000(100, 0));
    let leaky = predict_prompt(QemuNic::E1000, e1000(100, 8));
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
    // The device's logic, with the main loop prompt.
    let c = predict_prompt(QemuNic::E1000, defaults(QemuNic::E1000));
    let e = predict_prompt(QemuNic::E1000e, defaults(QemuNic::E1000e));
    // The tx vector's window does not hold the next request: the period is the guest's
    // work plus the host turnaround, not work plus 128 µs.
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
    let fixed = predict_prompt(QemuNic::E1000e, e1000e(2_000));
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
fn rx_usecs_4_set_at_run_time_starts_from_the_watchdogs_pass_over_the_rr() {
    // A tune waits for mode 4's watchdog pass after setting it (the pass's good octets are
    // the RR's, symmetric): the run is paced at 2,000/s throughout, as rx-usecs 500 is. The
    // module parameter starts from the idle link's 8,000/s instead (the test above).
    for nic in [QemuNic::E1000, QemuNic::E1000e] {
        let at = |us| QemuNicSettings {
            rx_usecs: Some(us),
            ..defaults(nic)
        };
        let settled = predict(nic, at(4)).transactions_per_sec;
        let paced = predict(nic, at(500)).transactions_per_sec;
        assert!(
            rel(settled, paced).abs() < 0.02,
            "{nic:?}: {settled} vs {paced}"
        );
        // Where the throttle binds (TxIntDelay 0; e1000e ignores it under MSI-X).
        let binding = |s: QemuNicSettings| QemuNicSettings {
            tx_int_delay: 0,
            ..s
        };
        let settled = predict(nic, binding(at(4))).transactions_per_sec;
        let loaded = QemuNicSettings {
            interrupt_throttle_rate: 4,
            ..binding(defaults(nic))
        };
        let loaded = predict(nic, loaded).transactions_per_sec;
        assert!(loaded > settled * 1.05, "{nic:?}: {loaded} vs {settled}");
    }
}

#[test]
fn module_mode_4_waited_for_runs_as_rx_usecs_4_does() {
    // A tune warms mode 4 up until the watchdog's first pass with traffic, after a reload as
    // after an ethtool change: then the module parameter and rx-usecs 4 are one register
    // state, paced at the RR's symmetric 2,000/s from the start.
    for nic in [QemuNic::E1000, QemuNic::E1000e] {
        let binding = QemuNicSettings {
            tx_int_delay: 0,
            ..defaults(nic)
        };
        let waited = QemuNicSettings {
            interrupt_throttle_rate: 4,
            after_watchdog_pass: true,
            ..binding
        };
        let at_run_time = QemuNicSettings {
            rx_usecs: Some(4),
            ..binding
        };
        let (a, b) = (predict(nic, waited), predict(nic, at_run_time));
        assert_eq!(a.transactions_per_sec, b.transactions_per_sec, "{nic:?}");
        let straight = QemuNicSettings {
            after_watchdog_pass: false,
            ..waited
        };
        let straight = predict(nic, straight).transactions_per_sec;
        assert!(
            straight > a.transactions_per_sec * 1.05,
            "{nic:?}: {straight} vs {a:?}"
        );
    }
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
fn calibrate_refuses_what_it_cannot_use() {
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
    // Another baseline: e1000e at its defaults, 4,200 trans/s, reproduces itself; its
    // interrupt count (one per cause per vector: the pending flags clear) says nothing of the
    // main loop's lateness.
    let ee = defaults(QemuNic::E1000e);
    let c = QemuNicCosts::calibrate(QemuNic::E1000e, &ee, 4_200.0).unwrap();
    let p = predict_rr(QemuNic::E1000e, &ee, &c, SEED, RUN).unwrap();
    assert!(rel(p.transactions_per_sec, 4_200.0).abs() < 0.01, "{p:?}");
    assert_eq!(c.main_loop_wake, MAIN_LOOP_WAKE);
    assert_eq!(
        QemuNicCosts::calibrate_with_interrupts(QemuNic::E1000e, &ee, 4_200.0, 8_400.0),
        Ok(c)
    );
    // Out of reach in either state of QEMU's pending flags: the error, not a guess.
    assert!(matches!(
        QemuNicCosts::calibrate_with_interrupts(QemuNic::E1000e, &ee, 10_000.0, 40_000.0),
        Err(QemuNicError::Unreachable { .. })
    ));
    assert_eq!(
        QemuNicCosts::calibrate_with_interrupts(QemuNic::E1000, &s, BASELINE.trans, 0.0),
        Err(QemuNicError::NoInterrupts)
    );
    // Two interrupts per transaction or more: the main loop as prompt as it can be.
    let two =
        QemuNicCosts::calibrate_with_interrupts(QemuNic::E1000, &s, 3_000.0, 6_500.0).unwrap();
    assert_eq!(
        two,
        QemuNicCosts::calibrate(QemuNic::E1000, &s, 3_000.0).unwrap()
    );
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
    (4000, 8, 41.0, 22.0),
    (0, 8, 56.0, 35.0),
    (0, 0, 33.0, 41.0),
    (1, 8, 31.0, 24.0),
    (1, 0, 25.0, 31.0),
    (3, 8, 76.0, 48.0),
    (3, 0, 18.0, 24.0),
    (8000, 8, 3.0, -6.0),
    (8000, 0, 15.0, 7.0),
    (20000, 8, -3.0, -6.0),
    (20000, 0, 8.0, -3.0),
    (100000, 8, -2.0, -7.0),
    (100000, 0, -5.0, -8.0),
    (4000, 0, -2.0, -5.0),
    (4, 8, -2.0, -6.0),
    (2000, 8, 9.0, 1.0),
    (4, 0, -35.0, -36.0),
    (2000, 0, -9.0, -9.0),
    (1000, 8, 12.0, 5.0),
    (1000, 0, -5.0, -6.0),
    (300, 8, 82.0, 60.0),
    (300, 0, -3.0, -3.0),
    (100, 8, 266.0, 190.0),
    (100, 0, -1.0, -2.0),
];

/// The prototype's figures that the testbed's tune did not measure again (e1000e, and a
/// latency), with their documented errors in %. The prototype's interrupt counts were 0.80–0.85
/// of its transaction counts even where QEMU allows no fewer interrupts than transactions, so
/// they were likely taken over another interval than the transactions.
const PROTOTYPE: &[(&str, f64, f64)] = &[
    ("e1000 ITR 100, TxIntDelay 0: p50 µs", 10_090.0, 0.0),
    ("e1000e defaults: trans/s (≈4,000–4,500)", 4_250.0, -10.0),
    ("e1000e ITR 2000: trans/s", 2_173.0, 4.0),
    ("e1000e ITR 500: trans/s", 763.0, 10.0),
    ("e1000e ITR 2000: rx vector ints/s", 1_838.0, 22.0),
    ("e1000e ITR 500: rx vector ints/s", 614.0, 36.0),
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

fn napi(defer: u32, timeout_us: u64) -> QemuNicSettings {
    QemuNicSettings {
        napi_defer_hard_irqs: defer,
        gro_flush_timeout: Nanos::from_micros(timeout_us),
        ..defaults(QemuNic::E1000)
    }
}

#[test]
fn napi_deferral_needs_both_settings_and_then_polls_on_the_timer_instead_of_interrupts() {
    let base = predict(QemuNic::E1000, defaults(QemuNic::E1000));
    // Deferral without a timeout, or a timeout without deferral: nothing changes.
    assert_eq!(predict(QemuNic::E1000, napi(2, 0)), base);
    assert_eq!(predict(QemuNic::E1000, napi(0, 100)), base);
    // With QEMU's main loop as prompt as it gets, two empty polls 100 µs apart outlast the
    // server's work and the gap to the next request: the interrupt stays masked and the
    // timer's polls take the requests.
    let base = predict_prompt(QemuNic::E1000, defaults(QemuNic::E1000));
    let long = predict_prompt(QemuNic::E1000, napi(2, 100));
    assert!(
        long.interrupts_per_sec < base.interrupts_per_sec / 20.0,
        "{long:?} vs {base:?}"
    );
    assert!(long.packets_per_interrupt > 20.0, "{long:?}");
    // 20 µs timer polls preempt the server's work and use the deferral up before the reply
    // is out: every request is an interrupt again.
    let short = predict_prompt(QemuNic::E1000, napi(2, 20));
    assert!(
        short.interrupts_per_sec > 0.5 * base.interrupts_per_sec,
        "{short:?} vs {base:?}"
    );
}

/// A run-time tune of the e1000 testbed (`nictune tune --testbed e1000 --runtime --budget
/// 100 --duration 1s --warmup 300ms`, 2026-11-27, 1–9 runs per point): the NAPI settings, the
/// mean transactions/s and the guest's `eth0` interrupts/s.
struct MeasuredNapi {
    defer: u32,
    timeout_us: u64,
    trans: f64,
    ints: f64,
}

/// That tune's settings as found (rx-usecs 3, no deferral): its own calibration point.
const NAPI_BASELINE: MeasuredNapi = MeasuredNapi {
    defer: 0,
    timeout_us: 0,
    trans: 2366.0,
    ints: 4603.0,
};

/// Held out: the deferral points at rx-usecs 3 (the driver's default mode, as found).
const NAPI_HELD_OUT: &[MeasuredNapi] = &[
    MeasuredNapi {
        defer: 2,
        timeout_us: 100,
        trans: 3330.0,
        ints: 23.0,
    },
    MeasuredNapi {
        defer: 2,
        timeout_us: 20,
        trans: 3047.0,
        ints: 2002.0,
    },
    MeasuredNapi {
        defer: 0,
        timeout_us: 100,
        trans: 2348.0,
        ints: 4520.0,
    },
    MeasuredNapi {
        defer: 2,
        timeout_us: 0,
        trans: 2612.0,
        ints: 5018.0,
    },
];

#[test]
fn napi_deferral_predicted_from_the_runtime_tunes_own_baseline() {
    let costs = QemuNicCosts::calibrate_with_interrupts(
        QemuNic::E1000,
        &defaults(QemuNic::E1000),
        NAPI_BASELINE.trans,
        NAPI_BASELINE.ints,
    )
    .unwrap();
    for m in NAPI_HELD_OUT {
        let s = napi(m.defer, m.timeout_us);
        let p = predict_rr(QemuNic::E1000, &s, &costs, SEED, RUN).unwrap();
        // The rate within the testbed's acceptance band (15 %) at every point.
        let rate = rel(p.transactions_per_sec, m.trans);
        assert!(
            rate.abs() < 0.15,
            "defer {} / {} µs: {p:?}",
            m.defer,
            m.timeout_us
        );
        // Interrupts: masked (tens per second) where the deferral holds; where it runs out
        // (20 µs) the model gets the order but fewer than measured (≈840 against ≈2,000);
        // without deferral, the baseline's.
        match (m.defer, m.timeout_us) {
            (2, 100) => assert!(p.interrupts_per_sec < 100.0, "{p:?}"),
            (2, 20) => assert!((300.0..m.ints).contains(&p.interrupts_per_sec), "{p:?}"),
            _ => assert!(rel(p.interrupts_per_sec, m.ints).abs() < 0.15, "{p:?}"),
        }
    }
}

/// A run-time tune of the e1000e guest (`nictune tune --testbed e1000e --runtime --predict
/// --budget 100 --duration 1s --warmup 300ms`, release build, 2-vCPU build VM, 2026-11-28):
/// the settings as found, rx-usecs, the NAPI deferral, and the means over the points whose
/// rx-usecs all land on QEMU's 128 µs floor (0, 1, 3, 10, 50 and 125: `e1000e_set_eitr` keeps
/// at least 500 units, so these are one setting in effect and their spread is the runs'
/// noise, ±8 %); transactions/s and the guest's interrupts/s over its three MSI-X vectors.
struct MeasuredE1000e {
    rx_usecs: u32,
    defer: u32,
    timeout_us: u64,
    trans: f64,
    ints: f64,
}

/// That tune's settings as found (rx-usecs 3, no deferral): its only calibration point.
const E1000E_BASELINE: MeasuredE1000e = MeasuredE1000e {
    rx_usecs: 3,
    defer: 0,
    timeout_us: 0,
    trans: 3275.0,
    ints: 11551.0,
};

/// Held out.
const E1000E_HELD_OUT: &[MeasuredE1000e] = &[
    // Six settings on the floor, no deferral: 3,022–3,527 trans/s.
    MeasuredE1000e {
        rx_usecs: 125,
        defer: 0,
        timeout_us: 0,
        trans: 3419.0,
        ints: 11940.0,
    },
    // rx-usecs 500: 2,000/s on every vector.
    MeasuredE1000e {
        rx_usecs: 500,
        defer: 0,
        timeout_us: 0,
        trans: 2400.0,
        ints: 4840.0,
    },
    // On the floor, deferral 2 with 20 µs: 2,575–3,029 trans/s.
    MeasuredE1000e {
        rx_usecs: 125,
        defer: 2,
        timeout_us: 20,
        trans: 2906.0,
        ints: 9844.0,
    },
    // rx-usecs 4 once the watchdog's pass has written 2,000/s: the mean of the mode-4 points
    // whose deferral does not act (2, 0 µs; 0, 20 µs; 0, 100 µs: 2,385–2,540 trans/s). The
    // first mode-4 point after the switch, measured before that pass (123 trans/s), is left
    // out: the tune now waits for the pass.
    MeasuredE1000e {
        rx_usecs: 4,
        defer: 0,
        timeout_us: 0,
        trans: 2443.0,
        ints: 4904.0,
    },
    // On the floor, deferral 2 with 100 µs: 2,823–3,280 trans/s.
    MeasuredE1000e {
        rx_usecs: 125,
        defer: 2,
        timeout_us: 100,
        trans: 3066.0,
        ints: 5727.0,
    },
];

fn e1000e_runtime(m: &MeasuredE1000e) -> QemuNicSettings {
    QemuNicSettings {
        rx_usecs: Some(m.rx_usecs),
        napi_defer_hard_irqs: m.defer,
        gro_flush_timeout: Nanos::from_micros(m.timeout_us),
        ..defaults(QemuNic::E1000e)
    }
}

#[test]
fn an_e1000e_guest_whose_vectors_were_once_postponed_fires_at_every_expiry() {
    // Calibrated on the tune's settings as found: 3.5 interrupts per transaction is twice what
    // two vectors with one cause each give, so QEMU 7.2's pending flags were set before the
    // run (the guest had carried the tune's serve session and earlier runs); no parameter
    // takes the count.
    let base = e1000e_runtime(&E1000E_BASELINE);
    let b = E1000E_BASELINE;
    let costs =
        QemuNicCosts::calibrate_with_interrupts(QemuNic::E1000e, &base, b.trans, b.ints).unwrap();
    assert!(costs.postponed_before, "{costs:?}");
    let p = predict_rr(QemuNic::E1000e, &base, &costs, SEED, RUN).unwrap();
    assert!(rel(p.transactions_per_sec, b.trans).abs() < 0.01, "{p:?}");
    assert!(rel(p.interrupts_per_sec, b.ints).abs() < 0.15, "{p:?}");
    // The same guest with the flags clear would take half of it: one interrupt per cause.
    let fresh = QemuNicCosts {
        postponed_before: false,
        ..costs
    };
    let f = predict_rr(QemuNic::E1000e, &base, &fresh, SEED, RUN).unwrap();
    assert!(rel(f.interrupts_per_sec, b.ints) < -0.4, "{f:?}");
    for m in E1000E_HELD_OUT {
        let p = predict_rr(QemuNic::E1000e, &e1000e_runtime(m), &costs, SEED, RUN).unwrap();
        let what = format!(
            "rx-usecs {} defer {} / {} µs: {p:?}",
            m.rx_usecs, m.defer, m.timeout_us
        );
        assert!(rel(p.transactions_per_sec, m.trans).abs() < 0.15, "{what}");
        assert!(rel(p.interrupts_per_sec, m.ints).abs() < 0.15, "{what}");
    }
    // Deferral masks the RX vector only: e1000e cleans tx in its own MSI-X handler, which the
    // NAPI timer does not replace, so the TX vector keeps firing.
    let d = predict_rr(
        QemuNic::E1000e,
        &e1000e_runtime(&E1000E_HELD_OUT[4]),
        &costs,
        SEED,
        RUN,
    )
    .unwrap();
    let v = d.vectors.unwrap();
    assert!(v.rx < v.tx / 3.0, "{v:?}");
}
