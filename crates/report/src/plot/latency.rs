//! Latency percentiles per setting: one row per measured point, lowest p99 first.
//!
//! A thin line spans p50 to p99.9; dots mark p50, p90 and p99; a bar around the p99 dot is
//! its 95 % interval over the runs, so overlapping bars read as "not different".

use super::axis::{x_axis, Frame, Scale};
use super::{label_margin, mean_latency, role_class, rows};
use crate::escape::esc;
use crate::format::{label, num};
use nictune_tune::results::{Point, TuneResults};
use std::fmt::Write;

const ROW: f64 = 18.0;

/// The latency plot.
pub fn render(results: &TuneResults) -> String {
    let rows = rows(results);
    // The plot area keeps its 600 px however long the row labels are.
    let left = label_margin(&rows);
    let f = Frame {
        width: left + 600.0,
        height: 80.0 + ROW * rows.len() as f64,
        left,
        right: 24.0,
        top: 34.0,
        bottom: 46.0,
    };
    let (xl, xr) = f.x_range();
    let values = rows.iter().flat_map(|p| {
        [mean_latency(p, |l| l.p50), mean_latency(p, |l| l.p999)]
            .into_iter()
            .flatten()
    });
    let x = Scale::fit(values, true, xl, xr);
    let mut s = f.open("plot-latency", "Latency percentiles per setting");
    s.push_str(&legend(xl));
    s.push_str(&x_axis(&f, &x, "round-trip latency, µs (log scale)"));
    for (i, p) in rows.iter().enumerate() {
        let y = f.top + ROW * i as f64 + ROW / 2.0;
        s.push_str(&row(results, p, &x, &f, y));
    }
    s.push_str("</svg>");
    s
}

fn legend(x: f64) -> String {
    format!(
        r#"<g class="legend"><circle class="p50" cx="{a}" cy="14" r="3.5"/><text x="{at}" y="18">p50</text><circle class="p90" cx="{b}" cy="14" r="2.5"/><text x="{bt}" y="18">p90</text><line class="ci" x1="{c0}" y1="14" x2="{c1}" y2="14"/><circle class="p99" cx="{c}" cy="14" r="4.5"/><text x="{ct}" y="18">p99 with 95 % interval</text><line class="range" x1="{d0}" y1="14" x2="{d1}" y2="14"/><text x="{dt}" y="18">p50 to p99.9</text></g>"#,
        a = x,
        at = x + 8.0,
        b = x + 50.0,
        bt = x + 58.0,
        c0 = x + 94.0,
        c1 = x + 110.0,
        c = x + 102.0,
        ct = x + 116.0,
        d0 = x + 270.0,
        d1 = x + 300.0,
        dt = x + 306.0,
    )
}

fn row(results: &TuneResults, p: &Point, x: &Scale, f: &Frame, y: f64) -> String {
    let role = role_class(results, p);
    let mut s = format!(r#"<g class="row {role}">"#);
    let _ = write!(s, "<title>{}</title>", esc(&tooltip(p)));
    if !role.is_empty() {
        let _ = write!(
            s,
            r#"<rect class="hl" x="0" y="{}" width="{}" height="{ROW}"/>"#,
            y - ROW / 2.0,
            f.width
        );
    }
    let _ = write!(
        s,
        r#"<text class="label" x="{}" y="{}" text-anchor="end">{}</text>"#,
        f.left - 8.0,
        y + 4.0,
        esc(&label(p))
    );
    let pct = |pick: fn(&nictune_core::metrics::LatencySummary) -> f64| mean_latency(p, pick);
    if let (Some(lo), Some(hi)) = (pct(|l| l.p50), pct(|l| l.p999)) {
        let _ = write!(
            s,
            r#"<line class="range" x1="{:.1}" y1="{y}" x2="{:.1}" y2="{y}"/>"#,
            x.px(lo),
            x.px(hi)
        );
    }
    if let Some(ci) = p.summary.p99_us {
        let _ = write!(
            s,
            r#"<line class="ci" x1="{:.1}" y1="{y}" x2="{:.1}" y2="{y}"/>"#,
            x.px(ci.low.max(1e-9)),
            x.px(ci.high)
        );
    }
    for (class, r, v) in [
        ("p50", 3.5, pct(|l| l.p50)),
        ("p90", 2.5, pct(|l| l.p90)),
        ("p99", 4.5, p.summary.p99_us.map(|e| e.mean)),
    ] {
        if let Some(v) = v {
            let _ = write!(
                s,
                r#"<circle class="{class}" cx="{:.1}" cy="{y}" r="{r}"/>"#,
                x.px(v)
            );
        }
    }
    s.push_str("</g>");
    s
}

fn tooltip(p: &Point) -> String {
    let e = p.summary.p99_us;
    format!(
        "{}: p50 {} µs, p99 {} µs (95 % interval {}–{}), {} runs",
        label(p),
        p.summary.p50_us.map_or("–".into(), |e| num(e.mean)),
        e.map_or("–".into(), |e| num(e.mean)),
        e.map_or("–".into(), |e| num(e.low)),
        e.map_or("–".into(), |e| num(e.high)),
        p.runs.len()
    )
}
