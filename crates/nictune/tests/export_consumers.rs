//! Every Linux export format read back by the program that consumes it (issue #13), as
//! Debian 12 ships them — scripts/install-deps installs each:
//! - networkmanager: `nmcli --offline connection modify` (NetworkManager's own keyfile
//!   reader and writer) must give back every `[ethtool]` key with its value;
//! - udev and systemd-link: `udevadm test` on a veth in a `nictune-` namespace, with the
//!   exported rule and `.link` file bind-mounted over /etc/udev/rules.d and
//!   /etc/systemd/network in a private mount namespace: no warning about either file, every
//!   rule line applied, the `.link` file chosen, the sysfs NAPI values read back
//!   (`udevadm verify` exists only from systemd 253 on);
//! - tuned: tuned's profile loader (tuned.profiles.Loader) and its net plugin's own option
//!   parser, run by the Debian python3 that has tuned's modules;
//! - modprobe.d: `modprobe -C FILE -c`;
//! - sysctl.d: `sysctl -p FILE` inside a `nictune-` namespace (per-namespace net.* keys);
//! - systemd-unit: installed with `--install --root DIR`, then `systemd-analyze verify`.
//!
//! A missing program or privilege reports `skipped: <reason>` through the project's helper
//! (a failure under NICTUNE_REQUIRE_LIVE=1). Namespaces are removed by a guard, also when a
//! test fails.

use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{nictune, stderr, stdout};

/// Coalescing, rings, channels, an offload and device-wide NAPI values: the acceptance
/// profile of issue #13.
const PROFILE: &str = r#"
iface = "nt0"
[settings]
"coalesce.rx-usecs" = 50
"coalesce.adaptive-rx" = "off"
"coalesce.rx-frames" = 32
"ring.rx" = 1024
"ring.tx" = 512
"channels.combined" = 4
"feature.gro" = "on"
"napi.gro-flush-timeout" = 20000
"napi.defer-hard-irqs" = 2
"#;

/// Exports `profile` in `format` (extra arguments after it) into `dir`; returns the file's
/// text and the settings the export listed as left out.
fn export(dir: &Path, profile: &str, format: &str, extra: &[&str]) -> (String, Vec<String>) {
    let input = dir.join(format!("{format}.toml"));
    std::fs::write(&input, profile).unwrap();
    let output = dir.join(format!("{format}.out"));
    let out = export_to(&input, format, &output, extra);
    assert!(out.status.success(), "export {format}: {}", stderr(&out));
    let left_out = stderr(&out)
        .lines()
        .filter_map(|l| l.strip_prefix(&format!("note: not expressible as {format}: ")))
        .map(|l| l.split(" (").next().unwrap_or(l).to_string())
        .collect();
    (std::fs::read_to_string(output).unwrap(), left_out)
}

/// `nictune export INPUT --format FORMAT --output OUTPUT EXTRA...`.
fn export_to(input: &Path, format: &str, output: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "export",
        input.to_str().unwrap(),
        "--format",
        format,
        "--output",
        output.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    nictune(&args)
}

/// The `Key=value` lines of one INI section, comments and blank lines left out.
fn section(text: &str, name: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{name}]");
        } else if inside && !line.is_empty() && !line.starts_with('#') {
            let (k, v) = line.split_once('=').expect("Key=value");
            out.push((k.to_string(), v.to_string()));
        }
    }
    out
}

fn have(program: &str, arg: &str) -> bool {
    Command::new(program).arg(arg).output().is_ok()
}

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"))
}

/// A namespace `nictune-exp-<tag>-<pid>` with the veth pair nt0/nt1, deleted on drop.
struct Netns(String);

impl Netns {
    /// The namespace, or why this machine cannot make one.
    fn new(tag: &str) -> Result<Netns, String> {
        if !nictune_linux::write::privilege().is_root() {
            return Err("needs root for a network namespace".into());
        }
        if !have("ip", "-V") {
            return Err("ip (iproute2) is not installed".into());
        }
        let ns = Netns(format!("nictune-exp-{tag}-{}", std::process::id()));
        let add = run("ip", &["netns", "add", &ns.0]);
        if !add.status.success() {
            return Err(format!("ip netns add: {}", stderr(&add)));
        }
        let veth = run(
            "ip",
            &[
                "-n", &ns.0, "link", "add", "nt0", "type", "veth", "peer", "name", "nt1",
            ],
        );
        assert!(veth.status.success(), "veth: {}", stderr(&veth));
        Ok(ns)
    }

    /// `sh -c script` inside the namespace (its own /sys) and a private mount namespace.
    fn sh(&self, script: &str) -> Output {
        run(
            "ip",
            &[
                "netns",
                "exec",
                &self.0,
                "unshare",
                "-m",
                "--propagation",
                "private",
                "sh",
                "-c",
                script,
            ],
        )
    }
}

