//! One measurement from start to end: start the server side, connect the clients, run the
//! window, sample the counters at its edges, collect and assemble the result.
//!
//! ```text
//! server up ─ clients connect ─ warm-up ─┬─ measured window ─┬─ clients drain ─ server stops
//!                                  sample before        sample after
//! ```
//! Every wait is bounded: connects by a timeout, the window by its end, the drain by
//! [`crate::engine::GRACE`], the server by its deadline; the cancel flag ends all of them.

mod assemble;
pub(crate) mod far;
mod route;

use assemble::assemble;
use far::Far;
use route::Route;

use crate::accounting::{self, Accounting, Sample, Work};
use crate::cancel::{Cancel, POLL_SLICE};
use crate::client::{self, ClientJob, ClientOutcome};
use crate::clock::{Clock, MonotonicClock};
use crate::engine::ConnStats;
use crate::error::{BenchError, Result};
use crate::net::icmp::IcmpSocket;
use crate::peer::PeerTarget;
use crate::result::BenchResult;
use crate::spec::{BenchSpec, Limits, Sides, TestKind};
use crate::sys;
use crate::testbed::Testbed;
use crate::window::{Window, INTERIM};
use nictune_core::progress::Progress;
use nictune_core::units::Nanos;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the server side runs.
#[derive(Debug, Clone, Copy)]
pub enum ServerSide<'a> {
    /// Both sides on 127.0.0.1 in the current namespace.
    Loopback,
    /// Client and server in the two namespaces of a testbed the caller created (and can
    /// reuse for many runs).
    Testbed(&'a Testbed),
    /// A `nictune serve` on another machine.
    Peer(&'a PeerTarget),
}

/// The CPUs this process may run on (its affinity mask, as `taskset -p` shows it), for
/// [`BenchSpec::check_cpus`].
pub fn allowed_cpus() -> Result<Vec<u32>> {
    sys::allowed_cpus().map_err(|e| BenchError::system("reading", "this process's CPU affinity", e))
}

/// How long all clients may take to connect.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs `spec` against `target`, reporting one progress unit per measured second.
pub fn run(
    spec: &BenchSpec,
    target: ServerSide<'_>,
    progress: &dyn Progress,
) -> Result<BenchResult> {
    run_cancellable(spec, target, progress, &Cancel::new())
}

/// [`run`], stopping early (with [`BenchError::Interrupted`]) when `cancel` is set.
pub fn run_cancellable(
    spec: &BenchSpec,
    target: ServerSide<'_>,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<BenchResult> {
    spec.validate(&Limits::LOCAL)?;
    let here = match target {
        ServerSide::Peer(_) => Sides::Client,
        ServerSide::Loopback | ServerSide::Testbed(_) => Sides::Both,
    };
    spec.check_cpus(&allowed_cpus()?, here)?;
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

/// The client side's share of a run.
pub(super) struct Measured {
    pub(super) window: Window,
    pub(super) stats: ConnStats,
    /// What the load streams moved, when the spec has a load.
    pub(super) load: Option<ConnStats>,
    pub(super) outcomes_napi: Vec<u32>,
    /// ICMP echo: the kind of socket the probes went through (all connections open the same).
    pub(super) icmp_socket: Option<IcmpSocket>,
    pub(super) cpus: BTreeSet<u32>,
    pub(super) accounting: Accounting,
    pub(super) work: Work,
}

fn measure(
    spec: &BenchSpec,
    route: &Route,
    far: &mut Far,
    clock: &MonotonicClock,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Measured> {
    let load = spawn_load(spec, route, far, clock, cancel)?;
    let Clients { workers, go, live } =
        spawn_clients(spec, route, far.data_addr(route), clock, cancel)?;
    let window = Window::after_warmup(
        clock.now() + Nanos::from_millis(2),
        spec.warmup,
        spec.duration,
    );
    for tx in go.iter().chain(load.iter().flat_map(|l| &l.go)) {
        let _ = tx.send(window);
    }
    drop(go);
    let load_workers = load.map(|l| l.workers);
    let watch = Watch {
        clock,
        window: &window,
        progress,
        cancel,
        live: &live,
    };
    let sampled = sample_window(route, far, &watch);
    let outcomes = join_all(workers);
    let load_outcomes = load_workers.map(join_all).transpose();
    let (outcomes, load_outcomes) = (outcomes?, load_outcomes?);
    let (before, after, elapsed) = sampled?;
    let load = load_outcomes.map(|o| {
        let mut stats = ConnStats::new(&window);
        o.iter().for_each(|c| stats.merge(&c.stats));
        stats
    });
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
        load,
        outcomes_napi: napi,
        icmp_socket: outcomes.iter().find_map(|o| o.icmp_socket),
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

/// Connects the load streams (before the probe, so the probe meets a loaded path from its
/// first request); they are released into the same window as the probe.
fn spawn_load(
    spec: &BenchSpec,
    route: &Route,
    far: &Far,
    clock: &MonotonicClock,
    cancel: &Cancel,
) -> Result<Option<Clients>> {
    let Some(load) = spec.load else {
        return Ok(None);
    };
    let Some(addr) = far.load_addr() else {
        return Err(BenchError::Worker(
            "the server side started no sink for the load streams".into(),
        ));
    };
    spawn_clients(&load.stream_spec(spec), route, addr, clock, cancel).map(Some)
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
