//! Issue #12 item 9: counts read from a capture are checked against a sane range before
//! anything is sized by them. Runs unprivileged on a copy of a fixture.

mod common;

use common::{assert_exit, fixture, nictune, stderr};
use std::time::{Duration, Instant};

#[test]
fn doctor_freebsd_with_hw_ncpu_minus_one_fails_fast_naming_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::path::PathBuf::from(fixture("freebsd-case5-before"));
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    let sysctl = dir.path().join("sysctl.txt");
    let text = std::fs::read_to_string(&sysctl).unwrap();
    std::fs::write(&sysctl, text.replace("hw.ncpu: 24", "hw.ncpu: -1")).unwrap();
    let started = Instant::now();
    let root = dir.path().to_str().unwrap();
    let out = nictune(&["doctor", "--os", "freebsd", "--root", root]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("sysctl.txt: line 4: hw.ncpu = \"-1\" is out of range; allowed: an integer from 1 to 8192"),
        "{err}"
    );
    assert!(err.contains("hint: "), "{err}");
}

/// A file that cannot be read is named once (not again as "caused by"), as what it is (a
/// scenario file, a binding map, a profile), and comes with a hint.
#[test]
fn unreadable_inputs_are_named_once_as_what_they_are_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("p.toml");
    std::fs::write(&binary, b"a\xff\n").unwrap();
    let state = dir.path().join("state");
    let state = state.to_str().unwrap();
    let binary = binary.to_str().unwrap();
    let cases: [(&[&str], &str, &str); 6] = [
        (
            &["sim", "/tmp"],
            "error: reading scenario file /tmp: Is a directory (os error 21)\n",
            "hint: /tmp is a directory: give the path of the scenario file in it",
        ),
        (
            &["sim", "/dev/zero"],
            "error: scenario file /dev/zero is larger than 1 MiB",
            "hint: give a scenario file of at most 1 MiB",
        ),
        (
            &["sim", "seed-igb-router", "--set", "binding=/dev/zero"],
            "binding map /dev/zero is larger than 1 MiB",
            "hint: ",
        ),
        (
            &[
                "apply",
                "--dry-run",
                "--state-dir",
                state,
                "--profile",
                "/nonexist",
            ],
            "error: reading profile /nonexist: No such file or directory (os error 2)\n",
            "hint: check the path: there is no /nonexist",
        ),
        (
            &[
                "apply",
                "--dry-run",
                "--state-dir",
                state,
                "--profile",
                "/tmp",
            ],
            "error: reading profile /tmp: Is a directory (os error 21)\n",
            "hint: /tmp is a directory",
        ),
        (
            &[
                "apply",
                "--dry-run",
                "--state-dir",
                state,
                "--profile",
                binary,
            ],
            "is not UTF-8 text (byte 1)",
            "hint: give a profile as UTF-8 text",
        ),
    ];
    for (args, error, hint) in cases {
        let out = nictune(args);
        assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(err.contains(error), "{args:?}: {err}");
        assert!(err.contains(hint), "{args:?}: {err}");
        assert!(!err.contains("caused by: Is a directory"), "{err}");
        assert!(!err.contains("caused by: No such file"), "{err}");
        assert!(
            !err.contains("profile /dev/zero") || args[0] != "sim",
            "{err}"
        );
    }
    // A state directory that is a file: the error once, and a hint.
    let file = dir.path().join("afile");
    std::fs::write(&file, "").unwrap();
    let out = nictune(&["status", "--state-dir", file.to_str().unwrap()]);
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(!err.contains("caused by: Not a directory"), "{err}");
    assert!(err.contains("hint: "), "{err}");
}

/// A full stdout is an error saying so, with a hint.
#[test]
fn a_full_stdout_is_named_with_a_hint() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = common::command()
        .args(["explain", "rx-usecs"])
        .stdout(full)
        .output()
        .unwrap();
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(
        err.starts_with("error: writing the output to stdout\n"),
        "{err}"
    );
    assert!(err.contains("caused by: No space left on device"), "{err}");
    assert!(
        err.contains("hint: stdout could not take the output"),
        "{err}"
    );
}
