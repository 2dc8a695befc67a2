//! The answering side of every test: TCP responders (one thread per connection, as netserver
//! forks one per test), a UDP responder, and a TCP sink for stream. Used for `--loopback`,
//! inside the testbed's server namespace, and by `serve` for a remote peer.
//!
//! Bounded like the client: it stops at its deadline or on cancel, accepts no more than the
//! agreed number of connections, and with `allowed_peer` ignores everyone else.

use super::timed_out;
use crate::cancel::{Cancel, POLL_SLICE};
use crate::error::{BenchError, Result};
use crate::spec::TestKind;
use crate::sys;
use std::collections::BTreeSet;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Instant;

/// What the server side must do.
#[derive(Debug, Clone)]
pub struct ServerPlan {
    /// What to serve: RR answers, stream sink or datagram echo (`Stream` for a load sink).
    pub test: TestKind,
    /// Request size, bytes (what a RR server reads before answering).
    pub request: usize,
    /// Response size, bytes.
    pub response: usize,
    /// Connections to accept before serving; the load's stream count for a load sink.
    pub connections: u32,
    /// CPU to pin the server threads to; `None`: unpinned.
    pub cpu: Option<u32>,
    /// Network namespace to serve from (`/run/netns/NAME`).
    pub netns: Option<PathBuf>,
    /// Where to listen; port 0 picks a free one.
    pub bind: SocketAddr,
    /// Serve only this address (peer mode).
    pub allowed_peer: Option<IpAddr>,
    /// Nothing runs past this.
    pub deadline: Instant,
    /// Set to stop serving at once.
    pub cancel: Cancel,
    /// Stop answering once this many bytes went out in this test (`serve`'s cap).
    pub max_sent: Option<u64>,
}

impl ServerPlan {
    /// The plan for `spec`'s answering side (`load` = false) or its load's sink (`true`),
    /// bound to `bind`, stopping at `deadline` or on `cancel`.
    pub fn of(
        spec: &crate::spec::BenchSpec,
        load: bool,
        bind: SocketAddr,
        deadline: Instant,
        cancel: Cancel,
    ) -> ServerPlan {
        let (test, connections) = match (load, spec.load) {
            (true, Some(l)) => (TestKind::Stream, l.connections),
            _ => (spec.test, spec.connections),
        };
        ServerPlan {
            test,
            request: spec.request_size.0 as usize,
            response: spec.response_size.0 as usize,
            connections,
            cpu: spec.server_cpu,
            netns: None,
            bind,
            allowed_peer: None,
            deadline,
            cancel,
            max_sent: None,
        }
    }
}

/// What the server side saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerReport {
    /// NAPI id of each served socket after its first request.
    pub napi_ids: Vec<u32>,
    /// CPUs the server threads were seen on.
    pub cpus: BTreeSet<u32>,
    /// Requests answered (RR, ping) or bytes received (stream).
    pub served: u64,
    /// Connections or datagrams refused because they came from elsewhere.
    pub refused: u64,
    /// Bytes sent (responses, echoes), counted only under a `max_sent` cap.
    pub sent: u64,
    /// Answering stopped at the plan's `max_sent`.
    pub capped: bool,
}

/// A server running in its own thread.
#[derive(Debug)]
pub struct RunningServer {
    /// The address clients connect to.
    pub addr: SocketAddr,
    handle: JoinHandle<Result<ServerReport>>,
}

impl RunningServer {
    /// Waits for the server to finish (it stops at its deadline at the latest).
    pub fn join(self) -> Result<ServerReport> {
        self.handle
            .join()
            .map_err(|_| BenchError::Worker("server".into()))?
    }
}

type Shared = Arc<Mutex<ServerReport>>;

/// Starts serving `plan`; returns once the socket is bound.
pub fn start(plan: ServerPlan) -> Result<RunningServer> {
    let (tx, rx) = mpsc::channel();
    let handle = thread::Builder::new()
        .name("nictune-server".into())
        .spawn(move || serve(plan, tx))
        .map_err(|e| BenchError::system("spawning", "server thread", e))?;
    match rx.recv() {
        Ok(addr) => Ok(RunningServer { addr, handle }),
        // The thread ended before binding: its result holds the reason.
        Err(_) => Err(handle
            .join()
            .map_err(|_| BenchError::Worker("server".into()))?
            .err()
            .unwrap_or_else(|| BenchError::Worker("server".into()))),
    }
}

