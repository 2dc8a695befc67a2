//! `recommended.toml`: the recommendation as a profile for `nictune apply --profile` and
//! `nictune export`.
//!
//! The profile holds only settings, under `[settings]`, as canonical catalog keys with values
//! as the catalog writes them. Everything else a reader needs (the verdict, what was measured,
//! the placement advice that no host setting can carry) is in comments at the top.

use crate::knob::End;
use crate::results::TuneResults;
use crate::verdict::Verdict;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
struct Profile<'a> {
    settings: BTreeMap<&'a str, &'a str>,
}

/// The text of `recommended.toml` for `results`: this end's settings.
pub fn recommended_toml(results: &TuneResults) -> String {
    profile(results, &results.recommendation.settings, End::Local)
}

/// The text of `recommended-peer.toml`, the peer's settings, for a tune of both ends that
/// recommends changing the peer (`None` otherwise).
pub fn recommended_peer_toml(results: &TuneResults) -> Option<String> {
    let rec = &results.recommendation;
    (!rec.peer_settings.is_empty()).then(|| profile(results, &rec.peer_settings, End::Peer))
}

fn profile(results: &TuneResults, key_values: &[String], end: End) -> String {
    let rec = &results.recommendation;
    let settings: BTreeMap<&str, &str> = key_values
        .iter()
        .filter_map(|kv| kv.split_once('='))
        .collect();
    let body = toml::to_string(&Profile { settings })
        .unwrap_or_else(|e| format!("# could not serialise the settings: {e}\n"));
    let mut out = header(results, end);
    if key_values.is_empty() || rec.verdict != Verdict::Improvement {
        out.push_str("# Nothing to change: keep the settings as found.\n");
    }
    out.push_str(&body);
    if !body.contains("[settings]") {
        out.push_str("[settings]\n");
    }
    out
}

fn header(results: &TuneResults, end: End) -> String {
    let rec = &results.recommendation;
    let env = &results.environment;
    let mut lines = vec!["# nictune profile, written by `nictune tune`.".to_string()];
    let peer = !rec.peer_settings.is_empty();
    match end {
        End::Peer => lines.push(
            "# For the PEER end of the link (the host `nictune serve` ran on); this end's \
             settings are in recommended.toml."
                .into(),
        ),
        End::Local if peer => lines.push(
            "# For THIS end of the link; the peer's settings are in recommended-peer.toml.".into(),
        ),
        End::Local => {}
    }
    lines.extend([
        format!("# Verdict: {}", rec.headline),
        format!("# Objective: {}", results.objective_description),
        format!(
            "# Measured on: {} ({}), {}",
            env.target_name,
            env.target.label(),
            env.workload
        ),
    ]);
    if let Some(t) = &env.started_at {
        lines.push(format!("# Started: {t}"));
    }
    // The values below are those measured: an adjusted one as the driver made it.
    lines.extend(
        rec.adjusted
            .iter()
            .map(|a| format!("# Read back: {a} (the value measured, written below)")),
    );
    lines.push(format!(
        "# Placement measured: {}. No host setting carries it: pin the application the same way.",
        rec.placement
    ));
    lines.push("# Apply:   nictune apply --iface IF --profile recommended.toml".into());
    lines.push("# Persist: nictune export recommended.toml --format FORMAT".into());
    lines.push(String::new());
    lines.join("\n") + "\n"
}
