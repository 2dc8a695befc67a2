//! Real short runs on 127.0.0.1: every engine end to end, with sanity checks.

mod common;

use common::{assert_sane, short};
use nictune_bench::{run, ServerSide, TestKind};
use nictune_core::progress::NoProgress;

#[test]
fn tcp_rr_on_loopback_is_sane_and_pinned_sides_stay_put() {
    let mut spec = short(TestKind::Rr, 1_000);
    spec.client_cpu = Some(0);
    spec.server_cpu = Some(0);
    let r = run(&spec, ServerSide::Loopback, &NoProgress).unwrap();
    assert_sane(&r);
    assert_eq!(r.placement.client.cpus_seen, [0]);
    assert_eq!(r.placement.server.cpus_seen, [0]);
    assert!(r.metrics.hosts.contains_key("server"));
    assert!(r.completed > 100, "{}", r.completed);
}

#[test]
fn udp_rr_with_two_connections_and_outstanding_requests() {
    let mut spec = short(TestKind::UdpRr, 700);
    spec.connections = 2;
    spec.outstanding = 2;
    let r = run(&spec, ServerSide::Loopback, &NoProgress).unwrap();
    assert_sane(&r);
}

#[test]
fn open_loop_rr_holds_its_target_rate() {
    let mut spec = short(TestKind::Rr, 1_000);
    spec.rate = Some(2_000.0);
    let r = run(&spec, ServerSide::Loopback, &NoProgress).unwrap();
    assert_sane(&r);
    let tps = r.metrics.transactions_per_sec.unwrap();
    assert!((1_800.0..=2_050.0).contains(&tps), "{tps}");
}

#[test]
fn stream_reports_throughput_and_retransmits() {
    let spec = short(TestKind::Stream, 700);
    let r = run(&spec, ServerSide::Loopback, &NoProgress).unwrap();
    assert_sane(&r);
    let s = r.stream.as_ref().unwrap();
    assert!(s.bytes > 1_000_000, "{}", s.bytes);
    assert!(r.accounting["client"].cpu_us_per_kib.is_some());
}

#[test]
fn zero_copy_stream_moves_the_same_kind_of_bytes() {
    let mut spec = short(TestKind::Stream, 500);
    spec.zerocopy = true;
    let r = run(&spec, ServerSide::Loopback, &NoProgress).unwrap();
    assert_sane(&r);
    assert!(
        r.stream.as_ref().unwrap().bytes > 1_000_000,
        "{:?}",
        r.stream
    );
    // The server counted what arrived: no write was lost to the sendfile path.
    assert!(r.metrics.throughput_bps.unwrap() > 8e6);
}

#[test]
fn rr_under_a_stream_load_reports_both() {
    let mut spec = short(TestKind::Rr, 500);
    spec.load = Some(nictune_bench::Load::streams(2));
    let r = run(&spec, ServerSide::Loopback, &NoProgress).unwrap();
    assert_sane(&r);
    let load = r.load.as_ref().expect("the load's figures");
    assert_eq!(load.connections, 2);
    assert!(load.stream.bytes > 1_000_000, "{load:?}");
    assert!(r.completed > 10, "{}", r.completed);
}

#[test]
fn udp_ping_probes_all_come_back() {
    let spec = short(TestKind::Ping, 700);
    let r = run(&spec, ServerSide::Loopback, &NoProgress).unwrap();
    assert_sane(&r);
    assert_eq!(r.lost, 0);
    assert!((135..=141).contains(&r.completed), "{}", r.completed);
}

#[test]
fn icmp_ping_when_the_kernel_permits_it() {
    let mut spec = short(TestKind::Ping, 500);
    spec.icmp = true;
    match run(&spec, ServerSide::Loopback, &NoProgress) {
        Ok(r) => {
            assert_sane(&r);
            assert!(r.completed > 50, "{}", r.completed);
        }
        // As root a raw socket stands in for a refused ping socket, so only a user outside
        // net.ipv4.ping_group_range can fail here, and that is a skip, said as one.
        Err(e) if !nictune_linux::write::privilege().is_root() => nictune_core::live::skip(
            &format!("ICMP ping sockets not permitted for this user: {e}"),
        ),
        Err(e) => panic!("ICMP echo failed as root, where a raw socket is always allowed: {e}"),
    }
}

#[test]
fn json_metrics_have_the_simulator_fields() {
    let r = run(&short(TestKind::Rr, 300), ServerSide::Loopback, &NoProgress).unwrap();
    let v = serde_json::to_value(&r).unwrap();
    for k in [
        "transactions_per_sec",
        "interim_transactions_per_sec",
        "latency_us",
        "throughput_bps",
        "hosts",
    ] {
        assert!(v["metrics"].get(k).is_some(), "{k}");
    }
    assert!(v["metrics"]["hosts"]["client"]["cpu"]["per_core"].is_array());
    assert!(v["metrics"]["latency_us"]["p999"].is_number());
}

/// Every interface of this namespace that hangs below a device is read with that device's
/// sysfs name (rtnetlink's IFLA_PARENT_DEV_NAME, or sysfs on kernels before 5.14): the key
/// that tells a virtio-net NIC's queue lines apart from another one's.
#[test]
fn a_sample_names_the_device_below_each_interface_that_has_one() {
    let mut with_device = Vec::new();
    for entry in std::fs::read_dir("/sys/class/net").unwrap() {
        let path = entry.unwrap().path();
        if let Ok(target) = std::fs::read_link(path.join("device")) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let device = target.file_name().unwrap().to_string_lossy().into_owned();
            with_device.push((name, device));
        }
    }
    if with_device.is_empty() {
        nictune_core::live::skip("no interface on this machine hangs below a device");
        return;
    }
    let texts = nictune_bench::accounting::read_live(None).unwrap();
    for pair in &with_device {
        assert!(
            texts.parents.contains(pair),
            "{pair:?} not in {:?}",
            texts.parents
        );
    }
    assert!(texts.parents.iter().all(|(name, _)| name != "lo"));
}
