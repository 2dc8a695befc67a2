//! `nictune explain` and `nictune check` end to end: exit codes, messages, JSON and
//! snapshots of what users see.

mod common;

use common::{assert_exit, json, nictune, stderr, stdout};

#[test]
fn help_top_level() {
    let out = nictune(&["--help"]);
    assert_exit(&out, 0);
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn help_explain() {
    let out = nictune(&["explain", "--help"]);
    assert_exit(&out, 0);
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn help_check() {
    let out = nictune(&["check", "--help"]);
    assert_exit(&out, 0);
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn explain_rx_abs_int_delay_json_has_unit_range_and_both_defaults_with_sources() {
    let out = nictune(&["explain", "RxAbsIntDelay", "--json"]);
    assert_exit(&out, 0);
    let doc = json(&out);
    assert_eq!(doc["schema"], "nictune.explain/v1");
    let e1000 = doc["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == "e1000.RxAbsIntDelay")
        .expect("the e1000 entry");
    assert_eq!(e1000["unit"], "ticks-1024ns");
    let spec = &e1000["specs"][0];
    assert_eq!(spec["ranges"], serde_json::json!([[0, 65535]]));
    let defaults = spec["defaults"].as_array().unwrap();
    let by_kind = |kind: &str| defaults.iter().find(|d| d["kind"] == kind).unwrap();
    assert_eq!(by_kind("code")["value"], "8");
    assert!(by_kind("code")["source"]
        .as_str()
        .unwrap()
        .contains("e1000_param.c"));
    assert_eq!(by_kind("doc")["value"], "128");
    assert!(by_kind("doc")["source"]
        .as_str()
        .unwrap()
        .contains("e1000.rst"));
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn explain_card_for_e1000_rx_abs_int_delay() {
    let out = nictune(&["explain", "RxAbsIntDelay", "--driver", "e1000"]);
    assert_exit(&out, 0);
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn explain_card_for_a_sysctl() {
    let out = nictune(&["explain", "net.core.netdev_budget_usecs"]);
    assert_exit(&out, 0);
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn quick_start_explains_every_interrupt_throttle_rate() {
    let out = nictune(&["explain", "InterruptThrottleRate"]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(
        text.starts_with("InterruptThrottleRate names 5 settings"),
        "{text}"
    );
    for driver in ["e1000", "e1000e", "igb", "ixgbe", "ixgbevf"] {
        assert!(
            text.contains(&format!("\n{driver}.InterruptThrottleRate — ")),
            "{driver}"
        );
    }
}

#[test]
fn explain_unknown_key_exits_2_naming_the_nearest_keys() {
    let out = nictune(&["explain", "rx-usec"]);
    assert_exit(&out, 2);
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(err.contains("unknown setting \"rx-usec\""), "{err}");
    assert!(
        err.contains("hint: did you mean coalesce.rx-usecs"),
        "{err}"
    );
}

#[test]
fn explain_list_names_every_key() {
    let out = nictune(&["explain", "--list"]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(text
        .lines()
        .any(|l| l.starts_with("freebsd.kern.polling.burst_max ")));
    assert!(text.lines().any(|l| l.starts_with("coalesce.rx-usecs ")));
}

#[test]
fn check_itr_80000_on_82547_exits_1_with_the_hang_warning() {
    let out = nictune(&[
        "check",
        "InterruptThrottleRate=80000",
        "--driver",
        "e1000",
        "--device",
        "82547",
    ]);
    assert_exit(&out, 1);
    let text = stdout(&out);
    assert!(
        text.contains("warning: 82547-based adapters may hang"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn check_abc_exits_2_naming_key_value_and_what_is_allowed() {
    let out = nictune(&["check", "rx-usecs=abc"]);
    assert_exit(&out, 2);
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(err.contains("coalesce.rx-usecs"), "{err}");
    assert!(err.contains("\"abc\""), "{err}");
    assert!(err.contains("not an integer (µs)"), "{err}");
    assert!(err.contains("hint: "), "{err}");
    insta::assert_snapshot!(err);
}

#[test]
fn check_itr_8000_on_e1000_shows_register_488() {
    let out = nictune(&["check", "InterruptThrottleRate=8000", "--driver", "e1000"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("ITR register 488 (256 ns units) = 124.9 µs between interrupts"));
}

#[test]
fn check_rx_usecs_50_on_igb_shows_200_quarter_steps() {
    let out = nictune(&["check", "rx-usecs=50", "--driver", "igb"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("itr_val 200 in 0.25 µs steps (50 µs)"));
}

#[test]
fn check_out_of_range_exits_1_with_an_error() {
    let out = nictune(&["check", "e1000.RxAbsIntDelay=70000"]);
    assert_exit(&out, 1);
    assert!(stdout(&out).contains("error: 70000 is out of range"));
}

#[test]
fn check_ambiguous_alias_exits_2_listing_candidates() {
    let out = nictune(&["check", "RxIntDelay=0"]);
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("e1000.RxIntDelay, e1000e.RxIntDelay"), "{err}");
    assert!(err.contains("--driver"), "{err}");
}

#[test]
fn check_unknown_generation_exits_2() {
    let out = nictune(&[
        "check",
        "InterruptThrottleRate=1",
        "--driver",
        "e1000",
        "--generation",
        "6.0",
    ]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("known: 7.3+, 7.0"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn check_json_document() {
    let out = nictune(&[
        "--json",
        "check",
        "rx-usecs=50",
        "net.core.busy_poll=50",
        "--driver",
        "igb",
    ]);
    assert_exit(&out, 0);
    let doc = json(&out);
    assert_eq!(doc["schema"], "nictune.check/v1");
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["settings"][0]["key"], "coalesce.rx-usecs");
    assert_eq!(doc["settings"][0]["conversions"][0]["value"], 200.0);
    assert_eq!(doc["settings"][1]["key"], "sysctl.net.core.busy_poll");
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn check_errors_are_json_with_json() {
    let out = nictune(&["--json", "check", "rx-usecs=abc"]);
    assert_exit(&out, 2);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "nictune.error/v1");
    assert_eq!(doc["exit_code"], 2);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.starts_with("error: "),
        "the human text stays on stderr: {text}"
    );
    assert!(doc["hint"]
        .as_str()
        .unwrap()
        .contains("nictune explain coalesce.rx-usecs"));
}

#[test]
fn check_treats_its_arguments_as_one_set() {
    let alone = nictune(&["check", "napi.defer-hard-irqs=2"]);
    assert_eq!(alone.status.code(), Some(1), "{}", stdout(&alone));
    let together = nictune(&[
        "check",
        "napi.defer-hard-irqs=2",
        "napi.gro-flush-timeout=20000",
    ]);
    assert_eq!(together.status.code(), Some(0), "{}", stdout(&together));
    assert!(stdout(&together).contains("20000 ns = 20.000 µs"));
}

/// Issue #12 item 11b: too many digits said "not an integer"; they are out of range for the
/// setting's type, and the message names the range. README: out of range is an error, exit
/// 1, however many digits (4294967296 and 2⁶⁴ once exited 1 and 2), against the driver's
/// range when --driver names one.
#[test]
fn check_an_integer_beyond_64_bits_is_out_of_range_naming_the_range() {
    let generic = "is out of range for kernel (any driver): allowed 0–4294967295 µs";
    let e1000 = "is out of range for e1000 (in-tree), 82545 and newer: allowed 0 (throttling off)";
    for (value, driver, range) in [
        ("99999999999999999999999", None, generic),
        ("4294967296", None, generic),
        ("18446744073709551616", None, generic),
        ("4294967296", Some("e1000"), e1000),
        ("18446744073709551616", Some("e1000"), e1000),
    ] {
        let arg = format!("rx-usecs={value}");
        let mut args = vec!["check", arg.as_str()];
        args.extend(driver.iter().flat_map(|d| ["--driver", d]));
        let out = nictune(&args);
        assert_exit(&out, 1);
        let text = stdout(&out);
        assert!(text.starts_with("ERROR coalesce.rx-usecs = "), "{text}");
        assert!(text.contains(&format!("error: {value} {range}")), "{text}");
        assert!(!text.contains("not an integer"), "{text}");
        args.insert(0, "--json");
        let doc = json(&nictune(&args));
        assert_eq!(doc["ok"], false);
        assert_eq!(doc["settings"][0]["key"], "coalesce.rx-usecs");
        assert_eq!(doc["settings"][0]["value"]["type"], "integer");
        let message = doc["settings"][0]["errors"][0]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("{value} {range}")),
            "{message}"
        );
    }
}

#[test]
fn check_polling_on_checks_the_driver_against_polling4() {
    // msk is no driver the catalog knows: polling(4)'s caveat is about exactly such drivers.
    let out = nictune(&["check", "polling=on", "--driver", "msk"]);
    assert_exit(&out, 1);
    assert!(
        stdout(&out).contains("polling(4) does not list this driver"),
        "{}",
        stdout(&out)
    );
    let out = nictune(&["check", "polling=on", "--driver", "em"]);
    assert_exit(&out, 0);
    let out = nictune(&[
        "check",
        "kern.polling.burst_max=20",
        "kern.polling.each_burst=50",
        "--json",
    ]);
    assert_exit(&out, 1);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "nictune.check/v1");
    assert_eq!(doc["warnings"], 1);
    let each = &doc["settings"][1];
    assert_eq!(each["key"], "freebsd.kern.polling.each_burst");
    assert!(each["warnings"][0]["message"]
        .as_str()
        .unwrap()
        .contains("resets each_burst to 10"));
}

#[test]
fn explain_serves_the_howto_settings_with_sources() {
    for (name, key, source) in [
        (
            "net.ipv4.tcp_rmem",
            "sysctl.net.ipv4.tcp_rmem",
            "ip-sysctl.rst",
        ),
        ("nfs.rsize", "nfs.rsize", "nfs(5)"),
        ("rsize", "nfs.rsize", "nfs(5)"),
        ("window", "route.window", "ip-route(8)"),
        ("net.core.rmem_max", "sysctl.net.core.rmem_max", "net.rst"),
    ] {
        let out = nictune(&["explain", name]);
        assert_exit(&out, 0);
        let text = stdout(&out);
        assert!(text.starts_with(key), "{name}: {text}");
        assert!(text.contains(source), "{name}: {text}");
        assert!(
            text.contains("overrun"),
            "{name}: the caveat ties it to drops: {text}"
        );
    }
    let out = nictune(&["explain", "nfs.rsize", "--json"]);
    assert_exit(&out, 0);
    let doc = json(&out);
    assert_eq!(doc["schema"], "nictune.explain/v1");
}

/// Issue #13: `check` accepts the per-queue and per-IRQ keys `apply` accepts, by apply's rules.
#[test]
fn check_accepts_the_instance_keys_apply_accepts() {
    for arg in [
        "xps.cpus@0=3",
        "irq.affinity@45=0-1",
        "napi.defer-hard-irqs@1=2",
    ] {
        let out = nictune(&["--json", "check", arg]);
        assert_ne!(out.status.code(), Some(2), "{arg}: {}", stderr(&out));
        let doc = json(&out);
        assert_eq!(doc["settings"][0]["input"], arg);
    }
    // Keys apply takes by their form, outside the catalog: checked as apply checks them.
    let out = nictune(&[
        "--json",
        "check",
        "sysctl.net.core.somaxconn=1024",
        "sysctl.net.ipv4.tcp_congestion_control=bbr",
        "rps.flow-cnt@0=4096",
    ]);
    assert_exit(&out, 0);
    let doc = json(&out);
    assert_eq!(doc["settings"][0]["value"]["value"], 1024);
    assert_eq!(doc["settings"][1]["value"]["type"], "text");
    assert_eq!(doc["settings"][2]["key"], "rps.flow-cnt@0");
    assert!(doc["settings"][2]["spec"].is_null());
    let out = nictune(&["check", "rps.flow-cnt@0=lots"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("is not an integer"),
        "{}",
        stderr(&out)
    );
    let out = nictune(&["check", "coalesce.rx-usecs@0=50"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("drop the @ suffix"),
        "{}",
        stderr(&out)
    );
}

/// Issue #13: an unknown `--driver` is an error naming the known drivers and the nearest one,
/// not a silent fall-back to the generic limits.
#[test]
fn check_refuses_an_unknown_driver_with_suggestions() {
    let out = nictune(&["check", "rx-usecs=50", "--driver", "nosuchdrv"]);
    assert_exit(&out, 2);
    let text = stderr(&out);
    assert!(
        text.contains("--driver") && text.contains("e1000e"),
        "{text}"
    );
    let out = nictune(&["check", "rx-usecs=50", "--driver", "igbb"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("did you mean --driver igb?"),
        "{}",
        stderr(&out)
    );
    let out = nictune(&["check", "InterruptThrottleRate=8000", "--driver", "e1000"]);
    assert_exit(&out, 0);
}

/// Issue #13: families are singular (`ring.rx`, `channel.combined`); the former plural
/// spelling still reads, and `explain` lists it.
#[test]
fn former_channels_keys_read_as_channel() {
    let out = nictune(&["--json", "check", "channels.combined=4"]);
    assert_exit(&out, 0);
    assert_eq!(json(&out)["settings"][0]["key"], "channel.combined");
    let out = nictune(&["explain", "channel.combined"]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out).contains("channels.combined"),
        "{}",
        stdout(&out)
    );
}

/// README "Input limits": queue numbers are below 4096; `@N` past it is refused at parse
/// time naming the limit, and a number too large is not called "not a number".
#[test]
fn check_refuses_an_index_past_the_queue_limit() {
    for (arg, why) in [
        (
            "rps.cpus@99999999=f",
            "setting rps.cpus@99999999: queue index 99999999 is too large; allowed: 0–4095",
        ),
        (
            "rps.cpus@18446744073709551615=f",
            "setting rps.cpus@18446744073709551615: queue index 18446744073709551615 is too large",
        ),
    ] {
        let out = nictune(&["check", arg]);
        assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(err.contains(why), "{err}");
        assert!(!err.contains("not an index"), "{err}");
        assert!(err.contains("hint: per-queue keys take @QUEUE"), "{err}");
    }
    assert_exit(&nictune(&["check", "rps.cpus@4095=f"]), 0);
}

/// README: an unknown generation exits 2, also for a setting whose values never changed.
#[test]
fn check_unknown_generation_exits_2_where_there_is_one_generation() {
    for args in [
        &[
            "check",
            "e1000e.InterruptThrottleRate=8000",
            "--generation",
            "zzz",
        ][..],
        &[
            "check",
            "rx-usecs=50",
            "--driver",
            "igb",
            "--generation",
            "bogus",
        ],
    ] {
        let out = nictune(args);
        assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(err.contains("no generation"), "{err}");
        assert!(err.contains("hint: "), "{err}");
    }
    let out = nictune(&[
        "check",
        "rx-usecs=50",
        "--driver",
        "e1000",
        "--generation",
        "7.0",
    ]);
    assert_exit(&out, 0);
}

/// The defer caveat compares the same NAPI index, and reports keep the `@N` that tells two
/// indexes apart (text and JSON).
#[test]
fn check_compares_instances_and_keeps_their_index_in_the_key() {
    let out = nictune(&[
        "check",
        "napi.defer-hard-irqs@1=2",
        "napi.gro-flush-timeout@2=20000",
    ]);
    assert_exit(&out, 1);
    let text = stdout(&out);
    assert!(text.contains("WARN  napi.defer-hard-irqs@1 = 2"), "{text}");
    assert!(
        text.contains("ok    napi.gro-flush-timeout@2 = 20000"),
        "{text}"
    );
    let same = nictune(&[
        "check",
        "napi.defer-hard-irqs@1=2",
        "napi.gro-flush-timeout@1=20000",
    ]);
    assert_exit(&same, 0);
    let doc = json(&nictune(&[
        "--json",
        "check",
        "rps.cpus@0=1",
        "rps.cpus@1=2",
        "rps.flow-cnt@3=4096",
    ]));
    let keys: Vec<&str> = doc["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["rps.cpus@0", "rps.cpus@1", "rps.flow-cnt@3"]);
}

/// An empty --device matched no device silently and hid the 82547 caveat; empty names are
/// refused with a hint.
#[test]
fn check_refuses_empty_names() {
    for flag in ["--device", "--driver", "--generation"] {
        let mut args = vec!["check", "e1000.InterruptThrottleRate=80000", flag, ""];
        if flag != "--driver" {
            args.extend(["--driver", "e1000"]);
        }
        let out = nictune(&args);
        assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "{flag}: \"\" is not allowed; allowed: a non-empty name"
            )),
            "{err}"
        );
        assert!(
            err.contains(&format!("hint: give the name, or drop {flag}")),
            "{err}"
        );
    }
    let out = nictune(&["explain", "rx-usecs", "--driver", " "]);
    assert_exit(&out, 2);
}

/// An unknown --driver is taken only when every setting's caveat is about drivers outside a
/// list (polling): beside rx-usecs it would check rx-usecs against the generic limits.
/// `explain` refuses it too, instead of accepting it silently or calling the key ambiguous.
#[test]
fn an_unknown_driver_is_refused_unless_every_setting_takes_any() {
    assert_exit(&nictune(&["check", "polling=on", "--driver", "msk"]), 1);
    for args in [
        &["check", "rx-usecs=5", "polling=on", "--driver", "msk"][..],
        &["explain", "rx-usecs", "--driver", "nope"],
        &["explain", "InterruptThrottleRate", "--driver", "nope"],
    ] {
        let out = nictune(args);
        assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(err.contains("a driver the catalog knows: "), "{err}");
        assert!(!err.contains("ambiguous"), "{err}");
        let drop = match args[0] {
            "explain" => "Or drop --driver to see every driver's entry",
            _ => "Or drop --driver to check against the kernel's generic limits",
        };
        assert!(err.contains(drop), "{err}");
    }
    assert_exit(&nictune(&["explain", "polling", "--driver", "msk"]), 0);
    assert_exit(
        &nictune(&["explain", "InterruptThrottleRate", "--driver", "e1000"]),
        0,
    );
}
