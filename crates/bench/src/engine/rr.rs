//! Request/response: netperf TCP_RR / UDP_RR semantics, closed or open loop.
//!
//! Closed loop (default): each connection keeps `outstanding` requests in flight and sends
//! the next one the moment a response arrives; latency is send → last response byte. This
//! is what netperf, sockperf and neper measure, so results compare directly.
//!
//! Open loop (`pace`): requests are due at fixed intended times. A connection still sends at
//! most `outstanding` at once, but latency is taken from each request's *intended* send time,
//! so a stalled peer shows its full stall in every request it delayed instead of silently
//! slowing the sender (no coordinated omission).

use super::{Bounds, ConnStats};
use crate::cancel::POLL_SLICE;
use crate::clock::Clock;
use crate::conn::Conn;
use nictune_core::units::Nanos;
use std::collections::VecDeque;
use std::io;

/// One connection's request/response parameters.
#[derive(Debug, Clone)]
pub struct RrParams {
    /// Request size, bytes.
    pub request: usize,
    /// Response size, bytes (read in full before a transaction completes).
    pub response: usize,
    /// Requests kept in flight on the connection (1 = classic closed-loop RR; spec allows 1–64).
    pub outstanding: u32,
    /// Open loop: time between this connection's intended sends, and the first one.
    pub pace: Option<Pace>,
    /// UDP: a request without a reply after this long is counted lost and replaced.
    pub loss_timeout: Option<Nanos>,
}

/// Open-loop schedule of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Intended send time of the first request, engine clock, ns.
    pub first: Nanos,
    /// Time between intended sends, ns.
    pub interval: Nanos,
}

/// Runs one connection until the window ends, the hard end passes or the run is cancelled.
pub fn run<C, K>(conn: &mut C, clock: &K, p: &RrParams, b: &Bounds) -> io::Result<ConnStats>
where
    C: Conn + ?Sized,
    K: Clock + ?Sized,
{
    let mut state = Loop {
        request: vec![0u8; p.request],
        response: vec![0u8; p.response],
        inflight: VecDeque::with_capacity(p.outstanding as usize),
        stats: ConnStats::new(&b.window),
    };
    match p.pace {
        None => state.closed(conn, clock, p, b)?,
        Some(pace) => state.open(conn, clock, p, pace, b)?,
    }
    Ok(state.stats)
}

struct Loop {
    request: Vec<u8>,
    response: Vec<u8>,
    /// Send (closed) or intended send (open) time of each request in flight, oldest first.
    inflight: VecDeque<Nanos>,
    stats: ConnStats,
}

impl Loop {
    fn closed<C, K>(&mut self, conn: &mut C, clock: &K, p: &RrParams, b: &Bounds) -> io::Result<()>
    where
        C: Conn + ?Sized,
        K: Clock + ?Sized,
    {
        for _ in 0..p.outstanding {
            self.send(conn, clock.now())?;
        }
        loop {
            let got = conn.recv(&mut self.response, None)?;
            let t = clock.now();
            if got.is_none() {
                self.expire(conn, t, p)?;
            } else if let Some(sent) = self.inflight.pop_front() {
                self.stats.complete(b, t, t.saturating_sub(sent));
                if t < b.window.end {
                    self.send(conn, t)?;
                }
            }
            if t >= b.window.end && self.inflight.is_empty() || b.must_stop(t) {
                return Ok(());
            }
        }
    }

