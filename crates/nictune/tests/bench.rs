//! `nictune bench` and `nictune serve` as a user meets them: JSON envelope, errors with hints,
//! and the help text (snapshot).

mod common;

use common::{assert_exit, command as nictune, json, stderr};

#[test]
fn loopback_rr_prints_a_bench_v1_document_with_the_simulator_metrics() {
    let out = nictune()
        .args([
            "bench",
            "rr",
            "--loopback",
            "--duration",
            "0.5",
            "--warmup",
            "0.2",
            "--json",
        ])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let doc = json(&out);
    assert_eq!(doc["schema"], "nictune.bench/v1");
    let m = &doc["metrics"];
    assert!(m["transactions_per_sec"].as_f64().unwrap() > 0.0);
    for k in [
        "interim_transactions_per_sec",
        "latency_us",
        "throughput_bps",
        "hosts",
    ] {
        assert!(!m[k].is_null(), "{k}");
    }
    for host in ["client", "server"] {
        assert!(m["hosts"][host]["interrupts_per_sec"].is_number(), "{host}");
        assert!(m["hosts"][host]["cpu"]["per_core"].is_array(), "{host}");
    }
}

#[test]
fn a_bad_value_exits_2_naming_the_flag_and_a_hint() {
    let out = nictune()
        .args(["bench", "rr", "--loopback", "--connections", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("--connections") && err.contains("1 to 256"),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
}

#[test]
fn serve_without_a_token_refuses_to_start() {
    let out = nictune()
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env_remove("NICTUNE_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("NICTUNE_TOKEN") && err.contains("hint:"),
        "{err}"
    );
}

#[test]
fn bench_help_is_stable() {
    let out = nictune()
        .args(["bench", "--help"])
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stdout));
}
