//! `nictune serve`: answers bounded tests for a `nictune bench --peer` client on another
//! machine and returns its own accounting.
//!
//! It must not become an open traffic reflector, so it:
//! * listens only on the address it is given;
//! * runs nothing before the client proves it knows the shared [`Token`];
//! * runs one test at a time (others are told `peer busy: a test from ADDR is running, retry
//!   in ~Ns`); an unauthenticated connection never holds the test slot;
//! * keeps at most [`MAX_PENDING`] unauthenticated connections, each cut off after
//!   [`HELLO_TIMEOUT`] in total (a client dripping bytes cannot hold a place); when all are
//!   taken a new connection cuts off the oldest, so idle connections cannot lock real
//!   clients out (a real client authenticates within one round trip);
//! * accepts only specs within [`Limits::SERVE`] (duration, connections and load streams,
//!   sizes, rate) and stops answering a test at its cap on bytes sent;
//! * answers data traffic only from the control connection's address, and stops every
//!   test at its deadline even if the client vanishes;
//! * changes nothing on its host unless started with a [`ChangeHandler`]
//!   (`serve --allow-changes IFACE`), and then for one client at a time, putting everything
//!   back when that client releases, disconnects or falls silent ([`crate::changes`]).

use crate::accounting::{self, Sample, Work};
use crate::cancel::{Cancel, POLL_SLICE};
use crate::changes::{self, ChangeHandler};
use crate::engine::GRACE;
use crate::error::{BenchError, Result};
use crate::net::server::{self, RunningServer, ServerPlan};
use crate::protocol::{self, PeerReport, Reply, Request, WireError, BUSY, VERSION};
use crate::spec::{BenchSpec, Limits, Sides};
use crate::sys;
use crate::token::Token;
use nictune_core::units::Nanos;
use std::collections::VecDeque;
use std::io::BufReader;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Connections allowed to be open but not yet authenticated.
pub const MAX_PENDING: usize = 8;
/// Time a new connection has to send a valid hello.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(2);
/// Time between welcome and start (the client sends start as soon as it reads welcome).
const START_TIMEOUT: Duration = Duration::from_secs(5);

/// How `serve` runs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The control listener's address; data listeners bind to its IP with a free port.
    pub bind: SocketAddr,
    /// The secret every client's hello must carry.
    pub token: Token,
    /// What a client's spec may ask for ([`Limits::SERVE`] for `nictune serve`).
    pub limits: Limits,
    /// Set to stop serving (Ctrl-C, SIGTERM); an open change session ends and is put back.
    pub cancel: Cancel,
    /// Stop after this many sessions (tests); `None` = until cancelled.
    pub max_sessions: Option<u64>,
    /// Time a new connection has to authenticate ([`HELLO_TIMEOUT`] unless testing).
    pub hello_timeout: Duration,
    /// What clients may change on this host (`--allow-changes`); `None`: nothing.
    pub changes: Option<Arc<dyn ChangeHandler>>,
}

/// Binds the control address (so the caller learns a port-0 choice before serving).
pub fn bind(addr: SocketAddr) -> Result<TcpListener> {
    TcpListener::bind(addr).map_err(|e| BenchError::socket("binding", addr.to_string(), e))
}

/// Serves on `listener` until cancelled; `log` receives one line per event.
pub fn serve(listener: TcpListener, cfg: &ServeConfig, log: &(dyn Fn(&str) + Sync)) -> Result<()> {
    let addr = listener
        .local_addr()
        .map_err(|e| BenchError::socket("reading address of", "control listener", e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| BenchError::socket("configuring", addr.to_string(), e))?;
    log(&format!("serving on {addr}"));
    let state = Arc::new(State::default());
    let mut sessions = 0u64;
    std::thread::scope(|scope| {
        while !cfg.cancel.is_cancelled() && cfg.max_sessions.is_none_or(|m| sessions < m) {
            let (stream, from) = match listener.accept() {
                Ok(x) => x,
                Err(_) => {
                    let _ = crate::sys::poll(listener.as_raw_fd(), false, POLL_SLICE);
                    continue;
                }
            };
            sessions += 1;
            let id = sessions;
            match stream.try_clone() {
                Ok(handle) => {
                    if let Some(old) = state.admit(id, handle) {
                        log(&format!(
                            "{old}: cut off unauthenticated: {MAX_PENDING} others were waiting"
                        ));
                    }
                }
                Err(e) => {
                    log(&format!("{from}: refused: {e}"));
                    continue;
                }
            }
            let state = Arc::clone(&state);
            scope.spawn(move || {
                let outcome = session(stream, from, id, cfg, (&state, log));
                match outcome {
                    Ok(()) => log(&format!("{from}: test done")),
                    Err(e) => log(&format!("{from}: {e}")),
                }
            });
        }
    });
    Ok(())
}

/// What the sessions share: the unauthenticated connections and the one test slot.
#[derive(Debug, Default)]
struct State {
    /// Unauthenticated connections by session id, oldest first.
    pending: Mutex<VecDeque<(u64, TcpStream)>>,
    running: Mutex<Option<Running>>,
    /// The client holding the change session, if any.
    changing: Mutex<Option<SocketAddr>>,
}

/// The test holding the slot: who asked and when it should be over.
#[derive(Debug, Clone, Copy)]
struct Running {
    from: SocketAddr,
    until: Instant,
}

impl State {
    /// Registers connection `id` as unauthenticated; when [`MAX_PENDING`] already are, cuts
    /// the oldest off and returns its address.
    fn admit(&self, id: u64, stream: TcpStream) -> Option<SocketAddr> {
        let mut pending = lock(&self.pending);
        let evicted = match pending.len() >= MAX_PENDING {
            true => pending.pop_front().map(|(_, old)| {
                let _ = old.shutdown(Shutdown::Both);
                old.peer_addr().ok()
            }),
            false => None,
        };
        pending.push_back((id, stream));
        evicted.flatten()
    }

    /// Connection `id` has authenticated (or given up): it no longer counts as pending.
    fn leave(&self, id: u64) {
        lock(&self.pending).retain(|(i, _)| *i != id);
    }

    /// Takes the test slot for `from` for at most `hold`, or says who holds it.
    fn claim(&self, from: SocketAddr, hold: Duration) -> std::result::Result<Slot<'_>, String> {
        let mut running = lock(&self.running);
        if let Some(r) = *running {
            let left = r.until.saturating_duration_since(Instant::now());
            let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
            return Err(format!(
                "{BUSY} a test from {} is running, retry in ~{}s",
                r.from,
                secs.max(1)
            ));
        }
        *running = Some(Running {
            from,
            until: Instant::now() + hold,
        });
        Ok(Slot(self))
    }
}

