//! The text `nictune sim` prints, and the documents behind its `--list`, `--keys` and
//! `--explain`: a run's headline figures and per-host table, a sweep's line per point, the
//! model's assumptions with the scenario's keys. Pure functions of what the simulator
//! returned (`nictune_sim::scenario::RunResult`); the binary picks JSON or this text.

use nictune_core::metrics::{HostMetrics, Metrics};
use nictune_sim::cases::registry::CaseScenario;
use nictune_sim::scenario::value::ParamValue;
use nictune_sim::scenario::{keys, RunResult, Scenario};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// `--list`: the built-in scenarios and case scenarios.
#[derive(Debug, Serialize)]
pub struct ListDoc {
    /// Every scenario, engine scenarios first.
    pub scenarios: Vec<ListEntry>,
}

/// One scenario of [`ListDoc`].
#[derive(Debug, Serialize)]
pub struct ListEntry {
    /// What `nictune sim NAME` takes.
    pub name: String,
    /// One line on what it models.
    pub description: String,
}

/// `--keys`: every engine scenario key.
#[derive(Debug, Serialize)]
pub struct KeysDoc {
    /// The keys in catalog order.
    pub keys: Vec<KeyEntry>,
}

/// One key of [`KeysDoc`].
#[derive(Debug, Serialize)]
pub struct KeyEntry {
    /// The key, e.g. `client.itr`.
    pub key: String,
    /// Its default.
    pub default: ParamValue,
    /// What it accepts.
    pub allowed: String,
    /// What it sets.
    pub help: String,
    /// The case scenario the key belongs to (`nictune sim NAME --set KEY=VALUE`); `null` for
    /// an engine key, which every engine scenario and scenario file takes.
    pub scenario: Option<String>,
}

/// `--explain`: the model's assumptions and the scenario's keys (for engine scenarios the
/// `default` column is the value the scenario runs with).
#[derive(Debug, Serialize)]
pub struct ExplainDoc<'a> {
    /// The scenario's name.
    pub scenario: &'a str,
    /// The model's assumptions, as prose.
    pub explain: String,
    /// The keys `--set` takes.
    pub keys: Vec<KeyDoc>,
}

/// One key of [`ExplainDoc`].
#[derive(Debug, Serialize)]
pub struct KeyDoc {
    /// The key.
    pub key: String,
    /// Its value in this scenario (its default for a case scenario).
    pub default: ParamValue,
    /// What it accepts.
    pub allowed: String,
    /// What it sets.
    pub help: &'static str,
}

/// What every engine scenario assumes, for `--explain` (the full specification is
/// docs/simulator.md).
const ENGINE_EXPLAIN: &str = "\
The engine's model: frames come from a generator or the peer host over a link (serialised at
the line rate, plus propagation); the NIC buffers them on the card, DMAs them into the rx
ring, and raises causes through the 8254x delay timers (RDTR/RADV, TIDV/TADV) and the
interrupt throttle (ITR, read as an interval clock or a minimum gap: `nic`); the driver's
moderation policy (`driver`: e1000 7.0/7.3 InterruptThrottleRate modes, igb, ixgbe,
ixgbevf, DIM) rewrites those registers; NAPI polls `napi.weight` frames per call within
the NET_RX softirq's budgets; the workload (TCP_RR, ping, stream, bulk TCP) runs on the
host's cores with the costs under `cost.*`. Where each mechanism lives and which source it
follows: docs/simulator.md.";

/// `--explain` for an engine scenario: its description, its notes (what its values rest on),
/// the engine's model, and every key with the value this scenario runs with.
pub fn engine_explain_doc(scenario: &Scenario) -> ExplainDoc<'_> {
    let resolved = scenario.resolved();
    let notes = if scenario.notes.is_empty() {
        String::new()
    } else {
        format!("{}\n\n", scenario.notes)
    };
    let keys = keys::catalog()
        .iter()
        .filter_map(|k| {
            let value = resolved.get(&k.name)?.clone();
            Some(KeyDoc {
                key: k.name.clone(),
                default: value,
                allowed: k.kind.allowed(),
                help: k.help,
            })
        })
        .collect();
    ExplainDoc {
        scenario: &scenario.name,
        explain: format!(
            "{} — {}\n\n{notes}{ENGINE_EXPLAIN}\n",
            scenario.name, scenario.description
        ),
        keys,
    }
}

