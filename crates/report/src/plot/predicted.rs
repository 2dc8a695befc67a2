//! Predicted against measured p99, log–log, for every point `--predict` ranked.
//!
//! Points on the diagonal were predicted exactly; above it the model was optimistic.

use super::axis::{x_axis, y_axis, Frame, Scale};
use super::role_class;
use crate::escape::esc;
use crate::format::{label, num};
use nictune_tune::results::TuneResults;
use std::fmt::Write;

/// The plot, or `None` when nothing was predicted.
pub fn render(results: &TuneResults) -> Option<String> {
    let pts: Vec<(&nictune_tune::results::Point, f64, f64)> = results
        .points
        .iter()
        .filter_map(|p| {
            let predicted = p.predicted.as_ref()?.latency_us?.p99;
            Some((p, predicted, p.summary.p99_us?.mean))
        })
        .collect();
    if pts.is_empty() {
        return None;
    }
    let f = Frame {
        width: 520.0,
        height: 420.0,
        left: 70.0,
        right: 24.0,
        top: 20.0,
        bottom: 50.0,
    };
    let all = pts.iter().flat_map(|t| [t.1, t.2]);
    let (xl, xr) = f.x_range();
    let (yb, yt) = f.y_range();
    let x = Scale::fit(all.clone(), true, xl, xr);
    let y = Scale::fit(all, true, yb, yt);
    let mut s = f.open("plot-predicted", "Predicted against measured p99 latency");
    s.push_str(&x_axis(&f, &x, "predicted p99, µs (log scale)"));
    s.push_str(&y_axis(&f, &y, "measured p99, µs (log scale)"));
    let (lo, hi) = x.domain();
    let _ = write!(
        s,
        r#"<line class="diag" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/>"#,
        x.px(lo),
        y.px(lo),
        x.px(hi),
        y.px(hi)
    );
    for (p, pred, meas) in &pts {
        let _ = write!(
            s,
            r#"<g class="point {}"><title>{}: predicted {} µs, measured {} µs</title><circle class="mark" cx="{:.1}" cy="{:.1}" r="5"/></g>"#,
            role_class(results, p),
            esc(&label(p)),
            num(*pred),
            num(*meas),
            x.px(*pred),
            y.px(*meas)
        );
    }
    s.push_str("</svg>");
    Some(s)
}