/// Holds the one test slot; frees it when dropped.
struct Slot<'a>(&'a State);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *lock(&self.0.running) = None;
    }
}

/// Locks `m`, also after a session thread panicked while holding it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

struct Control {
    peer: SocketAddr,
    writer: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Control {
    fn recv(&mut self) -> Result<Request> {
        protocol::recv(&mut self.reader)
            .map_err(|e: WireError| BenchError::protocol(self.peer.to_string(), e.to_string()))
    }

    fn send(&mut self, reply: &Reply) -> Result<()> {
        protocol::send(&mut self.writer, reply)
            .map_err(|e| BenchError::socket("replying to", self.peer.to_string(), e))
    }

    /// Tells the client why, then fails the session with the same reason.
    fn refuse(&mut self, message: impl Into<String>) -> BenchError {
        let message = message.into();
        let _ = self.send(&Reply::Error {
            message: message.clone(),
        });
        BenchError::protocol(self.peer.to_string(), format!("refused: {message}"))
    }

    fn timeout(&self, t: Duration) -> Result<()> {
        self.writer
            .set_read_timeout(Some(t))
            .map_err(|e| BenchError::socket("configuring", self.peer.to_string(), e))
    }
}

fn session(
    stream: TcpStream,
    peer: SocketAddr,
    id: u64,
    cfg: &ServeConfig,
    (state, log): (&State, &(dyn Fn(&str) + Sync)),
) -> Result<()> {
    let io = |e| BenchError::socket("configuring", peer.to_string(), e);
    stream.set_nonblocking(false).map_err(io)?;
    stream
        .set_read_timeout(Some(cfg.hello_timeout))
        .map_err(io)?;
    stream
        .set_write_timeout(Some(cfg.hello_timeout))
        .map_err(io)?;
    let reader = BufReader::new(stream.try_clone().map_err(io)?);
    let watchdog = hello_watchdog(stream.try_clone().map_err(io)?, cfg.hello_timeout);
    let mut c = Control {
        peer,
        writer: stream,
        reader,
    };
    let authed = authenticate(&mut c, cfg);
    drop(watchdog);
    state.leave(id);
    authed?;
    c.send(&Reply::Welcome { version: VERSION })?;
    c.timeout(START_TIMEOUT)?;
    let spec = match c.recv()? {
        Request::Start { spec } => spec,
        Request::Claim { idle_ms } => return change_session(&mut c, idle_ms, cfg, state, log),
        other => return Err(c.refuse(format!("expected start, got {other:?}"))),
    };
    let checked = spec
        .validate(&cfg.limits)
        .and_then(|()| match sys::allowed_cpus() {
            Ok(allowed) => spec.check_cpus(&allowed, Sides::Server),
            // Unreadable affinity: pinning itself will say what is wrong.
            Err(_) => Ok(()),
        });
    if let Err(e) = checked {
        return Err(c.refuse(e.to_string()));
    }
    let slot = match state.claim(peer, Duration::from_nanos((spec.total() + GRACE).0)) {
        Ok(slot) => slot,
        Err(busy) => return Err(c.refuse(busy)),
    };
    run_test(&mut c, &spec, cfg, slot)
}

/// A change session for the client on `c`, if this server takes changes and no other
/// client holds the session.
fn change_session(
    c: &mut Control,
    idle_ms: u64,
    cfg: &ServeConfig,
    state: &State,
    log: &(dyn Fn(&str) + Sync),
) -> Result<()> {
    let Some(handler) = cfg.changes.as_deref() else {
        return Err(c.refuse(
            "this server changes nothing on its host: start it with --allow-changes IFACE",
        ));
    };
    {
        let mut holder = lock(&state.changing);
        if let Some(other) = *holder {
            return Err(c.refuse(format!(
                "{BUSY} {other} holds the change session; one client changes this host at a time"
            )));
        }
        *holder = Some(c.peer);
    }
    log(&format!("{}: change session opened", c.peer));
    let (ended, restored) = changes::serve_session(
        &c.writer,
        &mut c.reader,
        handler,
        (c.peer, idle_ms),
        &cfg.cancel,
    );
    *lock(&state.changing) = None;
    match restored {
        Ok(lines) => {
            log(&format!("{}: change session ended ({ended})", c.peer));
            for line in lines {
                log(&format!("{}: restored {line}", c.peer));
            }
            Ok(())
        }
        Err(e) => Err(BenchError::protocol(
            c.peer.to_string(),
            format!(
                "change session ended ({ended}) but the settings could not all be put back: \
                 {e}; run `nictune revert` on this host"
            ),
        )),
    }
}

/// Shuts `stream` down unless the returned sender is dropped within `timeout`.
fn hello_watchdog(stream: TcpStream, timeout: Duration) -> mpsc::Sender<()> {
    let (tx, rx) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        if rx.recv_timeout(timeout) == Err(mpsc::RecvTimeoutError::Timeout) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    });
    tx
}

