//! Comparing the built-in RR engine with sockperf ping-pong: reading sockperf's summary and
//! judging the ratios against the target (rate ≥ 0.95 × sockperf, p50 within 10 %).
//!
//! sockperf 3.7 prints full round trips with `--full-rtt`, excludes its first 400 ms and last
//! 50 ms ("Valid Duration"), and reports exact nearest-rank percentiles in µs.

/// sockperf's figures for one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SockperfSummary {
    /// ReceivedMessages / valid RunTime.
    pub rate: f64,
    /// `percentile 50.000`, µs.
    pub p50_us: f64,
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

/// nictune's figures relative to sockperf's, and whether they meet the target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// nictune rate / sockperf rate (target ≥ 0.95).
    pub rate_ratio: f64,
    /// nictune p50 / sockperf p50 (target 0.90–1.10).
    pub p50_ratio: f64,
}

impl Verdict {
    /// Ratios of `(rate, p50)` of nictune against sockperf.
    pub fn of(nictune: (f64, f64), sockperf: &SockperfSummary) -> Verdict {
        Verdict {
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
        assert!(Verdict::of((48_000.0, 21.5), &s).meets_target());
        assert!(!Verdict::of((47_000.0, 20.0), &s).meets_target());
        assert!(!Verdict::of((60_000.0, 17.0), &s).meets_target());
    }
}
