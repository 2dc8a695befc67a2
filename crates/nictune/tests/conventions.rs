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
