//! `apply`, `revert`, `status` and `export` without touching the host: `--help` as users see
//! it, and bad input refused before anything is read or written (exit 2, message naming the
//! value and what is allowed, a hint). Runs unprivileged.

mod common;

use common::{as_nobody, assert_exit, command, json, stderr, stdout};
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
    let cases: [(&[&str], &str); 7] = [
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
                "3x",
            ],
            "allowed: seconds (2, 0.5) or a number with a unit",
        ),
        (
            // Issue #12.6: this wrapped to a deadline in the past.
            &[
                "apply",
                "--iface",
                "v0",
                "napi.threaded=1",
                "--confirm-within",
                "18446744073709551615ms",
            ],
            "\"18446744073709551615ms\" is not a duration",
        ),
        (
            &[
                "apply",
                "--iface",
                "v0",
                "napi.threaded=1",
                "--confirm-within",
                "25h",
            ],
            "allowed: a duration from 1ms to 1day",
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
    assert_eq!(doc["schema"], "nictune.status/v4");
    assert_eq!(doc["changes"], serde_json::json!([]));
    assert_eq!(doc["hidden_closed"], 0);
}

/// A journal under `dir/changes` for a change of `net.core.somaxconn` (4096 → 1024) by
/// `pid` at `started`, in a namespace that does not exist (nothing on this machine could be
/// touched), its first step started, followed by `tail`. Returns its path.
fn write_journal(
    dir: &Path,
    pid: u32,
    started: u64,
    tail: &[nictune_apply::journal::Record],
) -> std::path::PathBuf {
    use nictune_apply::journal::Record;
    use nictune_apply::plan::Change;
    use nictune_host::write::setting::{Key, Object, Setting};
    use nictune_host::write::value::HostValue;
    let changes = dir.join("changes");
    std::fs::create_dir_all(&changes).unwrap();
    let id = nictune_apply::txn::txn_id(started, pid);
    let head = [
        Record::Begin {
            id: id.clone(),
            pid,
            started_unix_ms: started,
            netns: Some(format!("nictune-cli-absent-{}", std::process::id())),
            iface: None,
            changes: vec![Change {
                setting: Setting::new(Object::Netns, Key::Sysctl("net.core.somaxconn".into())),
                old: HostValue::text("4096"),
                new: HostValue::text("1024"),
            }],
            preserve: Vec::new(),
            boot: None,
            identity: None,
        },
        Record::Intent { step: 0 },
    ];
    let text: String = head
        .iter()
        .chain(tail)
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    let path = changes.join(format!("{id}.jsonl"));
    std::fs::write(&path, text).unwrap();
    path
}

/// A state directory holding one change that is still in place, pending confirmation, in a
/// namespace that does not exist (so nothing on this machine could be touched), readable by
/// every user.
fn state_with_a_pending_change() -> tempfile::TempDir {
    use nictune_apply::journal::Record;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let applied = Record::Applied {
        confirm_deadline_unix_ms: Some(u64::MAX / 2),
    };
    let path = write_journal(dir.path(), 4_194_305, 1_795_239_660_000, &[applied]);
    assert!(
        path.ends_with("changes/1795239660000-4194305.jsonl"),
        "{path:?}"
    );
    let changes = dir.path().join("changes");
    for (path, mode) in [(dir.path(), 0o755), (changes.as_path(), 0o755)] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    dir
}

/// A change whose process died mid-apply is *interrupted* even when another process has
/// taken its pid since: the process holding the pid started after the change began, so it
/// is not the one that journaled it. The same pid journaled by the process that holds it
/// now is a change still being applied.
#[test]
fn an_interrupted_change_stays_interrupted_when_another_process_takes_its_pid() {
    let mut holder = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = holder.id();
    let now = nictune_apply::txn::now_unix_ms();
    let week = 7 * 24 * 3_600_000;
    for (started, interrupted) in [(now - week, true), (now + 5_000, false)] {
        let dir = tempfile::tempdir().unwrap();
        write_journal(dir.path(), pid, started, &[]);
        let out = nictune(&["status"], dir.path());
        let text = stdout(&out);
        match interrupted {
            true => {
                assert_eq!(out.status.code(), Some(1), "{text}");
                assert!(text.contains("INTERRUPTED"), "{text}");
            }
            false => {
                assert_eq!(out.status.code(), Some(0), "{text}");
                assert!(!text.contains("INTERRUPTED"), "{text}");
            }
        }
    }
    holder.kill().unwrap();
    holder.wait().unwrap();
}

/// Issue #12.6: `revert` and `confirm` as non-root said "another change is running" (exit 2).
#[test]
fn revert_and_confirm_without_root_exit_77_saying_they_need_root() {
    let dir = state_with_a_pending_change();
    for cmd in ["revert", "confirm"] {
        let Some(out) = as_nobody(&[cmd], &[("NICTUNE_STATE_DIR", dir.path().as_os_str())]) else {
            return;
        };
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(77), "{cmd}: {err}");
        assert!(err.contains("needs root"), "{cmd}: {err}");
        assert!(
            err.contains(&format!("hint: run it as root (sudo nictune {cmd})")),
            "{err}"
        );
        assert!(!err.contains("another nictune change"), "{cmd}: {err}");
    }
    let journal = std::fs::read_to_string(dir.path().join("changes/1795239660000-4194305.jsonl"));
    assert_eq!(journal.unwrap().lines().count(), 3, "nothing was journaled");
}

/// Issue #12.6: a state directory that cannot be written got the hint "wait for it to
/// finish". sysfs refuses a new directory even to root, so this runs as root only (without
/// root, apply stops earlier, at exit 77). It fails before anything is read or written.
#[test]
fn a_state_dir_that_cannot_be_written_says_so_and_suggests_state_dir_or_root() {
    if !nictune_linux::write::privilege().is_root() {
        nictune_core::live::skip("as non-root, apply stops at its root check before the state dir");
        return;
    }
    let state = Path::new("/sys/nictune-state-dir-test");
    let args = ["apply", "--iface", "nictune-none0", "napi.threaded=1"];
    let out = nictune(&args, state);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the state directory is not writable"), "{err}");
    assert!(
        err.contains("--state-dir DIR") && err.contains("root"),
        "{err}"
    );
    assert!(!err.contains("wait for"), "{err}");
}
