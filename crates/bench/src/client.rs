//! One client connection's thread: enter the namespace, pin, connect, wait for the window,
//! run the engine, report what it measured and where it ran.

use crate::cancel::Cancel;
use crate::clock::MonotonicClock;
use crate::engine::{self, Bounds, ConnStats};
use crate::error::{BenchError, Result};
use crate::net::icmp::{IcmpConn, IcmpSocket};
use crate::net::{tcp::TcpConn, udp::UdpConn};
use crate::spec::{BenchSpec, TestKind};
use crate::window::Window;
use nictune_core::units::Nanos;
use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;

/// UDP: a reply not back after this long is lost (two poll slices; veth and loopback do not
/// lose packets unless a queue overflows, so this only ends a wait that would never end).
const UDP_LOSS_TIMEOUT: Nanos = Nanos::from_millis(200);

/// What one client thread is to do.
#[derive(Debug, Clone)]
pub struct ClientJob {
    /// The test to run; shared by every client thread.
    pub spec: Arc<BenchSpec>,
    /// The server's data address (the `ready` port, or the testbed's far end).
    pub server: SocketAddr,
    /// Network namespace to connect from (`/run/netns/NAME`); `None`: the caller's.
    pub netns: Option<PathBuf>,
    /// This connection's index (staggers open-loop schedules).
    pub index: u32,
    /// The run's clock; window bounds and latencies are read from it.
    pub clock: MonotonicClock,
    /// The run's cancel flag (Ctrl-C, SIGTERM, SIGHUP): the thread stops early when it is set.
    pub cancel: Cancel,
    /// Completions inside the window so far (read by the coordinator every second).
    pub live: Arc<AtomicU64>,
}

/// What one client thread measured.
#[derive(Debug)]
pub struct ClientOutcome {
    /// Latencies and counts inside the window.
    pub stats: ConnStats,
    /// NAPI id the socket's packets arrived on (`SO_INCOMING_NAPI_ID`); `None` for ICMP
    /// sockets or when the kernel did not report one.
    pub napi_id: Option<u32>,
    /// CPUs the thread was seen on (before and after the window).
    pub cpus: BTreeSet<u32>,
    /// ICMP echo: the kind of socket that carried the probes.
    pub icmp_socket: Option<IcmpSocket>,
}

enum Socket {
    Tcp(TcpConn),
    Udp(UdpConn),
    Icmp(IcmpConn),
}

/// Runs the job: signals `ready` once connected, then waits for the window on `go`.
/// A failure before that is reported on `ready` at once, so the run does not wait for the
/// connect timeout.
pub fn run(
    job: ClientJob,
    ready: Sender<std::result::Result<u32, ()>>,
    go: Receiver<Window>,
) -> Result<ClientOutcome> {
    let setup =
        crate::net::server::enter(&job.netns, job.spec.client_cpu).and_then(|()| connect(&job));
    let _ = ready.send(setup.as_ref().map(|_| job.index).map_err(|_| ()));
    let mut socket = setup?;
    let mut cpus = BTreeSet::new();
    cpus.extend(crate::sys::current_cpu());
    let window = go.recv().map_err(|_| BenchError::Interrupted)?;
    let mut bounds = Bounds::new(window, job.cancel.clone());
    bounds.live = Arc::clone(&job.live);
    let stats = measure(&job, &mut socket, window, &bounds)
        .map_err(|e| BenchError::socket("measuring over", job.server.to_string(), e))?;
    cpus.extend(crate::sys::current_cpu());
    let napi_id = match &socket {
        Socket::Tcp(c) => c.napi_id().ok(),
        Socket::Udp(c) => c.napi_id().ok(),
        Socket::Icmp(_) => None,
    };
    let icmp_socket = match &socket {
        Socket::Icmp(c) => Some(c.kind()),
        _ => None,
    };
    Ok(ClientOutcome {
        stats,
        napi_id,
        cpus,
        icmp_socket,
    })
}

