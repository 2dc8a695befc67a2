//! `recommended.toml` is what `nictune apply --profile` and `nictune export` read: valid TOML,
//! only catalog keys under `[settings]`, the evidence in comments.

use nictune_tune::objective::Goal;
use nictune_tune::profile::recommended_toml;
use nictune_tune::synthetic::demo;
use nictune_tune::verdict::Verdict;

#[test]
fn an_improvement_becomes_a_profile_of_catalog_keys() {
    let results = demo(4, Goal::Latency, 72, false).unwrap();
    assert_eq!(results.recommendation.verdict, Verdict::Improvement);
    let text = recommended_toml(&results);
    insta::assert_snapshot!(text);
    let doc: toml::Table = text.parse().unwrap();
    let settings = doc["settings"].as_table().unwrap();
    assert_eq!(doc.len(), 1, "only [settings]");
    assert_eq!(settings["sysctl.net.core.busy_read"].as_str(), Some("50"));
    assert!(settings
        .keys()
        .all(|k| k.starts_with("napi.") || k.starts_with("sysctl.")));
}

#[test]
fn keeping_the_settings_as_found_writes_an_empty_profile() {
    let mut results = demo(4, Goal::Latency, 72, false).unwrap();
    results.recommendation.verdict = Verdict::NoSignificantDifference;
    results.recommendation.headline = Verdict::NoSignificantDifference.headline().into();
    results.recommendation.settings.clear();
    let text = recommended_toml(&results);
    assert!(text.contains("# Nothing to change"));
    let doc: toml::Table = text.parse().unwrap();
    assert!(doc["settings"].as_table().unwrap().is_empty());
}