/// A namespace for a test of `program` (from Debian package `package`), or `None` after
/// reporting why it is skipped; `tag` names it apart from the other tests' running at the
/// same time.
/// Runs `udevadm test --action=add` for nt0 in `ns`'s private mount namespace, with tmpfs
/// over /etc/udev, /etc/systemd and /run (udev reads only these files and writes its
/// database there, nothing of the host's): `rules` go to /etc/udev/rules.d and `links` to
/// /etc/systemd/network, each as (file in `dir`, name there); `after` runs last.
fn udevadm_test(
    ns: &Netns,
    dir: &Path,
    rules: &[(&str, &str)],
    links: &[(&str, &str)],
    after: &str,
) -> Output {
    let d = dir.display();
    let mut script =
        "set -e\nmount -t tmpfs nictune /etc/udev && mkdir /etc/udev/rules.d\n".to_string();
    for (file, name) in rules {
        script += &format!("cp {d}/{file} /etc/udev/rules.d/{name}\n");
    }
    if !links.is_empty() {
        script += "mkdir -p /etc/systemd && mount -t tmpfs nictune /etc/systemd && mkdir /etc/systemd/network\n";
    }
    for (file, name) in links {
        script += &format!("cp {d}/{file} /etc/systemd/network/{name}\n");
    }
    script += "mount -t tmpfs nictune /run\nudevadm test --action=add /sys/class/net/nt0 2>&1\n";
    ns.sh(&(script + after))
}

