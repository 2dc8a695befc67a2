//! Issue #12 items 6 and 7: interface and namespace names are checked by one rule at every
//! entry point (arguments, `--iface`, `--netns`, profiles, export) before anything is read.
//! Runs unprivileged: every case is refused before the host is touched.

mod common;

use common::{assert_exit, command, stderr};
use std::path::Path;
use std::process::Output;

/// Spellings that passed the default-route/SSH guard and were used as sysfs paths.
const PATH_SPELLINGS: [&str; 4] = ["va/", "./va", "../net/va", "../../../tmp/x"];

/// Runs `nictune args...` with its journal in `state`, never the machine's.
fn run(args: &[&str], state: &Path) -> Output {
    command()
        .args(args)
        .env("NICTUNE_STATE_DIR", state)
        .output()
        .expect("nictune runs")
}

#[track_caller]
fn assert_refused_name(out: &Output, kind: &str, name: &str) {
    assert_exit(out, 2);
    let err = stderr(out);
    assert!(
        err.contains(&format!("{kind} name {name:?} is not allowed")),
        "{name}: {err}"
    );
    assert!(err.contains("allowed: 1-"), "{err}");
    assert!(err.contains("hint: "), "{err}");
}

#[test]
fn iface_path_spellings_are_refused_by_show_doctor_apply_and_tune() {
    let state = tempfile::tempdir().unwrap();
    for name in PATH_SPELLINGS {
        let commands: [&[&str]; 5] = [
            &["show", name],
            &["doctor", name],
            &["apply", "--iface", name, "coalesce.rx-usecs=5", "--dry-run"],
            &["apply", "--iface", name, "coalesce.rx-usecs=5"],
            &["tune", "--iface", name, "--peer", "127.0.0.1:1"],
        ];
        for args in commands {
            let out = run(args, state.path());
            assert_refused_name(&out, "interface", name);
        }
    }
}

#[test]
fn iface_path_spellings_in_a_profile_are_refused_by_apply_and_export() {
    let dir = tempfile::tempdir().unwrap();
    for name in PATH_SPELLINGS {
        let path = dir.path().join("p.toml");
        let profile = format!("iface = {name:?}\n[settings]\n\"coalesce.rx-usecs\" = 5\n");
        std::fs::write(&path, profile).unwrap();
        let p = path.to_str().unwrap();
        for args in [
            &["apply", "--profile", p, "--dry-run"][..],
            &["export", p, "--format", "udev"],
        ] {
            let out = run(args, dir.path());
            assert_refused_name(&out, "interface", name);
        }
    }
}

#[test]
fn export_refuses_injected_iface_from_the_flag_and_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.toml");
    std::fs::write(&path, "[settings]\n\"coalesce.rx-usecs\" = 5\n").unwrap();
    let p = path.to_str().unwrap();
    let quote = "eth1\", RUN+=\"/bin/sh";
    let out = run(
        &["export", p, "--format", "udev", "--iface", quote],
        dir.path(),
    );
    assert_refused_name(&out, "interface", quote);
    let newline = "eth1\nExecStartPre=/bin/sh";
    std::fs::write(
        &path,
        format!("iface = {newline:?}\n[settings]\n\"coalesce.rx-usecs\" = 5\n"),
    )
    .unwrap();
    let out = run(&["export", p, "--format", "systemd-unit"], dir.path());
    assert_refused_name(&out, "interface", newline);
    assert!(out.stdout.is_empty(), "nothing may be written");
}

#[test]
fn apply_refuses_the_netns_names_show_refuses() {
    let state = tempfile::tempdir().unwrap();
    for name in ["a b", "../x", "x/y", "-n", "..", ""] {
        let flag = format!("--netns={name}");
        let netns = flag.as_str();
        for args in [
            &["show", netns][..],
            &["apply", netns, "--iface", "v0", "napi.threaded=1"],
            &["tune", "--iface", "v0", netns, "--peer", "127.0.0.1:1"],
        ] {
            let out = run(args, state.path());
            assert_refused_name(&out, "network namespace", name);
        }
    }
}

#[test]
fn apply_profile_from_dev_zero_stops_at_the_size_limit() {
    let state = tempfile::tempdir().unwrap();
    for args in [
        &["apply", "--profile", "/dev/zero", "--dry-run"][..],
        &["export", "/dev/zero", "--format", "udev"],
    ] {
        let out = run(args, state.path());
        assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(
            err.contains("profile /dev/zero is larger than 1 MiB"),
            "{err}"
        );
    }
}
