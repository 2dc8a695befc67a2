//! Ping-like probes: one probe every `interval` whether or not earlier replies came back
//! (open loop, like `ping -i`), each carrying its sequence number and intended send time so
//! the reply alone tells which probe it answers. Latency is intended send → reply received,
//! taken in user space (like `ping -U`, not the kernel receive timestamp `ping` uses by
//! default, which leaves out the wake-up of the receiving process).

use super::{Bounds, ConnStats};
use crate::cancel::POLL_SLICE;
use crate::clock::Clock;
use crate::conn::Conn;
use nictune_core::units::Nanos;
use std::collections::HashSet;
use std::io;

/// Bytes at the start of each probe: sequence number and intended send time, little endian.
pub const PROBE_HEADER: usize = 16;

/// Probe schedule and size.
#[derive(Debug, Clone, Copy)]
pub struct PingParams {
    /// Probe payload, bytes, header included; smaller sizes are raised to [`PROBE_HEADER`].
    pub size: usize,
    /// Intended send time of the first probe, engine clock, ns.
    pub first: Nanos,
    /// Time between intended sends, ns.
    pub interval: Nanos,
}

/// Writes probe `seq`'s header into `buf`.
pub fn encode(buf: &mut [u8], seq: u64, intended: Nanos) {
    buf[..8].copy_from_slice(&seq.to_le_bytes());
    buf[8..16].copy_from_slice(&intended.0.to_le_bytes());
}

/// Reads a reply's header; `None` for a datagram too short to be ours.
pub fn decode(buf: &[u8]) -> Option<(u64, Nanos)> {
    let seq = u64::from_le_bytes(buf.get(..8)?.try_into().ok()?);
    let at = u64::from_le_bytes(buf.get(8..16)?.try_into().ok()?);
    Some((seq, Nanos(at)))
}

/// Sends probes through the window and collects replies until all are in or the hard end.
pub fn run<C, K>(conn: &mut C, clock: &K, p: &PingParams, b: &Bounds) -> io::Result<ConnStats>
where
    C: Conn + ?Sized,
    K: Clock + ?Sized,
{
    let mut stats = ConnStats::new(&b.window);
    let mut probe = vec![0u8; p.size.max(PROBE_HEADER)];
    let mut reply = vec![0u8; probe.len()];
    let mut waiting: HashSet<u64> = HashSet::new();
    let (mut seq, mut due) = (0u64, p.first);
    loop {
        let now = clock.now();
        let sending = due < b.window.end;
        if b.must_stop(now) || (!sending && waiting.is_empty()) {
            break;
        }
        if sending && now >= due {
            encode(&mut probe, seq, due);
            conn.send(&probe)?;
            waiting.insert(seq);
            (seq, due) = (seq + 1, due + p.interval);
            continue;
        }
        let until = if sending { due } else { b.hard_end };
        let until = until.min(now + Nanos(POLL_SLICE.as_nanos() as u64));
        let Some(n) = conn.recv(&mut reply, Some(until))? else {
            continue;
        };
        let t = clock.now();
        match decode(&reply[..n]) {
            Some((s, intended))
                if intended == schedule(p, s)
                    && waiting.remove(&s)
                    && b.window.contains(intended) =>
            {
                stats.complete(b, intended, t.saturating_sub(intended));
            }
            _ => {} // warm-up, not one of ours, a duplicate, or tampered: ignore
        }
    }
    let in_window = |s: &&u64| b.window.contains(schedule(p, **s));
    stats.lost = waiting.iter().filter(in_window).count() as u64;
    Ok(stats)
}

/// When probe `seq` was due.
fn schedule(p: &PingParams, seq: u64) -> Nanos {
    p.first + Nanos(p.interval.0 * seq)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cancel::Cancel;
    use crate::clock::FakeClock;
    use crate::fake::FakeConn;
    use crate::window::Window;

    fn bounds() -> Bounds {
        let w = Window::after_warmup(Nanos::ZERO, Nanos::from_millis(1_000), Nanos::from_secs(2));
        Bounds::new(w, Cancel::new())
    }

    #[test]
    fn header_round_trips_and_short_datagrams_are_rejected() {
        let mut buf = [0u8; 20];
        encode(&mut buf, 7, Nanos(123_456));
        assert_eq!(decode(&buf), Some((7, Nanos(123_456))));
        assert_eq!(decode(&buf[..15]), None);
    }

    #[test]
    fn probes_follow_the_schedule_and_losses_are_counted() {
        let clock = FakeClock::new();
        // Replies take 40 µs; every tenth probe is lost.
        let script: crate::fake::RttScript =
            Box::new(|n| (n % 10 != 3).then_some(Nanos::from_micros(40)));
        let mut conn = FakeConn::new(clock.clone(), script);
        let p = PingParams {
            size: 64,
            first: Nanos::ZERO,
            interval: Nanos::from_millis(100),
        };
        let s = run(&mut conn, &clock, &p, &bounds()).unwrap();
        // 30 probes in 3 s, of which 20 were due in the measured 2 s; 2 of those lost.
        assert_eq!(conn.sent(), 30);
        assert_eq!(s.completed, 18);
        assert_eq!(s.lost, 2);
        assert!((s.latency.summary().unwrap().p50 - 40.0).abs() < 0.05);
        // A lost probe keeps the loop waiting only until the hard end.
        assert!(clock.now() <= bounds().hard_end);
    }

    #[test]
    fn a_slow_reply_does_not_delay_the_next_probe() {
        let clock = FakeClock::new();
        let script: crate::fake::RttScript = Box::new(|n| {
            Some(if n == 12 {
                Nanos::from_millis(250)
            } else {
                Nanos::from_micros(40)
            })
        });
        let mut conn = FakeConn::new(clock.clone(), script);
        let p = PingParams {
            size: 16,
            first: Nanos::ZERO,
            interval: Nanos::from_millis(100),
        };
        let s = run(&mut conn, &clock, &p, &bounds()).unwrap();
        // The fake keeps replies in order, so the two probes behind the slow one wait too:
        // three samples near 250, 150 and 50 ms, the rest 40 µs.
        assert_eq!(s.completed, 20);
        assert!(s.latency.summary().unwrap().max >= 250_000.0 * 0.999);
        assert_eq!(conn.sent(), 30);
    }
}
