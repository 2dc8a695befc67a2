//! Live: named namespaces, a veth pair, addresses, features and a sysctl, all built
//! in-process (no `ip`, `ethtool` or `sysctl`), then checked from inside the namespaces:
//! TCP between the two ends, the features and NAPI instances as the kernel reports them,
//! the sysctl changed in the namespace only. Needs root; elsewhere each test prints
//! `skipped: <reason>`. Namespaces are `nictune-lab-<pid>-…`, removed even when a test fails.

use nictune_linux::rtnetlink::link::request as link;
use nictune_linux::rtnetlink::RouteSocket;
use nictune_linux::{lab, netns};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

/// Removes the namespaces it names when dropped.
struct Namespaces(Vec<String>);

impl Drop for Namespaces {
    fn drop(&mut self) {
        for name in &self.0 {
            let _ = netns::delete(name);
        }
    }
}

/// `nictune-lab-<pid>-<tag>`.
fn name(tag: &str) -> String {
    format!("nictune-lab-{}-{tag}", std::process::id())
}

/// Creates the namespaces (lo up) under a guard; `None` after printing why when this
/// machine cannot (not root, no namespace support).
fn namespaces(tags: &[&str]) -> Option<Namespaces> {
    if !nictune_linux::write::privilege().is_root() {
        nictune_core::live::skip("needs root");
        return None;
    }
    let mut made = Namespaces(Vec::new());
    for tag in tags {
        let ns = name(tag);
        if let Err(e) = lab::create_netns(&ns) {
            nictune_core::live::skip(&e.to_string());
            return None;
        }
        made.0.push(ns);
    }
    Some(made)
}

const A_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 1);
const B_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 2);

#[test]
fn a_veth_pair_between_two_new_namespaces_carries_tcp() {
    let Some(ns) = namespaces(&["a", "b"]) else {
        return;
    };
    let (a, b) = (ns.0[0].as_str(), ns.0[1].as_str());
    let listed = netns::list().unwrap();
    assert!(listed.contains(&a.to_string()) && listed.contains(&b.to_string()));
    let (a_if, b_if) = (format!("lab{}a", std::process::id()), "peer0");
    lab::veth_pair((a, &a_if), (b, b_if)).unwrap();
    lab::ipv4_up(a, &a_if, A_IP, 30).unwrap();
    lab::ipv4_up(b, b_if, B_IP, 30).unwrap();

    // Each end is in its own namespace, up, and nowhere else.
    let inside = |ns: &str, iface: &str| {
        let iface = iface.to_string();
        netns::run_in(ns, move || link::get(&RouteSocket::open().unwrap(), &iface)).unwrap()
    };
    let a_link = inside(a, &a_if).unwrap();
    assert!(a_link.is_up() && a_link.index() > 0, "{a_link:?}");
    assert!(
        inside(b, "lo").unwrap().is_up(),
        "lo is up in a new namespace"
    );
    assert!(inside(b, &a_if).is_err(), "the a end is not in b");
    let here = link::get(&RouteSocket::open().unwrap(), b_if);
    assert!(
        here.is_err(),
        "the peer was never created in the test's namespace"
    );

    // TCP from a to b: the listener is b's, the client a's.
    assert_eq!(tcp_echo(b, B_IP, a), A_IP);

    // Deleting a namespace takes its end and so the whole pair.
    assert!(lab::delete_netns(a).unwrap());
    assert!(!lab::delete_netns(a).unwrap(), "nothing left to delete");
    // The kernel dismantles a namespace in the background once its last user is gone.
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        inside(b, b_if).is_err()
    });
    assert!(gone, "the peer went with its pair");
    assert!(!netns::list().unwrap().contains(&a.to_string()));
}

#[test]
fn gro_on_tso_off_gives_a_veth_napi_instances() {
    let Some(ns) = namespaces(&["napi"]) else {
        return;
    };
    let n = ns.0[0].as_str();
    lab::veth_pair((n, "v0"), (n, "v1")).unwrap();
    lab::ipv4_up(n, "v0", A_IP, 30).unwrap();
    lab::ipv4_up(n, "v1", B_IP, 30).unwrap();
    assert_eq!(
        lab::napi_count(n, "v0").unwrap().unwrap_or(0),
        0,
        "GRO off: no NAPI"
    );
    for iface in ["v0", "v1"] {
        let active = lab::active_features(n, iface).unwrap();
        let mut changes = vec![("rx-gro", true)];
        changes.extend(
            active
                .keys()
                .filter(|name| nictune_linux::ethtool::features::attr::names::is_tso(name))
                .map(|name| (name.as_str(), false)),
        );
        assert!(changes.len() > 1, "veth has TSO bits: {active:?}");
        lab::set_features(n, iface, &changes).unwrap();
        let after = lab::active_features(n, iface).unwrap();
        assert!(after
            .iter()
            .all(|(name, on)| !on || !nictune_linux::ethtool::features::attr::names::is_tso(name)));
    }
    match lab::napi_count(n, "v0").unwrap() {
        Some(count) => assert!(count > 0, "veth with GRO on lists its NAPI instances"),
        None => eprintln!("note: this kernel cannot list NAPI instances"),
    }
    // A feature the device cannot change is reported, not silently taken as done.
    let err = lab::set_features(n, "lo", &[("rx-gro", false), ("loopback", false)]);
    assert!(err.is_err(), "lo's loopback feature is fixed: {err:?}");
}

