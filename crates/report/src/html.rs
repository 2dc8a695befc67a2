//! `report.html`: one self-contained page. Inline CSS, inline SVG, no scripts, no fonts or
//! images fetched from anywhere, so it opens offline and from an email attachment.

use crate::escape::esc;
use crate::plot;
use nictune_tune::knob::PEER_PREFIX;
use nictune_tune::results::TuneResults;
use std::fmt::Write;

/// The whole report page for `results`.
pub fn render(results: &TuneResults) -> String {
    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{}</title><style>{CSS}</style></head><body><main>"#,
        esc(&title(results))
    );
    let _ = write!(s, "<h1>{}</h1>", esc(&title(results)));
    s.push_str(&crate::summary::render(results));
    s.push_str(&figure(
        "latency",
        "Latency per setting",
        "Each row is one setting, lowest p99 first. The bar around the p99 dot is its 95 % interval over the runs: rows whose bars overlap are not reliably different.",
        Some(plot::latency::render(results)),
        "",
    ));
    s.push_str(&figure(
        "tradeoff",
        "What each setting costs",
        "CPU time per unit of work against rate. Down and to the right is better. Filled points joined by the line are the Pareto front: no other setting is better on p99, CPU per unit of work and rate at once. A low cost per transaction can still mean busy CPUs: see the busy CPUs column below.",
        Some(plot::tradeoff::render(results)),
        "",
    ));
    match plot::interrupts::measure(results) {
        Some(m) => s.push_str(&figure(
            "interrupts",
            m.heading(),
            m.caption(),
            plot::interrupts::render(results, m),
            "",
        )),
        None => s.push_str(&figure(
            "interrupts",
            "Interrupts per second",
            "",
            None,
            "Neither device interrupts nor receive wake-ups (NET_RX softirqs) were counted in any run, so there is nothing to plot.",
        )),
    }
    // Only with a prediction: an empty card says nothing.
    if let Some(svg) = plot::predicted::render(results) {
        let caption = format!(
            "The simulator's p99 for each point before it was measured, against the measurement. On the diagonal the prediction was exact.{}",
            prediction_error(results)
                .map(|e| format!(" Median error: {} %.", crate::format::num(e)))
                .unwrap_or_default()
        );
        s.push_str(&figure(
            "predicted",
            "Predicted against measured",
            &caption,
            Some(svg),
            "",
        ));
    }
    if let Some(table) = crate::table::predictions(results) {
        s.push_str(r#"<section id="predictions"><h2>Predicted and measured, per setting</h2><p class="caption">What the simulator predicted for each setting before it was measured, beside the measurement, with the error in percent of the measurement.</p>"#);
        s.push_str(&table);
        s.push_str("</section>");
    }
    s.push_str(r#"<section id="points"><h2>Every measured point</h2>"#);
    s.push_str(&crate::table::render(results));
    s.push_str("</section>");
    s.push_str(&abbreviations(results));
    s.push_str("</main></body></html>\n");
    s
}

/// The median of |predicted − measured| / measured p99, in percent, over predicted points.
fn prediction_error(r: &TuneResults) -> Option<f64> {
    let mut errors: Vec<f64> = r
        .points
        .iter()
        .filter_map(|p| {
            let predicted = p.predicted.as_ref()?.latency_us?.p99;
            let measured = p.summary.p99_us?.mean;
            (measured > 0.0).then(|| (predicted - measured).abs() / measured * 100.0)
        })
        .collect();
    if errors.is_empty() {
        return None;
    }
    errors.sort_by(f64::total_cmp);
    Some(errors[errors.len() / 2])
}

/// The legend: every abbreviation this page uses (in the setting labels, the placements, the
/// column headings), with what it stands for.
fn abbreviations(r: &TuneResults) -> String {
    let mut words: Vec<String> = vec!["p50".into(), "p99".into(), r.rate_unit.rate_label().into()];
    for p in &r.points {
        for part in crate::format::label(p).split(" · ") {
            let first = part.split([' ', '=']).next().unwrap_or(part);
            match first.strip_prefix(PEER_PREFIX) {
                Some(rest) => words.extend([PEER_PREFIX.to_string(), rest.to_string()]),
                None => words.push(first.to_string()),
            }
        }
    }
    if plot::interrupts::measure(r) == Some(plot::interrupts::Measure::Wakeups) {
        words.push("NET_RX".into());
    }
    let used: Vec<_> = crate::format::ABBREVIATIONS
        .iter()
        .filter(|(a, _)| a.split(", ").any(|one| words.iter().any(|w| w == one)))
        .collect();
    let mut s =
        String::from(r#"<section id="abbreviations"><h2>Abbreviations</h2><dl class="context">"#);
    for (a, meaning) in used {
        let _ = write!(s, "<dt>{}</dt><dd>{}</dd>", esc(a), esc(meaning));
    }
    s.push_str("</dl></section>");
    s
}

fn title(r: &TuneResults) -> String {
    format!("nictune tune: {} objective", r.objective.goal)
}

/// A section with a heading, a caption, and the plot or a note saying why there is none.
fn figure(id: &str, heading: &str, caption: &str, svg: Option<String>, missing: &str) -> String {
    let body = svg.unwrap_or_else(|| format!(r#"<p class="note">{}</p>"#, esc(missing)));
    format!(
        r#"<section id="{id}"><h2>{}</h2><p class="caption">{}</p><div class="figure">{body}</div></section>"#,
        esc(heading),
        esc(caption)
    )
}

const CSS: &str = r#"
body{margin:0;background:#f6f7f9;color:#1d2330;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 20px 60px}
h1{font-size:24px;margin:0 0 16px}
h2{font-size:18px;margin:32px 0 6px}
section{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:14px 18px;margin:0 0 18px}
.caption,.note{color:#4b5565;font-size:13.5px;margin:0 0 10px}
.synthetic{background:#fde8e8;border:2px solid #c81e1e;color:#8a1010;font-weight:700;padding:10px 12px;border-radius:6px}
.verdict{border-left:6px solid #888;padding:8px 14px;margin:0 0 12px;background:#f3f4f6;border-radius:4px}
.verdict.improvement{border-color:#0e9f6e;background:#ecfdf5}
.verdict.no-difference{border-color:#9ca3af}
.verdict.as-found{border-color:#3f83f8;background:#eff6ff}
.headline{font-size:17px;font-weight:650;margin:4px 0 8px}
pre.settings{background:#111827;color:#e5e7eb;padding:8px 12px;border-radius:6px;font-size:13.5px;overflow-x:auto}
.advice{font-size:13.5px;color:#374151}
.gain,.cost{margin:4px 0}
table{border-collapse:collapse;width:100%;font-size:13px;margin:10px 0}
th,td{padding:4px 6px;border-bottom:1px solid #e5e7eb;text-align:right;white-space:nowrap}
th{white-space:normal;vertical-align:bottom}
th:first-child,td:first-child{text-align:left;white-space:normal;min-width:200px}
table.changes td:first-child{min-width:0}
tr.better td{color:#03543f}
tr.worse td{color:#9b1c1c}
tr.same td{color:#6b7280}
tr.recommended td{background:#ecfdf5;font-weight:600}
td.notes{white-space:normal;text-align:left;min-width:140px}
tr.not-taken td{background:#fde8e8;color:#9b1c1c}
.read-back{border-left:4px solid #e02424;padding:4px 10px;background:#fdf2f2}
tr.baseline td{background:#eff6ff}
dl.context{display:grid;grid-template-columns:max-content 1fr;gap:3px 14px;font-size:13px;margin:10px 0 0}
dt{color:#6b7280}
dd{margin:0}
.figure{overflow-x:auto}
svg.plot{display:block;max-width:100%;height:auto;font-size:11.5px}
svg .grid{stroke:#eceff3}
svg .axis{stroke:#9aa3b2}
svg .tick{fill:#6b7280}
svg .axis-title{fill:#374151;font-size:12px}
svg .label{fill:#1f2937}
svg .row.baseline .label,svg .row.recommended .label{font-weight:700}
svg .row.baseline .hl{fill:#eff6ff}
svg .row.recommended .hl{fill:#ecfdf5}
svg .range{stroke:#b8c0cc;stroke-width:2}
svg .ci{stroke:#f59e0b;stroke-width:6;stroke-opacity:.35;stroke-linecap:round}
svg .p50{fill:#3f83f8}
svg .p90{fill:#7e8aa0}
svg .p99{fill:#d97706}
svg .legend text{fill:#374151}
svg .point .mark{fill:#fff;stroke:#7e8aa0;stroke-width:1.5}
svg .point.front .mark{fill:#3f83f8;stroke:#1e429f}
svg .point.baseline .mark{fill:#9ca3af;stroke:#374151}
svg .point.recommended .mark{fill:#0e9f6e;stroke:#03543f}
svg .ring{fill:none;stroke:#0e9f6e;stroke-width:2}
svg .tag{fill:#111827;font-weight:600}
svg .front-line{fill:none;stroke:#3f83f8;stroke-width:1.5;stroke-dasharray:4 3}
svg .bar{fill:#93a4c2}
svg .row.recommended .bar{fill:#0e9f6e}
svg .row.baseline .bar{fill:#6b7280}
svg .bar.here,svg .row .bar.here{fill:#5b7bb5}svg .bar.peer,svg .row .bar.peer{fill:#d4a24c}
svg .value{fill:#374151}
svg .diag{stroke:#9aa3b2;stroke-dasharray:4 3}
"#;
