//! Live, root only: a namespace `nictune-show-<pid>` with a veth pair; this project's netlink
//! SET messages change channels (rx/tx 2), turn GRO on (so veth has NAPI instances) and set
//! per-NAPI values; `nictune show --netns` must report all of it. Skips with the reason when
//! not root or `ip` is missing. The namespace is deleted by a guard, also on failure.

use nictune_host::snapshot::Channels;
use nictune_linux::ethtool::{channels, features};
use nictune_linux::netdev::napi::request::{self as napi, NapiSettings};
use nictune_linux::netlink::genl::GenlSocket;
use std::process::Command;

mod common;

struct Netns(String);

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn run(cmd: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{cmd} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    ))
}

fn skip_reason() -> Option<String> {
    let privilege = nictune_linux::write::privilege();
    if !privilege.is_root() {
        return Some(format!("needs root (euid {})", privilege.euid()));
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("ip (iproute2) is not installed".into());
    }
    None
}

/// From a thread inside `ns`: channels rx/tx 2 and GRO on for `v0` (ethtool SETs), then
/// per-NAPI values on every NAPI of `ifindex`. Returns how many NAPIs were set.
fn configure(ns: &str, ifindex: u32, s: NapiSettings) -> Result<usize, String> {
    let ns = ns.to_string();
    std::thread::spawn(move || {
        nictune_linux::netns::enter_thread(&ns).map_err(|e| e.to_string())?;
        let sock = GenlSocket::open().map_err(|e| e.to_string())?;
        let ethtool = sock.family("ethtool").map_err(|e| e.to_string())?;
        let two = Channels {
            rx: Some(2),
            tx: Some(2),
            ..Channels::default()
        };
        let attrs = channels::request::encode_set("v0", &two);
        sock.request_ack(ethtool, channels::attr::MSG_SET, &attrs, "channels set")
            .map_err(|e| e.to_string())?;
        let attrs = features::request::encode_set("v0", &[("rx-gro", true)]);
        sock.request_ack(ethtool, features::attr::MSG_SET, &attrs, "features set")
            .map_err(|e| e.to_string())?;
        let family = sock.family("netdev").map_err(|e| e.to_string())?;
        let ids: Vec<u32> = napi::dump(&sock, family)
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|n| n.ifindex == ifindex)
            .map(|n| n.id)
            .collect();
        for id in &ids {
            napi::set(&sock, family, *id, &s).map_err(|e| e.to_string())?;
        }
        Ok(ids.len())
    })
    .join()
    .map_err(|_| "napi thread panicked".to_string())?
}

