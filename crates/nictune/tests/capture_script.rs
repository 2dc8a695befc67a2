//! `capture --print-script freebsd`: the script is valid POSIX sh for sh and dash, and run
//! against stub FreeBSD commands (outputs from the Case 5 fixture) and a FreeBSD-like tree of
//! configuration files it writes a tarball that, unpacked, `doctor --os freebsd --root`
//! reads with the same findings as the fixture itself — and with interrupt rates measured
//! between the two `vmstat -i` samples.

mod common;

use common::{assert_exit, fixture, json, nictune, stderr, stdout};
use std::path::Path;
use std::process::Command;

fn script() -> String {
    let out = nictune(&["capture", "--print-script", "freebsd"]);
    assert_exit(&out, 0);
    stdout(&out)
}

/// Unpacks `dir/name.tar.gz` below `tmp` with tar; returns the capture directory.
fn unpack(dir: &Path, name: &str, tmp: &Path) -> std::path::PathBuf {
    let unpacked = tmp.join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    let tar = Command::new("tar")
        .arg("-xzf")
        .arg(dir.join(format!("{name}.tar.gz")))
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(tar.success(), "tar -xzf {name}.tar.gz");
    unpacked.join(name)
}

fn shells() -> Vec<&'static str> {
    ["sh", "dash"]
        .into_iter()
        .filter(|s| Command::new(s).arg("-c").arg("true").status().is_ok())
        .collect()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn stub(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    write(&path, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The fixture's `vmstat -i` ten seconds later with every queue vector at twice its rate.
fn later_vmstat(first: &str) -> String {
    first
        .lines()
        .map(|line| {
            let w: Vec<&str> = line.split_whitespace().collect();
            match (w.first(), w.len()) {
                (Some(irq), n) if irq.starts_with("irq") && n >= 4 => {
                    let total: u64 = w[n - 2].parse().unwrap();
                    let rate: u64 = w[n - 1].parse().unwrap();
                    format!("{} {} {}", w[..n - 2].join(" "), total + 20 * rate, rate)
                }
                _ => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Stub commands answering as the Case 5 router would, and its configuration files under
/// `root`.
fn freebsd_host(tmp: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let case = Path::new(&fixture("freebsd-case5-before")).to_path_buf();
    let read = |f: &str| std::fs::read_to_string(case.join(f)).unwrap();
    let bin = tmp.join("bin");
    let data = tmp.join("data");
    for f in [
        "vmstat-i.txt",
        "top.txt",
        "sysctl.txt",
        "netstat-m.txt",
        "ifconfig.txt",
    ] {
        write(&data.join(f), &read(f));
    }
    write(
        &data.join("vmstat-i-2.txt"),
        &later_vmstat(&read("vmstat-i.txt")),
    );
    let d = data.display();
    stub(
        &bin,
        "vmstat",
        &format!(
            "[ \"$1\" = -i ] || exit 64\n\
             if [ -e {d}/vmstat-called ]; then cat {d}/vmstat-i-2.txt; \
             else touch {d}/vmstat-called; cat {d}/vmstat-i.txt; fi"
        ),
    );
    stub(
        &bin,
        "date",
        &format!(
            "case \"$*\" in\n\
             *%s*) if [ -e {d}/date-called ]; then echo 1010; \
             else touch {d}/date-called; echo 1000; fi ;;\n\
             *) echo 20261125T120000Z ;;\nesac"
        ),
    );
    stub(
        &bin,
        "top",
        &format!("[ \"$*\" = '-b -SIP -d 2 -s 10 100' ] || exit 64\ncat {d}/top.txt"),
    );
    stub(
        &bin,
        "sysctl",
        &format!("[ \"$1\" = -a ] || exit 64\ncat {d}/sysctl.txt"),
    );
    stub(
        &bin,
        "netstat",
        &format!("[ \"$1\" = -m ] || exit 64\ncat {d}/netstat-m.txt"),
    );
    stub(
        &bin,
        "ifconfig",
        &format!("[ \"$1\" = -a ] || exit 64\ncat {d}/ifconfig.txt"),
    );
    stub(
        &bin,
        "ipfw",
        "case \"$*\" in\n\
         'nat show config') echo 'ipfw nat 1 config if igb0 same_ports reset' ;;\n\
         list) echo '00500 nat 1 ip from any to any via igb0' ;;\n\
         *) echo 'ipfw: bad arguments' >&2; exit 64 ;;\nesac",
    );
    stub(&bin, "hostname", "echo border1.example.net");
    stub(&bin, "sleep", "echo 'sleep was not expected' >&2; exit 1");
    let root = tmp.join("root");
    write(&root.join("boot/loader.conf"), &read("loader.conf"));
    write(&root.join("etc/sysctl.conf"), &read("sysctl.conf"));
    write(&root.join("etc/rc.conf"), &read("rc.conf"));
    write(&root.join("var/run/dmesg.boot"), &read("dmesg.txt"));
    (bin, root)
}

#[test]
fn the_scripts_are_valid_posix_sh_for_sh_and_dash() {
    let tmp = tempfile::tempdir().unwrap();
    let found = shells();
    assert!(found.contains(&"sh"), "no sh to check the scripts with");
    for os in ["freebsd", "linux"] {
        let out = nictune(&["capture", "--print-script", os]);
        assert_exit(&out, 0);
        let path = tmp.path().join(format!("{os}.sh"));
        write(&path, &stdout(&out));
        for shell in &found {
            let out = Command::new(shell).arg("-n").arg(&path).output().unwrap();
            assert!(out.status.success(), "{shell} -n {os}: {}", stderr(&out));
        }
    }
}

#[test]
fn the_scripts_capture_round_trips_through_doctor() {
    for shell in shells() {
        let tmp = tempfile::tempdir().unwrap();
        let (bin, root) = freebsd_host(tmp.path());
        let script_path = tmp.path().join("nictune-capture.sh");
        write(&script_path, &script());
        let out_dir = tmp.path().join("out");
        std::fs::create_dir(&out_dir).unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let run = Command::new(shell)
            .arg(&script_path)
            .arg("10")
            .arg(&out_dir)
            .env("PATH", &path)
            .env("NICTUNE_ROOT", &root)
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap();
        assert!(run.status.success(), "{shell}: {}", stderr(&run));
        let name = "nictune-freebsd-border1.example.net-20261125T120000Z";
        assert!(
            stdout(&run).contains(&format!("{name}.tar.gz")),
            "{}",
            stdout(&run)
        );
        let captured = unpack(&out_dir, name, tmp.path());
        let case = fixture("freebsd-case5-before");
        for f in [
            "vmstat-i.txt",
            "sysctl.txt",
            "loader.conf",
            "rc.conf",
            "dmesg.txt",
        ] {
            assert_eq!(
                std::fs::read_to_string(captured.join(f)).unwrap(),
                std::fs::read_to_string(Path::new(&case).join(f)).unwrap(),
                "{shell}: {f} differs from what the host printed"
            );
        }
        let record = std::fs::read_to_string(captured.join("capture.txt")).unwrap();
        for line in [
            "command.top.txt=top -b -SIP -d 2 -s 10 100",
            "status.sysctl.txt=0",
            "vmstat_i_1_at=1000",
            "vmstat_i_2_at=1010",
            "source.rc.conf=/etc/rc.conf",
        ] {
            assert!(
                record.lines().any(|l| l == line),
                "{shell}: no {line:?} in\n{record}"
            );
        }

        let doctor = |dir: &str| {
            let out = nictune(&["doctor", "--json", "--os", "freebsd", "--root", dir]);
            assert_exit(&out, 1);
            json(&out)["findings"].as_array().unwrap().clone()
        };
        let from_script = doctor(captured.to_str().unwrap());
        let from_fixture = doctor(&case);
        let by_id = |all: &[serde_json::Value], id: &str| {
            all.iter()
                .find(|f| f["id"] == id)
                .cloned()
                .unwrap_or_default()
        };
        assert_eq!(
            by_id(&from_script, "mbuf-clusters"),
            by_id(&from_fixture, "mbuf-clusters"),
            "{shell}"
        );
        let pileup = by_id(&from_script, "irq-pileup");
        let evidence = |what: &str| {
            pileup["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["what"] == what)
                .map(|e| e["value"].as_str().unwrap().to_string())
        };
        assert_eq!(
            evidence("interrupt rates").as_deref(),
            Some("measured over 10 s (two vmstat -i samples)")
        );
        // igb0 queue 0: 7900/s since boot, 20 × 7900 more interrupts in 10 s = 15800/s.
        assert!(
            pileup["fix"].as_array().unwrap().len() == 40,
            "{shell}: {pileup}"
        );
        let cpu0 = evidence("cpu 0").unwrap();
        let fixture_cpu0 = by_id(&from_fixture, "irq-pileup")["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["what"] == "cpu 0")
            .map(|e| e["value"].as_str().unwrap().to_string())
            .unwrap();
        let rate = |s: &str| -> u64 {
            s.split(", ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        assert_eq!(rate(&cpu0), 2 * rate(&fixture_cpu0), "{shell}: {cpu0}");
        let show = nictune(&[
            "show",
            "--os",
            "freebsd",
            "--root",
            captured.to_str().unwrap(),
        ]);
        assert_exit(&show, 0);
        assert!(
            stdout(&show).contains("interrupt rates: measured over 10 s"),
            "{}",
            stdout(&show)
        );
    }
}

#[test]
fn bad_arguments_name_what_is_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("capture.sh");
    write(&path, &script());
    for (args, expect) in [
        (
            vec!["ten"],
            "allowed: a whole number of seconds from 1 to 600",
        ),
        (vec!["0"], "allowed: 1 to 600"),
        (
            vec!["10", "/nonexistent/dir"],
            "is not a writable directory",
        ),
    ] {
        let out = Command::new("sh").arg(&path).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(expect), "{args:?}: {}", stderr(&out));
    }
    let out = nictune(&["capture", "--print-script", "bsd"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("possible values: linux, freebsd"),
        "{}",
        stderr(&out)
    );
    let linux = tmp.path().join("linux.sh");
    write(
        &linux,
        &stdout(&nictune(&["capture", "--print-script", "linux"])),
    );
    let out = Command::new("sh")
        .arg(&linux)
        .arg("/nonexistent/dir")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is not a writable directory"));
    let out = nictune(&["capture"]);
    assert_exit(&out, 2);
}

/// The fixture's capture laid out as the host it was taken on: files, links as symbolic
/// links, listed entries as directories, process names as `/proc/N/comm`.
fn linux_tree(capture: &Path, root: &Path) -> serde_json::Value {
    let read_json = |f: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(capture.join(f)).unwrap()).unwrap()
    };
    let index = read_json("index.json");
    let mut links: Vec<(&String, &serde_json::Value)> =
        index["links"].as_object().unwrap().iter().collect();
    links.sort_by_key(|(p, _)| p.matches('/').count());
    for (path, target) in links {
        let link = root.join(path.trim_start_matches('/'));
        let parent = link.parent().unwrap();
        std::fs::create_dir_all(parent).unwrap();
        std::fs::create_dir_all(parent.join(target.as_str().unwrap())).unwrap();
        std::os::unix::fs::symlink(target.as_str().unwrap(), &link).unwrap();
    }
    for top in ["proc", "sys"] {
        copy_tree(&capture.join(top), &root.join(top));
    }
    for (dir, entries) in index["dirs"].as_object().unwrap() {
        for e in entries.as_array().unwrap() {
            let p = root
                .join(dir.trim_start_matches('/'))
                .join(e.as_str().unwrap());
            if !p.exists() {
                std::fs::create_dir_all(p).unwrap();
            }
        }
    }
    let netlink = read_json("netlink.json");
    for (pid, name) in netlink["processes"].as_array().unwrap().iter().enumerate() {
        write(
            &root.join(format!("proc/{}/comm", pid + 1)),
            &format!("{}\n", name.as_str().unwrap()),
        );
    }
    index
}

/// Copies regular files, following the links already in `to`.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            write(&target, &std::fs::read_to_string(entry.path()).unwrap());
        }
    }
}

/// Every regular file below `dir`, by path relative to it.
fn files_below(dir: &Path, base: &Path, out: &mut std::collections::BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            files_below(&entry.path(), base, out);
        } else {
            let rel = entry
                .path()
                .strip_prefix(base)
                .unwrap()
                .display()
                .to_string();
            out.insert(rel, std::fs::read_to_string(entry.path()).unwrap());
        }
    }
}

#[test]
fn the_linux_scripts_capture_holds_what_nictune_capture_held_and_doctor_reads_it() {
    let case = Path::new(&fixture("linux-guest-e1000e-6.1")).to_path_buf();
    let out = nictune(&["capture", "--print-script", "linux"]);
    assert_exit(&out, 0);
    let script = stdout(&out);
    for shell in shells() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("host");
        let index = linux_tree(&case, &root);
        let bin = tmp.path().join("bin");
        stub(
            &bin,
            "date",
            "case \"$*\" in *%s*) echo 1795597759 ;; *) echo 20261125T120000Z ;; esac",
        );
        stub(&bin, "ethtool", "echo \"ethtool $*: stub\"");
        let script_path = tmp.path().join("capture.sh");
        write(&script_path, &script);
        let run = Command::new(shell)
            .arg(&script_path)
            .arg(tmp.path())
            .env("NICTUNE_ROOT", &root)
            .env("TMPDIR", tmp.path())
            .env(
                "PATH",
                format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
            )
            .output()
            .unwrap();
        assert!(run.status.success(), "{shell}: {}", stderr(&run));
        let name = "nictune-linux-nictune-guest-20261125T120000Z";
        let captured = unpack(tmp.path(), name, tmp.path());

        // The same files at the same paths, the same links and listings.
        let (mut want, mut got) = Default::default();
        for top in ["proc", "sys"] {
            files_below(&case.join(top), &case, &mut want);
            files_below(&captured.join(top), &captured, &mut got);
        }
        got.retain(|path: &String, _| !path.ends_with("/comm"));
        assert_eq!(got, want, "{shell}");
        let got_index: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(captured.join("index.json")).unwrap())
                .unwrap();
        assert_eq!(got_index["links"], index["links"], "{shell}");
        assert_eq!(got_index["dirs"], index["dirs"], "{shell}");
        let manifest = std::fs::read_to_string(captured.join("manifest.json")).unwrap();
        assert!(
            manifest.contains("\"kernel\": \"6.1.0-56-amd64\""),
            "{manifest}"
        );

        // doctor reads it: the findings that need no ethtool values are the fixture's.
        let doctor = |dir: &Path| {
            let out = nictune(&["doctor", "--json", "--root", dir.to_str().unwrap()]);
            json(&out)["findings"].as_array().unwrap().clone()
        };
        let from_script = doctor(&captured);
        let from_fixture = doctor(&case);
        let drops =
            |all: &[serde_json::Value]| all.iter().find(|f| f["id"] == "nic-drops").cloned();
        assert!(drops(&from_fixture).is_some());
        assert_eq!(drops(&from_script), drops(&from_fixture), "{shell}");
        let show = nictune(&["show", "--root", captured.to_str().unwrap(), "eth0"]);
        assert_exit(&show, 0);
        assert!(stdout(&show).contains("driver e1000e"), "{}", stdout(&show));
        assert!(
            stdout(&show).contains("not in a script capture"),
            "{}",
            stdout(&show)
        );
    }
}

#[test]
fn print_script_json_is_the_v1_envelope_with_the_script() {
    let out = nictune(&["capture", "--print-script", "freebsd", "--json"]);
    assert_exit(&out, 0);
    let doc = json(&out);
    assert_eq!(doc["schema"], "nictune.capture/v1");
    assert_eq!(doc["os"], "freebsd");
    let in_json = doc["script"].as_str().unwrap();
    assert_eq!(
        in_json.trim_end(),
        script().trim_end(),
        "the same script as printed"
    );
    assert!(in_json.starts_with("#!/bin/sh\n"));
    assert!(doc["read_with"]
        .as_str()
        .unwrap()
        .contains("nictune doctor --os freebsd --root"));
}
