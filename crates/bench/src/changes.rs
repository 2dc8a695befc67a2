//! Changes a `nictune serve` makes on its own host for a client: the server half of the
//! change session ([`crate::protocol`]'s `claim` … `release`) and the client that drives it.
//!
//! What is changed, and how, is the [`ChangeHandler`]'s business (the binary journals every
//! change through the apply engine, on the one interface `serve --allow-changes` names).
//! This module owns the session's rules: one session at a time, and everything the session
//! changed put back when the client releases it, closes the connection, falls silent for
//! longer than its idle limit, or when the server stops.

use crate::cancel::{Cancel, POLL_SLICE};
use crate::error::{BenchError, Result};
use crate::peer::PeerTarget;
use crate::protocol::{self, Grant, Reply, Request, WireError, VERSION};
use std::collections::BTreeMap;
use std::io::BufReader;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest silence a server lets a change session have before it puts everything back
/// (a client may ask for less).
pub const MAX_IDLE: Duration = Duration::from_secs(120);
/// What [`ChangeClient`] asks for; it pings every third of it.
pub const CLIENT_IDLE: Duration = Duration::from_secs(30);
/// How long a change may take on the server: a driver reload waits for the link to come
/// back (≈3 s on the emulated NICs, up to the apply engine's carrier wait on real ones).
const CHANGE_TIMEOUT: Duration = Duration::from_secs(120);

/// Opens change sessions for `serve --allow-changes`.
pub trait ChangeHandler: Send + Sync + std::fmt::Debug {
    /// What a session may change.
    fn grant(&self) -> Grant;
    /// Opens a session for `client` (takes the host's change locks for its lifetime).
    fn open(&self, client: SocketAddr) -> std::result::Result<Box<dyn ChangeSession + '_>, String>;
}

/// One client's changes, in place until [`ChangeSession::revert`].
pub trait ChangeSession {
    /// The current values of catalog `keys` on the granted interface.
    fn read(&mut self, keys: &[String]) -> std::result::Result<BTreeMap<String, String>, String>;
    /// Puts back the session's previous change, then applies `settings` (`KEY=VALUE`) as one
    /// journaled transaction; one line per setting changed, and the values read back other
    /// than written.
    fn change(&mut self, settings: &[String]) -> std::result::Result<Changed, String>;
    /// Puts back everything the session changed; one line per setting restored.
    fn revert(&mut self) -> std::result::Result<Vec<String>, String>;
}

/// What one change of a session did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changed {
    /// One line per setting written (`eth1 coalesce.rx-usecs: 3 → 50`).
    pub lines: Vec<String>,
    /// The values that read back other than written: kept by the driver or adjusted.
    pub read_back: Vec<nictune_tune::readback::HostReadBack>,
}

/// Why a change session ended, for the server's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The client sent [`crate::protocol::Request::Release`].
    Released,
    /// The client closed the connection.
    Closed,
    /// The client sent nothing for this long (the session's granted `idle_ms`).
    Idle(Duration),
    /// The server is shutting down.
    ServerStopping,
    /// The session could not be opened, the connection failed, or the client sent a malformed
    /// message; why.
    Broken(String),
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::Released => f.write_str("released by the client"),
            Ended::Closed => f.write_str("the client closed the connection"),
            Ended::Idle(d) => write!(f, "the client was silent for {} s", d.as_secs()),
            Ended::ServerStopping => f.write_str("the server is stopping"),
            Ended::Broken(why) => write!(f, "the connection failed: {why}"),
        }
    }
}

