//! `nictune bench --peer` at the field cases' loads, against a `nictune serve` in a
//! namespace of the test's own (`common::lab`, built with `ip`): 150 parallel streams,
//! latency under a bulk load, and ICMP echo as root where ping sockets are not allowed.
//! Needs root, `ip` and ethtool; elsewhere each test reports itself skipped.

mod common;

use common::lab::{ip, Lab, PORT, SERVER};
use serde_json::Value as Json;

fn peer() -> String {
    format!("{SERVER}:{PORT}")
}

fn lab(tag: &str) -> Option<Lab> {
    if let Some(why) = common::netns_skip_reason(tag) {
        nictune_core::live::skip(&why);
        return None;
    }
    Some(Lab::create(tag))
}

/// `nictune bench ARGS --peer … --json` from namespace a, measuring 1 s after a 0.2 s
/// warm-up: the result.
fn bench(lab: &Lab, args: &[&str]) -> Json {
    let peer = peer();
    let mut all = vec!["bench"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--duration", "1", "--warmup", "0.2"]);
    all.extend_from_slice(&["--peer", &peer, "--json"]);
    let out = lab.nictune_in_a(&all);
    assert!(
        out.status.success(),
        "nictune {all:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "nictune.bench/v2");
    doc
}

#[test]
fn a_serve_peer_takes_150_parallel_streams() {
    let Some(lab) = lab("bp150") else { return };
    let r = bench(&lab, &["stream", "--connections", "150"]);
    assert_eq!(r["spec"]["connections"], 150);
    let bytes = r["stream"]["bytes"].as_u64().unwrap();
    assert!(bytes > 1_000_000, "150 streams moved only {bytes} B in 1 s");
    assert!(r["metrics"]["throughput_bps"].as_f64().unwrap() > 8e6);
    // Both ends run in namespaces, where the host-wide net.core sysctls are not under
    // /proc/sys: they are read in the host's namespace and recorded for both sides.
    let host_busy_poll: i64 = std::fs::read_to_string("/proc/sys/net/core/busy_poll")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    for side in ["client", "server"] {
        assert_eq!(
            r["sysctls"][side]["net.core.busy_poll"], host_busy_poll,
            "{side}: {}",
            r["sysctls"]
        );
        assert!(
            r["sysctls"][side]["net.core.netdev_budget"]
                .as_i64()
                .unwrap()
                > 0
        );
    }
}

#[test]
fn ping_and_rr_under_a_stream_load_report_the_load_beside_the_latency() {
    let Some(lab) = lab("bpload") else { return };
    let idle = bench(&lab, &["ping", "--rate", "200"]);
    assert_eq!(idle["load"], Json::Null);
    let loaded = bench(&lab, &["ping", "--rate", "200", "--load", "stream:4"]);
    assert_eq!(loaded["spec"]["load"]["connections"], 4);
    let load = &loaded["load"];
    assert_eq!(load["connections"], 4);
    assert!(load["throughput_bps"].as_f64().unwrap() > 1e7, "{load}");
    assert!(load["stream"]["bytes"].as_u64().unwrap() > 0, "{load}");
    // 200 probes/s for 1 s, each answered or counted lost: the streams fill the veth
    // backlog (netdev_max_backlog), which drops a few probes too.
    let (replies, lost) = (
        loaded["completed"].as_u64().unwrap(),
        loaded["lost"].as_u64().unwrap(),
    );
    assert!(
        (190..=210).contains(&(replies + lost)),
        "{replies} replies, {lost} lost"
    );
    assert!(replies >= 100, "{replies} replies, {lost} lost");
    // A queue of bulk segments in front of each probe: the loaded median is not below the
    // idle one.
    let p50 = |r: &Json| r["metrics"]["latency_us"]["p50"].as_f64().unwrap();
    assert!(
        p50(&loaded) >= p50(&idle) * 0.8,
        "{} vs {}",
        p50(&loaded),
        p50(&idle)
    );

    let rr = bench(&lab, &["rr", "--load", "stream:2"]);
    assert!(rr["metrics"]["transactions_per_sec"].as_f64().unwrap() > 10.0);
    assert!(rr["load"]["throughput_bps"].as_f64().unwrap() > 1e7);
    // A stream test cannot carry a load of its own.
    let out = lab.nictune_in_a(&["bench", "stream", "--peer", &peer(), "--load", "stream"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--load"));
}

/// Sets `net.ipv4.ping_group_range` in namespace a and returns what it reads back.
fn set_ping_range(lab: &Lab, range: &str) -> Vec<String> {
    let key = "/proc/sys/net/ipv4/ping_group_range";
    let write = format!("echo {range} > {key}");
    ip(&["netns", "exec", &lab.a, "sh", "-c", &write]);
    let now = ip(&["netns", "exec", &lab.a, "cat", key]);
    String::from_utf8_lossy(&now.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn icmp_echo_works_as_root_where_ping_sockets_are_not_allowed() {
    let Some(lab) = lab("bpicmp") else { return };
    // The kernel's default range "1 0" admits no group: only a raw socket can ping.
    assert_eq!(set_ping_range(&lab, "1 0"), ["1", "0"]);
    let r = bench(&lab, &["ping", "--icmp", "--rate", "100"]);
    assert!(r["spec"]["icmp"].as_bool().unwrap());
    let replies = r["completed"].as_u64().unwrap();
    assert!((95..=105).contains(&replies), "{replies} replies");
    assert_eq!(r["lost"], 0);
    let why = "the result says which socket carried them";
    assert_eq!(r["icmp_socket"], "raw", "{why}");
    // Where the range admits root's group, the unprivileged ping socket is used.
    assert_eq!(set_ping_range(&lab, "0 0"), ["0", "0"]);
    let r = bench(&lab, &["ping", "--icmp", "--rate", "100"]);
    assert_eq!(r["icmp_socket"], "ping", "{why}");
    let udp = bench(&lab, &["ping", "--rate", "100"]);
    assert_eq!(udp["icmp_socket"], Json::Null);
}