    fn open<C, K>(
        &mut self,
        conn: &mut C,
        clock: &K,
        p: &RrParams,
        pace: Pace,
        b: &Bounds,
    ) -> io::Result<()>
    where
        C: Conn + ?Sized,
        K: Clock + ?Sized,
    {
        let mut due = pace.first;
        loop {
            let now = clock.now();
            if b.must_stop(now) || (now >= b.window.end && self.inflight.is_empty()) {
                return Ok(());
            }
            let slot_free = self.inflight.len() < p.outstanding as usize;
            if slot_free && now >= due && due < b.window.end {
                self.send(conn, due)?;
                due += pace.interval;
                continue;
            }
            if self.inflight.is_empty() {
                clock.sleep_until(due.min(now + Nanos(POLL_SLICE.as_nanos() as u64)));
                continue;
            }
            let wait = if slot_free && due < b.window.end {
                due
            } else {
                b.hard_end
            };
            let wait = wait.min(now + Nanos(POLL_SLICE.as_nanos() as u64));
            match conn.recv(&mut self.response, Some(wait))? {
                Some(_) => {
                    let t = clock.now();
                    let intended = self.inflight.pop_front().expect("a request is in flight");
                    self.stats.complete(b, t, t.saturating_sub(intended));
                }
                None => self.expire(conn, clock.now(), p)?,
            }
        }
    }

    /// Sends one request stamped `at`.
    fn send<C: Conn + ?Sized>(&mut self, conn: &mut C, at: Nanos) -> io::Result<()> {
        conn.send(&self.request)?;
        self.inflight.push_back(at);
        Ok(())
    }

