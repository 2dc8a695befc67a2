//! Every export format from one profile: the file as users see it (snapshots), checked by a
//! parser of that format (ours, strict) and, where the machine has them, by the format's own
//! tools: `systemd-analyze verify` for the unit, `sh -n` for shell fragments. Without
//! systemd-analyze its test skips through [`nictune_core::live::skip`] (a failure under
//! `NICTUNE_REQUIRE_LIVE`); `sh` is on every machine, so a `sh -n` that cannot start fails.

use nictune_apply::export::{export, parse_profile, validate, ExportContext, Format};
use std::process::Command;

/// The README's example profile.
const PROFILE: &str = r#"
iface = "eth1"

[settings]
"channels.combined" = 4
"ring.rx" = 1024
"coalesce.rx-usecs" = 50
"coalesce.adaptive-rx" = "off"
"feature.gro" = "on"
"rps.cpus" = "f"
"napi.defer-hard-irqs" = 2
"napi.gro-flush-timeout" = 20000
"sysctl.net.core.busy_poll" = 50
"irq.affinity@45" = "2-3"
"e1000e.InterruptThrottleRate" = "3000,3000"
"freebsd.hw.igb.rxd" = 2048
"freebsd.kern.polling.burst_max" = 150
"freebsd.ifconfig.polling" = "on"
"nfs.rsize" = 2048
"#;

fn render(format: Format, nictune: &str) -> String {
    try_render(format, nictune).unwrap()
}

/// The file, or the refusal of an export that would hold none of the profile's settings.
fn try_render(format: Format, nictune: &str) -> Result<String, String> {
    let profile = parse_profile(PROFILE).unwrap();
    let target = ExportContext {
        iface: Some("eth1"),
        profile_path: "/etc/nictune/eth1.toml",
        nictune,
        netns: None,
        version: None,
        link_match: &[],
    };
    match export(format, &profile.items, &target) {
        Ok(e) => Ok(e.text),
        Err(e @ nictune_apply::export::ExportError::NothingToWrite { .. }) => Err(e.to_string()),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn every_format_matches_its_snapshot_and_parses() {
    for (format, name) in Format::ALL {
        let text = match try_render(format, "/usr/bin/nictune") {
            Ok(text) => text,
            Err(refused) => {
                insta::assert_snapshot!(name, refused);
                continue;
            }
        };
        insta::assert_snapshot!(name, text);
        let checked = validate::check(format, &text).unwrap_or_else(|| Ok(shell_check(&text)));
        let n = checked.unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert!(n > 0, "{name}: nothing rendered");
    }
}

/// Runs `sh -n` on a script; returns its line count when it parses.
fn shell_check(text: &str) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.sh");
    std::fs::write(&path, text).unwrap();
    match Command::new("sh").arg("-n").arg(&path).output() {
        Ok(out) => assert!(
            out.status.success(),
            "sh -n: {}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!("sh -n could not run: {e}"),
    }
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .count()
}

#[test]
fn the_reapply_unit_passes_systemd_analyze_verify() {
    if Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_err()
    {
        nictune_core::live::skip(
            "systemd-analyze is not installed (scripts/install-deps installs systemd)",
        );
        return;
    }
    // ExecStart must name an existing executable for verify; the test binary is one.
    let exe = std::env::current_exe().unwrap();
    let text = render(Format::SystemdUnit, &exe.to_string_lossy());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nictune-eth1.service");
    std::fs::write(&path, &text).unwrap();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "systemd-analyze verify: {stderr}\n{text}"
    );
}

/// Issue #12 item 6: a newline in `iface` put an `ExecStartPre=` line into the unit (which
/// `systemd-analyze verify` accepted); a quote put a `RUN+=` into the udev rule.
#[test]
fn export_refuses_an_iface_whose_newline_would_add_an_execstartpre_line() {
    let injected = "eth1\nExecStartPre=/bin/sh -c id";
    let profile = format!("iface = {injected:?}\n[settings]\n\"coalesce.rx-usecs\" = 50\n");
    let err = parse_profile(&profile).unwrap_err().to_string();
    assert!(
        err.contains("interface name") && err.contains("contains '\\n'"),
        "{err}"
    );
    let items = parse_profile(PROFILE).unwrap().items;
    let target = ExportContext {
        iface: Some(injected),
        profile_path: "/etc/nictune/eth1.toml",
        nictune: "/usr/bin/nictune",
        netns: None,
        version: None,
        link_match: &[],
    };
    let err = export(Format::SystemdUnit, &items, &target).unwrap_err();
    assert!(
        err.to_string().contains("allowed: 1-15 ASCII letters"),
        "{err}"
    );
}

#[test]
fn export_refuses_an_iface_whose_quote_would_add_a_udev_run_key() {
    let items = parse_profile(PROFILE).unwrap().items;
    for iface in ["eth1\", RUN+=\"/bin/sh", "e\"", "e'1", "e 1", "e%i", "e$x"] {
        let target = ExportContext {
            iface: Some(iface),
            profile_path: "/etc/nictune/eth1.toml",
            nictune: "/usr/bin/nictune",
            netns: None,
            version: None,
            link_match: &[],
        };
        for format in [
            Format::Udev,
            Format::SystemdLink,
            Format::Tuned,
            Format::RcConf,
        ] {
            let err = export(format, &items, &target).unwrap_err();
            assert!(err.to_string().contains("interface name"), "{iface}: {err}");
        }
    }
}

#[test]
fn export_refuses_control_characters_in_paths_and_names_in_netns() {
    let items = parse_profile(PROFILE).unwrap().items;
    let base = ExportContext {
        iface: Some("eth1"),
        profile_path: "/etc/nictune/eth1.toml",
        nictune: "/usr/bin/nictune",
        netns: None,
        version: None,
        link_match: &[],
    };
    let newline_path = ExportContext {
        profile_path: "/tmp/x\nExecStartPre=/bin/sh",
        ..base.clone()
    };
    let err = export(Format::SystemdUnit, &items, &newline_path).unwrap_err();
    assert!(err.to_string().contains("control character"), "{err}");
    let bad_netns = ExportContext {
        netns: Some("lab\nExecStartPre=/bin/sh"),
        ..base.clone()
    };
    let err = export(Format::SystemdUnit, &items, &bad_netns).unwrap_err();
    assert!(err.to_string().contains("network namespace name"), "{err}");
    // A path with a space stays one argument.
    let spaced = ExportContext {
        profile_path: "/etc/my profiles/eth1.toml",
        ..base
    };
    let text = export(Format::SystemdUnit, &items, &spaced).unwrap().text;
    assert!(
        text.contains("--profile \"/etc/my profiles/eth1.toml\" --iface eth1"),
        "{text}"
    );
    validate::ini(&text).unwrap();
}