/// Enters the namespace, pins, binds, reports the address, then serves.
fn serve(plan: ServerPlan, ready: mpsc::Sender<SocketAddr>) -> Result<ServerReport> {
    enter(&plan.netns, plan.cpu)?;
    let shared: Shared = Arc::default();
    note_cpu(&shared);
    match plan.test {
        TestKind::Rr | TestKind::Stream => serve_tcp(&plan, &shared, ready)?,
        TestKind::UdpRr | TestKind::Ping => serve_udp(&plan, &shared, ready)?,
    }
    note_cpu(&shared);
    let report = shared
        .lock()
        .map_err(|_| BenchError::Worker("server".into()))?
        .clone();
    Ok(report)
}

/// Moves the calling thread into `netns` and onto `cpu`.
pub fn enter(netns: &Option<PathBuf>, cpu: Option<u32>) -> Result<()> {
    if let Some(ns) = netns {
        sys::enter_netns(ns)
            .map_err(|e| BenchError::system("entering netns", ns.display().to_string(), e))?;
    }
    if let Some(cpu) = cpu {
        sys::pin_current_thread(cpu)
            .map_err(|e| BenchError::system("pinning to", format!("CPU {cpu}"), e))?;
    }
    Ok(())
}

fn note_cpu(shared: &Shared) {
    if let (Some(cpu), Ok(mut r)) = (sys::current_cpu(), shared.lock()) {
        r.cpus.insert(cpu);
    }
}

fn record(shared: &Shared, f: impl FnOnce(&mut ServerReport)) {
    if let Ok(mut r) = shared.lock() {
        f(&mut r);
    }
}

/// Counts `len` bytes about to be sent; false (and the report marked capped) once they
/// would take the test past its cap.
fn may_send(plan: &ServerPlan, shared: &Shared, len: usize) -> bool {
    if plan.max_sent.is_none() {
        return true; // no lock on the answering path of a local run
    }
    let mut ok = true;
    record(shared, |r| {
        let after = r.sent + len as u64;
        if plan.max_sent.is_some_and(|cap| after > cap) {
            r.capped = true;
            ok = false;
        } else {
            r.sent = after;
        }
    });
    ok
}

fn stop(plan: &ServerPlan) -> bool {
    plan.cancel.is_cancelled() || Instant::now() >= plan.deadline
}

fn serve_tcp(plan: &ServerPlan, shared: &Shared, ready: mpsc::Sender<SocketAddr>) -> Result<()> {
    let listener = TcpListener::bind(plan.bind)
        .map_err(|e| BenchError::socket("binding", plan.bind.to_string(), e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| BenchError::socket("reading address of", "listener", e))?;
    let _ = ready.send(addr);
    listener
        .set_nonblocking(true)
        .map_err(|e| BenchError::socket("configuring", addr.to_string(), e))?;
    let mut workers = Vec::new();
    while workers.len() < plan.connections as usize && !stop(plan) {
        match listener.accept() {
            Ok((stream, from)) if plan.allowed_peer.is_none_or(|ip| ip == from.ip()) => {
                workers.push(spawn_tcp_worker(plan, shared, stream)?);
            }
            Ok(_) => record(shared, |r| r.refused += 1),
            Err(e) if timed_out(&e) => {
                let _ = sys::poll(listener.as_raw_fd(), false, POLL_SLICE);
            }
            Err(e) => return Err(BenchError::socket("accepting on", addr.to_string(), e)),
        }
    }
    for w in workers {
        let _ = w.join();
    }
    Ok(())
}

fn spawn_tcp_worker(
    plan: &ServerPlan,
    shared: &Shared,
    stream: TcpStream,
) -> Result<JoinHandle<()>> {
    let (plan, shared) = (plan.clone(), Arc::clone(shared));
    thread::Builder::new()
        .name("nictune-responder".into())
        .spawn(move || {
            let run = match plan.test {
                TestKind::Stream => sink(&plan, &shared, stream),
                _ => respond_tcp(&plan, &shared, stream),
            };
            // A client that goes away mid-run ends its connection, not the server.
            let _ = run;
            note_cpu(&shared);
        })
        .map_err(|e| BenchError::system("spawning", "responder thread", e))
}

/// Reads fixed-size requests and answers each with a fixed-size response.
fn respond_tcp(plan: &ServerPlan, shared: &Shared, mut s: TcpStream) -> io::Result<()> {
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(POLL_SLICE))?;
    s.set_write_timeout(Some(POLL_SLICE))?;
    let (mut req, resp) = (vec![0u8; plan.request], vec![0u8; plan.response]);
    let mut answered = 0u64;
    'outer: loop {
        let mut filled = 0;
        while filled < req.len() {
            match s.read(&mut req[filled..]) {
                Ok(0) => break 'outer,
                Ok(n) => filled += n,
                Err(e) if timed_out(&e) && !stop(plan) => {}
                Err(e) if timed_out(&e) => break 'outer,
                Err(e) => return Err(e),
            }
        }
        // Past the cap the connection stays open, unanswered, until the test ends: the
        // client's run ends at its deadline with what was answered, instead of failing.
        if !may_send(plan, shared, resp.len()) {
            continue;
        }
        s.write_all(&resp)?;
        answered += 1;
        if answered == 1 {
            let id = super::napi_id(s.as_raw_fd()).unwrap_or(0);
            record(shared, |r| r.napi_ids.push(id));
        }
    }
    record(shared, |r| r.served += answered);
    Ok(())
}