#[test]
fn a_sysctl_written_in_a_namespace_changes_only_that_namespace() {
    let Some(ns) = namespaces(&["sysctl"]) else {
        return;
    };
    let n = ns.0[0].as_str();
    let key = "net.ipv4.ping_group_range";
    let host_file = "/proc/sys/net/ipv4/ping_group_range";
    let host_before = std::fs::read_to_string(host_file).unwrap();
    let want = if host_before.split_whitespace().eq(["0", "2147483647"]) {
        "0\t2147483646"
    } else {
        "0\t2147483647"
    };
    lab::write_sysctl(n, key, want).unwrap();
    assert_eq!(netns::sysctl::read(n, key).unwrap(), want);
    assert_eq!(std::fs::read_to_string(host_file).unwrap(), host_before);
    let host_wide = lab::write_sysctl(n, "net.core.busy_poll", "50");
    assert!(
        host_wide.is_err(),
        "host-wide sysctls are not in a new namespace"
    );
    assert!(lab::write_sysctl(n, "kernel.hostname", "x").is_err());
}

/// The mount-propagation detail: a thread that has its own mount namespace (as
/// `netns::enter` gives it) sees a namespace created afterwards, and deleting it reaches
/// that copy too.
#[test]
fn a_thread_with_its_own_mount_namespace_sees_later_namespaces_come_and_go() {
    let Some(ns) = namespaces(&["m1"]) else {
        return;
    };
    let first = ns.0[0].clone();
    let later = name("m2");
    let guard = Namespaces(vec![later.clone()]);
    let (ask, asked) = mpsc::channel::<&'static str>();
    let (tell, told) = mpsc::channel::<bool>();
    let watcher = std::thread::spawn(move || {
        netns::enter(&first).unwrap(); // unshares mounts, / becomes a slave
        for _ in asked {
            let usable = netns::enter_thread(&later).is_ok();
            tell.send(usable).unwrap();
        }
    });
    ask.send("before").unwrap();
    assert!(!told.recv().unwrap(), "not created yet");
    lab::create_netns(&guard.0[0]).unwrap();
    ask.send("created").unwrap();
    assert!(
        told.recv().unwrap(),
        "a namespace created later is usable there"
    );
    assert!(lab::delete_netns(&guard.0[0]).unwrap());
    ask.send("deleted").unwrap();
    assert!(
        !told.recv().unwrap(),
        "a deleted namespace is gone there too"
    );
    drop(ask);
    watcher.join().unwrap();
}

/// Echoes 4 bytes from a client in `from` to a listener on `to` in namespace `at`.
fn tcp_echo(at: &str, to: Ipv4Addr, from: &str) -> Ipv4Addr {
    let listener = netns::run_in(at, || TcpListener::bind((to, 0)))
        .unwrap()
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut s, peer) = listener.accept().unwrap();
        let mut buf = [0u8; 4];
        s.read_exact(&mut buf).unwrap();
        s.write_all(&buf).unwrap();
        peer
    });
    let echoed = netns::run_in(from, move || {
        let mut c = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
        c.write_all(b"ping").unwrap();
        let mut buf = [0u8; 4];
        c.read_exact(&mut buf).unwrap();
        buf
    })
    .unwrap();
    assert_eq!(&echoed, b"ping");
    match server.join().unwrap().ip() {
        std::net::IpAddr::V4(ip) => ip,
        other => panic!("{other}"),
    }
}

/// The real-driver testbed's two-guest link in miniature: two namespaces' veths as the
/// ports of a bridge in a third, which also carries an address of its own.
#[test]
fn a_bridge_joins_two_namespaces_and_its_own() {
    let Some(ns) = namespaces(&["ba", "bb", "hub"]) else {
        return;
    };
    let (a, b, hub) = (ns.0[0].as_str(), ns.0[1].as_str(), ns.0[2].as_str());
    let ip = |n| Ipv4Addr::new(198, 18, 3, n);
    lab::bridge(hub, "br0").unwrap();
    lab::ipv4_up(hub, "br0", ip(1), 29).unwrap();
    for (end, port, n) in [(a, "pa", 2), (b, "pb", 3)] {
        lab::veth_pair((hub, port), (end, "eth0")).unwrap();
        lab::bridge_port_up(hub, port, "br0").unwrap();
        lab::ipv4_up(end, "eth0", ip(n), 29).unwrap();
    }
    let master = |port: &str| {
        let port = port.to_string();
        let l = netns::run_in(hub, move || link::get(&RouteSocket::open().unwrap(), &port))
            .unwrap()
            .unwrap();
        l.other
            .iter()
            .find(|(k, _)| *k == nictune_linux::rtnetlink::link::attr::IFLA_MASTER)
            .map(|(_, v)| u32::from_ne_bytes(v[..4].try_into().unwrap()))
    };
    let br = netns::run_in(hub, || link::index_of(&RouteSocket::open().unwrap(), "br0"))
        .unwrap()
        .unwrap();
    assert_eq!((master("pa"), master("pb")), (Some(br), Some(br)));
    // A bridge forwards once its ports leave the listening state (no STP: at once).
    assert_eq!(tcp_echo(b, ip(3), a), ip(2), "a to b across the bridge");
    assert_eq!(
        tcp_echo(hub, ip(1), b),
        ip(3),
        "b to the bridge's own address"
    );
}
