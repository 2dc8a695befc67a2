//! The server side of a run: threads in this process (loopback, testbed) or a `nictune
//! serve` peer behind the control protocol. Either way it is started before the clients,
//! marked when the window opens, and stopped and asked for its report at the end.

use super::route::Route;
use super::{ServerSide, CONNECT_TIMEOUT};
use crate::accounting::{self, Accounting, Sample, Work};
use crate::cancel::{Cancel, POLL_SLICE};
use crate::engine::GRACE;
use crate::error::Result;
use crate::net::server::{self, RunningServer, ServerPlan, ServerReport};
use crate::peer::PeerSession;
use crate::spec::BenchSpec;
use nictune_core::units::Nanos;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The server side: threads in this process, or a peer behind the control protocol.
pub(super) enum Far {
    Local {
        server: Option<RunningServer>,
        /// The sink of the load streams, when the spec has a load.
        load: Option<RunningServer>,
        stop: Cancel,
        before: Option<Box<Sample>>,
        netns: Option<PathBuf>,
        ifs: Vec<String>,
        t0: Instant,
    },
    Peer(Box<PeerSession>),
}

/// What the server side reports at the end.
pub(crate) struct FarReport {
    pub(crate) accounting: Option<Accounting>,
    pub(crate) server: ServerReport,
    /// Whose host-wide sysctls the server side ran under.
    pub(crate) sysctls: FarSysctls,
}

/// The server side's host-wide sysctls.
pub(crate) enum FarSysctls {
    /// A server in this process: this host's.
    ThisHost,
    /// A peer's, as it reported them; `None` when it could not read them.
    Peer(Option<crate::sysctls::Values>),
}

impl Far {
    pub(super) fn start(spec: &BenchSpec, target: ServerSide<'_>, route: &Route) -> Result<Far> {
        if let ServerSide::Peer(p) = target {
            return PeerSession::open(p, spec).map(|s| Far::Peer(Box::new(s)));
        }
        let stop = Cancel::new();
        let deadline = Instant::now()
            + CONNECT_TIMEOUT
            + Duration::from_nanos((spec.total() + GRACE).0)
            + POLL_SLICE * 5;
        let plan = |load| ServerPlan {
            netns: route.server_netns.clone(),
            ..ServerPlan::of(
                spec,
                load,
                SocketAddr::new(route.server_ip, 0),
                deadline,
                stop.clone(),
            )
        };
        // ICMP: the peer's kernel answers echo.
        let server = (!spec.icmp)
            .then(|| server::start(plan(false)))
            .transpose()?;
        let load = match spec.load.map(|_| server::start(plan(true))).transpose() {
            Ok(l) => l,
            Err(e) => {
                stop.cancel();
                server.map(RunningServer::join);
                return Err(e);
            }
        };
        Ok(Far::Local {
            server,
            load,
            stop,
            before: None,
            netns: route.server_netns.clone(),
            ifs: route.server_ifs.clone(),
            t0: Instant::now(),
        })
    }

    pub(super) fn data_addr(&self, route: &Route) -> SocketAddr {
        match self {
            Far::Local {
                server: Some(s), ..
            } => s.addr,
            Far::Local { server: None, .. } => SocketAddr::new(route.server_ip, 0),
            Far::Peer(p) => p.data_addr(),
        }
    }

    /// Where the load streams connect (`None` without a load).
    pub(super) fn load_addr(&self) -> Option<SocketAddr> {
        match self {
            Far::Local { load, .. } => load.as_ref().map(|l| l.addr),
            Far::Peer(p) => p.load_addr(),
        }
    }

    /// The window starts: take the server side's "before" sample.
    pub(super) fn mark(&mut self) -> Result<()> {
        match self {
            Far::Local {
                before, netns, t0, ..
            } => {
                *t0 = Instant::now();
                *before = Some(Box::new(Sample::parse(&accounting::read_live(
                    netns.as_ref(),
                )?)?));
                Ok(())
            }
            Far::Peer(p) => p.measure(),
        }
    }

    /// The window is over (or the run failed, `work` = None): stop the server side and
    /// collect its report.
    pub(super) fn finish(self, work: Option<Work>) -> Result<FarReport> {
        match self {
            Far::Local {
                server,
                load,
                stop,
                before,
                netns,
                ifs,
                t0,
            } => {
                stop.cancel();
                let accounting = match (before, work) {
                    (Some(b), Some(w)) => {
                        let after = Sample::parse(&accounting::read_live(netns.as_ref())?)?;
                        let elapsed = Nanos(t0.elapsed().as_nanos() as u64);
                        Some(accounting::account(
                            &b,
                            &after,
                            elapsed,
                            crate::sys::user_hz(),
                            w,
                            Some(&ifs),
                        ))
                    }
                    _ => None,
                };
                let server = server
                    .map(RunningServer::join)
                    .transpose()?
                    .unwrap_or_default();
                load.map(RunningServer::join).transpose()?;
                Ok(FarReport {
                    accounting,
                    server,
                    sysctls: FarSysctls::ThisHost,
                })
            }
            Far::Peer(p) => p.finish(work),
        }
    }
}
