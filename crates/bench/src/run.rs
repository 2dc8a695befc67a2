//! One measurement from start to end: start the server side, connect the clients, run the
//! window, sample the counters at its edges, collect and assemble the result.
//!
//! ```text
//! server up ─ clients connect ─ warm-up ─┬─ measured window ─┬─ clients drain ─ server stops
//!                                  sample before        sample after
//! ```
//! Every wait is bounded: connects by a timeout, the window by its end, the drain by
//! [`crate::engine::GRACE`], the server by its deadline; the cancel flag ends all of them.

use crate::accounting::{self, Accounting, Sample, Work};
use crate::cancel::{Cancel, POLL_SLICE};
use crate::client::{self, ClientJob, ClientOutcome};
use crate::clock::{Clock, MonotonicClock};
use crate::engine::{ConnStats, GRACE};
use crate::error::{BenchError, Result};
use crate::net::server::{self, RunningServer, ServerPlan, ServerReport};
use crate::peer::{PeerSession, PeerTarget};
use crate::result::{BenchResult, LoopMode, NapiCheck, Placement, SidePlacement, StreamFigures};
use crate::spec::{BenchSpec, Limits, TestKind};
use crate::testbed::{self, Testbed};
use crate::window::{Window, INTERIM};
use nictune_core::metrics::Metrics;
use nictune_core::progress::Progress;
use nictune_core::units::Nanos;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the server side runs.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// Both sides on 127.0.0.1 in the current namespace.
    Loopback,
    /// Client and server in the two namespaces of a testbed the caller created (and can
    /// reuse for many runs).
    Testbed(&'a Testbed),
    /// A `nictune serve` on another machine.
    Peer(&'a PeerTarget),
}

/// How long all clients may take to connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs `spec` against `target`, reporting one progress unit per measured second.
pub fn run(spec: &BenchSpec, target: Target<'_>, progress: &dyn Progress) -> Result<BenchResult> {
    run_cancellable(spec, target, progress, &Cancel::new())
}

/// [`run`], stopping early (with [`BenchError::Interrupted`]) when `cancel` is set.
pub fn run_cancellable(
    spec: &BenchSpec,
    target: Target<'_>,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<BenchResult> {
    spec.validate(&Limits::LOCAL)?;
    let route = Route::of(target);
    let clock = MonotonicClock::new();
    let mut far = Far::start(spec, target, &route)?;
    let outcome = measure(spec, &route, &mut far, &clock, progress, cancel);
    let far_report = far.finish(outcome.as_ref().ok().map(|m| m.work));
    let measured = outcome?;
    if cancel.is_cancelled() {
        return Err(BenchError::Interrupted);
    }
    Ok(assemble(spec, &route, measured, far_report?))
}

/// The addresses, namespaces and interfaces of one target.
struct Route {
    label: String,
    client_netns: Option<PathBuf>,
    server_netns: Option<PathBuf>,
    server_ip: IpAddr,
    client_ifs: Vec<String>,
    server_ifs: Vec<String>,
    shared_host: bool,
    napi_applies: bool,
    warnings: Vec<String>,
}

impl Route {
    fn of(target: Target<'_>) -> Route {
        let lo = || vec!["lo".to_string()];
        match target {
            Target::Loopback => Route {
                label: "loopback".into(),
                client_netns: None,
                server_netns: None,
                server_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
                client_ifs: lo(),
                server_ifs: lo(),
                shared_host: true,
                napi_applies: false,
                warnings: Vec::new(),
            },
            Target::Testbed(bed) => Route {
                label: "testbed".into(),
                client_netns: Some(bed.client_netns()),
                server_netns: Some(bed.server_netns()),
                server_ip: IpAddr::V4(testbed::SERVER_IP),
                client_ifs: vec![bed.names().client_if.clone()],
                server_ifs: vec![bed.names().server_if.clone()],
                shared_host: true,
                napi_applies: bed.napi_mode(),
                warnings: bed.warnings().to_vec(),
            },
            Target::Peer(p) => Route {
                label: format!("peer {}", p.addr),
                client_netns: None,
                server_netns: None,
                server_ip: p.addr.ip(),
                client_ifs: Vec::new(),
                server_ifs: Vec::new(),
                shared_host: false,
                napi_applies: false,
                warnings: Vec::new(),
            },
        }
    }
}

/// The server side: threads in this process, or a peer behind the control protocol.
enum Far {
    Local {
        server: Option<RunningServer>,
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
}

impl Far {
    fn start(spec: &BenchSpec, target: Target<'_>, route: &Route) -> Result<Far> {
        if let Target::Peer(p) = target {
            return PeerSession::open(p, spec).map(|s| Far::Peer(Box::new(s)));
        }
        let stop = Cancel::new();
        let server = if spec.icmp {
            None // the peer's kernel answers ICMP echo
        } else {
            Some(server::start(ServerPlan {
                test: spec.test,
                request: spec.request_size.0 as usize,
                response: spec.response_size.0 as usize,
                connections: spec.connections,
                cpu: spec.server_cpu,
                netns: route.server_netns.clone(),
                bind: SocketAddr::new(route.server_ip, 0),
                allowed_peer: None,
                deadline: Instant::now()
                    + CONNECT_TIMEOUT
                    + Duration::from_nanos((spec.total() + GRACE).0)
                    + POLL_SLICE * 5,
                cancel: stop.clone(),
            })?)
        };
        Ok(Far::Local {
            server,
            stop,
            before: None,
            netns: route.server_netns.clone(),
            ifs: route.server_ifs.clone(),
            t0: Instant::now(),
        })
    }

    fn data_addr(&self, route: &Route) -> SocketAddr {
        match self {
            Far::Local {
                server: Some(s), ..
            } => s.addr,
            Far::Local { server: None, .. } => SocketAddr::new(route.server_ip, 0),
            Far::Peer(p) => p.data_addr(),
        }
    }

    /// The window starts: take the server side's "before" sample.
    fn mark(&mut self) -> Result<()> {
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
    fn finish(self, work: Option<Work>) -> Result<FarReport> {
        match self {
            Far::Local {
                server,
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
                Ok(FarReport { accounting, server })
            }
            Far::Peer(p) => p.finish(work),
        }
    }
}

/// The client side's share of a run.
struct Measured {
    window: Window,
    stats: ConnStats,
    outcomes_napi: Vec<u32>,
    cpus: BTreeSet<u32>,
    accounting: Accounting,
    work: Work,
}

fn measure(
    spec: &BenchSpec,
    route: &Route,
    far: &mut Far,
    clock: &MonotonicClock,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Measured> {
    let Clients { workers, go, live } =
        spawn_clients(spec, route, far.data_addr(route), clock, cancel)?;
    let window = Window::after_warmup(
        clock.now() + Nanos::from_millis(2),
        spec.warmup,
        spec.duration,
    );
    for tx in &go {
        let _ = tx.send(window);
    }
    drop(go);
    let watch = Watch {
        clock,
        window: &window,
        progress,
        cancel,
        live: &live,
    };
    let sampled = sample_window(route, far, &watch);
    let outcomes = join_all(workers)?;
    let (before, after, elapsed) = sampled?;
    let mut stats = ConnStats::new(&window);
    let (mut napi, mut cpus) = (Vec::new(), BTreeSet::new());
    for o in &outcomes {
        stats.merge(&o.stats);
        napi.extend(o.napi_id);
        cpus.extend(o.cpus.iter().copied());
    }
    let work = work_of(spec, &stats);
    let accounting = accounting::account(
        &before,
        &after,
        elapsed,
        crate::sys::user_hz(),
        work,
        route_ifs(route),
    );
    Ok(Measured {
        window,
        stats,
        outcomes_napi: napi,
        cpus,
        accounting,
        work,
    })
}

fn route_ifs(route: &Route) -> Option<&[String]> {
    (!route.client_ifs.is_empty()).then_some(route.client_ifs.as_slice())
}

fn work_of(spec: &BenchSpec, stats: &ConnStats) -> Work {
    match spec.test {
        TestKind::Stream => Work {
            transactions: None,
            bytes: Some(stats.bytes),
        },
        _ => Work {
            transactions: Some(stats.completed),
            bytes: None,
        },
    }
}

type Workers = Vec<JoinHandle<Result<ClientOutcome>>>;

/// The running client threads: their handles, the channels that release them into the
/// window, and their live completion counters.
struct Clients {
    workers: Workers,
    go: Vec<mpsc::Sender<Window>>,
    live: Vec<Arc<AtomicU64>>,
}

/// Starts one thread per connection and waits until every one is connected.
fn spawn_clients(
    spec: &BenchSpec,
    route: &Route,
    server: SocketAddr,
    clock: &MonotonicClock,
    cancel: &Cancel,
) -> Result<Clients> {
    let spec = Arc::new(spec.clone());
    let (ready_tx, ready_rx) = mpsc::channel();
    let (mut workers, mut go, mut live) = (Vec::new(), Vec::new(), Vec::new());
    for index in 0..spec.connections {
        let (tx, rx) = mpsc::channel();
        let counter = Arc::new(AtomicU64::new(0));
        live.push(Arc::clone(&counter));
        let job = ClientJob {
            spec: Arc::clone(&spec),
            server,
            netns: route.client_netns.clone(),
            index,
            clock: *clock,
            cancel: cancel.clone(),
            live: counter,
        };
        let ready = ready_tx.clone();
        let handle = std::thread::Builder::new()
            .name(format!("nictune-client-{index}"))
            .spawn(move || client::run(job, ready, rx))
            .map_err(|e| BenchError::system("spawning", "client thread", e))?;
        workers.push(handle);
        go.push(tx);
    }
    drop(ready_tx);
    let until = Instant::now() + CONNECT_TIMEOUT;
    for _ in 0..spec.connections {
        let left = until.saturating_duration_since(Instant::now());
        if !matches!(ready_rx.recv_timeout(left), Ok(Ok(_))) {
            drop(go); // releases every waiting client with Interrupted
            return Err(first_error(workers)
                .unwrap_or(BenchError::Worker("client connect timed out".into())));
        }
    }
    Ok(Clients { workers, go, live })
}

/// Joins every worker; the first error wins.
fn join_all(workers: Workers) -> Result<Vec<ClientOutcome>> {
    let mut out = Vec::new();
    let mut err = None;
    for w in workers {
        match w.join() {
            Ok(Ok(o)) => out.push(o),
            Ok(Err(e)) => err = err.or(Some(e)),
            Err(_) => err = err.or(Some(BenchError::Worker("client".into()))),
        }
    }
    err.map_or(Ok(out), Err)
}

fn first_error(workers: Workers) -> Option<BenchError> {
    join_all(workers).err()
}

/// What the coordinator watches while the window runs.
struct Watch<'a> {
    clock: &'a MonotonicClock,
    window: &'a Window,
    progress: &'a dyn Progress,
    cancel: &'a Cancel,
    live: &'a [Arc<AtomicU64>],
}

impl Watch<'_> {
    fn completed(&self) -> u64 {
        self.live.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// Sleeps through the window's interim intervals, showing each one's rate (netperf -D).
    fn interim(&self) {
        let mut next = self.window.start + INTERIM;
        let mut last = self.completed();
        while next < self.window.end && !self.cancel.is_cancelled() {
            sleep_until(self.clock, next, self.cancel);
            let now = self.completed();
            let rate = (now - last) as f64 / INTERIM.as_secs_f64();
            self.progress
                .message(&format!("{} /s", crate::text::group(rate)));
            self.progress.advance(1);
            (last, next) = (now, next + INTERIM);
        }
        sleep_until(self.clock, self.window.end, self.cancel);
    }
}

/// Waits through the window, sampling the client side (and marking the server side) at
/// its start and end, with interim rates once per second.
fn sample_window(route: &Route, far: &mut Far, w: &Watch<'_>) -> Result<(Sample, Sample, Nanos)> {
    sleep_until(w.clock, w.window.start, w.cancel);
    let t0 = w.clock.now();
    let before = Sample::parse(&accounting::read_live(route.client_netns.as_ref())?)?;
    far.mark()?;
    w.progress.start(w.window.intervals() as u64, "measuring");
    w.interim();
    let after = Sample::parse(&accounting::read_live(route.client_netns.as_ref())?)?;
    w.progress.advance(1);
    w.progress.finish();
    Ok((before, after, w.clock.now() - t0))
}

/// Sleeps until `at` in slices, returning early on cancel.
fn sleep_until(clock: &MonotonicClock, at: Nanos, cancel: &Cancel) {
    let slice = Nanos(POLL_SLICE.as_nanos() as u64);
    while clock.now() < at && !cancel.is_cancelled() {
        clock.sleep_until(at.min(clock.now() + slice));
    }
}

fn assemble(spec: &BenchSpec, route: &Route, m: Measured, far: FarReport) -> BenchResult {
    let secs = m.window.length().as_secs_f64();
    let stream = spec.test == TestKind::Stream;
    let tps = (!stream).then(|| m.stats.completed as f64 / secs);
    let payload = (spec.request_size.0 + spec.response_size.0) as f64 * 8.0;
    let throughput = if stream {
        Some(crate::engine::stream::bps(m.stats.bytes, m.window.length()))
    } else {
        tps.map(|t| t * payload)
    };
    let server_acc = far.accounting.clone();
    let mut hosts = BTreeMap::new();
    hosts.insert("client".to_string(), m.accounting.host.clone());
    if let Some(a) = &server_acc {
        hosts.insert("server".to_string(), a.host.clone());
    }
    let metrics = Metrics {
        transactions_per_sec: tps,
        interim_transactions_per_sec: if stream {
            Vec::new()
        } else {
            m.stats.interim.rates(&m.window)
        },
        latency_us: m.stats.latency.summary(),
        throughput_bps: throughput,
        hosts,
    };
    let mut accounting = BTreeMap::from([("client".to_string(), m.accounting.clone())]);
    if let Some(a) = server_acc {
        accounting.insert("server".to_string(), a);
    }
    let mut warnings = route.warnings.clone();
    let napi = napi_check(route, &m, &far.server, &mut warnings);
    BenchResult {
        target: route.label.clone(),
        spec: spec.clone(),
        metrics,
        mode: if spec.rate.is_some() {
            LoopMode::Open
        } else {
            LoopMode::Closed
        },
        measured_s: secs,
        completed: m.stats.completed,
        lost: m.stats.lost,
        stream: stream.then(|| StreamFigures {
            bytes: m.stats.bytes,
            retransmits: m.stats.retransmits,
            interim_throughput_bps: m.stats.interim_bps.clone(),
            write_size: spec.request_size.0,
        }),
        placement: Placement {
            client: SidePlacement {
                requested_cpu: spec.client_cpu,
                cpus_seen: m.cpus.iter().copied().collect(),
            },
            server: SidePlacement {
                requested_cpu: spec.server_cpu,
                cpus_seen: far.server.cpus.iter().copied().collect(),
            },
            cal_per_sec: m.accounting.arch_irqs_per_sec.get("CAL").copied(),
            res_per_sec: m.accounting.arch_irqs_per_sec.get("RES").copied(),
        },
        napi,
        accounting,
        shared_host: route.shared_host,
        warnings,
    }
}

fn napi_check(
    route: &Route,
    m: &Measured,
    server: &ServerReport,
    warnings: &mut Vec<String>,
) -> NapiCheck {
    let ids = m.outcomes_napi.iter().chain(&server.napi_ids);
    let verified =
        (route.label == "testbed" && route.napi_applies).then(|| ids.clone().all(|&id| id != 0));
    if verified == Some(false) {
        warnings.push("sockets report NAPI id 0: veth did not deliver through NAPI, so NAPI settings cannot act on this path".into());
    }
    NapiCheck {
        client_ids: m.outcomes_napi.clone(),
        server_ids: server.napi_ids.clone(),
        verified,
    }
}
