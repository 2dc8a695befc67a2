//! Numbers and labels as a reader wants them: three significant figures, thousands as `k`.

use nictune_tune::knob::PEER_PREFIX;
use nictune_tune::readback::Taken;
use nictune_tune::results::Point;

/// `x` with about three significant figures and no empty decimals: `88.8k`, `10k`, `167`,
/// `16.2`, `20`, `0.51`.
pub fn num(x: f64) -> String {
    let s = raw_num(x);
    match s.find(".0") {
        Some(i) if !s[i + 2..].starts_with(|c: char| c.is_ascii_digit()) => {
            format!("{}{}", &s[..i], &s[i + 2..])
        }
        _ => s,
    }
}

fn raw_num(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        "–".to_string()
    } else if x == 0.0 {
        "0".to_string()
    } else if a >= 1e9 {
        format!("{:.3}G", x / 1e9)
    } else if a >= 1e6 {
        format!("{:.3}M", x / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A signed percentage: `+878 %`, `−89.7 %`.
pub fn pct(x: f64) -> String {
    let sign = if x < 0.0 { "−" } else { "+" };
    format!("{sign}{} %", num(x.abs()))
}

/// A short label for a point: catalog keys shortened, the two busy-poll sysctls merged when
/// equal, the far end's settings (`tune --both-ends`) after this end's with `peer:` before
/// each, placement last. `gft 20µs · defer 2 · busy 50µs · cross-cpu`,
/// `ITR 300 · peer:ITR 300 · unpinned`.
pub fn label(p: &Point) -> String {
    if p.baseline {
        return format!("as found · {}", p.placement);
    }
    let s = &p.settings;
    let busy_same = s.get("sysctl.net.core.busy_read") == s.get("sysctl.net.core.busy_poll");
    let mut parts = Vec::new();
    for (key, value) in s {
        let (end, key) = match key.strip_prefix(PEER_PREFIX) {
            Some(far) => (PEER_PREFIX, far),
            None => ("", key.as_str()),
        };
        // What the driver did with it, where it read back otherwise.
        let read_back = p.read_back.iter().find(|r| r.key == format!("{end}{key}"));
        let said = |text: String| match read_back {
            None => text,
            Some(r) if r.taken == Taken::NotTaken => format!("{text} NOT TAKEN"),
            Some(r) => {
                let read = short(key, &r.read.to_string());
                let tail = read.rsplit([' ', '=']).next().unwrap_or(&read);
                format!("{text}→{tail} (driver)")
            }
        };
        match (key, busy_same, end) {
            ("sysctl.net.core.busy_poll", true, "") => {}
            ("sysctl.net.core.busy_read", true, "") => parts.push(said(format!("busy {value}µs"))),
            _ => parts.push(said(format!("{end}{}", short(key, &value.to_string())))),
        }
    }
    parts.push(p.placement.to_string());
    parts.join(" · ")
}

/// One setting in a few characters, in the unit people use for it.
fn short(key: &str, value: &str) -> String {
    let ns_as_us = |v: &str| {
        v.parse::<u64>()
            .map(|ns| format!("{}µs", ns as f64 / 1e3))
            .unwrap_or_else(|_| v.to_string())
    };
    match key {
        "napi.gro-flush-timeout" => format!("gft {}", ns_as_us(value)),
        "napi.irq-suspend-timeout" => format!("irq-suspend {}", ns_as_us(value)),
        "napi.defer-hard-irqs" => format!("defer {value}"),
        "coalesce.rx-usecs" => format!("rx-usecs {value}"),
        "coalesce.adaptive-rx" => format!("adaptive-rx {value}"),
        // `channels.combined`: results written before the key was singular (issue #13).
        "channel.combined" | "channels.combined" => format!("channels {value}"),
        // Driver module parameters: ITR as the drivers' own documentation abbreviates it.
        k if k.ends_with(".InterruptThrottleRate") => format!("ITR {value}"),
        k if k.ends_with(".TxIntDelay") => format!("TIDV {value}"),
        k if k.ends_with(".TxAbsIntDelay") => format!("TADV {value}"),
        k if k.ends_with(".RxIntDelay") => format!("RDTR {value}"),
        k if k.ends_with(".RxAbsIntDelay") => format!("RADV {value}"),
        _ => format!("{}={value}", key.rsplit('.').next().unwrap_or(key)),
    }
}

/// Every abbreviation the page may use, with what it stands for: the short setting names of
/// [`label`], the placements, and the column headings.
pub const ABBREVIATIONS: [(&str, &str); 17] = [
    ("gft", "napi.gro-flush-timeout: the device's gro_flush_timeout, how long NAPI keeps a partial GRO batch and, with defer, holds the interrupt off (set in ns, shown in µs)"),
    ("defer", "napi.defer-hard-irqs: napi_defer_hard_irqs, how many empty polls may pass before the device interrupt is re-enabled"),
    ("irq-suspend", "napi.irq-suspend-timeout: how long interrupts stay suspended while an application busy-polls the queue"),
    ("busy", "sysctl net.core.busy_read and net.core.busy_poll (equal): µs a socket read or poll spins on the queue before sleeping"),
    ("rx-usecs", "coalesce.rx-usecs: ethtool's receive interrupt delay, µs"),
    ("adaptive-rx", "coalesce.adaptive-rx: the driver's own adaptive interrupt moderation"),
    ("ITR", "InterruptThrottleRate: the e1000/e1000e/igb module parameter capping interrupts per second (0 off, 1 and 3 dynamic)"),
    ("TIDV", "TxIntDelay: e1000/e1000e transmit interrupt delay (1.024 µs units)"),
    ("TADV", "TxAbsIntDelay: e1000/e1000e absolute transmit interrupt delay"),
    ("RDTR", "RxIntDelay: e1000/e1000e receive delay timer"),
    ("RADV", "RxAbsIntDelay: e1000/e1000e absolute receive delay"),
    ("same-cpu", "placement: client and server (or the queue's interrupt and the application) on one CPU"),
    ("cross-cpu", "placement: on two different CPUs"),
    ("p50, p99", "latency percentiles: half, and 99 in 100, of the round trips took at most this long"),
    ("trans/s", "transactions (request and response) per second"),
    ("NET_RX", "the network receive softirq: each one is a wake-up of the receive path"),
    ("peer:", "a setting of the far end (tune --both-ends)"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_three_figures() {
        assert_eq!(num(88_840.0), "88.8k");
        assert_eq!(num(167.2), "167");
        assert_eq!(num(16.24), "16.2");
        assert_eq!(num(0.512), "0.51");
        assert_eq!(num(5.4e9), "5.400G");
        assert_eq!(num(10_000.0), "10k");
        assert_eq!(num(20.0), "20");
        assert_eq!(num(0.6), "0.60");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(1.05), "1.05");
        assert_eq!(pct(-89.74), "−89.7 %");
        assert_eq!(pct(878.0), "+878 %");
    }

    /// A both-ends tune tries each setting here, on the peer and on both: three labels, not
    /// one written three times.
    #[test]
    fn the_far_ends_settings_are_labelled_as_the_peers() {
        use nictune_tune::candidate::Placement;
        use nictune_tune::results::{PointReadBack, PointValue};
        use nictune_tune::summary::Summary;
        let point = |settings: &[(&str, u64)]| Point {
            id: "x".into(),
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), PointValue::Number(*v)))
                .collect(),
            placement: Placement::Unpinned,
            baseline: false,
            finalist: false,
            pareto: false,
            summary: Summary {
                p50_us: None,
                p99_us: None,
                rate: None,
                cpu_us_per_unit: None,
                busy_cores: None,
                interrupts_per_sec: None,
                objective: None,
                feasible: true,
            },
            runs: Vec::new(),
            predicted: None,
            prediction_error: None,
            read_back: Vec::new(),
        };
        let here = [
            ("e1000.InterruptThrottleRate", 300),
            ("e1000.TxIntDelay", 0),
        ];
        let peer = [
            ("peer:e1000.InterruptThrottleRate", 300),
            ("peer:e1000.TxIntDelay", 0),
        ];
        let both: Vec<(&str, u64)> = here.iter().chain(&peer).copied().collect();
        let labels: Vec<String> = [&here[..], &peer[..], &both[..]]
            .iter()
            .map(|s| label(&point(s)))
            .collect();
        assert_eq!(
            labels,
            [
                "ITR 300 · TIDV 0 · unpinned",
                "peer:ITR 300 · peer:TIDV 0 · unpinned",
                "ITR 300 · TIDV 0 · peer:ITR 300 · peer:TIDV 0 · unpinned",
            ]
        );
        // A value the peer's driver kept, one this end's driver rounded: said in the label.
        let mut marked = point(&both);
        let read_back = |key: &str, read: u64, taken| PointReadBack {
            key: key.into(),
            asked: marked.settings[key].clone(),
            read: PointValue::Number(read),
            taken,
            objects: vec!["eth0".into()],
            text: String::new(),
        };
        marked.read_back = vec![
            read_back("peer:e1000.InterruptThrottleRate", 3, Taken::NotTaken),
            read_back("e1000.TxIntDelay", 1, Taken::Adjusted),
        ];
        assert_eq!(
            label(&marked),
            "ITR 300 · TIDV 0→1 (driver) · peer:ITR 300 NOT TAKEN · peer:TIDV 0 · unpinned"
        );
    }

    #[test]
    fn every_short_name_label_writes_is_explained() {
        let keys = [
            ("napi.gro-flush-timeout", "20000"),
            ("napi.irq-suspend-timeout", "1000"),
            ("napi.defer-hard-irqs", "2"),
            ("coalesce.rx-usecs", "8"),
            ("coalesce.adaptive-rx", "on"),
            ("e1000.InterruptThrottleRate", "3"),
            ("e1000.TxIntDelay", "8"),
            ("e1000.TxAbsIntDelay", "8"),
            ("e1000.RxIntDelay", "0"),
            ("e1000.RxAbsIntDelay", "8"),
        ];
        for (key, value) in keys {
            let text = short(key, value);
            let abbrev = text.split(' ').next().unwrap();
            assert!(
                ABBREVIATIONS.iter().any(|(a, _)| *a == abbrev),
                "{abbrev} ({key}) is not in ABBREVIATIONS"
            );
        }
    }
}
