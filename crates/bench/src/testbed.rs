//! The namespace testbed: two network namespaces joined by a veth pair, so a benchmark can
//! run on a real (virtual) device path without touching the machine's own interfaces.
//!
//! ```text
//!   nictune-tb-<pid>-<n>-c                 nictune-tb-<pid>-<n>-s
//!   nt<pid>x<n>c 198.18.0.1/30  <— veth —>  nt<pid>x<n>s 198.18.0.2/30
//!   (client threads)                        (server threads)
//! ```
//!
//! Both veth ends run with GRO on and TSO off: only then does veth deliver through its NAPI
//! instance (with TSO on, TCP skbs are not eligible for veth's GRO path and go through the
//! per-CPU backlog, NAPI id 0), which is what the moderation knobs act on. The features are
//! read back after the change and the NAPI instances counted (netdev netlink); the run
//! verifies the path through the sockets' `SO_INCOMING_NAPI_ID`.
//!
//! Everything is done in-process through [`nictune_linux::lab`] (named namespaces, rtnetlink,
//! ethtool netlink, `/proc/sys` from a thread inside the namespace): the testbed needs root,
//! not `ip`, `ethtool` or `sysctl`.
//!
//! Lifecycle: [`Testbed::create`] first removes stale testbeds whose owning process is gone
//! (a crash or SIGKILL cannot run destructors), then builds a new one; dropping the
//! [`Testbed`] (normal end, error, Ctrl-C through the cancel flag, panic) deletes both
//! namespaces, which also deletes the veth pair.

use crate::error::{BenchError, Result};
use nictune_core::privilege::Privilege;
use nictune_linux::write::detach;
use nictune_linux::{lab, netns};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// Every testbed namespace name starts with this.
pub const PREFIX: &str = "nictune-tb-";
/// Client end address (198.18.0.0/15 is reserved for benchmarking, RFC 2544).
pub const CLIENT_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// Server end address.
pub const SERVER_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
const PREFIX_LEN: u8 = 30;
/// Lets every group open ICMP ping sockets (the ping test), in the client namespace only.
const PING_GROUPS: (&str, &str) = ("net.ipv4.ping_group_range", "0 2147483647");

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A live testbed; dropping it removes it.
#[derive(Debug)]
pub struct Testbed {
    names: Names,
    /// GRO on / TSO off is in effect on both ends, and veth lists NAPI instances.
    napi_mode: bool,
    warnings: Vec<String>,
    removed: bool,
}

/// One end of the testbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The measuring side: the client namespace and its veth end.
    Client,
    /// The answering side: the server namespace and its veth end.
    Server,
}

/// The names one testbed uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    /// Client namespace (`nictune-tb-<pid>-<n>-c`), under `/run/netns`.
    pub client_ns: String,
    /// Server namespace (`nictune-tb-<pid>-<n>-s`), under `/run/netns`.
    pub server_ns: String,
    /// Client veth end (`nt<pid>x<n>c`), at most 15 bytes.
    pub client_if: String,
    /// Server veth end (`nt<pid>x<n>s`), at most 15 bytes.
    pub server_if: String,
}

impl Names {
    /// Names for testbed `n` of process `pid` (interface names stay within 15 bytes).
    pub fn new(pid: u32, n: u32) -> Names {
        Names {
            client_ns: format!("{PREFIX}{pid}-{n}-c"),
            server_ns: format!("{PREFIX}{pid}-{n}-s"),
            client_if: format!("nt{pid}x{n}c"),
            server_if: format!("nt{pid}x{n}s"),
        }
    }
}

/// The process that created testbed namespace `name`, if it is one of ours.
pub fn owner_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let mut parts = rest.splitn(3, '-');
    let pid = parts.next()?.parse().ok()?;
    parts.next()?.parse::<u32>().ok()?;
    matches!(parts.next()?, "c" | "s").then_some(pid)
}

