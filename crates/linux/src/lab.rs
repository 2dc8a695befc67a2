//! Isolated test networks built in-process, with nothing but this program: named network
//! namespaces with `lo` up, veth pairs between them, IPv4 addresses, links up, ethtool
//! features and per-namespace sysctls. It is what `ip netns add`, `ip link`, `ip addr`,
//! `ethtool -K` and `sysctl -w` under `ip netns exec` would do, through [`crate::netns`],
//! [`crate::rtnetlink`] and the ethtool / netdev generic-netlink families.
//!
//! Every change happens inside a namespace named by the caller, from a thread that joined
//! it ([`crate::netns::run_in`]); the caller's own namespace is never changed. Needs root.
//!
//! The bench testbed (two namespaces joined by a veth pair) is built with these; so can a
//! VM's network. For a tap that QEMU creates inside a namespace:
//!
//! ```no_run
//! use nictune_linux::{lab, netns};
//! use std::net::Ipv4Addr;
//! use std::process::Command;
//!
//! lab::create_netns("nictune-vm-1")?; // /run/netns/nictune-vm-1, lo up
//! // The process joins the namespace between fork and exec (and so do the taps it creates).
//! let mut qemu = Command::new("qemu-system-x86_64");
//! qemu.args(["-netdev", "tap,id=n0,ifname=tap0,script=no,downscript=no"]);
//! let qemu = netns::spawn_in("nictune-vm-1", &mut qemu)?;
//! // Once tap0 exists: address it and bring it up, inside the namespace.
//! lab::ipv4_up("nictune-vm-1", "tap0", Ipv4Addr::new(198, 18, 1, 1), 24)?;
//! # drop(qemu);
//! lab::delete_netns("nictune-vm-1")?; // its links go with it
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::ethtool::features;
use crate::netdev::napi;
use crate::netlink::genl::{GenlSocket, NlError};
use crate::netns::{self, NetnsError};
use crate::rtnetlink::link::request::{self as link, VethEnd};
use crate::rtnetlink::{addr, RouteSocket};
use std::collections::BTreeMap;
use std::fs::File;
use std::net::Ipv4Addr;
use std::os::fd::AsFd;

/// A failed step of building or inspecting a test network, naming the namespace.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// Creating, entering or using the namespace failed.
    #[error(transparent)]
    Netns(#[from] NetnsError),
    /// A netlink request inside the namespace was refused or failed.
    #[error("in network namespace {netns:?}: {source}")]
    Netlink {
        /// The namespace the request ran in.
        netns: String,
        /// The netlink failure.
        #[source]
        source: NlError,
    },
    /// The kernel accepted a change but reads back something else.
    #[error("in network namespace {netns:?}: {iface}: {problem}")]
    NotApplied {
        /// The namespace the interface is in.
        netns: String,
        /// The interface read back.
        iface: String,
        /// What differs from the change requested.
        problem: String,
    },
}

impl LabError {
    /// The kernel's errno, when a netlink request was refused.
    pub fn errno(&self) -> Option<i32> {
        match self {
            LabError::Netlink { source, .. } => source.errno(),
            LabError::Netns(e) => e.source.raw_os_error(),
            LabError::NotApplied { .. } => None,
        }
    }
}

/// Creates network namespace `name` (`ip netns add`) and sets its `lo` up; on failure the
/// namespace is removed again.
pub fn create_netns(name: &str) -> Result<(), LabError> {
    netns::create(name)?;
    let lo = in_netns(name, || link::set_up(&RouteSocket::open()?, "lo"));
    if lo.is_err() {
        let _ = netns::delete(name);
    }
    lo
}

/// Deletes namespace `name` (`ip netns del`) and with it every link inside; true when it
/// existed.
pub fn delete_netns(name: &str) -> Result<bool, LabError> {
    Ok(netns::delete(name)?)
}

/// Creates a veth pair: interface `a.1` in namespace `a.0`, its peer `b.1` in namespace
/// `b.0`. The request is sent from inside `a.0`, and the peer is created directly in `b.0`.
pub fn veth_pair(a: (&str, &str), b: (&str, &str)) -> Result<(), LabError> {
    let peer_ns = File::open(netns::path(b.0)).map_err(|source| NetnsError {
        action: "opening",
        name: b.0.to_string(),
        step: "the handle",
        source,
    })?;
    in_netns(a.0, || {
        let end = VethEnd {
            name: a.1,
            netns: None,
        };
        let peer = VethEnd {
            name: b.1,
            netns: Some(peer_ns.as_fd()),
        };
        link::create_veth(&RouteSocket::open()?, &end, &peer)
    })
}

/// In namespace `netns`: creates bridge `name` (`ip -n NETNS link add NAME type bridge`).
pub fn bridge(netns: &str, name: &str) -> Result<(), LabError> {
    in_netns(netns, || link::create_bridge(&RouteSocket::open()?, name))
}

