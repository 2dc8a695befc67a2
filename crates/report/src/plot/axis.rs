//! Scales, ticks and axes for hand-written SVG plots.
//!
//! Latencies, rates and interrupt counts in a tune span two or three decades (11 µs to
//! 400 µs p99, 3.5 k to 89 k trans/s in testbed-notes §6), so most axes are logarithmic.

use crate::escape::esc;
use crate::format::num;
use std::fmt::Write;

/// Maps data values to pixels along one axis.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
    px0: f64,
    px1: f64,
}

impl Scale {
    /// A scale over the data in `values`, padded a little, from pixel `px0` to `px1`.
    /// Logarithmic scales ignore values ≤ 0.
    pub fn fit(values: impl IntoIterator<Item = f64>, log: bool, px0: f64, px1: f64) -> Scale {
        let usable: Vec<f64> = values
            .into_iter()
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .collect();
        let lo = usable.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = usable.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = match (lo.is_finite(), log) {
            (false, _) => (1.0, 10.0),
            (true, true) => (lo / 1.25, hi * 1.25),
            (true, false) => {
                let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.05).max(1e-9);
                // Non-negative data keeps a non-negative axis.
                let low = if lo >= 0.0 {
                    (lo - pad).max(0.0)
                } else {
                    lo - pad
                };
                (low, hi + pad)
            }
        };
        Scale {
            lo,
            hi: if hi > lo { hi } else { lo * 10.0 + 1.0 },
            log,
            px0,
            px1,
        }
    }

    /// A linear scale starting at zero.
    pub fn from_zero(values: impl IntoIterator<Item = f64>, px0: f64, px1: f64) -> Scale {
        let hi = values
            .into_iter()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        Scale {
            lo: 0.0,
            hi: if hi > 0.0 { hi * 1.08 } else { 1.0 },
            log: false,
            px0,
            px1,
        }
    }

    /// The pixel of `v` (clamped to the scale).
    pub fn px(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.max(self.lo).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.px0 + t.clamp(0.0, 1.0) * (self.px1 - self.px0)
    }

    /// Tick values inside the scale: 1-2-5 steps.
    pub fn ticks(&self) -> Vec<f64> {
        if self.log {
            log_ticks(self.lo, self.hi)
        } else {
            linear_ticks(self.lo, self.hi)
        }
    }

    /// Both ends of the scale's domain.
    pub fn domain(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }
}

/// 1-2-5 per decade; a log axis spanning less than that (rates of 1.8–3.4 k in a tune of a
/// slow guest) gets the linear 1-2-5 steps instead, so it never shows one lone tick.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let decades = per_decade(lo, hi);
    if decades.len() >= 3 {
        return decades;
    }
    let linear: Vec<f64> = linear_ticks(lo, hi)
        .into_iter()
        .filter(|v| *v > 0.0)
        .collect();
    if linear.len() > decades.len() {
        linear
    } else {
        decades
    }
}

fn per_decade(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        for m in [1.0, 2.0, 5.0] {
            let v = decade * m;
            if v >= lo && v <= hi {
                out.push(v);
            }
        }
        decade *= 10.0;
    }
    out
}

fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(mag * 10.0);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi + step * 1e-9 {
        out.push(v);
        v += step;
    }
    out
}

/// The plot area inside an SVG canvas.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// Canvas width in pixels (the SVG `width` and `viewBox`).
    pub width: f64,
    /// Canvas height in pixels.
    pub height: f64,
    /// Margin left of the plot area in pixels: room for the y tick labels and axis title.
    pub left: f64,
    /// Margin right of the plot area in pixels.
    pub right: f64,
    /// Margin above the plot area in pixels.
    pub top: f64,
    /// Margin below the plot area in pixels: room for the x tick labels and axis title.
    pub bottom: f64,
}

impl Frame {
    /// Pixel x of the plot area's left and right edges.
    pub fn x_range(&self) -> (f64, f64) {
        (self.left, self.width - self.right)
    }

    /// Pixel y of the plot area's bottom and top edges (bottom first: values grow upwards).
    pub fn y_range(&self) -> (f64, f64) {
        (self.height - self.bottom, self.top)
    }

