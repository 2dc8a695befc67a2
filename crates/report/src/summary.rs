//! The part a person reads first: the verdict, what to set, what it gains and what it costs.

use crate::escape::esc;
use crate::format::{num, pct};
use nictune_tune::results::{Change, TargetKind, TuneResults};
use nictune_tune::verdict::Verdict;
use std::fmt::Write;

/// The summary section.
pub fn render(r: &TuneResults) -> String {
    let rec = &r.recommendation;
    let mut s = String::from(r#"<section id="summary">"#);
    if r.environment.target == TargetKind::Synthetic {
        s.push_str(r#"<p class="synthetic">SYNTHETIC DEMONSTRATION: these numbers come from a model with seeded noise, not from measuring any machine. Do not apply this profile.</p>"#);
    }
    let _ = write!(
        s,
        r#"<div class="verdict {}"><p class="headline">{}</p>{}</div>"#,
        verdict_class(rec.verdict),
        esc(&rec.headline),
        what_to_do(r)
    );
    s.push_str(&read_back(r));
    s.push_str(&gain_and_cost(&rec.changes));
    s.push_str(&changes_table(r));
    s.push_str(&context(r));
    s.push_str("</section>");
    s
}

/// What the drivers did with the values written, where a reader of the verdict must know it:
/// the recommended settings a driver adjusted (recommended as measured), the points passed
/// over because a setting was not taken, and how many measured points were not what they
/// claim. Empty when every value read back as asked.
fn read_back(r: &TuneResults) -> String {
    let rec = &r.recommendation;
    let mut lines = Vec::new();
    for a in &rec.adjusted {
        lines.push(format!(
            "Read back: {a}. The recommendation carries the value the driver made it: that is \
             what was measured."
        ));
    }
    for (id, why) in r.passed_over() {
        lines.push(format!(
            "Passed over: {} measured better, but {why}: the host ran with the value it kept, \
             so that point was never measured.",
            point_label(r, id)
        ));
    }
    let not_taken = r.not_taken_points();
    if not_taken > 0 {
        lines.push(format!(
            "{not_taken} measured point(s) had a setting NOT taken (the driver accepted the write \
             and kept its value); they are marked NOT TAKEN in the plots and the table and are \
             never recommended."
        ));
    }
    lines
        .iter()
        .map(|l| format!(r#"<p class="read-back">{}</p>"#, esc(l)))
        .collect()
}

/// The search's path in one line: `24 × 1 run → 8 kept; 8 × 2 runs → 3 kept; finals …`.
fn rounds(r: &TuneResults) -> String {
    let runs = |n: usize| {
        if n == 1 {
            "1 run".to_string()
        } else {
            format!("{n} runs")
        }
    };
    let mut parts: Vec<String> = r
        .search
        .rounds
        .iter()
        .map(|round| {
            format!(
                "{} × {} → {} kept",
                round.measured.len(),
                runs(round.reps),
                round.kept.len()
            )
        })
        .collect();
    let finalists = r.points.iter().filter(|p| p.finalist).count();
    parts.push(format!(
        "finals: {finalists} × {} fresh runs, with the settings as found",
        r.search.plan.final_reps
    ));
    parts.join("; ")
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Improvement => "improvement",
        Verdict::NoSignificantDifference => "no-difference",
        Verdict::AsFoundIsBest => "as-found",
    }
}

/// The settings to apply, or why nothing should change.
fn what_to_do(r: &TuneResults) -> String {
    let rec = &r.recommendation;
    if rec.keeps_everything() {
        return format!(
            r#"<p>Keep the settings as found. Best measured: <b>{}</b>.</p>"#,
            esc(&point_label(r, &rec.best_id))
        );
    }
    let lines = |kvs: &[String]| kvs.iter().map(|kv| esc(kv)).collect::<Vec<_>>().join("\n");
    let settings = match rec.peer_settings.is_empty() {
        true => format!(r#"<pre class="settings">{}</pre>"#, lines(&rec.settings)),
        false => {
            let here = match rec.settings.is_empty() {
                true => "(keep as found)".to_string(),
                false => lines(&rec.settings),
            };
            format!(
                r#"<p>On this end (<code>recommended.toml</code>):</p><pre class="settings">{here}</pre><p>On the peer, the host <code>nictune serve</code> ran on (<code>recommended-peer.toml</code>, applied there):</p><pre class="settings">{}</pre>"#,
                lines(&rec.peer_settings)
            )
        }
    };
    format!(
        r#"<p>Recommended: <b>{}</b></p>{settings}<p class="advice">Placement measured: client and server {}. No host setting carries placement: pin the application the same way. Apply with <code>nictune apply --profile recommended.toml</code>.</p>"#,
        esc(&point_label(r, &rec.id)),
        placement_words(rec.placement)
    )
}

fn point_label(r: &TuneResults, id: &str) -> String {
    r.point(id)
        .map(crate::format::label)
        .unwrap_or_else(|| id.to_string())
}

fn placement_words(p: nictune_tune::candidate::Placement) -> &'static str {
    use nictune_tune::candidate::Placement;
    match p {
        Placement::Cross => "pinned to different CPUs",
        Placement::Same => "pinned to the same CPU",
        Placement::Unpinned => "left to the scheduler",
    }
}

/// One line of gains and one of costs: the significant changes, better or worse.
fn gain_and_cost(changes: &[Change]) -> String {
    let better = |c: &Change| (c.change_pct < 0.0) == c.lower_is_better;
    let phrase = |c: &Change| format!("{} {}", c.metric, pct(c.change_pct));
    let gains: Vec<String> = changes
        .iter()
        .filter(|c| c.significant && better(c))
        .map(phrase)
        .collect();
    let costs: Vec<String> = changes
        .iter()
        .filter(|c| c.significant && !better(c))
        .map(phrase)
        .collect();
    let none = |v: &[String], what: &str| {
        if v.is_empty() {
            format!("no significant {what}")
        } else {
            v.join(", ")
        }
    };
    format!(
        r#"<p class="gain"><b>Gain</b> (best vs as found): {}</p><p class="cost"><b>Cost</b>: {}</p>"#,
        esc(&none(&gains, "gain")),
        esc(&none(&costs, "cost"))
    )
}

fn changes_table(r: &TuneResults) -> String {
    let mut s = String::from(
        r#"<table class="changes"><thead><tr><th>metric</th><th>as found</th><th>best</th><th>change (interval)</th><th>verdict</th></tr></thead><tbody>"#,
    );
    for c in &r.recommendation.changes {
        let better = (c.change_pct < 0.0) == c.lower_is_better;
        let (class, word) = match (c.significant, better) {
            (false, _) => ("same", "within noise"),
            (true, true) => ("better", "better"),
            (true, false) => ("worse", "worse"),
        };
        let interval = c
            .interval_pct
            .map(|[lo, hi]| format!(" ({} to {})", pct(lo), pct(hi)))
            .unwrap_or_default();
        let _ = write!(
            s,
            r#"<tr class="{class}"><td>{} ({})</td><td>{}</td><td>{}</td><td>{}{}</td><td>{word}</td></tr>"#,
            esc(&c.metric),
            esc(&c.unit),
            num(c.baseline),
            num(c.best),
            pct(c.change_pct),
            interval
        );
    }
    s.push_str("</tbody></table>");
    s
}

/// Objective, search and environment, in a few lines.
fn context(r: &TuneResults) -> String {
    let e = &r.environment;
    let q = &r.search;
    let mut s = String::from(r#"<dl class="context">"#);
    let mut item = |k: &str, v: String| {
        let _ = write!(s, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(&v));
    };
    item("objective", r.objective_description.clone());
    let runs = if q.duration_s > 0.0 {
        format!(
            "{} runs of {} s (after {} s warm-up each)",
            q.measurements, q.duration_s, q.warm_up_s
        )
    } else {
        format!("{} runs", q.measurements)
    };
    item(
        "search",
        format!(
            "{} of {} candidates measured in {runs}{}; {}; finalists re-measured {} times on fresh runs",
            q.measured,
            q.space_size,
            q.between_runs(),
            q.method,
            q.plan.final_reps
        ),
    );
    item("rounds", rounds(r));
    item(
        "target",
        format!("{} ({})", e.target_name, e.target.label()),
    );
    item("workload", e.workload.clone());
    item(
        "host",
        format!(
            "kernel {}, {} CPUs, nictune {}{}",
            e.kernel.as_deref().unwrap_or("unknown"),
            e.cpus.map_or("?".to_string(), |c| c.to_string()),
            e.nictune_version,
            e.started_at
                .as_deref()
                .map(|t| format!(", started {t}"))
                .unwrap_or_default()
        ),
    );
    if !r.recommendation.ties.is_empty() {
        let ties: Vec<String> = r
            .recommendation
            .ties
            .iter()
            .map(|id| point_label(r, id))
            .collect();
        item("statistically tied with the best", ties.join("; "));
    }
    for note in &e.notes {
        item("note", note.clone());
    }
    s.push_str("</dl>");
    s
}
