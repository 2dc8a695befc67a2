//! `apply`, `revert`, `status` and `export` without touching the host: `--help` as users see
//! it, and bad input refused before anything is read or written (exit 2, message naming the
//! value and what is allowed, a hint). Runs unprivileged.

mod common;

use common::{assert_exit, command, json, stderr, stdout};
use std::path::Path;
use std::process::Output;

/// Runs `nictune args...` with its journal in `state`, never the machine's.
fn nictune(args: &[&str], state: &Path) -> Output {
    command()
        .args(args)
        .env("NICTUNE_STATE_DIR", state)
        .output()
        .expect("nictune runs")
}

#[test]
fn help_apply_and_export() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in ["apply", "export"] {
        let out = nictune(&[cmd, "--help"], dir.path());
        assert_exit(&out, 0);
        insta::assert_snapshot!(format!("help_{cmd}"), stdout(&out));
    }
}

#[test]
fn bad_input_is_refused_before_touching_anything() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["apply", "--iface", "v0", "coalesce.rx-usec=5"],
            "did you mean coalesce.rx-usecs",
        ),
        (
            &["apply", "--iface", "v0", "napi.defer-hard-irqs=-1"],
            "allowed 0–2147483647",
        ),
        (
            &[
                "apply",
                "--iface",
                "v0",
                "napi.threaded=1",
                "--confirm-within",
                "3",
            ],
            "with a unit",
        ),
        (
            &["apply", "--netns", "../x", "napi.threaded=1"],
            "network namespace name \"../x\" is not allowed",
        ),
        (
            &["export", "nope.toml", "--format", "ini"],
            "is not a format; allowed: systemd-link",
        ),
    ];
    for (args, expected) in cases {
        let out = nictune(args, dir.path());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(err.contains("hint:"), "{args:?}: {err}");
    }
    assert!(
        !dir.path().join("changes").exists(),
        "nothing was journaled"
    );
}

#[test]
fn status_and_revert_with_no_history() {
    let dir = tempfile::tempdir().unwrap();
    let out = nictune(&["status"], dir.path());
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(0), "No changes recorded.\n".into())
    );
    let out = nictune(&["revert"], dir.path());
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "Nothing to revert: no change of nictune is in place.\n"
    );
    let out = nictune(&["--json", "status"], dir.path());
    let doc = json(&out);
    assert_eq!(doc["schema"], "nictune.status/v1");
    assert_eq!(doc["changes"], serde_json::json!([]));
    assert_eq!(doc["hidden_closed"], 0);
}
