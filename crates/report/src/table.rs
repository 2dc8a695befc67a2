//! Every measured point in one table: the numbers behind the plots.

use crate::escape::esc;
use crate::format::{label, num};
use crate::plot::{role_class, rows};
use nictune_tune::results::TuneResults;
use nictune_tune::stats::Estimate;
use std::fmt::Write;

/// The table of all points, in the plots' order.
pub fn render(r: &TuneResults) -> String {
    let u = r.rate_unit;
    let mut s = format!(
        r#"<table class="points"><thead><tr><th>setting</th><th>runs</th><th>p50 µs</th><th>p99 µs (95 % interval)</th><th>{}</th><th>{}</th><th>busy CPUs</th><th>interrupts/s</th><th>notes</th></tr></thead><tbody>"#,
        u.rate_label(),
        u.cost_label()
    );
    for p in rows(r) {
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
        let _ = write!(
            s,
            r#"<tr class="{}"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            role_class(r, p),
            esc(&label(p)),
            p.runs.len(),
            mean(m.p50_us),
            with_interval(m.p99_us),
            mean(m.rate),
            mean(m.cpu_us_per_unit),
            mean(m.busy_cores),
            mean(m.interrupts_per_sec),
            flags.join(", ")
        );
    }
    s.push_str("</tbody></table>");
    s
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
