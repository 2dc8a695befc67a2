//! CPU per unit of work against rate, log–log, with the Pareto front joined up.
//!
//! Down and to the right is better. Points on the front are filled; the line through them is
//! the best trade-off available; the baseline is a square and the recommendation a ring.

use super::axis::{x_axis, y_axis, Frame, Scale};
use super::role_class;
use crate::escape::esc;
use crate::format::{label, num};
use nictune_tune::results::{Point, TuneResults};
use std::fmt::Write;

/// The trade-off plot.
pub fn render(results: &TuneResults) -> String {
    let f = Frame {
        width: 900.0,
        height: 420.0,
        left: 70.0,
        right: 24.0,
        top: 20.0,
        bottom: 50.0,
    };
    let pts: Vec<(&Point, f64, f64)> = results
        .points
        .iter()
        .filter_map(|p| Some((p, p.summary.rate?.mean, p.summary.cpu_us_per_unit?.mean)))
        .collect();
    let (xl, xr) = f.x_range();
    let (yb, yt) = f.y_range();
    let x = Scale::fit(pts.iter().map(|t| t.1), true, xl, xr);
    let y = Scale::fit(pts.iter().map(|t| t.2), true, yb, yt);
    let unit = results.rate_unit;
    let mut s = f.open(
        "plot-tradeoff",
        "CPU per unit of work against rate, Pareto front marked",
    );
    s.push_str(&x_axis(
        &f,
        &x,
        &format!("rate, {} (log scale)", unit.rate_label()),
    ));
    s.push_str(&y_axis(
        &f,
        &y,
        &format!("{} (log scale)", unit.cost_label()),
    ));
    s.push_str(&front_line(&pts, &x, &y));
    // Draw the baseline and the recommendation last, on top of their neighbours.
    let mut order: Vec<&(&Point, f64, f64)> = pts.iter().collect();
    order.sort_by_key(|t| !role_class(results, t.0).is_empty());
    for (p, r, c) in order {
        s.push_str(&marker(results, p, x.px(*r), y.px(*c), unit));
    }
    s.push_str("</svg>");
    s
}

/// The front's points joined in order of rate.
fn front_line(pts: &[(&Point, f64, f64)], x: &Scale, y: &Scale) -> String {
    let mut front: Vec<(f64, f64)> = pts
        .iter()
        .filter(|t| t.0.pareto)
        .map(|t| (x.px(t.1), y.px(t.2)))
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    let path: Vec<String> = front
        .iter()
        .map(|(a, b)| format!("{a:.1},{b:.1}"))
        .collect();
    format!(
        r#"<polyline class="front-line" points="{}"/>"#,
        path.join(" ")
    )
}

fn marker(
    results: &TuneResults,
    p: &Point,
    px: f64,
    py: f64,
    unit: nictune_tune::observe::RateUnit,
) -> String {
    let role = role_class(results, p);
    let front = if p.pareto { "front" } else { "" };
    let tip = format!(
        "{}: {} {}, {} {}{}",
        label(p),
        num(p.summary.rate.map_or(f64::NAN, |e| e.mean)),
        unit.rate_label(),
        num(p.summary.cpu_us_per_unit.map_or(f64::NAN, |e| e.mean)),
        unit.cost_label(),
        if p.pareto {
            ", on the Pareto front"
        } else {
            ""
        }
    );
    let mut s = format!(
        r#"<g class="point {front} {role}"><title>{}</title>"#,
        esc(&tip)
    );
    if p.baseline {
        let _ = write!(
            s,
            r#"<rect class="mark" x="{:.1}" y="{:.1}" width="9" height="9"/>"#,
            px - 4.5,
            py - 4.5
        );
    } else {
        let _ = write!(
            s,
            r#"<circle class="mark" cx="{px:.1}" cy="{py:.1}" r="5"/>"#
        );
    }
    let tag = match role {
        "recommended" => Some("recommended"),
        "baseline" => Some("as found"),
        _ => None,
    };
    if let Some(tag) = tag {
        if role == "recommended" {
            let _ = write!(
                s,
                r#"<circle class="ring" cx="{px:.1}" cy="{py:.1}" r="10"/>"#
            );
        }
        // Above the point, clear of its ring; near the right edge it ends at the point.
        let anchor = if px > 780.0 { "end" } else { "middle" };
        let _ = write!(
            s,
            r#"<text class="tag" x="{px:.1}" y="{:.1}" text-anchor="{anchor}">{tag}</text>"#,
            py - 16.0
        );
    }
    s.push_str("</g>");
    s
}
