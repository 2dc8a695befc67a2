//! Two guests on one link: the real-driver testbed for tuning both ends of a link, each end
//! a guest running the same emulated NIC under Linux's own driver.
//!
//! ```text
//!   host, namespace nictune-vm-<pid>-<n>
//!   bridge ntb<pid>x<n> 198.18.1.1/29 ─┬─ tap ── guest "local" eth0 198.18.1.2/29
//!                                      └─ tap ── guest "peer"  eth0 198.18.1.3/29
//! ```
//!
//! The local guest runs the measuring client (`nictune bench --peer`) and takes its
//! settings through `nictune apply` from the agent; the peer guest runs `nictune serve
//! --allow-changes eth0 --allow-reload`, and its settings change through that server's
//! change session, from the host, exactly as a tune of two real hosts changes its peer. The
//! bridge's own address lets the host reach both guests' servers.
//!
//! The pair owns the namespace and the bridge; each guest owns its QEMU and directory.
//! Dropping the pair removes all of it; a killed owner's pair is removed by the next start
//! like a single guest ([`crate::bed::remove_stale`]).

use crate::bed::{self, BedOptions, HostLink, VmBed, HOST_IP, PAIR_PREFIX_LEN, PREFIX};
use crate::error::{Result, VmError};
use crate::hostnet;
use crate::tune::{lock, SharedBed};
use nictune_bench::{BenchResult, BenchSpec, PeerTarget};
use nictune_core::privilege::Privilege;
use nictune_core::progress::Progress;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

/// The measuring guest's address.
pub const LOCAL_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 2);
/// The serving guest's address.
pub const PEER_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 3);
/// Where the measuring guest keeps the serving guest's token.
const TOKEN_FILE: &str = "/run/nictune-peer-token";

/// Two running guests on one bridge.
#[derive(Debug)]
pub struct VmPair {
    /// The guest that measures (and whose settings are "this end").
    pub local: VmBed,
    /// The guest that serves (and whose settings are the peer's).
    pub peer: VmBed,
    netns: String,
    removed: bool,
}

impl VmPair {
    /// Builds the namespace and bridge and boots both guests (one after the other: QEMU is
    /// killed when the thread that started it ends, so both start from this one).
    pub fn create(opts: &BedOptions, privilege: Privilege) -> Result<VmPair> {
        if !privilege.is_root() {
            return Err(VmError::NotRoot);
        }
        bed::remove_stale()?;
        let (pid, n) = (std::process::id(), bed::next_n());
        let netns = format!("{PREFIX}{pid}-{n}");
        let bridge = format!("ntb{pid}x{n}");
        hostnet::create_netns(&netns)?;
        let boot = || -> Result<(VmBed, VmBed)> {
            hostnet::create_bridge(&netns, &bridge, (HOST_IP, PAIR_PREFIX_LEN))?;
            let guest = |guest_ip: Ipv4Addr, mac_last: u8| {
                let link = HostLink::Bridged {
                    netns: netns.clone(),
                    bridge: bridge.clone(),
                    guest_ip,
                    mac_last,
                };
                let opts = BedOptions {
                    link,
                    ..opts.clone()
                };
                VmBed::create(&opts, privilege)
            };
            Ok((guest(LOCAL_IP, 0x02)?, guest(PEER_IP, 0x03)?))
        };
        match boot() {
            Ok((local, peer)) => Ok(VmPair {
                local,
                peer,
                netns,
                removed: false,
            }),
            Err(e) => {
                let _ = hostnet::delete_netns(&netns);
                Err(e)
            }
        }
    }

    /// Starts the peer guest's `nictune serve --allow-changes eth0 --allow-reload` and gives
    /// the local guest its token; the peer as the host reaches it (for its change session).
    pub fn serve(&mut self) -> Result<PeerTarget> {
        let target = self.peer.peer_taking_changes()?;
        self.local.write_token(TOKEN_FILE, &target.token)?;
        Ok(target)
    }

    /// Stops both guests and removes the namespace, reporting failures.
    pub fn destroy(mut self) -> Result<()> {
        self.remove()
    }

    fn remove(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.removed, true) {
            return Ok(());
        }
        let peer = self.peer.remove();
        let local = self.local.remove();
        let ns = hostnet::delete_netns(&self.netns);
        peer.and(local).and(ns)
    }
}

impl Drop for VmPair {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// Measures from inside the local guest: each measurement is one `nictune bench --peer`
/// there against the peer guest's server, its JSON result read back. The client's CPU and
/// interrupts are then the local guest's, the server's the peer guest's: both ends' NICs.
#[derive(Debug)]
pub struct GuestClient<'a> {
    bed: &'a SharedBed<'a>,
    peer: SocketAddr,
}

impl<'a> GuestClient<'a> {
    /// The local guest of a pair, measuring against `peer` (the serving guest).
    pub fn new(local: &'a SharedBed<'a>, peer: SocketAddr) -> GuestClient<'a> {
        GuestClient { bed: local, peer }
    }

    /// The command line for `spec` in the guest.
    pub fn argv(&self, spec: &BenchSpec) -> Vec<String> {
        let secs = |n: nictune_core::units::Nanos| format!("{:.3}", n.as_secs_f64());
        let mut argv: Vec<String> = ["nictune", "bench", spec.test.name(), "--peer"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        argv.push(self.peer.to_string());
        argv.extend(["--token-file".into(), TOKEN_FILE.into()]);
        argv.extend(["--duration".into(), secs(spec.duration)]);
        argv.extend(["--warmup".into(), secs(spec.warmup)]);
        argv.extend(["--connections".into(), spec.connections.to_string()]);
        argv.push("--json".into());
        argv
    }
}

impl nictune_bench::SpecRunner for GuestClient<'_> {
    fn measure(
        &self,
        spec: &BenchSpec,
        _progress: &dyn Progress,
    ) -> nictune_bench::error::Result<BenchResult> {
        let argv = self.argv(spec);
        let args: Vec<&str> = argv.iter().map(String::as_str).collect();
        let timeout = Duration::from_secs_f64((spec.duration + spec.warmup).as_secs_f64() + 60.0);
        let mut bed = lock(self.bed);
        let fail = |detail: String| nictune_bench::BenchError::protocol("the local guest", detail);
        let reply = bed.run(&args, timeout).map_err(|e| fail(e.to_string()))?;
        if reply.code != Some(0) {
            return Err(fail(format!(
                "`{}` exited {}: {}",
                argv.join(" "),
                reply.code.unwrap_or(-1),
                reply.stderr.trim()
            )));
        }
        serde_json::from_str(&reply.stdout)
            .map_err(|e| fail(format!("its result is not a bench result: {e}")))
    }
}