fn connect(job: &ClientJob) -> Result<Socket> {
    let fail = |e| BenchError::socket("connecting to", job.server.to_string(), e);
    Ok(match (job.spec.test, job.spec.icmp, job.server.ip()) {
        (TestKind::Rr | TestKind::Stream, _, _) => {
            Socket::Tcp(TcpConn::connect(job.server, job.clock).map_err(fail)?)
        }
        (TestKind::Ping, true, IpAddr::V4(ip)) => {
            Socket::Icmp(IcmpConn::connect(ip, job.clock).map_err(|e| {
                let op = "opening an ICMP socket (a ping socket needs sysctl \
                          net.ipv4.ping_group_range to admit the group, a raw one CAP_NET_RAW) to";
                BenchError::socket(op, ip.to_string(), e)
            })?)
        }
        _ => Socket::Udp(UdpConn::connect(job.server, job.clock).map_err(fail)?),
    })
}

fn measure(
    job: &ClientJob,
    socket: &mut Socket,
    window: Window,
    b: &Bounds,
) -> std::io::Result<ConnStats> {
    let spec = &job.spec;
    let clock = &job.clock;
    let conn: &mut dyn crate::conn::Conn = match socket {
        Socket::Tcp(c) if spec.test == TestKind::Stream => {
            let size = spec.request_size.0 as usize;
            if spec.zerocopy {
                let mut zc = crate::net::tcp::Sendfile::new(c, size)?;
                return engine::stream::run(&mut zc, clock, size, b);
            }
            return engine::stream::run(c, clock, size, b);
        }
        Socket::Tcp(c) => c,
        Socket::Udp(c) => c,
        Socket::Icmp(c) => c,
    };
    let origin = window.start.saturating_sub(spec.warmup);
    if spec.test == TestKind::Ping {
        let (first, interval) = schedule(spec, job.index, origin);
        let p = engine::ping::PingParams {
            size: spec.request_size.0 as usize,
            first,
            interval,
        };
        return engine::ping::run(conn, clock, &p, b);
    }
    let pace = spec.rate.map(|_| {
        let (first, interval) = schedule(spec, job.index, origin);
        engine::rr::Pace { first, interval }
    });
    let p = engine::rr::RrParams {
        request: spec.request_size.0 as usize,
        response: spec.response_size.0 as usize,
        outstanding: spec.outstanding,
        pace,
        loss_timeout: (spec.test == TestKind::UdpRr).then_some(UDP_LOSS_TIMEOUT),
    };
    engine::rr::run(conn, clock, &p, b)
}

/// Open-loop schedule of connection `index`: the total rate split evenly, connections
/// offset by a fraction of the interval so their sends interleave.
pub fn schedule(spec: &BenchSpec, index: u32, origin: Nanos) -> (Nanos, Nanos) {
    let per_conn = spec.rate.unwrap_or(1.0) / spec.connections as f64;
    let interval = Nanos::from_secs_f64(1.0 / per_conn).max(Nanos(1));
    let offset = Nanos(interval.0 * index as u64 / spec.connections as u64);
    (origin + offset, interval)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_loop_connections_split_the_rate_and_interleave() {
        let mut spec = BenchSpec::new(TestKind::Rr);
        spec.rate = Some(4_000.0);
        spec.connections = 4;
        let s: Vec<_> = (0..4).map(|i| schedule(&spec, i, Nanos(1_000))).collect();
        assert!(s.iter().all(|(_, iv)| *iv == Nanos::from_millis(1)));
        let firsts: Vec<u64> = s.iter().map(|(f, _)| f.0).collect();
        assert_eq!(firsts, [1_000, 251_000, 501_000, 751_000]);
    }

    #[test]
    fn a_failed_connect_is_reported_at_once() {
        // Bind then drop a listener: its port is (almost certainly) closed now.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let job = ClientJob {
            spec: Arc::new(BenchSpec::new(TestKind::Rr)),
            server: SocketAddr::from(([127, 0, 0, 1], port)),
            netns: None,
            index: 0,
            clock: MonotonicClock::new(),
            cancel: Cancel::new(),
            live: Arc::default(),
        };
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (_go_tx, go_rx) = std::sync::mpsc::channel();
        let err = run(job, ready_tx, go_rx).unwrap_err();
        assert!(err.to_string().contains("connecting to"), "{err}");
        assert_eq!(ready_rx.try_recv().unwrap(), Err(()));
    }
}
