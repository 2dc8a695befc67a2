//! The host side of a guest's link: a network namespace of the testbed's own, in which QEMU
//! creates the guest's tap, and the tap's address.

use crate::error::{Result, VmError};
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Where named namespaces live.
pub const NETNS_DIR: &str = "/run/netns";

/// Creates the named namespace with `lo` up.
pub fn create_netns(name: &str) -> Result<()> {
    ip(&["netns", "add", name])?;
    ip(&["-n", name, "link", "set", "lo", "up"]).map(drop)
}

/// Deletes the named namespace if it exists (its tap goes with it).
pub fn delete_netns(name: &str) -> Result<()> {
    if !Path::new(NETNS_DIR).join(name).exists() {
        return Ok(());
    }
    ip(&["netns", "del", name]).map(drop)
}

/// Waits for `tap` to appear in namespace `ns` (QEMU creates it), then addresses it and
/// brings it up.
pub fn configure_tap(ns: &str, tap: &str, addr: (Ipv4Addr, u8), wait: Duration) -> Result<()> {
    let end = Instant::now() + wait;
    while ip(&["-n", ns, "link", "show", tap]).is_err() {
        if Instant::now() >= end {
            return Err(VmError::Command {
                command: format!("waiting for tap {tap} in {ns}"),
                detail: "QEMU did not create it".into(),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let cidr = format!("{}/{}", addr.0, addr.1);
    ip(&["-n", ns, "addr", "add", &cidr, "dev", tap])?;
    ip(&["-n", ns, "link", "set", tap, "up"]).map(drop)
}

fn ip(args: &[&str]) -> Result<String> {
    let command = format!("ip {}", args.join(" "));
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| VmError::Command {
            command: command.clone(),
            detail: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(VmError::Command {
            command,
            detail: String::from_utf8_lossy(&out.stderr).trim().into(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
