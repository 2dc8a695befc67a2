//! The receive host's mechanisms on their own.

use super::*;
use crate::moderation::Fixed;

fn overload(mode: RxMode) -> RxHostOutcome {
    run(RxHostParams {
        link_bps: 1e9,
        offered_pps: 400_000.0,
        frame: Bytes(64),
        ring: 256,
        socket_frames: 64,
        mode,
        costs: HostCosts {
            irq: Nanos(2_000),
            poll: Nanos(500),
            per_frame: Nanos(3_000),
            app_per_frame: Nanos(1_000),
        },
        extras: RxHostExtras {
            probe_every: Some(Nanos::from_millis(10)),
            ..RxHostExtras::default()
        },
        duration: Nanos::from_millis(200),
        seed: 9,
    })
}

#[test]
fn busy_time_never_exceeds_the_run_and_frames_are_conserved() {
    let modes = [
        RxMode::Polling(PollingConfig::default()),
        RxMode::Interrupts {
            policy: Box::new(Fixed(Coalescing::OFF)),
            weight: 64,
        },
        RxMode::Interrupts {
            policy: Box::new(Fixed(Coalescing::throttle(Nanos::from_micros(50)))),
            weight: 64,
        },
    ];
    for mode in modes {
        let o = overload(mode);
        let busy = (o.cpu.irq + o.cpu.softirq + o.cpu.user) as f64 / 0.2e9;
        // Work is charged when it starts, so the last unit may run past the end.
        assert!(busy <= 1.0 + 1e-3, "busy {busy}");
        assert!(o.consumed + o.socket_drops <= o.received);
        assert!(o.ring_drops > 0, "overloaded");
    }
}

#[test]
fn interrupts_without_moderation_starve_the_application_polling_does_not() {
    let intr = overload(RxMode::Interrupts {
        policy: Box::new(Fixed(Coalescing::OFF)),
        weight: 64,
    });
    let poll = overload(RxMode::Polling(PollingConfig::default()));
    assert!(
        poll.consumed > intr.consumed,
        "{} vs {}",
        poll.consumed,
        intr.consumed
    );
}

fn light(busy_poll: Option<BusyPollConfig>) -> RxHostOutcome {
    run(RxHostParams {
        link_bps: 1e9,
        offered_pps: 20_000.0,
        frame: Bytes(200),
        ring: 256,
        socket_frames: 64,
        mode: RxMode::Interrupts {
            policy: Box::new(Fixed(Coalescing::throttle(Nanos::from_micros(125)))),
            weight: 64,
        },
        costs: HostCosts {
            irq: Nanos(2_000),
            poll: Nanos(500),
            per_frame: Nanos(1_000),
            app_per_frame: Nanos(1_000),
        },
        extras: RxHostExtras {
            probe_every: Some(Nanos::from_millis(1)),
            busy_poll,
            ..RxHostExtras::default()
        },
        duration: Nanos::from_millis(500),
        seed: 4,
    })
}

#[test]
fn busy_read_trades_cpu_for_latency() {
    let plain = light(None);
    let busy = light(Some(BusyPollConfig::new(Nanos::from_micros(100))));
    let (lp, lb) = (
        plain.metrics.latency_us.unwrap().mean,
        busy.metrics.latency_us.unwrap().mean,
    );
    assert!(lb < 0.5 * lp, "busy {lb} µs vs plain {lp} µs");
    assert!(busy.cpu.system > 0 && plain.cpu.system == 0);
    assert_eq!(busy.consumed + busy.socket_drops, busy.received);
    assert!(busy.received >= plain.received - 5);
}

/// A host under the 2.6.32 rules, fed `pps` frames of 100 bytes.
fn linux_host(pps: f64, per_frame: Nanos, app: Nanos) -> RxHostOutcome {
    run(RxHostParams {
        link_bps: 10e9,
        offered_pps: pps,
        frame: Bytes(100),
        ring: 512,
        socket_frames: 1 << 20,
        mode: RxMode::Interrupts {
            policy: Box::new(Fixed(Coalescing::throttle(Nanos::from_micros(10)))),
            weight: 64,
        },
        costs: HostCosts {
            irq: Nanos(2_000),
            poll: Nanos(1_000),
            per_frame,
            app_per_frame: app,
        },
        extras: RxHostExtras {
            probe_every: Some(Nanos::from_millis(5)),
            linux: Some(Linux2632 {
                hz: 1000,
                ksoftirqd_switch: Nanos(3_000),
            }),
            ..RxHostExtras::default()
        },
        duration: Nanos::from_millis(300),
        seed: 5,
    })
}

#[test]
fn linux_2632_overload_squeezes_the_budget_and_hands_off_to_ksoftirqd() {
    // 1.2 µs per frame at 1 Mpps: more work than CPU, so net_rx_action keeps finding the
    // NAPI listed, stops on its 300-packet budget, and ten restarts later ksoftirqd takes over.
    let o = linux_host(1e6, Nanos(1_200), Nanos::ZERO);
    let s = o.softirq.expect("2.6.32 rules");
    assert!(s.time_squeezes > 100, "{s:?}");
    assert!(s.ksoftirqd_wakeups > 10, "{s:?}");
    assert!(s.restarts >= 9 * s.ksoftirqd_wakeups, "{s:?}");
    assert!(o.ring_drops > 0, "overloaded");
}