/// Runs one change session on an authenticated control connection whose client sent
/// `claim`; returns how it ended and what was put back. Everything the session changed is
/// put back before this returns, however it ends.
pub(crate) fn serve_session(
    stream: &TcpStream,
    reader: &mut BufReader<TcpStream>,
    handler: &dyn ChangeHandler,
    (client, idle_ms): (SocketAddr, u64),
    cancel: &Cancel,
) -> (Ended, std::result::Result<Vec<String>, String>) {
    let mut writer = stream;
    let mut grant = handler.grant();
    let idle = Duration::from_millis(idle_ms.max(1)).min(MAX_IDLE);
    grant.idle_ms = idle.as_millis() as u64;
    let mut session = match handler.open(client) {
        Ok(s) => s,
        Err(e) => {
            let _ = protocol::send(&mut writer, &Reply::Error { message: e.clone() });
            return (Ended::Broken(e), Ok(Vec::new()));
        }
    };
    if let Err(e) = protocol::send(&mut writer, &Reply::Granted(grant)) {
        return (Ended::Broken(e.to_string()), session.revert());
    }
    let _ = stream.set_write_timeout(Some(CHANGE_TIMEOUT));
    let mut heard = Instant::now();
    let ended = loop {
        if cancel.is_cancelled() {
            break Ended::ServerStopping;
        }
        if heard.elapsed() >= idle {
            break Ended::Idle(idle);
        }
        let slice = POLL_SLICE.min(idle.saturating_sub(heard.elapsed()));
        match crate::sys::poll(stream.as_raw_fd(), false, slice) {
            Ok(false) => continue,
            Ok(true) => {}
            Err(e) => break Ended::Broken(e.to_string()),
        }
        // Something arrived: a whole line follows at once from a live client.
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let request = match protocol::recv::<Request, _>(reader) {
            Ok(r) => r,
            Err(WireError::Closed) => break Ended::Closed,
            Err(e) => break Ended::Broken(e.to_string()),
        };
        heard = Instant::now();
        let reply = match request {
            Request::Ping => continue,
            Request::Release => break Ended::Released,
            Request::Read { keys } => session.read(&keys).map(|values| Reply::Values { values }),
            Request::Change { settings } => session.change(&settings).map(|c| Reply::Changed {
                changes: c.lines,
                read_back: c.read_back,
            }),
            other => Err(format!("unexpected {other:?} in a change session")),
        };
        let reply = reply.unwrap_or_else(|message| Reply::Error { message });
        if let Err(e) = protocol::send(&mut writer, &reply) {
            break Ended::Broken(e.to_string());
        }
    };
    let restored = session.revert();
    if ended == Ended::Released {
        let reply = match &restored {
            Ok(lines) => Reply::Released {
                restored: lines.clone(),
            },
            Err(e) => Reply::Error {
                message: format!("putting the settings back failed: {e}"),
            },
        };
        let _ = protocol::send(&mut writer, &reply);
    }
    (ended, restored)
}

/// The client of a change session: changes settings on a `serve --allow-changes` peer.
///
/// A thread pings the peer while the session is open, so a session stays alive through
/// long measurements and ends within [`CLIENT_IDLE`] of this process going away without a
/// word; a process that exits closes the connection, which ends it at once. Dropping the
/// client releases the session (the peer puts everything back).
#[derive(Debug)]
pub struct ChangeClient {
    peer: String,
    writer: Arc<Mutex<TcpStream>>,
    reader: BufReader<TcpStream>,
    grant: Grant,
    stop_pings: Option<std::sync::mpsc::Sender<()>>,
    released: bool,
}

impl ChangeClient {
    /// Connects, authenticates and claims the peer's change session.
    pub fn open(target: &PeerTarget) -> Result<ChangeClient> {
        let peer = target.addr.to_string();
        let io = |e| BenchError::socket("talking to", target.addr.to_string(), e);
        let stream =
            crate::peer::connect_from(target.client_netns.as_deref(), target.addr).map_err(io)?;
        stream.set_nodelay(true).map_err(io)?;
        let reader = BufReader::new(stream.try_clone().map_err(io)?);
        let mut c = ChangeClient {
            peer,
            writer: Arc::new(Mutex::new(stream)),
            reader,
            grant: Grant {
                iface: String::new(),
                driver: None,
                reload: false,
                idle_ms: 0,
            },
            stop_pings: None,
            released: true,
        };
        c.send(&Request::Hello {
            version: VERSION,
            token: target.token.expose().to_string(),
        })?;
        match c.recv("welcome", Duration::from_secs(10))? {
            Reply::Welcome { version: VERSION } => {}
            other => return Err(c.unexpected(other)),
        }
        c.send(&Request::Claim {
            idle_ms: CLIENT_IDLE.as_millis() as u64,
        })?;
        c.grant = match c.recv("granted", Duration::from_secs(30))? {
            Reply::Granted(g) => g,
            other => return Err(c.unexpected(other)),
        };
        c.released = false;
        c.stop_pings = Some(c.start_pings());
        Ok(c)
    }

