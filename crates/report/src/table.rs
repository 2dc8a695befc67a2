//! Every measured point in one table: the numbers behind the plots.

use crate::escape::esc;
use crate::format::{label, num};
use crate::plot::interrupts::Measure;
use crate::plot::{role_class, rows};
use nictune_tune::results::{Point, TuneResults};
use nictune_tune::stats::Estimate;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The table of all points, in the plots' order.
pub fn render(r: &TuneResults) -> String {
    let u = r.rate_unit;
    let measure = crate::plot::interrupts::measure(r).unwrap_or(Measure::Interrupts);
    let rows: Vec<(&Point, String)> = rows(r).into_iter().map(|p| (p, vectors_cell(p))).collect();
    let lines = rows.iter().any(|(_, cell)| !cell.is_empty());
    let mut s = format!(
        r#"<table class="points"><thead><tr><th>setting</th><th>runs</th><th>p50 µs</th><th>p99 µs (95 % interval)</th><th>{}</th><th>{}</th><th>busy CPUs</th><th>{}</th>{}<th>notes</th></tr></thead><tbody>"#,
        u.rate_label(),
        u.cost_label(),
        match measure == Measure::Interrupts && crate::plot::interrupts::of_both_ends(r) {
            true => "interrupts/s (this end + peer)",
            false => measure.unit(),
        },
        match lines {
            true => "<th>per interrupt line, /s</th>",
            false => "",
        }
    );
    for (p, cell) in rows {
        let m = &p.summary;
        let mut flags = Vec::new();
        if p.finalist {
            flags.push("finalist");
        }
        if p.pareto {
            flags.push("Pareto front");
        }
        if !m.feasible {
            flags.push("misses the constraint");
        }
        if p.not_taken() {
            flags.insert(0, "NOT WHAT IT CLAIMS, never recommended");
        }
        // Measured with other values than its settings say: each one, in words.
        let notes: Vec<String> = std::iter::once(flags.join(", "))
            .filter(|f| !f.is_empty())
            .chain(p.read_back.iter().map(|r| r.text.clone()))
            .collect();
        let per_line = match lines {
            true => format!("<td>{}</td>", esc(&cell)),
            false => String::new(),
        };
        let _ = write!(
            s,
            r#"<tr class="{}"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}<td class="notes">{}</td></tr>"#,
            row_class(r, p),
            esc(&label(p)),
            p.runs.len(),
            mean(m.p50_us),
            with_interval(m.p99_us),
            mean(m.rate),
            mean(m.cpu_us_per_unit),
            mean(m.busy_cores),
            crate::plot::interrupts::cell(r, p, measure),
            per_line,
            esc(&notes.join("; "))
        );
    }
    s.push_str("</tbody></table>");
    s
}

/// The row's class: its role, and `not-taken` for a point measured at another point than its
/// settings say (a setting the host kept).
fn row_class(r: &TuneResults, p: &Point) -> String {
    match p.not_taken() {
        true => format!("{} not-taken", role_class(r, p)).trim().to_string(),
        false => role_class(r, p).to_string(),
    }
}

/// Each NIC interrupt line's mean rate over the point's runs (`eth0-rx-0 990 · eth0-tx-0
/// 4.8k`), for every host that counted several lines, named when more than one did; empty
/// when none did.
fn vectors_cell(p: &Point) -> String {
    let mut hosts: BTreeMap<&str, BTreeMap<&str, (f64, usize)>> = BTreeMap::new();
    for run in &p.runs {
        for (host, h) in &run.hosts {
            for v in &h.vectors {
                let line = hosts.entry(host).or_default().entry(&v.action).or_default();
                line.0 += v.per_sec;
                line.1 += 1;
            }
        }
    }
    let named = hosts.len() > 1;
    let host_cells = hosts.iter().map(|(host, lines)| {
        let lines = lines
            .iter()
            .map(|(action, (sum, n))| format!("{action} {}", num(sum / *n as f64)))
            .collect::<Vec<_>>()
            .join(" · ");
        match named {
            true => format!("{host}: {lines}"),
            false => lines,
        }
    });
    host_cells.collect::<Vec<_>>().join("; ")
}

fn mean(e: Option<Estimate>) -> String {
    e.map_or("–".into(), |e| num(e.mean))
}

fn with_interval(e: Option<Estimate>) -> String {
    match e {
        Some(e) if e.n > 1 => format!("{} ({}–{})", num(e.mean), num(e.low), num(e.high)),
        Some(e) => num(e.mean),
        None => "–".into(),
    }
}

/// Predicted and measured side by side for every predicted point, with the error of each
/// figure; `None` when nothing was predicted.
pub fn predictions(r: &TuneResults) -> Option<String> {
    let u = r.rate_unit;
    let rows: Vec<_> = rows(r)
        .into_iter()
        .filter(|p| p.predicted.is_some())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut s = format!(
        r#"<table class="points predictions"><thead><tr><th>setting</th><th>measured {rate}</th><th>predicted {rate}</th><th>error</th><th>measured interrupts/s</th><th>predicted interrupts/s</th><th>error</th><th>measured p99 µs</th><th>predicted p99 µs</th><th>error</th></tr></thead><tbody>"#,
        rate = u.rate_label()
    );
    for p in rows {
        let pred = p.predicted.as_ref().expect("filtered");
        let err = p.prediction_error.unwrap_or_default();
        let ints = pred
            .hosts
            .values()
            .filter_map(|h| h.interrupts_per_sec)
            .reduce(f64::max);
        let rate = pred.transactions_per_sec.or(pred.throughput_bps);
        let opt = |v: Option<f64>| v.map_or("–".into(), num);
        let pct = |v: Option<f64>| v.map_or("–".into(), crate::format::pct);
        let _ = write!(
            s,
            r#"<tr class="{}"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            role_class(r, p),
            esc(&label(p)),
            mean(p.summary.rate),
            opt(rate),
            pct(err.rate_pct),
            mean(p.summary.interrupts_per_sec),
            opt(ints),
            pct(err.interrupts_per_sec_pct),
            mean(p.summary.p99_us),
            opt(pred.latency_us.map(|l| l.p99)),
            pct(err.p99_pct),
        );
    }
    s.push_str("</tbody></table>");
    Some(s)
}