#[test]
fn linux_2632_below_capacity_never_reaches_the_restart_limit() {
    // 50 % busy with 1 µs frames every 2 µs on average: interrupts come in during passes
    // (the NAPI is polled again in the same pass), but a pass ends as soon as a poll
    // completes with nothing due, so restarts stay single and ksoftirqd is never woken.
    let o = linux_host(250_000.0, Nanos(1_000), Nanos::ZERO);
    let s = o.softirq.expect("2.6.32 rules");
    assert!(s.in_pass_irqs > 100, "{s:?}");
    assert_eq!(s.ksoftirqd_wakeups, 0, "{s:?}");
    assert_eq!(o.ring_drops, 0);
}

#[test]
fn work_left_to_ksoftirqd_waits_for_the_application_or_the_next_tick() {
    // With an application on the CPU, the hand-off costs the probes: the vector stays
    // masked until ksoftirqd runs after the application's frame or the next tick.
    let busy_app = linux_host(1e6, Nanos(1_200), Nanos(5_000));
    let s = busy_app.softirq.unwrap();
    assert!(s.ksoftirqd_wakeups > 0, "{s:?}");
    let l = busy_app.metrics.latency_us.unwrap();
    let no_app = linux_host(1e6, Nanos(1_200), Nanos::ZERO);
    assert!(
        l.max <= 1_000.0 + 2.0 * 300.0 * 1.2 + 100.0,
        "bounded by a tick plus two budgets: {}",
        l.max
    );
    assert!(
        busy_app.cpu.system > 0 && no_app.cpu.system > 0,
        "ksoftirqd switches"
    );
}

#[test]
fn every_taken_tcp_segment_sends_an_ack_whose_completion_is_an_interrupt_cause() {
    let base = |tx: Option<TxCauses>| {
        run(RxHostParams {
            link_bps: 10e9,
            offered_pps: 20_000.0,
            frame: Bytes(106),
            ring: 512,
            socket_frames: 1 << 20,
            mode: RxMode::Interrupts {
                policy: Box::new(Fixed(Coalescing::OFF)),
                weight: 64,
            },
            costs: HostCosts {
                irq: Nanos(1_000),
                poll: Nanos(1_000),
                per_frame: Nanos(500),
                app_per_frame: Nanos::ZERO,
            },
            extras: RxHostExtras {
                tcp: Some(TcpSenders {
                    connections: 50,
                    write: Bytes(40),
                    init_cwnd: 3,
                    one_way: Nanos::from_micros(20),
                    ack_after: Nanos::from_micros(30),
                }),
                tx,
                ..RxHostExtras::default()
            },
            duration: Nanos::from_millis(500),
            seed: 3,
        })
    };
    let acks = base(Some(TxCauses::Acks));
    let none = base(None);
    assert_eq!(acks.tx_causes, acks.received, "one ACK per segment");
    assert!(
        acks.interrupts_per_sec > 1.5 * none.interrupts_per_sec,
        "{} vs {}",
        acks.interrupts_per_sec,
        none.interrupts_per_sec
    );
    let t = acks.tcp.unwrap();
    let in_ring = acks.ledgers[0].in_flight;
    assert!(t.segments >= acks.received + in_ring, "{t:?}");
    assert!(
        t.coalesced_writes * 100 < t.writes,
        "the window rarely binds: {t:?}"
    );
}

/// An open-loop host fed `pps` 64-byte frames on a 1 Gbit/s link for 2 s.
fn open_loop(mode: RxMode, pps: f64, costs: HostCosts, seed: u64) -> RxHostOutcome {
    run(RxHostParams {
        link_bps: 1e9,
        offered_pps: pps,
        frame: Bytes(64),
        ring: 256,
        socket_frames: 256,
        mode,
        costs,
        extras: RxHostExtras::default(),
        duration: Nanos::from_secs(2),
        seed,
    })
}

#[test]
fn polling_caps_at_hz_times_burst_max_and_keeps_the_user_share() {
    let cfg = PollingConfig::default();
    let cheap = HostCosts {
        irq: Nanos(0),
        poll: Nanos(100),
        per_frame: Nanos(100),
        app_per_frame: Nanos(100),
    };
    let o = open_loop(RxMode::Polling(cfg), 400_000.0, cheap, 1);
    let per_sec = o.received as f64 / 2.0;
    let cap = cfg.max_pps_per_interface() as f64;
    assert!(per_sec <= cap * 1.001, "{per_sec}");
    assert!(per_sec > 0.9 * cap, "{per_sec}");
    assert!(
        o.ring_drops > 0,
        "excess stays in the ring and is dropped there"
    );
    // Overloaded with expensive frames (a slow appliance's costs): the kernel keeps to about
    // (100 − user_frac) %, and the application gets more done than under interrupts.
    let slow = HostCosts {
        irq: Nanos::from_micros(30),
        poll: Nanos::from_micros(3),
        per_frame: Nanos::from_micros(40),
        app_per_frame: Nanos::from_micros(60),
    };
    let heavy = open_loop(RxMode::Polling(cfg), 50_000.0, slow, 2);
    let c = &heavy.metrics.hosts["receiver"].cpu.per_core[0];
    let k = c.irq + c.softirq;
    assert!((0.40..0.60).contains(&k), "kernel share {k}");
    let throttled = RxMode::Interrupts {
        policy: Box::new(Fixed(Coalescing::throttle(Nanos(124_928)))),
        weight: 100,
    };
    let intr = open_loop(throttled, 50_000.0, slow, 2);
    assert!(
        heavy.consumed > intr.consumed,
        "{} vs {}",
        heavy.consumed,
        intr.consumed
    );
}