/// Reads and discards everything until the client closes, the deadline, or the test is
/// stopped. Stopped means at once, not after draining: many streams leave several MB each
/// in flight when the window closes (150 × the socket buffers is most of a second at veth
/// speed), and the report must not wait for them.
fn sink(plan: &ServerPlan, shared: &Shared, mut s: TcpStream) -> io::Result<()> {
    s.set_read_timeout(Some(POLL_SLICE))?;
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        if plan.cancel.is_cancelled() {
            break;
        }
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if total == 0 {
                    // Like the answering servers, one id per connection once data came.
                    let id = super::napi_id(s.as_raw_fd()).unwrap_or(0);
                    record(shared, |r| r.napi_ids.push(id));
                }
                total += n as u64;
            }
            Err(e) if timed_out(&e) && !stop(plan) => {}
            Err(e) if timed_out(&e) => break,
            Err(e) => return Err(e),
        }
    }
    record(shared, |r| r.served += total);
    Ok(())
}

/// Answers datagrams: echo for ping, `response` bytes for UDP RR.
fn serve_udp(plan: &ServerPlan, shared: &Shared, ready: mpsc::Sender<SocketAddr>) -> Result<()> {
    let socket = UdpSocket::bind(plan.bind)
        .map_err(|e| BenchError::socket("binding", plan.bind.to_string(), e))?;
    let addr = socket
        .local_addr()
        .map_err(|e| BenchError::socket("reading address of", "UDP socket", e))?;
    let _ = ready.send(addr);
    socket
        .set_read_timeout(Some(POLL_SLICE))
        .map_err(|e| BenchError::socket("configuring", addr.to_string(), e))?;
    let mut buf = vec![0u8; plan.request.max(plan.response).max(64 * 1024)];
    let mut answered = 0u64;
    while !stop(plan) {
        let (n, from) = match socket.recv_from(&mut buf) {
            Ok(x) => x,
            Err(e) if timed_out(&e) => continue,
            Err(e) => return Err(BenchError::socket("receiving on", addr.to_string(), e)),
        };
        if plan.allowed_peer.is_some_and(|ip| ip != from.ip()) {
            record(shared, |r| r.refused += 1);
            continue;
        }
        let len = if plan.test == TestKind::Ping {
            n
        } else {
            plan.response
        };
        if !may_send(plan, shared, len) {
            continue; // past the cap: unanswered (lost) until the test ends
        }
        // A reply that cannot be sent (peer gone) is a lost reply, not a server failure.
        let _ = socket.send_to(&buf[..len], from);
        answered += 1;
        if answered == 1 {
            let id = super::napi_id(socket.as_raw_fd()).unwrap_or(0);
            record(shared, |r| r.napi_ids.push(id));
        }
    }
    record(shared, |r| r.served += answered);
    Ok(())
}
