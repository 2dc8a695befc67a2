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
//! per-CPU backlog, NAPI id 0), which is what the moderation knobs act on. The run verifies
//! this through the sockets' `SO_INCOMING_NAPI_ID`.
//!
//! Lifecycle: [`Testbed::create`] first removes stale testbeds whose owning process is gone
//! (a crash or SIGKILL cannot run destructors), then builds a new one; dropping the
//! [`Testbed`] (normal end, error, Ctrl-C through the cancel flag, panic) deletes both
//! namespaces, which also deletes the veth pair.

use crate::error::{BenchError, Result};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Every testbed namespace name starts with this.
pub const PREFIX: &str = "nictune-tb-";
/// Client end address (198.18.0.0/15 is reserved for benchmarking, RFC 2544).
pub const CLIENT_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// Server end address.
pub const SERVER_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
const PREFIX_LEN: u8 = 30;
const NETNS_DIR: &str = "/run/netns";

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A live testbed; dropping it removes it.
#[derive(Debug)]
pub struct Testbed {
    names: Names,
    /// GRO on / TSO off could be set on both ends (ethtool present and accepted it).
    napi_mode: bool,
    warnings: Vec<String>,
    removed: bool,
}

/// One end of the testbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

/// The names one testbed uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    pub client_ns: String,
    pub server_ns: String,
    pub client_if: String,
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
    /// Checks privileges and tools, removes stale testbeds, and builds a new one.
    pub fn create() -> Result<Testbed> {
        check_available()?;
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

    fn build(&mut self) -> Result<()> {
        let n = self.names.clone();
        ip(&["netns", "add", &n.client_ns])?;
        ip(&["netns", "add", &n.server_ns])?;
        ip(&[
            "link",
            "add",
            &n.client_if,
            "netns",
            &n.client_ns,
            "type",
            "veth",
            "peer",
            "name",
            &n.server_if,
            "netns",
            &n.server_ns,
        ])?;
        for (ns, dev, addr) in [
            (&n.client_ns, &n.client_if, CLIENT_IP),
            (&n.server_ns, &n.server_if, SERVER_IP),
        ] {
            ip(&[
                "-n",
                ns,
                "addr",
                "add",
                &format!("{addr}/{PREFIX_LEN}"),
                "dev",
                dev,
            ])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
            ip(&["-n", ns, "link", "set", dev, "up"])?;
        }
        self.napi_mode = self.enable_napi();
        // ICMP ping sockets for the ping test, in the client namespace only (a per-namespace
        // sysctl: the machine's own setting is untouched).
        let allow = "net.ipv4.ping_group_range=0 2147483647";
        if let Err(e) = ip(&["netns", "exec", &n.client_ns, "sysctl", "-qw", allow]) {
            self.warnings
                .push(format!("ICMP ping sockets not enabled in the testbed: {e}"));
        }
        Ok(())
    }

    /// GRO on, TSO off on both ends; a missing ethtool leaves veth on the backlog path.
    fn enable_napi(&mut self) -> bool {
        let n = self.names.clone();
        for (ns, dev) in [(&n.client_ns, &n.client_if), (&n.server_ns, &n.server_if)] {
            let args = [
                "netns", "exec", ns, "ethtool", "-K", dev, "gro", "on", "tso", "off",
            ];
            if let Err(e) = ip(&args) {
                self.warnings.push(format!(
                    "veth NAPI mode not enabled ({e}); traffic takes the per-CPU backlog path and \
                     NAPI settings have no effect (install ethtool)"
                ));
                return false;
            }
        }
        true
    }

    /// The names in use.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// `/run/netns/<client namespace>`.
    pub fn client_netns(&self) -> PathBuf {
        Path::new(NETNS_DIR).join(&self.names.client_ns)
    }

    /// `/run/netns/<server namespace>`.
    pub fn server_netns(&self) -> PathBuf {
        Path::new(NETNS_DIR).join(&self.names.server_ns)
    }

    /// True when GRO on / TSO off was applied to both veth ends.
    pub fn napi_mode(&self) -> bool {
        self.napi_mode
    }

    /// Runs `program args…` inside one side's namespace (`ip netns exec`), e.g. to read or
    /// set `/sys/class/net/<veth>/gro_flush_timeout` there; returns its stdout.
    pub fn exec(&self, side: Side, program: &str, args: &[&str]) -> Result<String> {
        let ns = match side {
            Side::Client => &self.names.client_ns,
            Side::Server => &self.names.server_ns,
        };
        let mut all = vec!["netns", "exec", ns.as_str(), program];
        all.extend_from_slice(args);
        ip(&all)
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
    if !Path::new(NETNS_DIR).join(name).exists() {
        return Ok(());
    }
    ip(&["netns", "del", name]).map(|_| ())
}

/// Root and `ip` are needed; says which is missing.
pub fn check_available() -> Result<()> {
    if crate::sys::euid() != 0 {
        return Err(BenchError::TestbedUnavailable(
            "creating network namespaces needs root".into(),
        ));
    }
    ip(&["-V"])
        .map_err(|e| BenchError::TestbedUnavailable(format!("`ip` (iproute2) is needed: {e}")))?;
    Ok(())
}

/// Testbed namespaces present now.
pub fn list() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| owner_of(n).is_some())
        .collect();
    names.sort();
    names
}

/// Removes testbed namespaces whose creating process no longer runs; returns their names.
pub fn remove_stale() -> Result<Vec<String>> {
    let alive = |pid: u32| Path::new("/proc").join(pid.to_string()).exists();
    let stale: Vec<String> = list()
        .into_iter()
        .filter(|n| owner_of(n).is_some_and(|p| !alive(p)))
        .collect();
    for name in &stale {
        remove_netns(name)?;
    }
    Ok(stale)
}

/// Runs `ip ARGS`, returning stdout; a failure carries stderr.
fn ip(args: &[&str]) -> Result<String> {
    let command = format!("ip {}", args.join(" "));
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| BenchError::Command {
            command: command.clone(),
            detail: e.to_string(),
        })?;
    if !out.status.success() {
        let detail = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(BenchError::Command { command, detail });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
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
