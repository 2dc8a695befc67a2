//! The conventions every command shares: exit codes, broken pipes, generated docs.

mod common;

use common::{assert_exit, command as nictune, stderr, stdout};
use std::process::Stdio;

#[test]
fn usage_error_exits_2() {
    let out = nictune().arg("--no-such-flag").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--no-such-flag"));
}

#[test]
fn help_lists_exit_codes() {
    let out = nictune().arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("Exit codes:"), "{text}");
    assert!(text.contains("2  usage error"), "{text}");
}

#[test]
fn closed_stdout_is_a_normal_exit() {
    // The reading end is closed before nictune starts, so its first write fails with EPIPE;
    // that must end the command with exit 0 and no error message (like `nictune ... | head`).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = nictune()
        .arg("manpage")
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn completions_and_man_page_come_from_the_cli_definition() {
    let out = nictune().args(["completions", "bash"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let script = stdout(&out);
    for sub in ["explain", "sim", "doctor", "tune"] {
        assert!(script.contains(sub), "completion script lacks {sub}");
    }
    let out = nictune().arg("manpage").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let man = stdout(&out);
    assert!(man.contains(".TH nictune 1"), "{man}");
    assert!(
        man.contains(".SH \"EXIT STATUS\""),
        "man page lacks the exit codes section"
    );
    // Every page the top-level one points to is there.
    let out = nictune().args(["manpage", "apply"]).output().unwrap();
    assert_exit(&out, 0);
    let man = stdout(&out);
    assert!(man.contains(".TH nictune-apply 1"), "{man}");
    for s in ["ENVIRONMENT", "FILES", "EXIT STATUS"] {
        assert!(
            man.contains(&format!(".SH \"{s}\"")),
            "nictune-apply(1) lacks {s}"
        );
    }
}

#[test]
fn man_page_of_an_unknown_command_names_the_commands() {
    let out = nictune().args(["manpage", "aply"]).output().unwrap();
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("aply") && err.contains("apply, confirm"),
        "{err}"
    );
}

#[test]
fn man_page_dir_writes_every_page() {
    let dir = std::env::temp_dir().join(format!("nictune-man-{}", std::process::id()));
    let out = nictune()
        .args(["manpage", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    std::fs::remove_dir_all(&dir).unwrap();
    for want in [
        "nictune.1",
        "nictune-apply.1",
        "nictune-show.1",
        "nictune-tune.1",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    assert!(!names.iter().any(|n| n.contains("vm-agent")), "{names:?}");
}

/// Issue #13: a usage error under `--json` is the `nictune.error/v1` document on stdout
/// (exit 2), the human text stays on stderr.
#[test]
fn usage_errors_under_json_are_error_documents_on_stdout() {
    let out = nictune()
        .args(["--json", "bench", "rr", "--duration", "2x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "nictune.error/v1");
    assert_eq!(doc["exit_code"], 2);
    let error = doc["error"].as_str().unwrap();
    assert!(
        error.contains("--duration") && error.contains("500ms"),
        "{error}"
    );
    assert!(doc["hint"].is_string(), "{doc}");
    assert!(stderr(&out).contains("--duration"));
    // Without --json, and for --help, clap's text as before.
    let out = nictune()
        .args(["bench", "rr", "--duration", "2x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let out = nictune().args(["--json", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("Usage"));
}

/// Issue #13: one duration grammar — bare seconds or a number with a unit — in bench, tune
/// and apply; a value outside it is a usage error naming the grammar.
#[test]
fn durations_read_the_same_in_bench_tune_and_apply() {
    for (args, flag) in [
        (
            &["bench", "rr", "--loopback", "--duration"][..],
            "--duration",
        ),
        (&["bench", "rr", "--loopback", "--warmup"][..], "--warmup"),
        (&["sim", "seed-e1000-ping", "--duration"][..], "--duration"),
        (&["tune", "--synthetic", "--duration"][..], "--duration"),
        (&["tune", "--synthetic", "--warm-up"][..], "--warmup"),
        (
            &["apply", "--dry-run", "--iface", "lo", "--confirm-within"][..],
            "--confirm-within",
        ),
    ] {
        let out = nictune().args(args).arg("soon").output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let text = stderr(&out);
        assert!(
            text.contains(flag) && text.contains("e.g. 2s or 2"),
            "{args:?}: {text}"
        );
    }
    // Both spellings get past the parser and run (synthetic tune: no root, nothing changed).
    let out_dir = std::env::temp_dir().join(format!("nictune-durations-{}", std::process::id()));
    for d in ["1", "1s"] {
        let out = nictune()
            .args([
                "--json",
                "tune",
                "--synthetic",
                "--budget",
                "52",
                "--duration",
                d,
            ])
            .args(["--warmup", "0", "--out"])
            .arg(&out_dir)
            .output()
            .unwrap();
        assert_exit(&out, 0);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            doc["schema"]
                .as_str()
                .map(|s| s.starts_with("nictune.tune/")),
            Some(true)
        );
        assert_eq!(doc["search"]["duration_s"], 1.0, "{d}");
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    for d in ["0.5", "500ms"] {
        let out = nictune()
            .args(["sim", "seed-e1000-ping", "--duration", d])
            .output()
            .unwrap();
        assert_exit(&out, 0);
        assert!(
            stdout(&out).contains("0.5 s simulated"),
            "{d}: {}",
            stdout(&out)
        );
    }
}
