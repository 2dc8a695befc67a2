//! Bulk transfer: write as fast as the socket takes it; throughput and retransmits come
//! from the sender's `TCP_INFO` (`tcpi_bytes_acked`, `tcpi_total_retrans`), so they count
//! what the receiver acknowledged, not what sat in the send buffer when the test ended.

use super::{Bounds, ConnStats};
use crate::clock::Clock;
use crate::conn::{StreamConn, TcpCounters};
use crate::window::INTERIM;
use nictune_core::units::Nanos;
use std::io;

/// Writes `write_size`-byte chunks through the window; samples counters at the window's
/// start, at every interim boundary and at its end.
pub fn run<C, K>(conn: &mut C, clock: &K, write_size: usize, b: &Bounds) -> io::Result<ConnStats>
where
    C: StreamConn + ?Sized,
    K: Clock + ?Sized,
{
    let mut stats = ConnStats::new(&b.window);
    let buf = vec![0x5au8; write_size];
    let mut first: Option<TcpCounters> = None;
    let mut last = (b.window.start, TcpCounters::default());
    loop {
        let now = clock.now();
        if b.cancel.is_cancelled() || now >= b.hard_end {
            break;
        }
        if now >= b.window.start && first.is_none() {
            let c = conn.counters()?;
            first = Some(c);
            last = (now, c);
        }
        if first.is_some() && (now >= b.window.end || now >= last.0 + INTERIM) {
            let c = conn.counters()?;
            let secs = (now - last.0).as_secs_f64();
            stats
                .interim_bps
                .push((c.bytes_acked - last.1.bytes_acked) as f64 * 8.0 / secs);
            last = (now, c);
            if now >= b.window.end {
                break;
            }
        }
        conn.write(&buf)?;
    }
    if let Some(f) = first {
        stats.bytes = last.1.bytes_acked - f.bytes_acked;
        stats.retransmits = last.1.total_retrans - f.total_retrans;
    }
    stats.path = Some(conn.path()?);
    Ok(stats)
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
}