    /// What the peer lets this session change.
    pub fn grant(&self) -> &Grant {
        &self.grant
    }

    /// The current values of `keys` on the peer's interface.
    pub fn read(&mut self, keys: &[String]) -> Result<BTreeMap<String, String>> {
        self.send(&Request::Read {
            keys: keys.to_vec(),
        })?;
        match self.recv("values", CHANGE_TIMEOUT)? {
            Reply::Values { values } => Ok(values),
            other => Err(self.unexpected(other)),
        }
    }

    /// Puts back the previous change, then applies `settings` on the peer; what changed, and
    /// what read back other than written.
    pub fn change(&mut self, settings: &[String]) -> Result<Changed> {
        self.send(&Request::Change {
            settings: settings.to_vec(),
        })?;
        match self.recv("changed", CHANGE_TIMEOUT)? {
            Reply::Changed { changes, read_back } => Ok(Changed {
                lines: changes,
                read_back,
            }),
            other => Err(self.unexpected(other)),
        }
    }

    /// Ends the session: the peer puts back everything; what it restored.
    pub fn release(mut self) -> Result<Vec<String>> {
        self.release_inner()
    }

    fn release_inner(&mut self) -> Result<Vec<String>> {
        if self.released {
            return Ok(Vec::new());
        }
        self.released = true;
        drop(self.stop_pings.take());
        self.send(&Request::Release)?;
        match self.recv("released", CHANGE_TIMEOUT)? {
            Reply::Released { restored } => Ok(restored),
            other => Err(self.unexpected(other)),
        }
    }

    fn start_pings(&self) -> std::sync::mpsc::Sender<()> {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let writer = Arc::clone(&self.writer);
        let every = Duration::from_millis(self.grant.idle_ms / 3).max(Duration::from_millis(100));
        std::thread::spawn(move || {
            while rx.recv_timeout(every) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                let mut w = writer.lock().unwrap_or_else(|p| p.into_inner());
                if protocol::send(&mut *w, &Request::Ping).is_err() {
                    return;
                }
            }
        });
        tx
    }

    fn send(&mut self, msg: &Request) -> Result<()> {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        protocol::send(&mut *w, msg)
            .map_err(|e| BenchError::socket("sending to", self.peer.clone(), e))
    }

    fn recv(&mut self, awaited: &'static str, wait: Duration) -> Result<Reply> {
        let peer = self.peer.clone();
        self.reader
            .get_ref()
            .set_read_timeout(Some(wait))
            .map_err(|e| BenchError::socket("configuring", peer.clone(), e))?;
        protocol::recv(&mut self.reader).map_err(|e| match e {
            WireError::Io(io) if crate::peer::is_timeout(&io) => BenchError::PeerSilent {
                peer,
                awaited,
                waited: wait,
            },
            other => BenchError::protocol(peer, other.to_string()),
        })
    }

    fn unexpected(&self, reply: Reply) -> BenchError {
        crate::peer::refusal(&self.peer, reply)
    }
}

impl Drop for ChangeClient {
    /// Releases the session; if the peer cannot be told, closing the connection (which
    /// happens next) ends the session on the peer all the same.
    fn drop(&mut self) {
        let _ = self.release_inner();
    }
}

/// A tune's far end ([`nictune_tune::ends::BothEnds`]) is a change session.
impl nictune_tune::ends::PeerSide for ChangeClient {
    fn read(&mut self, keys: &[String]) -> std::result::Result<BTreeMap<String, String>, String> {
        ChangeClient::read(self, keys).map_err(|e| e.to_string())
    }

    fn change(
        &mut self,
        settings: &[String],
    ) -> std::result::Result<Vec<nictune_tune::readback::HostReadBack>, String> {
        ChangeClient::change(self, settings)
            .map(|c| c.read_back)
            .map_err(|e| e.to_string())
    }
}