/// `--explain` for a case scenario: its model's assumptions and its keys with defaults.
pub fn case_explain_doc(case: &'static CaseScenario) -> ExplainDoc<'static> {
    let keys = case
        .keys()
        .into_iter()
        .map(|k| KeyDoc {
            key: k.name,
            allowed: k.kind.allowed(),
            default: k.default,
            help: k.help,
        })
        .collect();
    ExplainDoc {
        scenario: case.name,
        explain: case.explain.to_string(),
        keys,
    }
}

/// `--explain` as text: the prose, then one line per key.
pub fn explain_text(d: &ExplainDoc) -> String {
    let mut s = format!("{}\nKeys (--set KEY=VALUE):\n", d.explain);
    for k in &d.keys {
        s += &key_line(&format!("  {:20}", k.key), &k.default, k.help, &k.allowed);
    }
    s
}

/// One key's line: `key` (already padded), the value right-aligned, what it sets and what
/// it accepts.
fn key_line(key: &str, value: &ParamValue, help: &str, allowed: &str) -> String {
    format!("{key} {:>10}  {help} — {allowed}\n", value.to_string())
}

/// `--list` as text: name and description, names aligned.
pub fn list_text(d: &ListDoc) -> String {
    let w = d.scenarios.iter().map(|s| s.name.len()).max().unwrap_or(0);
    d.scenarios
        .iter()
        .map(|s| format!("{:w$}  {}\n", s.name, s.description))
        .collect()
}

/// `--keys` as text: one line per key with its default, help and what it accepts.
pub fn keys_text(d: &KeysDoc) -> String {
    let mut s = String::new();
    let mut section: Option<Option<&str>> = None;
    for k in &d.keys {
        let scenario = k.scenario.as_deref();
        if section != Some(scenario) {
            section = Some(scenario);
            s += &match scenario {
                None => "Engine scenarios and scenario files. Host keys exist as client.KEY and \
                         server.KEY; hosts.KEY sets both.\n"
                    .to_string(),
                Some(name) if s.is_empty() => {
                    format!("{name} (nictune sim {name} --set KEY=VALUE):\n")
                }
                Some(name) => format!("\n{name} (nictune sim {name} --set KEY=VALUE):\n"),
            };
        }
        s += &key_line(&format!("{:34}", k.key), &k.default, &k.help, &k.allowed);
    }
    s
}

/// One run as text: the engine line, the headline figures, and the per-host table.
pub fn run_text(name: &str, r: &RunResult) -> String {
    let m = &r.metrics;
    let e = &r.engine;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "scenario {name}: {} s simulated (seed {}, {} events, {} packets, {} s wall)",
        e.sim_seconds,
        e.seed,
        e.events,
        e.packets,
        fmt_opt(e.wall_seconds, 3)
    );
    if let Some(t) = m.transactions_per_sec {
        let _ = writeln!(s, "transactions/s  {t:.2}");
        let interim: Vec<String> = m
            .interim_transactions_per_sec
            .iter()
            .map(|x| format!("{x:.0}"))
            .collect();
        let _ = writeln!(s, "interim (1 s)   {}", interim.join(" "));
    }
    if let Some(l) = &m.latency_us {
        let _ = writeln!(
            s,
            "latency µs      min {:.1}  mean {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}  stddev {:.1}",
            l.min, l.mean, l.p50, l.p90, l.p99, l.p999, l.max, l.stddev
        );
        if is_ping(r) {
            let _ = writeln!(
                s,
                "rtt min/avg/max/mdev = {:.3}/{:.3}/{:.3}/{:.3} ms",
                l.min / 1e3,
                l.mean / 1e3,
                l.max / 1e3,
                l.stddev / 1e3
            );
        }
    }
    let _ = writeln!(s, "throughput      {}", rate(m.throughput_bps));
    s.push_str(&host_table(m));
    s
}

/// `text` followed by one `note:` line per note (what a case scenario's metrics do not say).
pub fn with_notes(mut text: String, notes: &[String]) -> String {
    for n in notes {
        let _ = writeln!(text, "note: {n}");
    }
    text
}

/// A sweep as text: one line per point with the swept keys' values, the headline figure,
/// the latency and each host's interrupt rate.
pub fn sweep_text(name: &str, points: &[RunResult], varying: &[&str]) -> String {
    let mut s = format!("scenario {name}: {} points\n", points.len());
    for p in points {
        let params: Vec<String> = varying
            .iter()
            .map(|k| format!("{k}={}", axis_value(&p.params, k)))
            .collect();
        let m = &p.metrics;
        let headline = match m.transactions_per_sec {
            Some(t) => format!("{t:.1} trans/s"),
            None => rate(m.throughput_bps),
        };
        let lat = m.latency_us.map_or("-".into(), |l| {
            format!("mean {:.1} µs p99 {:.1} µs", l.mean, l.p99)
        });
        let ints: Vec<String> = m
            .hosts
            .iter()
            .map(|(n, h)| format!("{n} {} ints/s", fmt_opt(h.interrupts_per_sec, 0)))
            .collect();
        let _ = writeln!(
            s,
            "{}  {headline}  {lat}  {}",
            params.join(" "),
            ints.join(", ")
        );
    }
    s
}

