//! `show`, `capture` and `doctor` as a user runs them: on the captured fixtures (snapshot
//! tests of what the user sees), round trips through `capture`, exit codes and bad input.

mod common;

use common::{assert_exit, fixture, json, nictune, stderr, stdout};

#[test]
fn show_of_the_build_machine_capture() {
    let out = nictune(&["show", "--root", &fixture("linux-vm-6.18"), "eth0", "lo"]);
    assert_exit(&out, 0);
    insta::assert_snapshot!("show_linux_vm", stdout(&out));
}

#[test]
fn show_json_is_the_v2_envelope() {
    let out = nictune(&[
        "show",
        "--json",
        "--root",
        &fixture("linux-vm-6.18"),
        "eth0",
    ]);
    assert_exit(&out, 0);
    let doc = json(&out);
    assert_eq!(doc["schema"], "nictune.show/v3");
    let eth0 = &doc["nics"][0];
    // A capture made before link attributes were recorded: each of them null, not missing.
    for field in ["mtu_bytes", "speed_mbps", "operstate", "qdisc", "txqlen"] {
        assert!(eth0[field].is_null(), "{field}: {}", eth0[field]);
    }
    assert_eq!(eth0["driver"]["value"], "virtio_net");
    assert_eq!(eth0["coalesce"]["value"]["rx_frames"], 1);
    assert_eq!(eth0["coalesce"]["value"]["adaptive_rx"], false);
    assert!(eth0["coalesce"]["value"]["tx_usecs_irq"].is_null());
    assert_eq!(eth0["queues"][0]["irq"], 38);
    assert!(doc["rates"].is_null());
    insta::assert_json_snapshot!("show_linux_vm_json", doc);
}

#[test]
fn doctor_on_case5_before_exits_1_with_the_fixes() {
    let out = nictune(&[
        "doctor",
        "--os",
        "freebsd",
        "--root",
        &fixture("freebsd-case5-before"),
    ]);
    assert_exit(&out, 1);
    insta::assert_snapshot!("doctor_case5_before", stdout(&out));
}

#[test]
fn doctor_on_a_single_nat_instance_burning_cpu_gives_the_split() {
    let out = nictune(&[
        "doctor",
        "--os",
        "freebsd",
        "--root",
        &fixture("freebsd-case5-nat"),
    ]);
    assert_exit(&out, 1);
    insta::assert_snapshot!("doctor_case5_nat", stdout(&out));
}

#[test]
fn doctor_json_findings_have_the_v1_fields() {
    let root = fixture("freebsd-case5-before");
    let out = nictune(&["doctor", "--json", "--os", "freebsd", "--root", &root]);
    let doc = json(&out);
    assert_eq!(doc["schema"], "nictune.doctor/v1");
    for f in doc["findings"].as_array().unwrap() {
        for key in [
            "id",
            "severity",
            "subject",
            "evidence",
            "explanation",
            "fix",
        ] {
            assert!(f.get(key).is_some(), "finding lacks {key}: {f}");
        }
    }
}

