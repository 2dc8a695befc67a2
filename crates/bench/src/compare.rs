//! Comparing the built-in engines with the reference tools: reading sockperf's and iperf3's
//! summaries and judging the ratios against the targets (RR rate ≥ 0.95 × sockperf's with
//! p50 within 10 %; stream throughput ≥ 0.95 × iperf3's).
//!
//! sockperf 3.7 prints full round trips with `--full-rtt`, excludes its first 400 ms and last
//! 50 ms ("Valid Duration"), and reports exact nearest-rank percentiles in µs.
//!
//! iperf3 (3.12) with `-J` prints one JSON document; `end.sum_received.bits_per_second` is
//! what the receiver got over the test after the `-O` omitted seconds — the same quantity
//! as nictune's acknowledged bytes over the measured window.

/// sockperf's figures for one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SockperfSummary {
    /// ReceivedMessages / valid RunTime.
    pub rate: f64,
    /// `percentile 50.000`, µs.
    pub p50_us: f64,
    /// `percentile 99.000`, µs.
    pub p99_us: f64,
}

/// Reads the `[Valid Duration]` line and the percentiles from sockperf's output.
pub fn parse_sockperf(text: &str) -> Option<SockperfSummary> {
    let valid = text.lines().find(|l| l.contains("[Valid Duration]"))?;
    let runtime: f64 = field(valid, "RunTime=")?
        .trim_end_matches("sec")
        .trim()
        .parse()
        .ok()?;
    let received: f64 = field(valid, "ReceivedMessages=")?.parse().ok()?;
    Some(SockperfSummary {
        rate: received / runtime,
        p50_us: percentile(text, "50.000")?,
        p99_us: percentile(text, "99.000")?,
    })
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = &line[line.find(key)? + key.len()..];
    Some(rest.split(';').next()?.trim())
}

fn percentile(text: &str, p: &str) -> Option<f64> {
    let needle = format!("percentile {p} =");
    let line = text.lines().find(|l| l.contains(&needle))?;
    line.rsplit('=').next()?.trim().parse().ok()
}

/// iperf3's receiver-side throughput, bit/s, from its `-J` output.
pub fn parse_iperf3(json: &str) -> Option<f64> {
    let doc: serde_json::Value = serde_json::from_str(json).ok()?;
    doc.pointer("/end/sum_received/bits_per_second")?.as_f64()
}

/// Stream throughput at least 0.95 × iperf3's.
pub fn stream_meets_target(nictune_bps: f64, iperf3_bps: f64) -> bool {
    nictune_bps >= 0.95 * iperf3_bps
}

/// nictune's figures relative to sockperf's, and whether they meet the target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SockperfRatios {
    /// nictune rate / sockperf rate (target ≥ 0.95).
    pub rate_ratio: f64,
    /// nictune p50 / sockperf p50 (target 0.90–1.10).
    pub p50_ratio: f64,
}

impl SockperfRatios {
    /// Ratios of `(rate, p50)` of nictune against sockperf.
    pub fn of(nictune: (f64, f64), sockperf: &SockperfSummary) -> SockperfRatios {
        SockperfRatios {
            rate_ratio: nictune.0 / sockperf.rate,
            p50_ratio: nictune.1 / sockperf.p50_us,
        }
    }

    /// Rate at least 0.95 × sockperf's and p50 within 10 %.
    pub fn meets_target(&self) -> bool {
        self.rate_ratio >= 0.95 && (0.9..=1.1).contains(&self.p50_ratio)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iperf3_json_gives_the_receivers_throughput() {
        // Captured from iperf3 3.12 (Debian 12), `-c 127.0.0.1 -t 1 -J`.
        let json = include_str!("../fixtures/iperf3-3.12-loopback.json");
        let bps = parse_iperf3(json).unwrap();
        assert!((bps - 17_229_163_283.9).abs() < 1.0, "{bps}");
        assert_eq!(parse_iperf3("{\"error\": \"unable to connect\"}"), None);
        assert_eq!(parse_iperf3("not json"), None);
        assert!(stream_meets_target(9.5e9, 1e10));
        assert!(!stream_meets_target(9.4e9, 1e10));
    }

    #[test]
    fn reads_a_captured_sockperf_run() {
        let text = include_str!("../fixtures/sockperf/tcp-pp-loopback.txt");
        let s = parse_sockperf(text).unwrap();
        assert!((s.rate - 35_944.0 / 1.548).abs() < 1e-6, "{}", s.rate);
        assert_eq!(s.p50_us, 11.887);
        assert_eq!(s.p99_us, 57.185);
        assert_eq!(parse_sockperf("sockperf: Test ended\n"), None);
    }

    #[test]
    fn the_target_is_rate_at_least_95_percent_and_p50_within_10() {
        let s = SockperfSummary {
            rate: 50_000.0,
            p50_us: 20.0,
            p99_us: 30.0,
        };
        assert!(SockperfRatios::of((48_000.0, 21.5), &s).meets_target());
        assert!(!SockperfRatios::of((47_000.0, 20.0), &s).meets_target());
        assert!(!SockperfRatios::of((60_000.0, 17.0), &s).meets_target());
    }
}
