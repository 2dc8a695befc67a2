//! The client side of the control protocol: negotiate a test with a `nictune serve`, mark
//! the window, and collect the server's own accounting.

use crate::accounting::Work;
use crate::error::{BenchError, Result};
use crate::net::server::ServerReport;
use crate::protocol::{self, Reply, Request, VERSION};
use crate::run::far::FarReport;
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

/// The longest the client waits for any control reply.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// An open control connection with a test negotiated.
#[derive(Debug)]
pub struct PeerSession {
    peer: String,
    writer: TcpStream,
    reader: BufReader<TcpStream>,
    data: SocketAddr,
}

impl PeerSession {
    /// Connects, authenticates and starts `spec` on the peer.
    pub fn open(target: &PeerTarget, spec: &BenchSpec) -> Result<PeerSession> {
        let peer = target.addr.to_string();
        let io = |e| BenchError::socket("talking to", target.addr.to_string(), e);
        let writer = connect_from(target.client_netns.as_deref(), target.addr).map_err(io)?;
        writer.set_read_timeout(Some(REPLY_TIMEOUT)).map_err(io)?;
        writer.set_nodelay(true).map_err(io)?;
        let reader = BufReader::new(writer.try_clone().map_err(io)?);
        let mut s = PeerSession {
            peer,
            writer,
            reader,
            data: target.addr,
        };
        s.send(&Request::Hello {
            version: VERSION,
            token: target.token.expose().to_string(),
        })?;
        match s.recv()? {
            Reply::Welcome { version: VERSION } => {}
            other => return Err(s.unexpected(other)),
        }
        s.send(&Request::Start { spec: spec.clone() })?;
        match s.recv()? {
            Reply::Ready { port } => s.data.set_port(port),
            other => return Err(s.unexpected(other)),
        }
        Ok(s)
    }

    /// Where the clients connect.
    pub fn data_addr(&self) -> SocketAddr {
        self.data
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
        match self.recv()? {
            Reply::Report(r) => Ok(FarReport {
                accounting: r.accounting,
                server: ServerReport {
                    napi_ids: r.napi_ids,
                    cpus: r.cpus.into_iter().collect(),
                    served: r.served,
                    refused: r.refused,
                },
            }),
            other => Err(self.unexpected(other)),
        }
    }

    fn send(&mut self, msg: &Request) -> Result<()> {
        protocol::send(&mut self.writer, msg)
            .map_err(|e| BenchError::socket("sending to", self.peer.clone(), e))
    }

    fn recv(&mut self) -> Result<Reply> {
        protocol::recv(&mut self.reader)
            .map_err(|e| BenchError::protocol(self.peer.clone(), e.to_string()))
    }

    fn unexpected(&self, reply: Reply) -> BenchError {
        match reply {
            Reply::Error { message } => {
                BenchError::protocol(self.peer.clone(), format!("refused: {message}"))
            }
            other => BenchError::protocol(self.peer.clone(), format!("unexpected reply {other:?}")),
        }
    }
}

/// Connects to `addr` from namespace `netns` (a socket keeps the namespace it was made in,
/// so only the connecting thread has to enter it).
fn connect_from(netns: Option<&Path>, addr: SocketAddr) -> std::io::Result<TcpStream> {
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