fn authenticate(c: &mut Control, cfg: &ServeConfig) -> Result<()> {
    match c.recv() {
        Ok(Request::Hello { version, token }) if cfg.token.matches(&token) => {
            if version == VERSION {
                Ok(())
            } else {
                Err(c.refuse(format!(
                    "protocol version {version} not supported; this server speaks {VERSION}"
                )))
            }
        }
        Ok(Request::Hello { .. }) => Err(c.refuse("authentication failed")),
        Ok(_) => Err(c.refuse("authentication required first")),
        Err(e) => Err(c.refuse(e.to_string())),
    }
}

/// Runs the test; the slot is freed before the report goes out, so a client that starts its
/// next test as soon as it has the report is not told the server is busy with the last one.
fn run_test(c: &mut Control, spec: &BenchSpec, cfg: &ServeConfig, slot: Slot<'_>) -> Result<()> {
    let stop = Cancel::new();
    let budget = Duration::from_nanos((spec.total() + GRACE).0) + Duration::from_secs(10);
    let deadline = Instant::now() + budget;
    let plan = |load| ServerPlan {
        allowed_peer: Some(c.peer.ip()),
        max_sent: cfg.limits.max_sent.map(|b| b.0),
        ..ServerPlan::of(
            spec,
            load,
            SocketAddr::new(cfg.bind.ip(), 0),
            deadline,
            stop.clone(),
        )
    };
    let server = match server::start(plan(false)) {
        Ok(s) => s,
        Err(e) => return Err(c.refuse(e.to_string())),
    };
    let load = match spec.load.map(|_| server::start(plan(true))).transpose() {
        Ok(l) => l,
        Err(e) => {
            stop.cancel();
            let _ = server.join();
            return Err(c.refuse(e.to_string()));
        }
    };
    c.send(&Reply::Ready {
        port: server.addr.port(),
        load_port: load.as_ref().map(|l| l.addr.port()),
    })?;
    c.timeout(budget)?;
    let result = control_loop(c, cfg);
    stop.cancel();
    let served = server.join()?;
    let load_refused = load
        .map(RunningServer::join)
        .transpose()?
        .map_or(0, |l| l.refused);
    let (accounting, _) = result?;
    let report = PeerReport {
        accounting,
        napi_ids: served.napi_ids,
        cpus: served.cpus.into_iter().collect(),
        served: served.served,
        refused: served.refused + load_refused,
        capped: served.capped,
        sysctls: crate::sysctls::read_host().values,
    };
    drop(slot);
    c.send(&Reply::Report(Box::new(report)))
}

/// Handles measure and stop; returns the server-side accounting.
fn control_loop(
    c: &mut Control,
    cfg: &ServeConfig,
) -> Result<(Option<accounting::Accounting>, ())> {
    let mut before: Option<(Sample, Instant)> = None;
    loop {
        if cfg.cancel.is_cancelled() {
            return Err(c.refuse("server is shutting down"));
        }
        match c.recv()? {
            Request::Measure if before.is_none() => {
                before = Some((
                    Sample::parse(&accounting::read_live(None)?)?,
                    Instant::now(),
                ));
            }
            Request::Stop {
                transactions,
                bytes,
            } => {
                let Some((b, t0)) = before else {
                    return Ok((None, ()));
                };
                let after = Sample::parse(&accounting::read_live(None)?)?;
                let elapsed = Nanos(t0.elapsed().as_nanos() as u64);
                let work = Work {
                    transactions,
                    bytes,
                };
                return Ok((
                    Some(accounting::account(
                        &b,
                        &after,
                        elapsed,
                        crate::sys::user_hz(),
                        work,
                        None,
                    )),
                    (),
                ));
            }
            other => return Err(c.refuse(format!("unexpected {other:?}"))),
        }
    }
}
