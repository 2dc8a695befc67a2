//! `nictune tune` as a user runs it: the help text, bad input, and the synthetic
//! demonstration writing all three files, labelled as synthetic.

mod common;

use std::process::Command;

fn nictune(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nictune"))
        .args(args)
        .output()
        .expect("run nictune")
}

#[test]
fn help_lists_the_whole_argument_surface() {
    let out = nictune(&["tune", "--help"]);
    assert!(out.status.success());
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_bad_budget_exits_2_with_a_hint_and_writes_nothing() {
    let dir = std::env::temp_dir().join(format!("nictune-tune-bad-{}", std::process::id()));
    let out = nictune(&["tune", "--budget", "soon", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--budget: \"soon\" is not allowed"), "{err}");
    assert!(err.contains("hint:"), "{err}");
    assert!(!dir.exists(), "nothing written for bad input");
}

/// `nictune tune --synthetic --budget BUDGET --json --out DIR/out`: the output, and the
/// directory (kept alive by the caller).
fn synthetic_with_budget(budget: &str) -> (std::process::Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = nictune(&[
        "tune",
        "--synthetic",
        "--budget",
        budget,
        "--json",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    (out, dir)
}

#[test]
fn a_one_minute_budget_is_fitted_with_shorter_runs_and_says_so() {
    let (out, _dir) = synthetic_with_budget("1m");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("note: Runs were shortened to fit the budget of 60 s"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = doc["environment"]["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("as noisy")),
        "{notes:?}"
    );
    // Every candidate was still measured, and the plan's runs fit in the minute at the
    // shortened length the results record.
    let search = &doc["search"];
    assert_eq!(search["measured"], search["space_size"], "{search}");
    let per_run = search["duration_s"].as_f64().unwrap() + search["warm_up_s"].as_f64().unwrap();
    assert!(per_run < 2.5, "asked 2 s + 0.5 s, got {per_run}");
    let planned = search["plan"]["budget"].as_f64().unwrap();
    assert!(planned * per_run <= 60.0, "{planned} runs × {per_run} s");
}

/// Issue #16: a budget too small for one run per candidate is not refused: a subset is
/// measured, every level of every setting in it, and the results say what was left out.
#[test]
fn a_budget_below_one_run_per_candidate_measures_a_subset_and_says_so() {
    let (out, _dir) = synthetic_with_budget("12s");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("candidates fit the budget"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let search = &doc["search"];
    let (measured, space) = (
        search["measured"].as_u64().unwrap(),
        search["space_size"].as_u64().unwrap(),
    );
    assert!(measured >= 3 && measured < space, "{search}");
    let per_run = search["duration_s"].as_f64().unwrap() + search["warm_up_s"].as_f64().unwrap();
    let planned = search["plan"]["budget"].as_f64().unwrap();
    assert!(planned * per_run <= 12.0, "{planned} runs × {per_run} s");
    // Too small for even the settings as found and two candidates: refused with the minimum.
    let out = nictune(&["tune", "--synthetic", "--budget", "2s"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("even the smallest search"), "{err}");
    assert!(err.contains("hint: use --budget"), "{err}");
}

#[test]
fn synthetic_writes_three_labelled_files() {
    let dir = std::env::temp_dir().join(format!("nictune-tune-demo-{}", std::process::id()));
    let out = nictune(&[
        "tune",
        "--synthetic",
        "--predict",
        "--budget",
        "60",
        "--json",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stdout["schema"], "nictune.tune/v5");
    assert_eq!(stdout["environment"]["target"], "synthetic");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(file, stdout, "results.json is what --json printed");
    assert!(file["points"].as_array().unwrap().len() > 1);
    assert!(file["pareto"].as_array().is_some_and(|p| !p.is_empty()));
    let profile = std::fs::read_to_string(dir.join("recommended.toml")).unwrap();
    assert!(profile.contains("SYNTHETIC, not measured"));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("SYNTHETIC DEMONSTRATION"));
    assert!(
        html.contains(r#"id="plot-predicted""#),
        "--predict fills the plot"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_terminal_summary_is_short_and_says_synthetic() {
    let dir = std::env::temp_dir().join(format!("nictune-tune-text-{}", std::process::id()));
    let out = nictune(&["tune", "--synthetic", "--out", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).replace(dir.to_str().unwrap(), "DIR");
    insta::assert_snapshot!(text);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_root_a_live_tune_exits_77_and_points_at_sim() {
    // As root: dropped to nobody for this one command.
    let Some(out) = common::as_nobody(&["tune", "--testbed"], &[]) else {
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(77));
    assert!(err.contains("needs root"), "{err}");
    assert!(err.contains("nictune sim"), "{err}");
}
