//! Bulk transfer: write as fast as the socket takes it; throughput and retransmits come
//! from the sender's `TCP_INFO` (`tcpi_bytes_acked`, `tcpi_total_retrans`), so they count
//! what the receiver acknowledged, not what sat in the send buffer when the test ended.

use super::{Bounds, ConnStats};
use crate::clock::Clock;
use crate::conn::{StreamConn, TcpCounters};
use crate::window::{Window, INTERIM};
use nictune_core::units::Nanos;
use std::io;

/// Writes `write_size`-byte chunks through the window. The acknowledged-byte and
/// retransmit counters are sampled between writes and read off at the window's fixed
/// boundaries (its start, every [`INTERIM`], its end) by interpolating between the samples
/// on either side: a connection that a blocked write or a busy CPU kept from looking at the
/// clock still counts exactly the window, and the interim figures of many connections add up
/// interval by interval to the total.
pub fn run<C, K>(conn: &mut C, clock: &K, write_size: usize, b: &Bounds) -> io::Result<ConnStats>
where
    C: StreamConn + ?Sized,
    K: Clock + ?Sized,
{
    let mut stats = ConnStats::new(&b.window);
    let buf = vec![0x5au8; write_size];
    let boundaries = boundaries(&b.window);
    let mut at: Vec<TcpCounters> = Vec::with_capacity(boundaries.len());
    let mut prev: Option<(Nanos, TcpCounters)> = None;
    loop {
        let now = clock.now();
        if b.cancel.is_cancelled() || now >= b.hard_end {
            break;
        }
        let c = conn.counters()?;
        while let Some(&edge) = boundaries.get(at.len()) {
            if now < edge {
                break;
            }
            // No earlier sample: nothing was written before this one, so the counters
            // stood where they stand now.
            at.push(prev.map_or(c, |p| between(p, (now, c), edge)));
        }
        if at.len() == boundaries.len() {
            break;
        }
        prev = Some((now, c));
        conn.write(&buf)?;
    }
    stats.interim_bps = at
        .windows(2)
        .enumerate()
        .map(|(i, pair)| {
            let bits = (pair[1].bytes_acked - pair[0].bytes_acked) as f64 * 8.0;
            bits / b.window.interval_length(i).as_secs_f64()
        })
        .collect();
    if let (Some(first), Some(last)) = (at.first(), at.last()) {
        stats.bytes = last.bytes_acked - first.bytes_acked;
        stats.retransmits = last.total_retrans - first.total_retrans;
    }
    stats.path = Some(conn.path()?);
    Ok(stats)
}

/// The window's start, each interim boundary inside it, and its end.
fn boundaries(w: &Window) -> Vec<Nanos> {
    let mut edges: Vec<Nanos> = (0..w.intervals())
        .map(|i| w.start + Nanos(INTERIM.0 * i as u64))
        .collect();
    edges.push(w.end);
    edges
}

/// The counters at `edge`, between samples `a` and `b` (`a.0 < edge <= b.0`), assuming a
/// steady rate between them; never below `a`'s nor above `b`'s.
fn between(a: (Nanos, TcpCounters), b: (Nanos, TcpCounters), edge: Nanos) -> TcpCounters {
    let span = (b.0 - a.0).0.max(1) as u128;
    let part = (edge.0.saturating_sub(a.0 .0) as u128).min(span);
    let lerp = |x: u64, y: u64| x + (y.saturating_sub(x) as u128 * part / span) as u64;
    TcpCounters {
        bytes_acked: lerp(a.1.bytes_acked, b.1.bytes_acked),
        total_retrans: lerp(a.1.total_retrans, b.1.total_retrans),
    }
}

/// Bits per second for `bytes` over `over`.
pub fn bps(bytes: u64, over: Nanos) -> f64 {
    bytes as f64 * 8.0 / over.as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cancel::Cancel;
    use crate::clock::FakeClock;
    use crate::fake::FakeStream;
    use crate::window::Window;

    #[test]
    fn throughput_and_retransmits_cover_only_the_window() {
        let clock = FakeClock::new();
        // 1 GB/s, 64 KiB writes, one retransmit every 100 writes.
        let mut conn = FakeStream::new(clock.clone(), 1_000_000_000, 100);
        let w = Window::after_warmup(Nanos::ZERO, Nanos::from_millis(500), Nanos::from_secs(2));
        let s = run(&mut conn, &clock, 65_536, &Bounds::new(w, Cancel::new())).unwrap();
        let gbps = bps(s.bytes, w.length()) / 1e9;
        assert!((gbps - 8.0).abs() < 0.01, "{gbps}");
        assert_eq!(s.interim_bps.len(), 2);
        assert!(s.interim_bps.iter().all(|r| (r / 1e9 - 8.0).abs() < 0.01));
        // 2 s at 1 GB/s is 30 518 writes of 64 KiB: about 305 retransmits.
        assert!((300..=310).contains(&s.retransmits), "{}", s.retransmits);
    }

    /// A connection that looks at the clock rarely (each write blocks for 300 ms) still
    /// counts exactly the window, and its interim figures are the window's own intervals,
    /// so many connections' figures add up to the total.
    #[test]
    fn a_rarely_waking_connection_still_counts_the_window_exactly() {
        let clock = FakeClock::new();
        // 64 KiB per 300 ms: writes end at 0.3, 0.6, ... s, never on a boundary.
        let mut conn = FakeStream::new(clock.clone(), 65_536 * 10 / 3, 0);
        let w = Window::after_warmup(
            Nanos::ZERO,
            Nanos::from_millis(500),
            Nanos::from_millis(2_500),
        );
        let s = run(&mut conn, &clock, 65_536, &Bounds::new(w, Cancel::new())).unwrap();
        let rate_bps = 65_536.0 * 10.0 / 3.0 * 8.0;
        assert!(
            (bps(s.bytes, w.length()) / rate_bps - 1.0).abs() < 1e-3,
            "{}",
            s.bytes
        );
        assert_eq!(s.interim_bps.len(), 3, "1 s, 1 s and the last 0.5 s");
        for r in &s.interim_bps {
            assert!((r / rate_bps - 1.0).abs() < 1e-3, "{:?}", s.interim_bps);
        }
    }

    #[test]
    fn boundaries_interpolate_between_samples_and_stay_between_them() {
        let c = |b| TcpCounters {
            bytes_acked: b,
            total_retrans: 0,
        };
        let at = between((Nanos(100), c(1_000)), (Nanos(300), c(3_000)), Nanos(150));
        assert_eq!(at.bytes_acked, 1_500);
        let at = between((Nanos(100), c(1_000)), (Nanos(100), c(1_000)), Nanos(100));
        assert_eq!(at.bytes_acked, 1_000);
    }
}