#[test]
fn doctor_on_case5_after_exits_0() {
    let out = nictune(&[
        "doctor",
        "--os",
        "freebsd",
        "--root",
        &fixture("freebsd-case5-after"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(stdout(&out), "no findings\n");
}

#[test]
fn show_freebsd_lists_the_queue_vectors() {
    let out = nictune(&[
        "show",
        "--os",
        "freebsd",
        "--root",
        &fixture("freebsd-case5-before"),
    ]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(
        text.contains("mbuf clusters 25598/25600 in use/max  denied 20931"),
        "{text}"
    );
    assert!(text.contains("igb7:que 0"), "{text}");
}

#[test]
fn capture_then_show_root_matches_the_live_show() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("bundle");
    let target = target.to_str().unwrap();
    let out = nictune(&["capture", target]);
    assert_exit(&out, 0);
    let live = nictune(&["show", "--json"]);
    let offline = nictune(&["show", "--json", "--root", target]);
    let pick = |o: &std::process::Output| {
        let doc = json(o);
        // Settings, not counters: the same NICs, drivers, coalescing and rings.
        doc["nics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                (
                    n["name"].clone(),
                    n["driver"].clone(),
                    n["coalesce"].clone(),
                    n["rings"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(pick(&live), pick(&offline));
    let again = nictune(&["capture", target]);
    assert_eq!(again.status.code(), Some(2), "a capture never overwrites");
    assert!(
        stderr(&again).contains("empty or new directory"),
        "{}",
        stderr(&again)
    );
}

/// Issue #13: `--interval` reads the one duration grammar (`2`, `2s`, `500ms`) in `show`
/// and `doctor`, like every other duration flag.
#[test]
fn interval_takes_the_one_duration_grammar() {
    for (cmd, interval) in [("show", "200ms"), ("show", "0.2"), ("doctor", "0.2s")] {
        let out = nictune(&[cmd, "lo", "--interval", interval, "--json"]);
        // doctor exits 1 when it has findings; both read the flag and sample.
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{cmd} {interval}: {out:?}"
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if cmd == "show" {
            let elapsed = doc["rates"]["elapsed_s"].as_f64().unwrap();
            assert!(
                (0.19..1.0).contains(&elapsed),
                "{cmd} {interval}: {elapsed}"
            );
        }
    }
}

#[test]
fn bad_input_names_the_flag_and_gives_a_hint() {
    let out = nictune(&["show", "--interval", "0"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("--interval") && stderr(&out).contains("hint:"),
        "{}",
        stderr(&out)
    );
    let out = nictune(&["doctor", "--os", "freebsd"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("--root"), "{}", stderr(&out));
    // Regression: doctor used to examine nothing and exit 0 for an interface that is not there.
    for cmd in ["show", "doctor"] {
        let out = nictune(&[cmd, "--root", &fixture("linux-vm-6.18"), "nosuch0"]);
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("interfaces here: eth0, ifb0, ifb1, lo"),
            "{cmd}: {}",
            stderr(&out)
        );
    }
    let out = nictune(&["show", "--netns", "../etc"]);
    assert_exit(&out, 2);
    let out = nictune(&["show", "--root", "/nonexistent-capture"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("not a nictune capture"),
        "{}",
        stderr(&out)
    );
}

/// Regression: `show` used to skip the `--interval` check for a FreeBSD capture and print
/// one sample as if nothing had been asked; `doctor` refused. Both refuse now.
#[test]
fn interval_with_a_capture_is_refused_by_show_and_doctor() {
    let root = fixture("freebsd-case5-before");
    for cmd in ["show", "doctor"] {
        let out = nictune(&[cmd, "--os", "freebsd", "--root", &root, "--interval", "1"]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert!(
            stderr(&out).contains("--interval: \"with --root\" is not allowed"),
            "{cmd}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn help_of_show_capture_doctor() {
    for cmd in ["show", "capture", "doctor"] {
        let out = nictune(&[cmd, "--help"]);
        assert_exit(&out, 0);
        insta::assert_snapshot!(format!("help_{cmd}"), stdout(&out));
    }
}

/// An interface named twice is shown once.
#[test]
fn show_names_an_interface_given_twice_once() {
    let root = fixture("linux-vm-6.18");
    let once = nictune(&["show", "--root", &root, "eth0"]);
    let twice = nictune(&["show", "--root", &root, "eth0", "eth0"]);
    assert_exit(&twice, 0);
    assert_eq!(stdout(&twice), stdout(&once));
}

/// FreeBSD `show`/`doctor` refuse an interface the capture does not have, as Linux `show`
/// does, and `show` narrows to the ones named.
#[test]
fn freebsd_show_and_doctor_check_the_interfaces_named() {
    let root = fixture("freebsd-case5-before");
    for command in ["show", "doctor"] {
        let out = nictune(&[command, "--os", "freebsd", "--root", &root, "nosuch0"]);
        assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(
            err.contains("\"nosuch0\" is not allowed; allowed: an interface of the capture"),
            "{err}"
        );
        assert!(
            err.contains("hint: interfaces in the capture: igb0, igb1,"),
            "{err}"
        );
    }
    let out = nictune(&["show", "--os", "freebsd", "--root", &root, "igb1"]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(text.contains("igb1:que 0"), "{text}");
    assert!(!text.contains("igb7:que 0"), "{text}");
    let out = nictune(&["doctor", "--os", "freebsd", "--root", &root, "igb1"]);
    assert_exit(&out, 1);
}

/// docs/cli.md: units in the field name (`_s`, `_per_sec`), also in FreeBSD's `show --json`.
#[test]
fn freebsd_show_json_names_its_units() {
    let out = nictune(&[
        "show",
        "--json",
        "--os",
        "freebsd",
        "--root",
        &fixture("freebsd-case5-before"),
    ]);
    assert_exit(&out, 0);
    let doc = json(&out);
    assert_eq!(doc["schema"], "nictune.show/v3");
    assert!(
        doc["uptime_s"].as_f64().unwrap() > 0.0,
        "{}",
        doc["uptime_s"]
    );
    assert!(doc["rates_over_s"].is_null());
    let irq = &doc["interrupts"][0];
    assert!(irq["rate_per_sec"].is_u64(), "{irq}");
    for gone in ["uptime_secs", "rates_over_secs"] {
        assert!(doc.get(gone).is_none(), "{gone}");
    }
    assert!(irq.get("rate").is_none(), "{irq}");
}
