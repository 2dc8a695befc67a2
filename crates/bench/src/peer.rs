//! The client side of the control protocol: negotiate a test with a `nictune serve`, mark
//! the window, and collect the server's own accounting.

use crate::accounting::Work;
use crate::error::{BenchError, Result};
use crate::net::server::ServerReport;
use crate::protocol::{self, Reply, Request, WireError, BUSY, VERSION};
use crate::run::far::{FarReport, FarSysctls};
use crate::spec::BenchSpec;
use crate::token::Token;
use std::io::BufReader;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A `nictune serve` to measure against.
#[derive(Debug, Clone)]
pub struct PeerTarget {
    /// The control address (`HOST:PORT`).
    pub addr: SocketAddr,
    /// The shared secret the peer's `serve` was started with.
    pub token: Token,
    /// The network namespace the client side runs in (`/run/netns/NAME`): the host side
    /// of the real-driver testbed, whose guest is the peer. `None`: this process's own.
    pub client_netns: Option<PathBuf>,
}

impl PeerTarget {
    /// A peer reached from this process's own namespace.
    pub fn new(addr: SocketAddr, token: Token) -> PeerTarget {
        PeerTarget {
            addr,
            token,
            client_netns: None,
        }
    }
}

/// Default control port of `nictune serve`.
pub const DEFAULT_PORT: u16 = 12_866;

/// The longest the client waits for the welcome and ready replies (the server binds its data
/// listener in between).
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest the client waits for the report after stop on a peer that answered start
/// promptly: the server only samples its counters and joins its data threads (one poll
/// slice), so a silent peer is declared gone this soon after the clients' own grace
/// ([`crate::engine::GRACE`], 0.5 s): 1.5 s after the test's end in all, within the 2 s
/// `bench` promises.
pub const REPORT_TIMEOUT: Duration = Duration::from_millis(1000);
/// A slow peer (an emulated guest) gets this many times its start-to-ready time on top.
const SLOW_PEER_FACTOR: u32 = 10;

/// How long to wait for the report from a peer that took `ready` to answer start: at least
/// [`REPORT_TIMEOUT`], more for a slow peer, never more than the 10 s the client waits for
/// the welcome and ready replies.
pub fn report_timeout(ready: Duration) -> Duration {
    (REPORT_TIMEOUT + ready * SLOW_PEER_FACTOR).min(REPLY_TIMEOUT)
}

/// An open control connection with a test negotiated.
#[derive(Debug)]
pub struct PeerSession {
    peer: String,
    writer: TcpStream,
    reader: BufReader<TcpStream>,
    data: SocketAddr,
    /// Where the load streams connect, when the spec has a load.
    load: Option<SocketAddr>,
    /// How long to wait for the report ([`report_timeout`] of this peer's start).
    report_wait: Duration,
}

impl PeerSession {
    /// Connects, authenticates and starts `spec` on the peer.
    pub fn open(target: &PeerTarget, spec: &BenchSpec) -> Result<PeerSession> {
        let peer = target.addr.to_string();
        let io = |e| BenchError::socket("talking to", target.addr.to_string(), e);
        let writer = connect_from(target.client_netns.as_deref(), target.addr).map_err(io)?;
        writer.set_nodelay(true).map_err(io)?;
        let reader = BufReader::new(writer.try_clone().map_err(io)?);
        let mut s = PeerSession {
            peer,
            writer,
            reader,
            data: target.addr,
            load: None,
            report_wait: REPORT_TIMEOUT,
        };
        s.send(&Request::Hello {
            version: VERSION,
            token: target.token.expose().to_string(),
        })?;
        match s.recv("welcome", REPLY_TIMEOUT)? {
            Reply::Welcome { version: VERSION } => {}
            other => return Err(s.unexpected(other)),
        }
        let started = std::time::Instant::now();
        s.send(&Request::Start { spec: spec.clone() })?;
        match s.recv("ready", REPLY_TIMEOUT)? {
            Reply::Ready { port, load_port } => {
                s.data.set_port(port);
                s.load = load_port.map(|p| SocketAddr::new(target.addr.ip(), p));
            }
            other => return Err(s.unexpected(other)),
        }
        s.report_wait = report_timeout(started.elapsed());
        Ok(s)
    }