impl Testbed {
    /// Checks `privilege` (root is needed), removes stale testbeds, and builds a new one.
    pub fn create(privilege: Privilege) -> Result<Testbed> {
        check_available(privilege)?;
        remove_stale()?;
        let names = Names::new(std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let mut bed = Testbed {
            names,
            napi_mode: false,
            warnings: Vec::new(),
            removed: false,
        };
        bed.build()?;
        Ok(bed)
    }

    /// Namespaces (lo up), the veth pair, addresses, links up, NAPI mode, ping sockets. On
    /// an error the caller drops `self`, which removes whatever was made.
    fn build(&mut self) -> Result<()> {
        let n = &self.names;
        lab::create_netns(&n.client_ns)?;
        lab::create_netns(&n.server_ns)?;
        lab::veth_pair((&n.client_ns, &n.client_if), (&n.server_ns, &n.server_if))?;
        lab::ipv4_up(&n.client_ns, &n.client_if, CLIENT_IP, PREFIX_LEN)?;
        lab::ipv4_up(&n.server_ns, &n.server_if, SERVER_IP, PREFIX_LEN)?;
        match self.enable_napi() {
            Ok(()) => self.napi_mode = true,
            Err(why) => self.warnings.push(format!(
                "veth NAPI mode not enabled: {why}; traffic takes the per-CPU backlog path and \
                 NAPI settings have no effect"
            )),
        }
        // A per-namespace sysctl: the machine's own setting is untouched.
        if let Err(e) = lab::write_sysctl(&self.names.client_ns, PING_GROUPS.0, PING_GROUPS.1) {
            self.warnings
                .push(format!("ICMP ping sockets not enabled in the testbed: {e}"));
        }
        Ok(())
    }

    /// GRO on, TSO off (every TCP segmentation bit the end has on) on both ends, read back;
    /// then each end must list NAPI instances where the kernel can list them. The error
    /// says which step fell short.
    fn enable_napi(&self) -> std::result::Result<(), String> {
        for (ns, dev) in self.ends() {
            lab::gro_on_tso_off(ns, dev).map_err(|e| e.to_string())?;
        }
        for (ns, dev) in self.ends() {
            // None: this kernel cannot list NAPI instances; the run's socket check remains.
            if lab::napi_count(ns, dev).map_err(|e| e.to_string())? == Some(0) {
                return Err(format!(
                    "GRO is on but the kernel lists no NAPI instance for {dev} in {ns}"
                ));
            }
        }
        Ok(())
    }

    /// (namespace, interface) of the client end, then the server end.
    fn ends(&self) -> [(&str, &str); 2] {
        let n = &self.names;
        [(&n.client_ns, &n.client_if), (&n.server_ns, &n.server_if)]
    }

    /// The names in use.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// `/run/netns/<client namespace>`.
    pub fn client_netns(&self) -> PathBuf {
        netns::path(&self.names.client_ns)
    }

    /// `/run/netns/<server namespace>`.
    pub fn server_netns(&self) -> PathBuf {
        netns::path(&self.names.server_ns)
    }

    /// True when GRO on / TSO off is in effect on both veth ends.
    pub fn napi_mode(&self) -> bool {
        self.napi_mode
    }

    /// The namespace of one side; run code inside it with [`nictune_linux::netns::run_in`].
    pub fn netns(&self, side: Side) -> &str {
        match side {
            Side::Client => &self.names.client_ns,
            Side::Server => &self.names.server_ns,
        }
    }

    /// The veth end of one side.
    pub fn iface(&self, side: Side) -> &str {
        match side {
            Side::Client => &self.names.client_if,
            Side::Server => &self.names.server_if,
        }
    }

    /// Problems met while building that did not stop it.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Removes the testbed now and reports failures (dropping does the same silently).
    pub fn destroy(mut self) -> Result<()> {
        self.remove()
    }

    fn remove(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.removed, true) {
            return Ok(());
        }
        let a = remove_netns(&self.names.client_ns);
        let b = remove_netns(&self.names.server_ns);
        a.and(b)
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// Deletes a namespace if it exists (its veth end goes with it).
fn remove_netns(name: &str) -> Result<()> {
    lab::delete_netns(name)?;
    Ok(())
}

/// Root is needed (namespaces, netlink changes); says so when `privilege` lacks it.
pub fn check_available(privilege: Privilege) -> Result<()> {
    if !privilege.is_root() {
        return Err(BenchError::TestbedUnavailable(
            "creating network namespaces needs root".into(),
        ));
    }
    Ok(())
}

/// Testbed namespaces present now.
pub fn list() -> Vec<String> {
    let mut names = netns::list().unwrap_or_default();
    names.retain(|n| owner_of(n).is_some());
    names
}

/// Whether testbed namespace `name` was made by a process that no longer runs (one that
/// holds its pid now but started after the namespace was made is another process).
pub fn is_stale(name: &str) -> bool {
    let handle = std::path::Path::new(netns::NETNS_RUN_DIR).join(name);
    owner_of(name).is_some_and(|pid| !detach::alive_as_maker_of(pid, &handle))
}

/// Removes testbed namespaces whose creating process no longer runs; returns their names.
pub fn remove_stale() -> Result<Vec<String>> {
    let stale: Vec<String> = list().into_iter().filter(|n| is_stale(n)).collect();
    for name in &stale {
        remove_netns(name)?;
    }
    Ok(stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_the_kernel_limits_and_carry_their_owner() {
        let n = Names::new(4_194_304, 999);
        assert!(n.client_if.len() <= 15 && n.server_if.len() <= 15, "{n:?}");
        assert_eq!(owner_of(&n.client_ns), Some(4_194_304));
        assert_eq!(owner_of(&n.server_ns), Some(4_194_304));
    }

    #[test]
    fn foreign_namespaces_are_never_ours() {
        for name in [
            "nictune-apply-12",
            "nictune-tb-12-3-x",
            "nictune-tb-abc-1-c",
            "other",
            "nictune-tb-12-c",
        ] {
            assert_eq!(owner_of(name), None, "{name}");
        }
    }
}
