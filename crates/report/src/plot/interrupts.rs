//! Interrupts per second per setting, in the latency plot's row order — or, where no device
//! interrupt fired (veth, loopback: testbed-notes §5), the receive path's wake-ups that stand
//! in for them: NET_RX softirqs per second, as the bench counted them in `/proc/softirqs`.

use super::axis::{x_axis, Frame, Scale};
use super::{label_margin, role_class, rows};
use crate::escape::esc;
use crate::format::{label, num};
use nictune_tune::knob::PEER_PREFIX;
use nictune_tune::observe::CpuScope;
use nictune_tune::results::{Point, TuneResults};
use std::fmt::Write;

const ROW: f64 = 18.0;

/// What the panel shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Device interrupts per second (some fired).
    Interrupts,
    /// None fired: NET_RX softirqs per second stand in for them.
    Wakeups,
}

impl Measure {
    /// The panel's heading.
    pub fn heading(self) -> &'static str {
        match self {
            Measure::Interrupts => "Interrupts per second",
            Measure::Wakeups => "Receive wake-ups per second (no device interrupts)",
        }
    }

    /// The panel's caption.
    pub fn caption(self) -> &'static str {
        match self {
            Measure::Interrupts => {
                "Device interrupts per second as the bench counted them for each setting."
            }
            Measure::Wakeups => {
                "No device interrupt fired in any run: a veth or loopback path has none. What \
                 stands in for them is plotted instead: NET_RX softirqs per second (from \
                 /proc/softirqs), each a wake-up of the receive path that an interrupt would \
                 otherwise have caused. Fewer means more work per wake-up."
            }
        }
    }

    /// The unit on the axis and in the table header.
    pub fn unit(self) -> &'static str {
        match self {
            Measure::Interrupts => "interrupts/s",
            Measure::Wakeups => "NET_RX wake-ups/s",
        }
    }

    /// A point's mean value.
    pub fn value(self, results: &TuneResults, p: &Point) -> Option<f64> {
        match self {
            Measure::Interrupts => p.summary.interrupts_per_sec.map(|e| e.mean),
            Measure::Wakeups => wakeups(results.cpu_scope, p),
        }
    }
}

/// Interrupts when any fired; else wake-ups when any were counted; else `None` (nothing to
/// plot that would not be a row of zeros).
pub fn measure(results: &TuneResults) -> Option<Measure> {
    let any = |m: Measure| {
        results
            .points
            .iter()
            .any(|p| m.value(results, p).is_some_and(|v| v > 0.0))
    };
    if any(Measure::Interrupts) {
        Some(Measure::Interrupts)
    } else if any(Measure::Wakeups) {
        Some(Measure::Wakeups)
    } else {
        None
    }
}

/// The mean over runs of NET_RX softirqs per second: summed over separate machines, the
/// busiest view of one machine (client and server read the same `/proc/softirqs`).
fn wakeups(scope: CpuScope, p: &Point) -> Option<f64> {
    let per_run: Vec<f64> = p
        .runs
        .iter()
        .filter_map(|m| {
            m.hosts
                .values()
                .filter_map(|h| h.net_rx_softirqs_per_sec)
                .reduce(|a, b| match scope {
                    CpuScope::PerHost => a + b,
                    CpuScope::SharedMachine => a.max(b),
                })
        })
        .collect();
    (!per_run.is_empty()).then(|| per_run.iter().sum::<f64>() / per_run.len() as f64)
}

