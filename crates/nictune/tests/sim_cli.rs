//! `nictune sim` as a user sees it: listings, human tables, the `nictune.sim/v3` JSON shape,
//! sweeps and errors. Wall time is the only value that changes between runs; it is blanked.

use std::process::Command;

fn nictune(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nictune"))
        .args(args)
        .output()
        .expect("run nictune");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Blanks the `N s wall` figure of the human header.
fn blank_wall(text: &str) -> String {
    text.lines()
        .map(|l| match (l.find(" packets, "), l.rfind(" s wall)")) {
            (Some(a), Some(b)) if l.starts_with("scenario ") => {
                format!("{} packets, [wall] s wall){}", &l[..a], &l[b + 8..])
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = nictune(args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("one JSON document")
}

#[test]
fn list_names_the_builtins() {
    let (code, out, _) = nictune(&["sim", "--list"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!(out);
}

#[test]
fn help_text() {
    let (_, out, _) = nictune(&["sim", "--help"]);
    insta::assert_snapshot!(out);
}

#[test]
fn rr_json_has_the_v2_shape() {
    let mut v = json(&[
        "sim",
        "seed-e1000-rr",
        "--set",
        "client.itr=0",
        "--set",
        "server.itr=0",
        "--duration",
        "1",
        "--json",
    ]);
    assert!(v["engine"]["wall_s"].as_f64().unwrap() > 0.0);
    v["engine"]["wall_s"] = serde_json::Value::Null;
    // Exact field names matter to consumers: snapshot the whole document.
    insta::assert_json_snapshot!(v);
}

#[test]
fn ping_prints_rtt_like_ping_does() {
    let (code, out, _) = nictune(&["sim", "seed-e1000-ping", "--duration", "4"]);
    assert_eq!(code, 0);
    assert!(out.contains("rtt min/avg/max/mdev = "));
    insta::assert_snapshot!(blank_wall(&out));
}

#[test]
fn sweep_runs_every_point_in_order() {
    let v = json(&[
        "sim",
        "seed-e1000-rr",
        "--sweep",
        "server.itr=0,8000",
        "--sweep",
        "client.itr=0,8000",
        "--duration",
        "0.2",
        "--threads",
        "2",
        "--json",
    ]);
    assert_eq!(v["schema"], "nictune.sim/v3");
    let points = v["points"].as_array().unwrap();
    let pairs: Vec<(i64, i64)> = points
        .iter()
        .map(|p| {
            (
                p["params"]["server.itr"].as_i64().unwrap(),
                p["params"]["client.itr"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(pairs, vec![(0, 0), (0, 8000), (8000, 0), (8000, 8000)]);
    assert!(points.iter().all(|p| p["engine"]["seed"] == 1));
}

#[test]
fn bad_input_names_key_value_allowed_and_hints() {
    let (code, _, err) = nictune(&["sim", "seed-e1000-rr", "--set", "client.itr=500000"]);
    assert_eq!(code, 2);
    assert!(err.contains("client.itr") && err.contains("500000") && err.contains("0 to 488281"));
    assert!(err.contains("hint:"), "{err}");
    // Within the key's range (the ixgbe family goes to 488281) but not e1000's.
    let (code, _, err) = nictune(&["sim", "seed-e1000-rr", "--set", "client.itr=200000"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("200000") && err.contains("100–100000"),
        "{err}"
    );
    let (code, _, err) = nictune(&["sim", "seed-e1000-rr", "--set", "server.itrr=1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown scenario key `server.itrr` (did you mean `server.itr`?)"),
        "{err}"
    );
    let (code, _, err) = nictune(&["sim", "seed-e1000-rr", "--set", "hosts.itrr=1"]);
    assert_eq!(code, 2);
    assert!(err.contains("(did you mean `hosts.itr`?)"), "{err}");
    let (code, _, err) = nictune(&["sim", "no-such-scenario"]);
    assert_eq!(code, 2);
    assert!(err.contains("--list"), "{err}");
    let (code, _, err) = nictune(&["sim", "seed-e1000-rr", "--set", "client.itr=3"]);
    assert_eq!(code, 2, "e1000 7.0 does not accept 3");
    assert!(
        err.contains("e1000 7.0.x") && err.contains("100–100000"),
        "{err}"
    );
}

#[test]
fn a_hosts_sweep_prints_the_hosts_value() {
    let (code, out, _) = nictune(&[
        "sim",
        "seed-e1000-rr",
        "--sweep",
        "hosts.itr=0,8000",
        "--duration",
        "0.2",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("hosts.itr=0 ") && out.contains("hosts.itr=8000 "),
        "{out}"
    );
    assert!(!out.contains("hosts.itr=-"), "{out}");
}

#[test]
fn explain_on_an_engine_scenario_explains_instead_of_running() {
    let (code, out, _) = nictune(&["sim", "linerate-10g-64b", "--explain"]);
    assert_eq!(code, 0);
    assert!(out.contains("docs/simulator.md"), "{out}");
    assert!(out.contains("server.itr") && out.contains("20000"), "{out}");
    assert!(!out.contains("events"), "it ran: {out}");
}

/// README: `--keys` shows every key — the case scenarios' too — and with a scenario named,
/// that scenario's keys (not its --explain text).
#[test]
fn keys_list_the_case_scenario_keys() {
    let (code, out, err) = nictune(&["sim", "--keys"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\nseed-igb-router (nictune sim seed-igb-router --set KEY=VALUE):\n"));
    assert!(out.lines().any(|l| l.starts_with("nmbclusters ")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("client.itr ")), "{out}");
    let (code, out, _) = nictune(&["sim", "seed-igb-router", "--keys"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("seed-igb-router (nictune sim seed-igb-router --set KEY=VALUE):\nports "),
        "{out}"
    );
    assert!(!out.contains("client.itr"), "{out}");
    let doc = json(&["sim", "--keys", "--json"]);
    let keys = doc["keys"].as_array().unwrap();
    let engine = keys.iter().find(|k| k["key"] == "client.itr").unwrap();
    assert!(engine["scenario"].is_null());
    let case = keys.iter().find(|k| k["key"] == "nmbclusters").unwrap();
    assert_eq!(case["scenario"], "seed-igb-router");
    let doc = json(&["sim", "seed-e1000-rr", "--keys", "--json"]);
    assert!(doc["keys"]
        .as_array()
        .unwrap()
        .iter()
        .all(|k| k["scenario"].is_null()));
}

/// Engine and case scenarios print the same fields: `notes` in a run and in each sweep
/// point, `scenario` in each sweep point.
#[test]
fn engine_and_case_documents_have_the_same_fields() {
    for name in ["seed-e1000-rr", "seed-igb-router"] {
        let run = json(&["sim", name, "--json", "--set", "duration=0.01"]);
        assert_eq!(run["schema"], "nictune.sim/v3");
        assert!(run["notes"].is_array(), "{name}: {}", run["notes"]);
        let key = if name == "seed-e1000-rr" {
            "seed=1,2"
        } else {
            "ports=9,10"
        };
        let sweep = json(&[
            "sim",
            name,
            "--json",
            "--set",
            "duration=0.01",
            "--sweep",
            key,
        ]);
        for point in sweep["points"].as_array().unwrap() {
            assert_eq!(point["scenario"], name);
            assert!(point["notes"].is_array(), "{name}: {point}");
        }
    }
}