fn netns_with(program: &str, package: &str, tag: &str) -> Option<Netns> {
    if !have(program, "--version") {
        nictune_core::live::skip(&format!("{program} ({package}) is not installed"));
        return None;
    }
    Netns::new(tag)
        .map_err(|why| nictune_core::live::skip(&why))
        .ok()
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

#[test]
fn networkmanager_keyfile_survives_nmcli_offline_with_every_key() {
    if !have("nmcli", "--version") {
        return nictune_core::live::skip("nmcli (network-manager) is not installed");
    }
    let dir = tempfile::tempdir().unwrap();
    let (text, left_out) = export(dir.path(), PROFILE, "networkmanager", &[]);
    // NetworkManager 1.42 has no channels-* (1.46 does); NAPI values are not NM's.
    assert_eq!(
        left_out,
        [
            "channel.combined=4",
            "napi.defer-hard-irqs=2",
            "napi.gro-flush-timeout=20000"
        ]
    );
    let ours = section(&text, "ethtool");
    assert_eq!(ours.len(), 6, "{text}");
    let out = nmcli_offline(&keyfile(&text));
    let back = section(&out, "ethtool");
    assert_eq!(back, ours, "NetworkManager's reader kept:\n{out}");
    // Why the version gate: before 1.46 NetworkManager's reader drops channels-* silently.
    let (newer, _) = export(
        dir.path(),
        PROFILE,
        "networkmanager",
        &["--target-version", "1.46"],
    );
    let version = stdout(&run("nmcli", &["--version"]));
    let release: Vec<u32> = version
        .rsplit(' ')
        .next()
        .unwrap_or("")
        .trim()
        .split('.')
        .filter_map(|n| n.parse().ok())
        .collect();
    let back = nmcli_offline(&keyfile(&newer));
    let kept = section(&back, "ethtool")
        .iter()
        .any(|(k, _)| k == "channels-combined");
    if release.as_slice() < [1, 46].as_slice() {
        assert!(!kept, "{version}: channels-combined is not its key\n{back}");
    } else {
        assert!(kept, "{version}: channels-combined dropped\n{back}");
    }
}

/// A whole connection keyfile for nt0 around an exported `[ethtool]` section.
fn keyfile(ethtool: &str) -> String {
    format!(
        "[connection]\nid=nictune-test\nuuid=5f0b7e3c-8a1d-4c2e-9b6f-2d4e6a8c0b1f\n\
         type=ethernet\ninterface-name=nt0\n\n{ethtool}"
    )
}

/// NetworkManager's own keyfile reader and writer: the keyfile on stdin, as NM keeps it on
/// stdout.
fn nmcli_offline(keyfile: &str) -> String {
    use std::io::Write as _;
    let mut child = Command::new("nmcli")
        .args([
            "--offline",
            "connection",
            "modify",
            "connection.id",
            "nictune-test",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(keyfile.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "nmcli --offline: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn networkmanager_1_46_keyfile_carries_channels_with_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let (text, left_out) = export(
        dir.path(),
        PROFILE,
        "networkmanager",
        &["--target-version", "1.46"],
    );
    assert!(!left_out.iter().any(|s| s.starts_with("channels")));
    assert!(
        text.contains("# needs NetworkManager >= 1.46\nchannels-combined=4\n"),
        "{text}"
    );
}

#[test]
fn udev_rule_and_link_file_pass_udevadm_test_on_a_veth() {
    let Some(ns) = netns_with("udevadm", "udev", "udevadm") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (rules, udev_left_out) = export(dir.path(), PROFILE, "udev", &[]);
    assert_eq!(
        udev_left_out,
        Vec::<String>::new(),
        "udev holds every setting"
    );
    let (link, link_left_out) = export(dir.path(), PROFILE, "systemd-link", &[]);
    assert_eq!(
        link_left_out,
        ["napi.defer-hard-irqs=2", "napi.gro-flush-timeout=20000"]
    );
    // Why the version gate: the same key written for systemd 256 draws 252's warning.
    let newer = dir.path().join("newer");
    std::fs::create_dir(&newer).unwrap();
    let (newer_link, _) = export(
        &newer,
        "iface = \"nt9\"\n[settings]\n\"rps.cpus\" = \"3\"\n",
        "systemd-link",
        &["--target-version", "256"],
    );
    assert!(
        newer_link.contains("ReceivePacketSteeringCPUMask=0-1"),
        "{newer_link}"
    );
    let out = udevadm_test(
        &ns,
        dir.path(),
        &[("udev.out", "81-nictune-nt0.rules")],
        &[
            ("systemd-link.out", "10-nictune-nt0.link"),
            ("newer/systemd-link.out", "20-nictune-nt9.link"),
        ],
        "echo gro_flush_timeout=$(cat /sys/class/net/nt0/gro_flush_timeout)
         echo napi_defer_hard_irqs=$(cat /sys/class/net/nt0/napi_defer_hard_irqs)",
    );
    let log = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{log}");
    // Parse problems name the file and line: there must be none for ours.
    for file in ["81-nictune-nt0.rules", "10-nictune-nt0.link"] {
        let complaints: Vec<&str> = log
            .lines()
            .filter(|l| l.contains(&format!("{file}:")))
            .filter(|l| !l.contains(" ATTR '") && !l.contains(" RUN '"))
            .collect();
        assert!(complaints.is_empty(), "udev about {file}: {complaints:?}");
    }
    assert!(
        log.contains("Config file /etc/systemd/network/10-nictune-nt0.link is applied"),
        "{log}"
    );
    let version = stdout(&run("udevadm", &["--version"]));
    if version.trim().parse::<u32>().is_ok_and(|v| v < 256) {
        assert!(
            log.lines().any(|l| l.contains("20-nictune-nt9.link:")
                && l.contains("Unknown key")
                && l.contains("ReceivePacketSteeringCPUMask")),
            "udev {version} should not know the key:\n{log}"
        );
    }
    // Every setting's rule line was applied: an ATTR written or a RUN queued (the other
    // lines are the GOTO/LABEL gate that matches the interface).
    for (n, line) in rules.lines().enumerate() {
        if line.starts_with('#') || !(line.starts_with("ATTR{") || line.starts_with("RUN+=")) {
            continue;
        }
        let at = format!("81-nictune-nt0.rules:{} ", n + 1);
        assert!(
            log.lines()
                .any(|l| l.contains(&at) && (l.contains(" ATTR '") || l.contains(" RUN '"))),
            "rule line {} not applied: {line}\n{log}",
            n + 1
        );
    }
    assert!(
        log.contains("run: '/usr/sbin/ethtool -C nt0 rx-usecs 50'"),
        "{log}"
    );
    assert!(log.contains("gro_flush_timeout=20000\n"), "{log}");
    assert!(log.contains("napi_defer_hard_irqs=2\n"), "{log}");
    // The .link holds the rest, as systemd 252 spells it.
    for key in [
        "RxCoalesceSec=50us",
        "UseAdaptiveRxCoalesce=no",
        "RxMaxCoalescedFrames=32",
        "RxBufferSize=1024",
        "TxBufferSize=512",
        "CombinedChannels=4",
        "GenericReceiveOffload=yes",
    ] {
        assert!(link.lines().any(|l| l == key), "{key} missing:\n{link}");
    }
}

/// Audit: the rule wrote `rps.cpus@1` by ATTR{} and every queue's mask by a RUN+= that udev
/// runs after all rules, so rx-1 ended with the all-queues mask; both came before the
/// `ethtool -L` that makes the queues; two keys for gro_flush_timeout gave two ATTR{} lines.
/// udev's own run list must have channels, then the loop, then the one queue.
#[test]
fn udev_runs_channels_then_every_queue_then_one_queue() {
    let Some(ns) = netns_with("udevadm", "udev", "udev-order") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let profile = "iface = \"nt0\"\n[settings]\n\"rps.cpus@1\" = \"3\"\n\"rps.cpus\" = \"f\"\n\
                   \"channel.combined\" = 4\n\"napi.gro-flush-timeout\" = 20000\n\
                   \"sysfs.gro_flush_timeout\" = 5000\n";
    let (_, left_out) = export(dir.path(), profile, "udev", &[]);
    assert_eq!(left_out, ["sysfs.gro_flush_timeout=5000"]);
    let out = udevadm_test(
        &ns,
        dir.path(),
        &[("udev.out", "81-nictune-nt0.rules")],
        &[],
        "echo gro_flush_timeout=$(cat /sys/class/net/nt0/gro_flush_timeout)",
    );
    let log = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{log}");
    // Ours, in udev's order (rules files after 70- may add more, as 99-systemd.rules does).
    let runs: Vec<&str> = log
        .lines()
        .filter_map(|l| l.trim().strip_prefix("run: "))
        .filter(|r| r.contains("ethtool") || r.contains("/queues/"))
        .collect();
    assert_eq!(
        runs,
        [
            "'/usr/sbin/ethtool -L nt0 combined 4'",
            "'/bin/sh -c 'for f in /sys/class/net/nt0/queues/rx-*/rps_cpus; do echo f > $f; done''",
            "'/bin/sh -c 'echo 3 > /sys/class/net/nt0/queues/rx-1/rps_cpus''",
        ],
        "{log}"
    );
    assert!(log.contains("gro_flush_timeout=20000\n"), "{log}");
    assert_eq!(
        log.matches("gro_flush_timeout' writing").count(),
        1,
        "one ATTR for the file: {log}"
    );
}

/// Audit: a `KERNEL=="IF"` rule misses an interface udev renames to IF (its kernel name is
/// another then). Here a .link file names veth nt0 `ntx`; the rule exported for ntx applies,
/// through NAME, and the old form of the rule does not.
#[test]
fn udev_rule_follows_a_rename_by_net_setup_link() {
    let Some(ns) = netns_with("udevadm", "udev", "udev-rename") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let profile =
        "iface = \"ntx\"\n[settings]\n\"sysfs.gro_flush_timeout\" = 777\n\"ring.rx\" = 512\n";
    let (rules, _) = export(dir.path(), profile, "udev", &[]);
    std::fs::write(
        dir.path().join("rename.link"),
        "[Match]\nOriginalName=nt0\n\n[Link]\nName=ntx\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("old.rules"),
        "ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"ntx\", RUN+=\"/bin/true old-form\"\n",
    )
    .unwrap();
    let out = udevadm_test(
        &ns,
        dir.path(),
        &[
            ("udev.out", "81-nictune-ntx.rules"),
            ("old.rules", "70-old.rules"),
        ],
        &[("rename.link", "10-rename.link")],
        "",
    );
    let log = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains("run: '/usr/sbin/ethtool -G ntx rx 512'"),
        "{rules}\n{log}"
    );
    assert!(
        log.contains("gro_flush_timeout' writing '777'"),
        "{rules}\n{log}"
    );
    assert!(!log.contains("old-form"), "the KERNEL form matched:\n{log}");
}

/// Audit: zeros systemd refuses (`TxChannels=0`, `RxMiniBufferSize=0`,
/// `StatisticsBlockCoalesceSec=0us`) were written into the .link file. They are left out, and
/// udev's own parser shows why: the same lines in another file draw its complaints.
#[test]
fn link_file_leaves_out_the_zeros_udev_refuses() {
    let Some(ns) = netns_with("udevadm", "udev", "link-zeros") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let profile = "iface = \"nt0\"\n[settings]\n\"channel.tx\" = 0\n\"channel.combined\" = 4\n\
                   \"ring.rx-mini\" = 0\n\"coalesce.stats-block-usecs\" = 0\n\
                   \"coalesce.rate-sample-interval\" = 0\n";
    let (link, left_out) = export(dir.path(), profile, "systemd-link", &[]);
    assert_eq!(
        left_out,
        [
            "channel.tx=0",
            "coalesce.rate-sample-interval=0",
            "coalesce.stats-block-usecs=0",
            "ring.rx-mini=0"
        ]
    );
    assert!(link.lines().any(|l| l == "CombinedChannels=4"), "{link}");
    let zeros = "[Match]\nOriginalName=nt9\n\n[Link]\nTxChannels=0\nRxMiniBufferSize=0\n\
                 StatisticsBlockCoalesceSec=0us\nCoalescePacketRateSampleIntervalSec=0s\n";
    std::fs::write(dir.path().join("zeros.link"), zeros).unwrap();
    let out = udevadm_test(
        &ns,
        dir.path(),
        &[],
        &[
            ("systemd-link.out", "10-nictune-nt0.link"),
            ("zeros.link", "20-zeros.link"),
        ],
        "",
    );
    let log = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{log}");
    assert!(
        !log.contains("10-nictune-nt0.link:"),
        "udev about the exported file:\n{log}"
    );
    for key in [
        "TxChannels",
        "RxMiniBufferSize",
        "StatisticsBlockCoalesceSec",
    ] {
        assert!(
            log.lines()
                .any(|l| l.contains("20-zeros.link:") && l.contains(key)),
            "udev took {key}=0 without a word:\n{log}"
        );
    }
}

/// Loads the profile in `dir/name` through tuned's own modules and prints its units as JSON;
/// the net plugin's option parser checks coalesce=, ring=, channels=, features=.
const TUNED_LOADER: &str = r#"
import json, sys
import tuned.profiles as profiles
from tuned.utils.global_config import GlobalConfig
from tuned.profiles.variables import Variables
from tuned.plugins.plugin_net import NetTuningPlugin
loader = profiles.Loader(profiles.Locator([sys.argv[1]]), profiles.Factory(),
                         profiles.Merger(), GlobalConfig(), Variables())
profile = loader.load([sys.argv[2]])
net = object.__new__(NetTuningPlugin)
units = {}
for name, unit in profile.units.items():
    options = dict(unit.options)
    units[name] = {"type": unit.type, "devices": unit.devices, "options": options}
    if unit.type == "net":
        for key, value in options.items():
            if key not in NetTuningPlugin._get_config_options():
                sys.exit("tuned has no [net] option " + key)
            if key in ("coalesce", "ring", "channels", "pause"):
                parsed = net._parse_config_parameters(value, key)
                if parsed is None or not net._check_parameters(key, parsed):
                    sys.exit("tuned rejects %s=%s" % (key, value))
print(json.dumps(units))
"#;

#[test]
fn tuned_profile_loads_through_tuneds_own_loader() {
    // Debian's tuned is a module of the system python, not of a python on PATH first.
    let python = "/usr/bin/python3";
    let probe = Command::new(python)
        .args(["-c", "import tuned.profiles"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return nictune_core::live::skip("tuned's python modules are not installed (tuned)");
    }
    let dir = tempfile::tempdir().unwrap();
    let (text, left_out) = export(dir.path(), PROFILE, "tuned", &[]);
    assert_eq!(left_out, Vec::<String>::new(), "tuned holds every setting");
    let profiles = dir.path().join("profiles");
    std::fs::create_dir_all(profiles.join("nictune-nt0")).unwrap();
    std::fs::write(profiles.join("nictune-nt0/tuned.conf"), &text).unwrap();
    let out = run(
        python,
        &[
            "-c",
            TUNED_LOADER,
            profiles.to_str().unwrap(),
            "nictune-nt0",
        ],
    );
    assert!(out.status.success(), "tuned: {}\n{text}", stderr(&out));
    let units: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let options = |unit: &str| units[unit]["options"].clone();
    assert_eq!(units["net"]["devices"], "nt0");
    assert_eq!(
        options("net"),
        serde_json::json!({
            "dynamic": "0",
            "coalesce": "adaptive-rx off rx-frames 32 rx-usecs 50",
            "ring": "rx 1024 tx 512",
            "channels": "combined 4",
            "features": "gro on",
        })
    );
    assert_eq!(
        options("sysfs"),
        serde_json::json!({
            "/sys/class/net/nt0/gro_flush_timeout": "20000",
            "/sys/class/net/nt0/napi_defer_hard_irqs": "2",
        })
    );
}

/// Audit: tuned 2.20's `ring=` takes rx, rx-mini, rx-jumbo and tx only; one other key
/// (hds-thresh, rx-buf-len, tcp-data-split, tx-push) made it refuse the whole line, rx too.
#[test]
fn tuned_takes_the_ring_line_when_the_profile_has_ring_keys_it_does_not_know() {
    let python = "/usr/bin/python3";
    let probe = Command::new(python)
        .args(["-c", "import tuned.profiles"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return nictune_core::live::skip("tuned's python modules are not installed (tuned)");
    }
    let dir = tempfile::tempdir().unwrap();
    let profile = "iface = \"nt0\"\n[settings]\n\"ring.rx\" = 1024\n\"ring.hds-thresh\" = 256\n\
                   \"ring.rx-buf-len\" = 2048\n\"ring.tcp-data-split\" = \"on\"\n\"ring.tx-push\" = \"on\"\n";
    let (text, left_out) = export(dir.path(), profile, "tuned", &[]);
    assert_eq!(
        left_out,
        [
            "ring.hds-thresh=256",
            "ring.rx-buf-len=2048",
            "ring.tcp-data-split=on",
            "ring.tx-push=on"
        ]
    );
    let profiles = dir.path().join("profiles");
    std::fs::create_dir_all(profiles.join("nictune-nt0")).unwrap();
    std::fs::write(profiles.join("nictune-nt0/tuned.conf"), &text).unwrap();
    let load = |text: &str| {
        std::fs::write(profiles.join("nictune-nt0/tuned.conf"), text).unwrap();
        run(
            python,
            &[
                "-c",
                TUNED_LOADER,
                profiles.to_str().unwrap(),
                "nictune-nt0",
            ],
        )
    };
    let out = load(&text);
    assert!(out.status.success(), "tuned: {}\n{text}", stderr(&out));
    let units: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(units["net"]["options"]["ring"], "rx 1024", "{units}");
    assert_eq!(units["net"]["options"]["dynamic"], "0", "{units}");
    // Why: the same line with one of them is refused whole by tuned's own parser.
    let refused = load(&text.replace("ring=rx 1024", "ring=rx 1024 hds-thresh 256"));
    assert!(
        !refused.status.success() && stderr(&refused).contains("tuned rejects ring="),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn modprobe_reads_the_module_options() {
    if !have("modprobe", "--version") {
        return nictune_core::live::skip("modprobe (kmod) is not installed");
    }
    let dir = tempfile::tempdir().unwrap();
    let profile = "[settings]\n\"igb.InterruptThrottleRate\" = \"8000,8000\"\n\
                   \"e1000e.InterruptThrottleRate\" = \"3000,3000\"\n";
    let (_, left_out) = export(dir.path(), profile, "modprobe", &[]);
    assert_eq!(left_out, Vec::<String>::new());
    let file = dir.path().join("modprobe.out");
    let out = run("modprobe", &["-C", file.to_str().unwrap(), "-c"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("modprobe.out"), "{}", stderr(&out));
    let config = stdout(&out);
    for line in [
        "options e1000e InterruptThrottleRate=3000,3000",
        "options igb InterruptThrottleRate=8000,8000",
    ] {
        assert!(config.lines().any(|l| l == line), "{line}:\n{config}");
    }
}

#[test]
fn sysctl_d_file_applies_in_a_namespace() {
    let Some(ns) = netns_with("sysctl", "procps", "sysctl") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Keys every namespace has its own copy of (busy_poll is host-wide: not here).
    let profile = "[settings]\n\"sysctl.net.core.somaxconn\" = 777\n\
                   \"sysctl.net.ipv4.tcp_fin_timeout\" = 17\n";
    let (_, left_out) = export(dir.path(), profile, "sysctl.d", &[]);
    assert_eq!(left_out, Vec::<String>::new());
    let out = ns.sh(&format!(
        "sysctl -p {}/sysctl.d.out && sysctl -n net.core.somaxconn net.ipv4.tcp_fin_timeout",
        dir.path().display()
    ));
    assert!(out.status.success(), "sysctl -p: {}", stderr(&out));
    let text = stdout(&out);
    let values: Vec<&str> = text.lines().rev().take(2).collect();
    assert_eq!(values, ["17", "777"], "{text}");
}

#[test]
fn systemd_unit_installs_binary_profile_and_unit_under_root_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let profile = "iface = \"nt0\"\n[settings]\n\"coalesce.rx-usecs\" = 50\n\
                   \"napi.gro-flush-timeout@1\" = 20000\n";
    let input = dir.path().join("mine.toml");
    std::fs::write(&input, profile).unwrap();
    let install = [
        "export",
        input.to_str().unwrap(),
        "--format",
        "systemd-unit",
        "--install",
        "--root",
        root.to_str().unwrap(),
    ];
    let out = nictune(&install);
    assert!(out.status.success(), "{}", stderr(&out));
    let unit_path = root.join("etc/systemd/system/nictune-nt0.service");
    let unit = std::fs::read_to_string(&unit_path).unwrap();
    let exec = section(&unit, "Service")
        .into_iter()
        .find(|(k, _)| k == "ExecStart")
        .unwrap()
        .1;
    assert_eq!(
        exec,
        "/usr/local/sbin/nictune apply --profile /etc/nictune/nt0.toml --iface nt0 --force"
    );
    // Both things the unit names are there, under the root: a copy of this nictune and
    // the profile as given.
    let installed = root.join("usr/local/sbin/nictune");
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_nictune")).unwrap()
    );
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&installed).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    assert_eq!(
        std::fs::read_to_string(root.join("etc/nictune/nt0.toml")).unwrap(),
        profile
    );
    // The installed copy can install again: it leaves itself (busy) in place.
    let again = run(installed.to_str().unwrap(), &install);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        !stderr(&again).contains("usr/local/sbin"),
        "{}",
        stderr(&again)
    );
    if !have("systemd-analyze", "--version") {
        return nictune_core::live::skip("systemd-analyze (systemd) is not installed");
    }
    // verify wants ExecStart's program on this machine: point it at the copy under the
    // root, the unit otherwise as installed.
    let checked = dir.path().join("nictune-nt0.service");
    std::fs::write(
        &checked,
        unit.replace("/usr/local/sbin/nictune", installed.to_str().unwrap()),
    )
    .unwrap();
    let verify = run("systemd-analyze", &["verify", checked.to_str().unwrap()]);
    assert!(
        verify.status.success() && stderr(&verify).trim().is_empty(),
        "systemd-analyze verify: {}\n{unit}",
        stderr(&verify)
    );
}

#[test]
fn systemd_unit_without_install_prints_the_install_commands() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("mine.toml");
    std::fs::write(&input, "iface = \"nt0\"\n[settings]\n\"ring.rx\" = 512\n").unwrap();
    let out = nictune(&[
        "export",
        input.to_str().unwrap(),
        "--format",
        "systemd-unit",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "install -D -m 0644 {} /etc/nictune/nt0.toml",
            input.canonicalize().unwrap().display()
        )),
        "{err}"
    );
    assert!(err.contains(" /usr/local/sbin/nictune\n"), "{err}");
    assert!(
        err.contains("save the unit printed on stdout as nictune-nt0.service, then install")
            && err.contains(
                "install -D -m 0644 nictune-nt0.service /etc/systemd/system/nictune-nt0.service"
            ),
        "{err}"
    );
    assert!(
        err.contains("systemctl enable --now nictune-nt0.service"),
        "{err}"
    );
    assert!(!stdout(&out).contains(dir.path().to_str().unwrap()));
}

#[test]
fn an_export_without_settings_exits_1_with_what_was_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("p.toml");
    std::fs::write(&input, PROFILE).unwrap();
    for format in [
        "modprobe",
        "loader.conf",
        "rc.conf",
        "freebsd-sysctl.conf",
        "sysctl.d",
    ] {
        let output = dir.path().join(format);
        let out = export_to(&input, format, &output, &[]);
        common::assert_exit(&out, 1);
        // On stderr: stdout is where a configuration goes when redirected into a file.
        assert!(stdout(&out).is_empty(), "{format}: {}", stdout(&out));
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(text.contains("nothing written"), "{format}: {text}");
        assert!(
            text.contains("  ring.rx=1024: device setting"),
            "{format}: {text}"
        );
        assert!(!output.exists(), "{format}: no file written");
    }
    let out = nictune(&[
        "export",
        input.to_str().unwrap(),
        "--format",
        "modprobe",
        "--json",
    ]);
    common::assert_exit(&out, 1);
    let doc = common::json(&out);
    assert_eq!(doc["written"], false, "{doc}");
    assert_eq!(doc["omitted"].as_array().unwrap().len(), 9, "{doc}");
    // Audit: a refusal and a written file had different fields. One shape, nulls where a
    // field does not apply (docs/cli.md).
    let fields = |doc: &serde_json::Value| {
        let mut keys: Vec<String> = doc.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    let shape = [
        "format", "omitted", "path", "schema", "text", "warnings", "written",
    ];
    assert_eq!(fields(&doc), shape, "{doc}");
    assert_eq!(doc["schema"], "nictune.export/v2");
    assert_eq!(doc["path"], serde_json::Value::Null);
    assert_eq!(doc["text"], serde_json::Value::Null);
    assert_eq!(doc["warnings"], serde_json::json!([]));
    let e1000 = dir.path().join("e1000.toml");
    std::fs::write(
        &e1000,
        "iface = \"nt0\"\n[settings]\n\"e1000.InterruptThrottleRate\" = \"3000,3000\"\n",
    )
    .unwrap();
    let out = nictune(&[
        "export",
        e1000.to_str().unwrap(),
        "--format",
        "udev",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = common::json(&out);
    assert_eq!(fields(&doc), shape, "{doc}");
    assert_eq!(doc["format"], "udev");
    assert_eq!(doc["written"], true);
    assert_eq!(doc["path"], "/etc/udev/rules.d/81-nictune-nt0.rules");
    assert!(
        doc["text"].as_str().unwrap().contains("rx-usecs 333"),
        "{doc}"
    );
    // The approximate conversion is a warning (it was only a comment).
    assert_eq!(
        doc["warnings"],
        serde_json::json!([
            "e1000.InterruptThrottleRate=3000,3000: rx-usecs 333 ≈ 10^6/3000; e1000 then runs at 3003/s"
        ])
    );
    assert!(stderr(&out).contains("warning: e1000.InterruptThrottleRate=3000,3000: rx-usecs 333"));
    std::fs::write(&e1000, "[settings]\n\"sysctl.net.core.busy_poll\" = 50\n").unwrap();
    let out = nictune(&[
        "export",
        e1000.to_str().unwrap(),
        "--format",
        "sysctl.d",
        "--json",
    ]);
    let doc = common::json(&out);
    assert_eq!(doc["format"], "sysctl.d", "{doc}");
    assert_eq!(doc["written"], true, "{doc}");
}

#[test]
fn igb_throttle_rate_exports_as_rx_usecs_and_freebsd_units_keep_their_number() {
    let dir = tempfile::tempdir().unwrap();
    let (rules, _) = export(
        dir.path(),
        "iface = \"eth3\"\n[settings]\n\"igb.InterruptThrottleRate\" = 8000\n",
        "udev",
        &[],
    );
    assert!(!rules.contains('<'), "{rules}");
    assert!(
        rules.contains("RUN+=\"/usr/sbin/ethtool -C $name rx-usecs 125\""),
        "{rules}"
    );
    let ports: String = (0..10)
        .map(|n| format!("\"dev.igb.{n}.rx_processing_limit\" = -1\n"))
        .collect();
    let (conf, _) = export(
        dir.path(),
        &format!(
            "[settings]\n{ports}\"net.inet.ip.fastforwarding\" = 1\n\"kern.maxfiles\" = 200000\n"
        ),
        "freebsd-sysctl.conf",
        &[],
    );
    for n in 0..10 {
        let line = format!("dev.igb.{n}.rx_processing_limit=-1");
        assert!(conf.lines().any(|l| l == line), "{line}:\n{conf}");
    }
    assert!(conf.lines().any(|l| l == "net.inet.ip.fastforwarding=1"));
    assert!(conf.contains("# warning: kern.maxfiles is not in nictune's catalog"));
}

#[test]
fn bad_target_versions_and_installing_merged_formats_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("p.toml");
    std::fs::write(&input, PROFILE).unwrap();
    let p = input.to_str().unwrap();
    let out = nictune(&[
        "export",
        p,
        "--format",
        "networkmanager",
        "--target-version",
        "new",
    ]);
    common::assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("\"new\" is not a version of NetworkManager; allowed: MAJOR[.MINOR"),
        "{}",
        stderr(&out)
    );
    // What `NetworkManager --version` prints is taken; a systemd release number is not.
    let nm = |v: &str| {
        nictune(&[
            "export",
            p,
            "--format",
            "networkmanager",
            "--target-version",
            v,
        ])
    };
    common::assert_exit(&nm("1.42.4"), 0);
    let out = nm("256");
    common::assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("hint: give the version `NetworkManager --version` prints"),
        "{}",
        stderr(&out)
    );
    let out = nictune(&[
        "export",
        p,
        "--format",
        "systemd-link",
        "--target-version",
        "249",
    ]);
    common::assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("nictune writes for systemd 252 or newer"),
        "{}",
        stderr(&out)
    );
    let out = nictune(&["export", p, "--format", "tuned", "--target-version", "2.20"]);
    common::assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("has no versioned reader"),
        "{}",
        stderr(&out)
    );
    let root = dir.path().join("root");
    let out = nictune(&[
        "export",
        p,
        "--format",
        "networkmanager",
        "--install",
        "--root",
        root.to_str().unwrap(),
    ]);
    common::assert_exit(&out, 2);
    assert!(stderr(&out).contains("is merged into a file the system already has"));
    assert!(!root.exists());
}

