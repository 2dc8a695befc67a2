//! The host side of a guest's link: a network namespace of the testbed's own, in which QEMU
//! creates the guest's tap, and the tap's address — built in-process over rtnetlink
//! (`nictune_linux::lab`), with no `ip` program.

use crate::error::{Result, VmError};
use nictune_linux::{lab, netns, rtnetlink};
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

/// Where named namespaces live.
pub const NETNS_DIR: &str = "/run/netns";

fn lab_error(what: &str, e: impl std::fmt::Display) -> VmError {
    VmError::Command {
        command: what.into(),
        detail: e.to_string(),
    }
}

/// Creates the named namespace with `lo` up.
pub fn create_netns(name: &str) -> Result<()> {
    lab::create_netns(name).map_err(|e| lab_error("creating the testbed namespace", e))
}

/// Deletes the named namespace if it exists (its tap goes with it).
pub fn delete_netns(name: &str) -> Result<()> {
    if !netns::exists(name) {
        return Ok(());
    }
    lab::delete_netns(name)
        .map(drop)
        .map_err(|e| lab_error("deleting the testbed namespace", e))
}

/// Waits for `tap` to appear in namespace `ns` (QEMU creates it), then addresses it and
/// brings it up.
pub fn configure_tap(ns: &str, tap: &str, addr: (Ipv4Addr, u8), wait: Duration) -> Result<()> {
    wait_for_tap(ns, tap, wait)?;
    lab::ipv4_up(ns, tap, addr.0, addr.1).map_err(|e| lab_error("addressing the tap", e))
}

/// Waits for `tap` to appear in namespace `ns`, then makes it a port of `bridge`, up.
pub fn bridge_tap(ns: &str, tap: &str, bridge: &str, wait: Duration) -> Result<()> {
    wait_for_tap(ns, tap, wait)?;
    lab::bridge_port_up(ns, tap, bridge).map_err(|e| lab_error("bridging the tap", e))
}

/// Creates bridge `name` in `ns` with `addr`, up: the host's side of a pair's link.
pub fn create_bridge(ns: &str, name: &str, addr: (Ipv4Addr, u8)) -> Result<()> {
    lab::bridge(ns, name).map_err(|e| lab_error("creating the testbed bridge", e))?;
    lab::ipv4_up(ns, name, addr.0, addr.1).map_err(|e| lab_error("addressing the bridge", e))
}

fn wait_for_tap(ns: &str, tap: &str, wait: Duration) -> Result<()> {
    let end = Instant::now() + wait;
    while !tap_exists(ns, tap) {
        if Instant::now() >= end {
            return Err(VmError::Command {
                command: format!("waiting for tap {tap} in {ns}"),
                detail: "QEMU did not create it".into(),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

fn tap_exists(ns: &str, tap: &str) -> bool {
    let found = netns::run_in(ns, || {
        let sock = rtnetlink::RouteSocket::open().ok()?;
        rtnetlink::link::request::index_of(&sock, tap).ok()
    });
    matches!(found, Ok(Some(_)))
}