#[test]
fn show_reports_per_napi_values_set_over_netlink() {
    if let Some(reason) = skip_reason() {
        nictune_core::live::skip(&reason);
        return;
    }
    let ns = Netns(format!("nictune-show-{}", std::process::id()));
    if let Err(e) = run("ip", &["netns", "add", &ns.0]) {
        nictune_core::live::skip(&format!("cannot create a network namespace: {e}"));
        return;
    }
    let n = ns.0.as_str();
    run(
        "ip",
        &[
            "-n", n, "link", "add", "v0", "type", "veth", "peer", "name", "v1",
        ],
    )
    .unwrap();
    run("ip", &["-n", n, "link", "set", "v0", "up"]).unwrap();
    run("ip", &["-n", n, "link", "set", "v1", "up"]).unwrap();
    run(
        "ip",
        &["netns", "exec", n, "ethtool", "-K", "v0", "gro", "on"],
    )
    .unwrap();
    let ifindex: u32 = {
        let out = Command::new("ip")
            .args(["netns", "exec", n, "cat", "/sys/class/net/v0/ifindex"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    let want = NapiSettings {
        defer_hard_irqs: Some(2),
        gro_flush_timeout_ns: Some(20_000),
        irq_suspend_timeout_ns: Some(1_000_000),
        threaded: None,
    };
    let count = configure(n, ifindex, want).unwrap();
    assert!(count > 0, "veth with GRO on has NAPI instances");

    let out = common::nictune(&["show", "--json", "--netns", n, "v0"]);
    common::assert_exit(&out, 0);
    let doc = common::json(&out);
    let v0 = &doc["nics"][0];
    assert_eq!(v0["name"], "v0");
    assert_eq!(v0["features"]["value"]["rx-gro"], true);
    assert_eq!(v0["channels"]["value"]["rx"], 2);
    assert_eq!(v0["channels"]["value"]["tx"], 2);
    assert!(v0["channels"]["value"]["rx_max"].as_u64().unwrap() >= 2);
    let napis = v0["napis"]["value"].as_array().unwrap();
    assert_eq!(napis.len(), count);
    for napi in napis {
        assert_eq!(napi["defer_hard_irqs"], 2, "{napi}");
        assert_eq!(napi["gro_flush_timeout_ns"], 20_000, "{napi}");
        assert_eq!(napi["irq_suspend_timeout_ns"], 1_000_000, "{napi}");
    }
    // The sysfs device-wide values are untouched by per-NAPI writes (ecosystem.md §1.5).
    assert_eq!(v0["napi_defer_hard_irqs"]["value"], 0);
    // veth queues carry no napi-id in queue-get (ecosystem.md Appendix A), so the queues
    // are listed without a NAPI link; the NAPIs are found by ifindex.
    assert_eq!(
        v0["queues"].as_array().unwrap().len(),
        4,
        "rx-0, rx-1, tx-0, tx-1"
    );
}

/// The output of `cmd args` inside namespace `ns`, as text.
fn output_in(ns: &str, cmd: &[&str]) -> String {
    let out = Command::new("ip")
        .args(["netns", "exec", ns])
        .args(cmd)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// ethtool's `Speed: 10000Mb/s` as a number; `None` for `Unknown!`.
fn ethtool_speed(text: &str) -> Option<u64> {
    let line = text.lines().find_map(|l| l.trim().strip_prefix("Speed:"))?;
    line.trim().strip_suffix("Mb/s")?.parse().ok()
}

#[test]
fn show_reports_link_attributes_as_ip_and_ethtool_do() {
    if let Some(reason) = skip_reason() {
        nictune_core::live::skip(&reason);
        return;
    }
    if Command::new("ethtool").arg("--version").output().is_err() {
        nictune_core::live::skip("ethtool is not installed");
        return;
    }
    let ns = Netns(format!("nictune-link-{}", std::process::id()));
    if let Err(e) = run("ip", &["netns", "add", &ns.0]) {
        nictune_core::live::skip(&format!("cannot create a network namespace: {e}"));
        return;
    }
    let n = ns.0.as_str();
    let ip = |args: &[&str]| {
        let mut all = vec!["-n", n];
        all.extend_from_slice(args);
        run("ip", &all).unwrap();
    };
    ip(&["link", "add", "v0", "type", "veth", "peer", "name", "v1"]);
    ip(&["link", "add", "br0", "type", "bridge"]);
    // Values no default has, so a match is not a coincidence; v1 stays down.
    ip(&["link", "set", "v0", "mtu", "1400", "txqueuelen", "321"]);
    ip(&["link", "set", "v0", "up"]);

    let out = common::nictune(&["show", "--json", "--netns", n, "v0", "v1", "br0"]);
    common::assert_exit(&out, 0);
    let doc = common::json(&out);
    let listed: serde_json::Value =
        serde_json::from_str(&output_in(n, &["ip", "-d", "-j", "link", "show"])).unwrap();
    for name in ["v0", "v1", "br0"] {
        let nic = doc["nics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap_or_else(|| panic!("{name} not shown"));
        let ip = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["ifname"] == name)
            .unwrap();
        assert_eq!(nic["mtu_bytes"], ip["mtu"], "{name}");
        assert_eq!(nic["txqlen"], ip["txqlen"], "{name}");
        assert_eq!(nic["qdisc"], ip["qdisc"], "{name}");
        assert_eq!(
            nic["operstate"].as_str().unwrap(),
            ip["operstate"].as_str().unwrap().to_lowercase(),
            "{name}"
        );
        assert_eq!(
            nic["driver"]["value"], ip["linkinfo"]["info_kind"],
            "{name}"
        );
        // Speed as ethtool reports it, also for v1, which is down (sysfs `speed` has none
        // then: net/core/net-sysfs.c speed_show).
        let speed = ethtool_speed(&output_in(n, &["ethtool", name]));
        assert_eq!(nic["speed_mbps"].as_u64(), speed, "{name}");
    }
    let v0 = doc["nics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "v0")
        .unwrap();
    assert_eq!(v0["mtu_bytes"], 1400);
    assert_eq!(v0["txqlen"], 321);
    assert_eq!(v0["driver"]["value"], "veth");
    // veth reports a speed (drivers/net/veth.c get_link_ksettings), so the comparison above
    // compared numbers, not two nulls.
    assert!(v0["speed_mbps"].as_u64().is_some_and(|s| s > 0), "{v0}");

    // The text table has the same line.
    let out = common::nictune(&["show", "--netns", n, "v0"]);
    common::assert_exit(&out, 0);
    let text = common::stdout(&out);
    assert!(text.contains("v0  ifindex"), "{text}");
    assert!(text.contains("driver veth"), "{text}");
    assert!(text.contains("mtu 1400"), "{text}");
    assert!(text.contains("txqlen 321"), "{text}");
}