/// Audit: a profile's netns was ignored, so a udev rule for nt0 of namespace lab would act on
/// the host's nt0. Formats read in the initial namespace refuse it; the unit carries it.
#[test]
fn a_profile_in_a_namespace_is_refused_by_formats_of_the_initial_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("p.toml");
    std::fs::write(
        &input,
        "iface = \"nt0\"\nnetns = \"lab\"\n[settings]\n\"ring.rx\" = 512\n",
    )
    .unwrap();
    let p = input.to_str().unwrap();
    for format in [
        "udev",
        "systemd-link",
        "networkmanager",
        "tuned",
        "sysctl.d",
    ] {
        let out = nictune(&["export", p, "--format", format]);
        common::assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "--format {format} acts in the initial network namespace, but the profile names netns \"lab\""
            )) && err.contains("hint: use --format systemd-unit"),
            "{format}: {err}"
        );
        assert!(stdout(&out).is_empty(), "{format}: nothing written");
    }
    let out = nictune(&["export", p, "--format", "systemd-unit"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("--iface nt0 --netns lab --force"));
}

/// Audit: `--install` replaced shared files: exporting e1000e and then igb left only igb's
/// modprobe.d line, a second profile's sysctl.d file replaced the first's.
#[test]
fn install_keeps_another_exports_file_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let install = |profile: &str, format: &str, extra: &[&str]| {
        let input = dir.path().join("p.toml");
        std::fs::write(&input, profile).unwrap();
        let mut args = vec![
            "export",
            input.to_str().unwrap(),
            "--format",
            format,
            "--install",
            "--root",
            root.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        nictune(&args)
    };
    // A file per driver: both stay.
    for driver in ["e1000e", "igb"] {
        let out = install(
            &format!("[settings]\n\"{driver}.InterruptThrottleRate\" = \"3000,3000\"\n"),
            "modprobe",
            &[],
        );
        assert!(out.status.success(), "{driver}: {}", stderr(&out));
    }
    for driver in ["e1000e", "igb"] {
        let file = root.join(format!("etc/modprobe.d/nictune-{driver}.conf"));
        let text = std::fs::read_to_string(&file).unwrap();
        let line = format!("options {driver} InterruptThrottleRate=3000,3000");
        assert!(
            text.lines().any(|l| l == line),
            "{}: {text}",
            file.display()
        );
    }
    // One host-wide sysctl.d file: a second profile's is refused, the first kept.
    let first = "[settings]\n\"sysctl.net.core.busy_poll\" = 50\n";
    let second = "[settings]\n\"sysctl.net.core.busy_read\" = 50\n";
    assert!(install(first, "sysctl.d", &[]).status.success());
    let file = root.join("etc/sysctl.d/90-nictune.conf");
    let before = std::fs::read_to_string(&file).unwrap();
    // The same content again is fine.
    assert!(install(first, "sysctl.d", &[]).status.success());
    let out = install(second, "sysctl.d", &[]);
    common::assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("already there with other content; nothing was installed")
            && stderr(&out).contains("add --force to replace it"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    let out = install(second, "sysctl.d", &["--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("net.core.busy_read = 50"));
}

#[test]
fn install_puts_self_contained_formats_where_they_belong_under_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let input = dir.path().join("p.toml");
    let profile = "iface = \"igb7\"\n[settings]\n\"ring.rx\" = 512\n\
                   \"freebsd.irq.queue-cpus@0\" = \"2\"\n";
    std::fs::write(&input, profile).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    for (format, path, mode) in [
        ("udev", "etc/udev/rules.d/81-nictune-igb7.rules", 0o644),
        ("cpuset", "usr/local/etc/rc.d/nictune_cpuset_igb7", 0o555),
    ] {
        let out = nictune(&[
            "export",
            input.to_str().unwrap(),
            "--format",
            format,
            "--install",
            "--root",
            root.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{format}: {}", stderr(&out));
        let file = root.join(path);
        let meta = std::fs::metadata(&file).unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!(meta.permissions().mode() & 0o777, mode, "{format}");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with("#") && text.contains("igb7"), "{text}");
        assert!(stdout(&out).starts_with(&format!("Installed {format} as /{path}")));
    }
}

/// `--match mac=`: a `.link` file for an interface by its address applies to that device
/// whatever its name (here the file is for "enp9s0", a name udev would give; the veth is
/// nt0), and one for another address does not. Without `--match` the same name draws the
/// warning that `OriginalName=` cannot match it.
#[test]
fn link_file_matched_by_mac_address_applies_to_that_device_only() {
    let Some(ns) = netns_with("udevadm", "udev", "link-mac") else {
        return;
    };
    let address = ns.sh("cat /sys/class/net/nt0/address");
    let address = stdout(&address).trim().to_string();
    assert_eq!(address.len(), 17, "nt0's address: {address:?}");
    let dir = tempfile::tempdir().unwrap();
    let profile = "iface = \"enp9s0\"\n[settings]\n\"ring.rx\" = 512\n";
    let (warned, _) = export(dir.path(), profile, "systemd-link", &[]);
    assert!(
        warned.contains("# warning: enp9s0 looks like a name udev gave"),
        "{warned}"
    );
    let (link, _) = export(
        dir.path(),
        profile,
        "systemd-link",
        &["--match", &format!("mac={address}")],
    );
    assert!(
        link.contains(&format!("\nMACAddress={address}\n")),
        "{link}"
    );
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    export(
        &other,
        profile,
        "systemd-link",
        &["--match", "mac=02:00:5e:00:53:01"],
    );
    for (file, applies) in [
        ("systemd-link.out", true),
        ("other/systemd-link.out", false),
    ] {
        let out = udevadm_test(
            &ns,
            dir.path(),
            &[],
            &[(file, "10-nictune-enp9s0.link")],
            "",
        );
        let log = format!("{}{}", stdout(&out), stderr(&out));
        assert!(out.status.success(), "{log}");
        let applied = "Config file /etc/systemd/network/10-nictune-enp9s0.link is applied";
        assert_eq!(log.contains(applied), applies, "{file}:\n{log}");
        assert!(
            !log.contains("10-nictune-enp9s0.link:"),
            "udev complains:\n{log}"
        );
    }
}

/// `--match` only means something to a `.link` file: other formats refuse it.
#[test]
fn match_is_refused_by_formats_that_find_their_device_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("p.toml");
    std::fs::write(&input, "iface = \"eth1\"\n[settings]\n\"ring.rx\" = 512\n").unwrap();
    let out = export_to(
        &input,
        "udev",
        &dir.path().join("out"),
        &["--match", "mac=02:00:5e:00:53:01"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--match is for --format systemd-link"));
    assert!(!dir.path().join("out").exists());
}