    /// UDP: drops the oldest request once its reply is overdue; a closed loop replaces it.
    fn expire<C: Conn + ?Sized>(
        &mut self,
        conn: &mut C,
        now: Nanos,
        p: &RrParams,
    ) -> io::Result<()> {
        let Some(timeout) = p.loss_timeout else {
            return Ok(());
        };
        match self.inflight.front() {
            Some(&sent) if now.saturating_sub(sent) >= timeout => {
                self.inflight.pop_front();
                self.stats.lost += 1;
                if p.pace.is_none() {
                    self.send(conn, now)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cancel::Cancel;
    use crate::clock::FakeClock;
    use crate::fake::FakeConn;
    use crate::window::Window;

    fn params(outstanding: u32, pace: Option<Pace>) -> RrParams {
        RrParams {
            request: 1,
            response: 1,
            outstanding,
            pace,
            loss_timeout: None,
        }
    }

    fn bounds(warmup_ms: u64, duration_ms: u64) -> Bounds {
        let w = Window::after_warmup(
            Nanos::ZERO,
            Nanos::from_millis(warmup_ms),
            Nanos::from_millis(duration_ms),
        );
        Bounds::new(w, Cancel::new())
    }

    #[test]
    fn closed_loop_rate_is_one_over_the_round_trip() {
        let clock = FakeClock::new();
        let mut conn = FakeConn::constant(clock.clone(), Nanos::from_micros(20));
        let b = bounds(500, 2_000);
        let s = run(&mut conn, &clock, &params(1, None), &b).unwrap();
        // 2 s / 20 µs = 100 000 transactions, 50 000 in each interim second.
        assert_eq!(s.completed, 100_000);
        assert_eq!(b.live.load(std::sync::atomic::Ordering::Relaxed), 100_000);
        assert_eq!(
            s.interim.rates(&bounds(500, 2_000).window),
            vec![50_000.0, 50_000.0]
        );
        let l = s.latency.summary().unwrap();
        assert!((l.p50 - 20.0).abs() < 0.02 && (l.max - 20.0).abs() < 0.02);
        // Warm-up transactions were sent but not counted.
        assert_eq!(conn.sent(), 125_000);
    }

    #[test]
    fn outstanding_requests_multiply_the_rate_not_the_latency() {
        let clock = FakeClock::new();
        let mut conn = FakeConn::constant(clock.clone(), Nanos::from_micros(100));
        let s = run(&mut conn, &clock, &params(4, None), &bounds(0, 1_000)).unwrap();
        // Four in flight, each answered 100 µs after it was sent: 4 per 100 µs.
        assert!((39_990..=40_000).contains(&s.completed), "{}", s.completed);
        let l = s.latency.summary().unwrap();
        assert!((l.p99 - 100.0).abs() < 0.1, "{}", l.p99);
    }

    #[test]
    fn closed_loop_hides_a_stall_that_open_loop_reports() {
        // Every request takes 10 µs, except that the server stalls once for 100 ms.
        let script = || -> crate::fake::RttScript {
            Box::new(|n| {
                Some(if n == 5_000 {
                    Nanos::from_millis(100)
                } else {
                    Nanos::from_micros(10)
                })
            })
        };
        let b = bounds(0, 1_000);
        let clock = FakeClock::new();
        let closed = run(
            &mut FakeConn::new(clock.clone(), script()),
            &clock,
            &params(1, None),
            &b,
        )
        .unwrap();
        // Only the one stalled request is slow: p99 stays 10 µs.
        assert!((closed.latency.quantile(0.99).as_micros_f64() - 10.0).abs() < 0.1);

        let clock = FakeClock::new();
        let pace = Pace {
            first: Nanos::ZERO,
            interval: Nanos::from_micros(50),
        };
        let open = run(
            &mut FakeConn::new(clock.clone(), script()),
            &clock,
            &params(1, Some(pace)),
            &b,
        )
        .unwrap();
        // Open loop at 20 000/s: the 2 000 requests due during the stall each waited,
        // so about 10 % of the samples are ≥ 10 µs late and p99 is tens of ms.
        assert!(
            open.latency.quantile(0.99) > Nanos::from_millis(10),
            "{:?}",
            open.latency.summary()
        );
        assert!(
            (open.completed as i64 - 20_000).abs() <= 2,
            "{}",
            open.completed
        );
    }

    #[test]
    fn open_loop_below_capacity_sends_at_the_target_rate() {
        let clock = FakeClock::new();
        let mut conn = FakeConn::constant(clock.clone(), Nanos::from_micros(30));
        let pace = Pace {
            first: Nanos::ZERO,
            interval: Nanos::from_micros(1_000),
        };
        let s = run(
            &mut conn,
            &clock,
            &params(1, Some(pace)),
            &bounds(100, 1_000),
        )
        .unwrap();
        assert_eq!(s.completed, 1_000);
        assert!((s.latency.summary().unwrap().p50 - 30.0).abs() < 0.05);
    }

    #[test]
    fn lost_udp_replies_are_counted_and_replaced() {
        let clock = FakeClock::new();
        let script: crate::fake::RttScript = Box::new(|n| {
            if n % 1_000 == 7 {
                None
            } else {
                Some(Nanos::from_micros(50))
            }
        });
        let mut conn = FakeConn::new(clock.clone(), script);
        let mut p = params(1, None);
        p.loss_timeout = Some(Nanos::from_millis(100));
        let s = run(&mut conn, &clock, &p, &bounds(0, 1_000)).unwrap();
        // Each 1 000 requests take 50 ms plus one 100 ms wait for the lost reply.
        assert!((6..=8).contains(&s.lost), "{}", s.lost);
        assert!((6_000..=7_000).contains(&s.completed), "{}", s.completed);
    }

    #[test]
    fn cancel_stops_the_loop_and_a_dead_peer_cannot_hold_it_past_the_hard_end() {
        let clock = FakeClock::new();
        let mut conn = FakeConn::new(clock.clone(), Box::new(|_| None));
        let b = bounds(0, 1_000);
        let s = run(&mut conn, &clock, &params(1, None), &b).unwrap();
        assert_eq!(s.completed, 0);
        assert!(clock.now() >= b.hard_end && clock.now() < b.hard_end + Nanos::from_millis(200));

        let b = bounds(0, 1_000);
        b.cancel.cancel();
        let clock = FakeClock::new();
        let mut conn = FakeConn::constant(clock.clone(), Nanos::from_micros(10));
        let s = run(&mut conn, &clock, &params(1, None), &b).unwrap();
        assert!(s.completed <= 1);
    }
}
