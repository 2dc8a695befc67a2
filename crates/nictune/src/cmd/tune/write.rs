//! What a finished tune leaves behind: the three files in the output directory and the few
//! lines the terminal shows.

use anyhow::{Context, Result};
use nictune_core::envelope::Envelope;
use nictune_report::format::{num, pct};
use nictune_report::report_html;
use nictune_tune::profile::{recommended_peer_toml, recommended_toml};
use nictune_tune::results::{TargetKind, TuneResults};
use std::path::Path;

/// Writes results.json, recommended.toml and report.html into `dir`, and
/// recommended-peer.toml when the peer should change too.
pub fn write_outputs(dir: &Path, results: &TuneResults) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the output directory {}", dir.display()))?;
    let version = nictune_tune::results::SCHEMA_VERSION;
    let json = Envelope::versioned("tune", version, results).to_json()?;
    let mut files = vec![
        ("results.json", json + "\n"),
        ("recommended.toml", recommended_toml(results)),
        ("report.html", report_html(results)),
    ];
    let peer = dir.join("recommended-peer.toml");
    match recommended_peer_toml(results) {
        Some(text) => files.push(("recommended-peer.toml", text)),
        // An earlier tune's peer profile must not pass for this one's.
        None if peer.exists() => std::fs::remove_file(&peer)
            .with_context(|| format!("removing the stale {}", peer.display()))?,
        None => {}
    }
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// What the drivers did with the values written, when it was not what was asked: the
/// recommended values a driver adjusted, the points passed over for a setting not taken, and
/// how many points were not what they claim.
fn read_back_lines(r: &TuneResults) -> Vec<String> {
    let rec = &r.recommendation;
    let mut lines: Vec<String> = rec
        .adjusted
        .iter()
        .map(|a| format!("Read back: {a} (recommended as measured)"))
        .collect();
    for (id, why) in r.passed_over() {
        lines.push(format!("Passed over: {id} measured better, but {why}"));
    }
    let not_taken = r.not_taken_points();
    if not_taken > 0 {
        lines.push(format!(
            "warning: {not_taken} point(s) had a setting NOT taken (the driver kept its value): \
             measured as another point, never recommended; marked in the report"
        ));
    }
    lines
}

/// The few lines a terminal shows; the report has the rest. `journals`: how many candidate
/// journals moved to `<out>/journal`.
pub fn human(r: &TuneResults, out: &Path, journals: usize) -> String {
    let rec = &r.recommendation;
    let mut lines = Vec::new();
    if r.environment.target == TargetKind::Synthetic {
        lines.push("SYNTHETIC DEMONSTRATION: numbers from a model, not measured.".to_string());
    }
    lines.push(rec.headline.clone());
    if rec.keeps_everything() {
        lines.push(format!("Best measured: {}", rec.best_id));
    } else {
        match (rec.settings.is_empty(), rec.peer_settings.is_empty()) {
            (false, true) => lines.push(format!("Recommended: {}", rec.settings.join(" "))),
            (local_kept, _) => {
                let here = match local_kept {
                    true => "keep as found".to_string(),
                    false => rec.settings.join(" "),
                };
                lines.push("Recommended, both ends:".into());
                lines.push(format!("  this end: {here}"));
                lines.push(format!("  peer:     {}", rec.peer_settings.join(" ")));
            }
        }
        lines.push(format!("Placement measured: {}", rec.placement));
    }
    lines.extend(read_back_lines(r));
    for c in rec.changes.iter().filter(|c| c.significant) {
        lines.push(format!(
            "  {:<22} {:>7} → {:<7} {:<14} {}",
            c.metric,
            num(c.baseline),
            num(c.best),
            c.unit,
            pct(c.change_pct)
        ));
    }
    lines.push(format!(
        "{} of {} candidates measured in {} runs{}.",
        r.search.measured,
        r.search.space_size,
        r.search.measurements,
        r.search.between_runs()
    ));
    let peer = match rec.peer_settings.is_empty() {
        true => String::new(),
        false => format!(", {}/recommended-peer.toml", out.display()),
    };
    lines.push(format!(
        "Wrote {0}/results.json, {0}/recommended.toml{peer}, {0}/report.html",
        out.display()
    ));
    if journals > 0 {
        lines.push(format!(
            "Journals of the {journals} candidate changes: {}/journal \
             (`nictune status --all --state-dir {}/journal`)",
            out.display(),
            out.display()
        ));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_tune::readback::Taken;
    use nictune_tune::results::{PointReadBack, PointValue};

    /// The terminal says what the drivers did: the adjusted recommendation as measured, the
    /// point passed over with its reason, and how many points were not what they claim.
    #[test]
    fn the_summary_says_what_was_adjusted_passed_over_and_not_taken() {
        let mut r =
            nictune_tune::synthetic::demo(4, nictune_tune::objective::Goal::Latency, 72, false)
                .expect("synthetic tune");
        let plain = human(&r, Path::new("out"), 0);
        assert!(
            !plain.contains("NOT taken") && !plain.contains("Read back"),
            "{plain}"
        );
        let kept = r
            .points
            .iter()
            .position(|p| !p.baseline)
            .expect("a candidate");
        let text = "napi.defer-hard-irqs: asked 2, NOT taken (it kept 0)".to_string();
        r.points[kept].read_back = vec![PointReadBack {
            key: "napi.defer-hard-irqs".into(),
            asked: PointValue::Number(2),
            read: PointValue::Number(0),
            taken: Taken::NotTaken,
            objects: vec!["eth0 napi[1]".into()],
            text: text.clone(),
        }];
        let id = r.points[kept].id.clone();
        r.recommendation.passed_over = vec![id.clone()];
        r.recommendation.adjusted =
            vec!["coalesce.rx-usecs: asked 45, the driver made it 48".into()];
        let said = human(&r, Path::new("out"), 0);
        for line in [
            "Read back: coalesce.rx-usecs: asked 45, the driver made it 48 (recommended as measured)".to_string(),
            format!("Passed over: {id} measured better, but {text}"),
            "warning: 1 point(s) had a setting NOT taken".to_string(),
        ] {
            assert!(said.contains(&line), "{line:?} missing from\n{said}");
        }
    }
}