/// For a tune of both ends: a point's mean interrupts per second on this end (the bench's
/// `client`, the measuring host or guest) and on the peer (`server`), over its runs; `None`
/// unless every run counted both.
fn per_end(p: &Point) -> Option<(f64, f64)> {
    let mut here = Vec::new();
    let mut peer = Vec::new();
    for m in &p.runs {
        here.push(m.hosts.get("client")?.interrupts_per_sec?);
        peer.push(m.hosts.get("server")?.interrupts_per_sec?);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    (!here.is_empty()).then(|| (mean(&here), mean(&peer)))
}

/// A point's `measure` as a table cell: for a tune of both ends `here + peer` (the split the
/// plot draws), else the one figure; `–` when there is none.
pub fn cell(results: &TuneResults, p: &Point, measure: Measure) -> String {
    let split = measure == Measure::Interrupts && of_both_ends(results);
    match split.then(|| per_end(p)).flatten() {
        Some((here, peer)) => format!("{} + {}", num(here), num(peer)),
        None => measure.value(results, p).map_or("–".into(), num),
    }
}

/// Whether the results are a tune of both ends (some point sets a `peer:` setting).
pub fn of_both_ends(results: &TuneResults) -> bool {
    results
        .points
        .iter()
        .any(|p| p.settings.keys().any(|k| k.starts_with(PEER_PREFIX)))
}

/// The plot of `measure`, or `None` when no point has a value. For a tune of both ends each
/// bar is split into this end's interrupts and the peer's, since each end's setting shows
/// on its own NIC.
pub fn render(results: &TuneResults, measure: Measure) -> Option<String> {
    let rows = rows(results);
    let value = |p: &Point| measure.value(results, p);
    if rows.iter().all(|p| value(p).is_none()) {
        return None;
    }
    let split = measure == Measure::Interrupts && of_both_ends(results);
    // The plot area keeps its 600 px however long the row labels are; a split plot has its
    // legend above the rows.
    let left = label_margin(&rows);
    let top = if split { 30.0 } else { 12.0 };
    let f = Frame {
        width: left + 600.0,
        height: top + 48.0 + ROW * rows.len() as f64,
        left,
        // Room right of the bars for the value: "1711 + 1707" when split.
        right: if split { 110.0 } else { 70.0 },
        top,
        bottom: 46.0,
    };
    let (xl, xr) = f.x_range();
    // Each row's split between the ends, once (it averages over every run).
    let ends: Vec<Option<(f64, f64)>> = rows
        .iter()
        .map(|p| split.then(|| per_end(p)).flatten())
        .collect();
    let totals = rows
        .iter()
        .zip(&ends)
        .flat_map(|(p, e)| [value(p), e.map(|(here, peer)| here + peer)]);
    let x = Scale::from_zero(totals.flatten(), xl, xr);
    let unit = measure.unit();
    let mut s = f.open("plot-interrupts", &format!("{unit} per setting"));
    s.push_str(&x_axis(&f, &x, &unit.replace("/s", " per second")));
    if split {
        let _ = write!(
            s,
            r#"<g class="legend"><rect class="bar here" x="{xl}" y="6" width="12" height="10"/><text x="{}" y="15">this end</text><rect class="bar peer" x="{}" y="6" width="12" height="10"/><text x="{}" y="15">peer</text></g>"#,
            xl + 16.0,
            xl + 80.0,
            xl + 96.0,
        );
    }
    for (i, p) in rows.iter().enumerate() {
        let y = f.top + ROW * i as f64;
        let role = role_class(results, p);
        let v = value(p);
        let name = esc(&label(p));
        let _ = write!(
            s,
            r#"<g class="row {role}"><title>{name}: {} {unit}</title><text class="label" x="{}" y="{}" text-anchor="end">{name}</text>"#,
            v.map_or("–".into(), num),
            f.left - 8.0,
            y + ROW / 2.0 + 4.0,
        );
        if let Some((here, peer)) = ends[i] {
            let (wh, wp) = (x.px(here) - xl, x.px(here + peer) - x.px(here));
            let _ = write!(
                s,
                r#"<rect class="bar here" x="{xl}" y="{:.1}" width="{wh:.1}" height="{h}"/><rect class="bar peer" x="{:.1}" y="{:.1}" width="{wp:.1}" height="{h}"/><text class="value" x="{:.1}" y="{:.1}">{} + {}</text>"#,
                y + 3.0,
                xl + wh,
                y + 3.0,
                xl + wh + wp + 4.0,
                y + ROW / 2.0 + 4.0,
                num(here),
                num(peer),
                h = ROW - 6.0,
            );
        } else if let Some(v) = v {
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
