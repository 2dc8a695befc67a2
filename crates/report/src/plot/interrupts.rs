//! Interrupts per second per setting, in the latency plot's row order.
//!
//! Whatever the bench put in each host's `interrupts_per_sec`. On veth there are no device
//! interrupts; cross-CPU wake-up IPIs stand in for them (testbed-notes §5).

use super::axis::{x_axis, Frame, Scale};
use super::{role_class, rows};
use crate::escape::esc;
use crate::format::{label, num};
use nictune_tune::results::TuneResults;
use std::fmt::Write;

const ROW: f64 = 18.0;

/// The interrupts plot, or `None` when no point has interrupt counts.
pub fn render(results: &TuneResults) -> Option<String> {
    let rows = rows(results);
    let value = |p: &nictune_tune::results::Point| p.summary.interrupts_per_sec.map(|e| e.mean);
    if rows.iter().all(|p| value(p).is_none()) {
        return None;
    }
    let f = Frame {
        width: 900.0,
        height: 60.0 + ROW * rows.len() as f64,
        left: 300.0,
        right: 70.0,
        top: 12.0,
        bottom: 46.0,
    };
    let (xl, xr) = f.x_range();
    let x = Scale::from_zero(rows.iter().filter_map(|p| value(p)), xl, xr);
    let mut s = f.open("plot-interrupts", "Interrupts per second per setting");
    s.push_str(&x_axis(&f, &x, "interrupts per second"));
    for (i, p) in rows.iter().enumerate() {
        let y = f.top + ROW * i as f64;
        let role = role_class(results, p);
        let v = value(p);
        let _ = write!(
            s,
            r#"<g class="row {role}"><title>{}: {} interrupts/s</title><text class="label" x="{}" y="{}" text-anchor="end">{}</text>"#,
            esc(&label(p)),
            v.map_or("–".into(), num),
            f.left - 8.0,
            y + ROW / 2.0 + 4.0,
            esc(&label(p)),
        );
        if let Some(v) = v {
            let w = x.px(v) - xl;
            let _ = write!(
                s,
                r#"<rect class="bar" x="{xl}" y="{:.1}" width="{w:.1}" height="{}"/><text class="value" x="{:.1}" y="{:.1}">{}</text>"#,
                y + 3.0,
                ROW - 6.0,
                xl + w + 4.0,
                y + ROW / 2.0 + 4.0,
                num(v)
            );
        }
        s.push_str("</g>");
    }
    s.push_str("</svg>");
    Some(s)
}