    /// `<svg>` opening tag with an id, a class and an accessible name.
    pub fn open(&self, id: &str, title: &str) -> String {
        format!(
            r#"<svg id="{id}" class="plot" role="img" aria-label="{t}" viewBox="0 0 {w} {h}" width="{w}" height="{h}" xmlns="http://www.w3.org/2000/svg"><title>{t}</title>"#,
            t = esc(title),
            w = self.width,
            h = self.height,
        )
    }
}

/// Vertical grid lines and tick labels along the bottom, and the axis title.
pub fn x_axis(f: &Frame, x: &Scale, title: &str) -> String {
    let (yb, yt) = f.y_range();
    let mut s = String::new();
    for t in x.ticks() {
        let px = x.px(t);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{px:.1}" y1="{yt}" x2="{px:.1}" y2="{yb}"/><text class="tick" x="{px:.1}" y="{ty}" text-anchor="middle">{}</text>"#,
            num(t),
            ty = yb + 14.0,
        );
    }
    let (xl, xr) = f.x_range();
    let _ = write!(
        s,
        r#"<line class="axis" x1="{xl}" y1="{yb}" x2="{xr}" y2="{yb}"/><text class="axis-title" x="{cx}" y="{ty}" text-anchor="middle">{}</text>"#,
        esc(title),
        cx = (xl + xr) / 2.0,
        ty = yb + 32.0,
    );
    s
}

/// Horizontal grid lines and tick labels along the left, and the rotated axis title.
pub fn y_axis(f: &Frame, y: &Scale, title: &str) -> String {
    let (xl, xr) = f.x_range();
    let mut s = String::new();
    for t in y.ticks() {
        let py = y.px(t);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{xl}" y1="{py:.1}" x2="{xr}" y2="{py:.1}"/><text class="tick" x="{tx}" y="{ty:.1}" text-anchor="end">{}</text>"#,
            num(t),
            tx = xl - 6.0,
            ty = py + 4.0,
        );
    }
    let (yb, yt) = f.y_range();
    let cy = (yb + yt) / 2.0;
    let _ = write!(
        s,
        r#"<line class="axis" x1="{xl}" y1="{yt}" x2="{xl}" y2="{yb}"/><text class="axis-title" x="14" y="{cy}" text-anchor="middle" transform="rotate(-90 14 {cy})">{}</text>"#,
        esc(title),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_scale_maps_decades_evenly() {
        let s = Scale {
            lo: 10.0,
            hi: 1000.0,
            log: true,
            px0: 0.0,
            px1: 200.0,
        };
        assert!((s.px(100.0) - 100.0).abs() < 1e-9);
        assert_eq!(s.px(1.0), 0.0, "clamped");
        assert_eq!(s.ticks(), [10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]);
    }

    #[test]
    fn a_narrow_log_axis_gets_round_linear_ticks() {
        // The e1000 guest's rates and CPU costs: less than one 1-2-5 step apart.
        assert_eq!(log_ticks(1450.0, 3400.0), [1500.0, 2000.0, 2500.0, 3000.0]);
        assert_eq!(log_ticks(450.0, 900.0), [500.0, 600.0, 700.0, 800.0, 900.0]);
        // Wide enough for the 1-2-5 decades: unchanged.
        assert_eq!(log_ticks(9.0, 60.0), [10.0, 20.0, 50.0]);
    }

    #[test]
    fn linear_ticks_use_round_steps() {
        assert_eq!(linear_ticks(0.0, 9.0), [0.0, 2.0, 4.0, 6.0, 8.0]);
        let s = Scale::from_zero([0.0, 95.0], 0.0, 100.0);
        assert_eq!(s.domain().0, 0.0);
        assert!(s.px(95.0) < 100.0);
    }

    #[test]
    fn fitting_nothing_still_gives_a_usable_scale() {
        let s = Scale::fit(std::iter::empty(), true, 0.0, 100.0);
        assert!(s.px(5.0) > 0.0 && s.px(5.0) < 100.0);
    }
}
