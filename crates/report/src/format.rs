//! Numbers and labels as a reader wants them: three significant figures, thousands as `k`.

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
/// equal, placement last. `gft 20µs · defer 2 · busy 50µs · cross-cpu`.
pub fn label(p: &Point) -> String {
    if p.baseline {
        return format!("as found · {}", p.placement);
    }
    let s = &p.settings;
    let busy_same = s.get("sysctl.net.core.busy_read") == s.get("sysctl.net.core.busy_poll");
    let mut parts = Vec::new();
    for (key, value) in s {
        match (key.as_str(), busy_same) {
            ("sysctl.net.core.busy_poll", true) => {}
            ("sysctl.net.core.busy_read", true) => parts.push(format!("busy {value}µs")),
            _ => parts.push(short(key, &value.to_string())),
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
}