/// The value of sweep axis `key` in a point's parameters; a `hosts.` key shows the hosts'
/// value (one value when they agree, else each host's).
fn axis_value(params: &BTreeMap<String, ParamValue>, key: &str) -> String {
    if let Some(v) = params.get(key) {
        return v.to_string();
    }
    let Some(rest) = key.strip_prefix("hosts.") else {
        return "-".into();
    };
    let per_host: Vec<(&str, &ParamValue)> = keys::HOSTS
        .iter()
        .filter_map(|h| Some((*h, params.get(&format!("{h}.{rest}"))?)))
        .collect();
    match per_host.as_slice() {
        [] => "-".into(),
        [(_, first), others @ ..] if others.iter().all(|(_, v)| v == first) => first.to_string(),
        all => all
            .iter()
            .map(|(h, v)| format!("{h}:{v}"))
            .collect::<Vec<_>>()
            .join("/"),
    }
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// Bits per second with a readable unit.
fn rate(bps: Option<f64>) -> String {
    match bps {
        None => "-".into(),
        Some(b) if b >= 1e9 => format!("{:.3} Gb/s", b / 1e9),
        Some(b) if b >= 1e6 => format!("{:.3} Mb/s", b / 1e6),
        Some(b) if b >= 1e3 => format!("{:.3} kb/s", b / 1e3),
        Some(b) => format!("{b:.0} b/s"),
    }
}

fn is_ping(r: &RunResult) -> bool {
    matches!(r.params.get("workload.kind"), Some(ParamValue::Text(k)) if k == "ping")
}

/// Per-host rows; CPU shares are averaged over the host's cores (irq, softirq, system, user
/// and idle add up to 100 %; `-` for a category or count the model does not have),
/// `busiest%` is the busiest core's busy share.
fn host_table(m: &Metrics) -> String {
    let mut s = format!(
        "{:8} {:>10} {:>9} {:>6} {:>8} {:>7} {:>6} {:>6} {:>9} {:>10} {:>8}\n",
        "host",
        "ints/s",
        "pkts/int",
        "irq%",
        "softirq%",
        "system%",
        "user%",
        "idle%",
        "busiest%",
        "drops",
        "squeeze"
    );
    for (name, h) in &m.hosts {
        s.push_str(&host_row(name, h));
    }
    s
}

fn host_row(name: &str, h: &HostMetrics) -> String {
    let pct = |x: f64| format!("{:.1}", x * 100.0);
    let drops: u64 = h.drops.values().sum();
    format!(
        "{:8} {:>10} {:>9} {:>6} {:>8} {:>7} {:>6} {:>6} {:>9} {:>10} {:>8}\n",
        name,
        fmt_opt(h.interrupts_per_sec, 0),
        fmt_opt(h.packets_per_interrupt, 2),
        pct(h.cpu.irq),
        pct(h.cpu.softirq),
        h.cpu.system.map_or("-".into(), pct),
        pct(h.cpu.user),
        pct(h.cpu.idle),
        pct(h.cpu.busiest_core()),
        drops,
        h.time_squeeze.map_or("-".into(), |n| n.to_string())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_sim::cases::registry;

    /// The CPU columns add up to 100 % with system time in them; a squeeze count the model
    /// does not keep prints `-`, not 0.
    #[test]
    fn host_rows_sum_to_100_and_show_missing_counts_as_dashes() {
        let core = nictune_core::metrics::CoreSplit {
            irq: 0.028,
            softirq: 0.054,
            system: Some(0.918),
            user: 0.0,
            idle: 0.0,
        };
        let h = HostMetrics {
            cpu: nictune_core::metrics::CpuSplit::from_cores(vec![core]),
            ..HostMetrics::default()
        };
        let row = host_row("host", &h);
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[5], "91.8", "{row}");
        let sum: f64 = cols[3..8].iter().map(|c| c.parse::<f64>().unwrap()).sum();
        assert!((sum - 100.0).abs() < 0.15, "{row}");
        assert_eq!(cols[10], "-", "{row}");
    }

    #[test]
    fn explain_router_text() {
        insta::assert_snapshot!(explain_text(&case_explain_doc(
            registry::find("seed-igb-router").unwrap()
        )));
    }

    #[test]
    fn explain_isa_nfs_json() {
        insta::assert_json_snapshot!(case_explain_doc(registry::find("seed-isa-nfs").unwrap()));
    }

    #[test]
    fn keys_and_list_align_their_columns() {
        let keys = KeysDoc {
            keys: vec![KeyEntry {
                key: "client.itr".into(),
                default: ParamValue::Int(8000),
                allowed: "an integer".into(),
                help: "interrupts/s".into(),
                scenario: None,
            }],
        };
        let text = keys_text(&keys);
        let line = text.lines().nth(1).unwrap();
        assert_eq!(
            line,
            format!(
                "{:34} {:>10}  interrupts/s — an integer",
                "client.itr", "8000"
            )
        );
        let list = ListDoc {
            scenarios: vec![
                ListEntry {
                    name: "a".into(),
                    description: "one".into(),
                },
                ListEntry {
                    name: "abc".into(),
                    description: "two".into(),
                },
            ],
        };
        assert_eq!(list_text(&list), "a    one\nabc  two\n");
    }

    #[test]
    fn rates_take_the_largest_unit_that_keeps_a_digit_before_the_point() {
        assert_eq!(rate(None), "-");
        assert_eq!(rate(Some(999.0)), "999 b/s");
        assert_eq!(rate(Some(1.5e3)), "1.500 kb/s");
        assert_eq!(rate(Some(2.25e6)), "2.250 Mb/s");
        assert_eq!(rate(Some(9.4e9)), "9.400 Gb/s");
    }
}