/// In namespace `netns`: makes `iface` a port of `bridge` and sets it up
/// (`ip -n NETNS link set IFACE master BRIDGE up`).
pub fn bridge_port_up(netns: &str, iface: &str, bridge: &str) -> Result<(), LabError> {
    in_netns(netns, || {
        let sock = RouteSocket::open()?;
        link::set_master(&sock, iface, bridge)?;
        link::set_up(&sock, iface)
    })
}

/// In namespace `netns`: adds `addr/prefix_len` to interface `iface` and sets it up
/// (`ip -n NETNS addr add ADDR/PREFIX_LEN dev IFACE; ip -n NETNS link set IFACE up`).
pub fn ipv4_up(netns: &str, iface: &str, addr: Ipv4Addr, prefix_len: u8) -> Result<(), LabError> {
    in_netns(netns, || {
        let sock = RouteSocket::open()?;
        addr::request::add_ipv4(&sock, iface, addr, prefix_len)?;
        link::set_up(&sock, iface)
    })
}

/// In namespace `netns`: turns the named ethtool features of `iface` on or off
/// (`ethtool -K`), then reads them back; a feature the kernel left otherwise is an error.
pub fn set_features(netns: &str, iface: &str, changes: &[(&str, bool)]) -> Result<(), LabError> {
    let active = in_netns(netns, || {
        let sock = GenlSocket::open()?;
        let family = sock.family(crate::ethtool::FAMILY_NAME)?;
        features::request::set(&sock, family, iface, changes)?;
        features::request::get_active(&sock, family, iface)
    })?;
    let wrong: Vec<String> = changes
        .iter()
        .filter(|(name, on)| active.get(*name).copied().unwrap_or(false) != *on)
        .map(|(name, on)| format!("{name} stayed {}", if *on { "off" } else { "on" }))
        .collect();
    if wrong.is_empty() {
        return Ok(());
    }
    Err(LabError::NotApplied {
        netns: netns.to_string(),
        iface: iface.to_string(),
        problem: format!(
            "the kernel accepted the feature change but {}",
            wrong.join(", ")
        ),
    })
}

/// In namespace `netns`: GRO on and every TCP segmentation offload `iface` has on turned off
/// (`ethtool -K IFACE gro on tso off`), read back — veth in NAPI mode, as the testbeds run it.
pub fn gro_on_tso_off(netns: &str, iface: &str) -> Result<(), LabError> {
    let active = active_features(netns, iface)?;
    let mut changes = vec![(features::attr::names::GRO, true)];
    changes.extend(
        active
            .iter()
            .filter(|(name, on)| **on && features::attr::names::is_tso(name))
            .map(|(name, _)| (name.as_str(), false)),
    );
    set_features(netns, iface, &changes)
}

/// In namespace `netns`: the active ethtool features of `iface` by name (`ethtool -k`); a
/// feature missing from the map is off.
pub fn active_features(netns: &str, iface: &str) -> Result<BTreeMap<String, bool>, LabError> {
    in_netns(netns, || {
        let sock = GenlSocket::open()?;
        let family = sock.family(crate::ethtool::FAMILY_NAME)?;
        features::request::get_active(&sock, family, iface)
    })
}

/// In namespace `netns`: how many NAPI instances the netdev family lists for `iface`;
/// `None` when the kernel cannot list them (no netdev family, or one without napi-get).
pub fn napi_count(netns: &str, iface: &str) -> Result<Option<usize>, LabError> {
    in_netns(netns, || {
        let index = link::index_of(&RouteSocket::open()?, iface)?;
        let sock = GenlSocket::open()?;
        let family = match sock.family(crate::netdev::FAMILY_NAME) {
            Err(e) if e.is_unsupported() => return Ok(None),
            other => other?,
        };
        match napi::request::dump(&sock, family) {
            Err(e) if e.is_unsupported() => Ok(None),
            all => Ok(Some(all?.iter().filter(|n| n.ifindex == index).count())),
        }
    })
}

/// Writes sysctl `key` (`net.*` only) in namespace `netns`, which must not be the machine's
/// own: see [`crate::netns::sysctl`].
pub fn write_sysctl(netns: &str, key: &str, value: &str) -> Result<(), LabError> {
    Ok(netns::sysctl::write(netns, key, value)?)
}

/// Runs the netlink work `f` on a thread inside `netns`, naming the namespace in its error.
fn in_netns<R: Send>(
    netns: &str,
    f: impl FnOnce() -> Result<R, NlError> + Send,
) -> Result<R, LabError> {
    netns::run_in(netns, f)?.map_err(|source| LabError::Netlink {
        netns: netns.to_string(),
        source,
    })
}