    /// Where the clients connect.
    pub fn data_addr(&self) -> SocketAddr {
        self.data
    }

    /// Where the load streams connect.
    pub fn load_addr(&self) -> Option<SocketAddr> {
        self.load
    }

    /// Tells the server the measured window starts now.
    pub fn measure(&mut self) -> Result<()> {
        self.send(&Request::Measure)
    }

    /// Ends the test and returns the server's report.
    pub(crate) fn finish(mut self, work: Option<Work>) -> Result<FarReport> {
        let w = work.unwrap_or_default();
        self.send(&Request::Stop {
            transactions: w.transactions,
            bytes: w.bytes,
        })?;
        match self.recv("report", self.report_wait)? {
            Reply::Report(r) => Ok(FarReport {
                accounting: r.accounting,
                server: ServerReport {
                    napi_ids: r.napi_ids,
                    cpus: r.cpus.into_iter().collect(),
                    served: r.served,
                    refused: r.refused,
                    sent: 0,
                    capped: r.capped,
                },
                sysctls: FarSysctls::Peer((!r.sysctls.is_empty()).then_some(r.sysctls)),
            }),
            other => Err(self.unexpected(other)),
        }
    }

    fn send(&mut self, msg: &Request) -> Result<()> {
        protocol::send(&mut self.writer, msg)
            .map_err(|e| BenchError::socket("sending to", self.peer.clone(), e))
    }

    /// Waits at most `wait` for the `awaited` reply.
    fn recv(&mut self, awaited: &'static str, wait: Duration) -> Result<Reply> {
        let peer = self.peer.clone();
        self.writer
            .set_read_timeout(Some(wait))
            .map_err(|e| BenchError::socket("configuring", peer.clone(), e))?;
        protocol::recv(&mut self.reader).map_err(|e| match e {
            WireError::Io(io) if is_timeout(&io) => BenchError::PeerSilent {
                peer,
                awaited,
                waited: wait,
            },
            other => BenchError::protocol(peer, other.to_string()),
        })
    }

    fn unexpected(&self, reply: Reply) -> BenchError {
        refusal(&self.peer, reply)
    }
}

/// The error for a reply other than the one awaited: the peer's refusal (busy told apart)
/// or a reply out of turn.
pub(crate) fn refusal(peer: &str, reply: Reply) -> BenchError {
    match reply {
        Reply::Error { message } if message.starts_with(BUSY) => BenchError::PeerBusy {
            peer: peer.to_string(),
            detail: message,
        },
        Reply::Error { message } => BenchError::protocol(peer, format!("refused: {message}")),
        other => BenchError::protocol(peer, format!("unexpected reply {other:?}")),
    }
}

/// A read that hit its timeout (`EAGAIN` on Linux sockets with `SO_RCVTIMEO`).
pub(crate) fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Connects to `addr` from namespace `netns` (a socket keeps the namespace it was made in,
/// so only the connecting thread has to enter it).
pub(crate) fn connect_from(netns: Option<&Path>, addr: SocketAddr) -> std::io::Result<TcpStream> {
    let connect = move || TcpStream::connect_timeout(&addr, Duration::from_secs(5));
    let Some(ns) = netns.map(Path::to_path_buf) else {
        return connect();
    };
    std::thread::spawn(move || {
        crate::sys::enter_netns(&ns)?;
        connect()
    })
    .join()
    .unwrap_or_else(|_| Err(std::io::Error::other("the connecting thread panicked")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_peer_gets_longer_for_its_report_within_the_reply_limit() {
        assert_eq!(
            report_timeout(Duration::from_millis(1)),
            Duration::from_millis(1010)
        );
        assert_eq!(
            report_timeout(Duration::from_millis(300)),
            Duration::from_millis(4000)
        );
        assert_eq!(report_timeout(Duration::from_secs(5)), REPLY_TIMEOUT);
    }
}
