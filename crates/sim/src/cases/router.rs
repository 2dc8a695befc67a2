//! Case 5: a FreeBSD 8.2 border router with ten igb (82576) ports on 2 × Xeon X5650
//! (`seed-igb-router`).
//!
//! Mechanisms used: mbuf cluster zones at interface start ([`crate::pool`]); RSS hashing of a
//! flow population to queues ([`crate::multiqueue::rss`]); one MSI-X vector per queue bound
//! to a CPU ([`crate::multiqueue::binding`]); FreeBSD 8 igb AIM writing EITR one interrupt
//! late ([`crate::moderation::freebsd_aim::SizeAim`]); `rx_process_limit`
//! ([`crate::freebsd::rx_limit`]); SMT siblings ([`crate::multiqueue::smt`]); and the ipfw NAT
//! instance lock every forwarded packet takes ([`crate::multiqueue::nat`]).
//!
//! A vector's interrupt runs on its CPU: the interrupt cost, then the receive cleanup takes
//! packets one by one while descriptors are ready (up to the limit); each packet is forwarded
//! (input + firewall, the NAT section, output). With the limit reached the task requeues
//! itself behind the other vectors of that CPU; otherwise the vector is unmasked and its next
//! interrupt comes when a packet is there and the EITR gap has passed. Vectors on one CPU are
//! served in the order they became ready. Only the NAT section is shared between CPUs, so the
//! simulation orders NAT entries globally by time (each CPU's next entry is its one pending
//! event) and keeps everything else local: arrivals are drawn lazily when a ring is looked at.

use super::{cpu_split, CoreNs, Ledger};
use crate::engine::queue::EntityQueue;
use crate::engine::rng::Rng;
use crate::freebsd::rx_limit::RxProcessLimit;
use crate::moderation::freebsd_aim::SizeAim;
use crate::moderation::{Coalescing, ModerationCtx, ModerationPolicy, Traffic};
use crate::multiqueue::binding::{Binding, Vector};
use crate::multiqueue::nat::{Handoff, NatLocks};
use crate::multiqueue::rss::{FlowKey, Rss};
use crate::multiqueue::smt::{SiblingLayout, Topology};
use crate::nic::frame::{MIN_FRAME, WIRE_OVERHEAD};
use crate::pool::{bring_up, Pool, SetupError, ZoneLimits};
use nictune_core::metrics::{HostMetrics, Metrics};
use nictune_core::units::{Bytes, Nanos};

/// Per-packet and per-interrupt costs on one X5650 thread (2.66 GHz, FreeBSD 8.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouterCosts {
    /// MSI-X interrupt: filter, interrupt-thread wake-up and switch (sim-notes §4.3: entry and
    /// exit ≈1–2 µs on modern x86, plus a FreeBSD ithread context switch ≈1–3 µs \[U\]).
    pub irq: Nanos,
    /// Receive cleanup, `ip_input` and the ipfw rule walk before NAT. Together with `post`
    /// 2 µs per packet, i.e. ≈500 kpps per core for ipfw forwarding on Nehalem/Westmere-class
    /// FreeBSD 8 (BSDRP forwarding benchmarks, secondary \[U\]).
    pub pre_nat: Nanos,
    /// `ip_output`, the igb transmit and its descriptor cleanup after NAT.
    pub post_nat: Nanos,
    /// libalias work under the NAT instance lock (`LibAliasIn`/`LibAliasOut` hold
    /// `LIBALIAS_LOCK` for the link-table lookup, the rewrite and the checksum updates).
    /// CALIBRATED, not sourced: chosen so that one instance collapses at about the load where
    /// the field report's CPUs were exhausted (≈500 Mbit/s forwarded), so that figure is a
    /// calibration point, and so is every claim resting on it (more instances use less CPU).
    /// No published per-packet hold time for libalias on a Westmere Xeon was found; what it
    /// depends on — hash-chain walks in the 4001-bucket link tables, which grow with the
    /// session count, and the once-a-second `HouseKeeping` sweep under the same lock — is not
    /// modelled.
    pub nat_hold: Nanos,
    /// Extra time when the lock and libalias state were last touched by another CPU: a base
    /// of cache-line transfers (≈100 ns per remote line on Westmere QPI \[U\] × ~10 lines) plus
    /// one remote line transfer per CPU spinning on the same lock (Boyd-Wickizer et al. 2012).
    pub nat_handoff: Handoff,
    /// A receive task that hit `rx_process_limit` requeueing itself (taskqueue round trip).
    pub requeue: Nanos,
}

impl Default for RouterCosts {
    fn default() -> Self {
        RouterCosts {
            irq: Nanos::from_micros(3),
            pre_nat: Nanos(1_200),
            post_nat: Nanos(800),
            nat_hold: Nanos::from_micros(4),
            nat_handoff: Handoff {
                base: Nanos(500),
                per_waiter: Nanos(500),
            },
            requeue: Nanos::from_micros(1),
        }
    }
}

/// Line rate of one igb (82576) port.
pub const PORT_BPS: f64 = 1e9;

/// Packets per second `ports` gigabit ports carry at most with frames of `frame` bytes
/// (Ethernet header to FCS, padded to the 64-byte minimum): each frame also occupies 8 bytes
/// of preamble and 12 of inter-frame gap on the wire (IEEE 802.3 clause 4; sim-notes §4.1).
pub fn line_rate_pps(ports: u32, frame: Bytes) -> f64 {
    let wire = frame.0.max(MIN_FRAME as u64) + WIRE_OVERHEAD as u64;
    ports as f64 * PORT_BPS / (wire * 8) as f64
}

/// Scenario parameters; defaults are the field report's (seed-cases.md Case 5).
#[derive(Debug, Clone)]
pub struct RouterParams {
    /// igb ports (2 on board + two quad-port cards).
    pub ports: u32,
    /// `hw.igb.num_queues`.
    pub queues: u32,
    /// `hw.igb.rxd`.
    pub rxd: u32,
    /// `kern.ipc.nmbclusters` (25600 by default on that host; 204800 after the fix).
    pub nmbclusters: u64,
    /// Interrupt binding.
    pub binding: Binding,
    /// ipfw NAT instances.
    pub nat_instances: usize,
    /// CPU topology: 2 × X5650 = 12 cores, HT on, FreeBSD numbering.
    pub topology: Topology,
    /// `dev.igb.N.rx_processing_limit` (−1 in the final tuning).
    pub rx_process_limit: RxProcessLimit,
    /// `hw.igb.max_interrupt_rate` (initial EITR before AIM adapts).
    pub max_interrupt_rate: u32,
    /// Forwarded packets per second offered, over all ports (206 kpps in + 206 kpps out).
    pub offered_pps: u64,
    /// Mean frame size (160 MB/s at 206 kpps ⇒ ≈777 bytes).
    pub frame: Bytes,
    /// Flows per port hashed to queues by RSS.
    pub flows_per_port: u32,
    /// Simulated time.
    pub duration: Nanos,
    /// Seed of every random stream.
    pub seed: u64,
    /// Host costs.
    pub costs: RouterCosts,
}

impl Default for RouterParams {
    fn default() -> Self {
        RouterParams {
            ports: 10,
            queues: 4,
            rxd: 4096,
            nmbclusters: 204_800,
            binding: Binding::Default,
            nat_instances: 1,
            topology: Topology {
                cores: 12,
                threads_per_core: 2,
                layout: SiblingLayout::Adjacent,
                shared_permille: 1300,
            },
            rx_process_limit: RxProcessLimit::UNLIMITED,
            max_interrupt_rate: 8000,
            offered_pps: 412_000,
            frame: Bytes(777),
            flows_per_port: 1024,
            duration: Nanos::from_secs(1),
            seed: 1,
            costs: RouterCosts::default(),
        }
    }
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RouterOutcome {
    /// The shared metrics (host `router`).
    pub metrics: Metrics,
    /// Interfaces that failed to start ("could not setup receive structures").
    pub setup_errors: Vec<SetupError>,
    /// Packets forwarded.
    pub forwarded: u64,
    /// Packets dropped in full rings or on interfaces that are down.
    pub dropped: u64,
    /// CPU time spent waiting for NAT instance locks (ns, all CPUs).
    pub nat_spin: Nanos,
    /// Total busy CPU time as a share of one CPU (1.0 = one CPU fully busy).
    pub cpu_total: f64,
    /// Simulation steps taken (CPU events).
    pub events: u64,
    /// The receive rings' packet ledger (interfaces that started).
    pub ledgers: Vec<Ledger>,
}

/// Time meaning "never".
const NEVER: u64 = u64::MAX;

#[derive(Debug)]
struct Vq {
    cpu: u32,
    mean_gap: f64,
    next_arrival: u64,
    ring: u32,
    last_irq: u64,
    interval: u64,
    /// When the vector next wants its CPU: its interrupt time, the time its task requeued,
    /// or NEVER while it is being served.
    ready: u64,
    requeued: bool,
    aim: SizeAim,
    rng: Rng,
    /// Packets that reached the vector (admitted or dropped).
    arrived: u64,
    drops: u64,
    irqs: u64,
}

impl Vq {
    /// Arrivals up to `t` into the ring (a full ring drops).
    #[inline]
    fn fill(&mut self, t: u64, rxd: u32) {
        while self.next_arrival <= t {
            self.arrived += 1;
            if self.ring < rxd {
                self.ring += 1;
            } else {
                self.drops += 1;
            }
            self.next_arrival += super::exp_ns(&mut self.rng, self.mean_gap);
        }
    }
}

/// What a CPU does next: the engine's [`EntityQueue`] keeps one per CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CpuEvent {
    /// The CPU is free (or sleeps until a vector is ready): serve the next ready vector.
    Wake,
    /// The packet the CPU took reaches its NAT step.
    Forward,
}

#[derive(Debug, Clone, Copy)]
struct Job {
    v: usize,
    taken: u32,
}

#[derive(Debug, Default)]
struct Cpu {
    /// Vectors bound to this CPU.
    vectors: Vec<usize>,
    /// The vector being served; the CPU's next event is then its next NAT entry.
    job: Option<Job>,
    acct: CoreNs,
}

const NO_SIBLING: u32 = u32::MAX;

/// The run state. The only interaction between CPUs is the NAT lock, so the agenda (the
/// engine's [`EntityQueue`]) holds one typed event per CPU — its next NAT entry, or when it is idle the next interrupt of one of its
/// vectors — and the earliest CPU always moves next (ties: lowest CPU number). Vectors on a
/// CPU are served in the order they became ready (interrupt or requeue time).
struct Sim<'a> {
    p: &'a RouterParams,
    vqs: Vec<Vq>,
    cpus: Vec<Cpu>,
    next: EntityQueue<CpuEvent>,
    /// Each CPU's SMT sibling, or [`NO_SIBLING`].
    siblings: Vec<u32>,
    work: [[u64; 2]; 4],
    nat: NatLocks,
    forwarded: u64,
    nat_spin: u64,
    limit: RxProcessLimit,
}

/// The per-packet work items whose wall time depends on the SMT sibling.
#[derive(Debug, Clone, Copy)]
enum Work {
    Irq = 0,
    Requeue = 1,
    PreNat = 2,
    PostNat = 3,
}

/// Wall times of each [`Work`] item with the sibling idle (`[0]`) and busy (`[1]`), worked
/// out once: the topology's arithmetic (a modulo and a division) is per packet otherwise.
fn work_table(p: &RouterParams) -> [[u64; 2]; 4] {
    let c = &p.costs;
    [c.irq, c.requeue, c.pre_nat, c.post_nat]
        .map(|w| [false, true].map(|busy| p.topology.wall_time(w, busy).0))
}

impl Sim<'_> {
    /// Wall time of `work` on `cpu` given its SMT sibling's state.
    #[inline]
    fn scaled(&self, cpu: usize, work: Work) -> u64 {
        let sibling = self.siblings[cpu];
        let busy = sibling != NO_SIBLING && self.cpus[sibling as usize].job.is_some();
        self.work[work as usize][busy as usize]
    }

    /// Re-arms `v` after its cleanup finished at `t`: it interrupts when a packet is there
    /// and the EITR gap since its last interrupt has passed.
    fn arm(&mut self, v: usize, t: u64) {
        let rxd = self.p.rxd;
        let q = &mut self.vqs[v];
        q.fill(t, rxd);
        let first = if q.ring > 0 { t } else { q.next_arrival };
        q.ready = first.max(q.last_irq + q.interval);
        q.requeued = false;
    }

    /// CPU `c` is free at `t`: serve the vector that became ready first, or sleep until one
    /// does.
    fn pick_next(&mut self, c: usize, t: u64) {
        let mut best: Option<usize> = None;
        for &v in &self.cpus[c].vectors {
            if best.is_none_or(|b| self.vqs[v].ready < self.vqs[b].ready) {
                best = Some(v);
            }
        }
        let Some(v) = best.filter(|&v| self.vqs[v].ready <= t) else {
            self.cpus[c].job = None;
            self.next
                .schedule(c, best.map_or(NEVER, |v| self.vqs[v].ready), CpuEvent::Wake);
            return;
        };
        let (ready, requeued) = (self.vqs[v].ready, self.vqs[v].requeued);
        self.vqs[v].ready = NEVER;
        self.cpus[c].job = Some(Job { v, taken: 0 });
        let d = if requeued {
            let d = self.scaled(c, Work::Requeue);
            self.cpus[c].acct.softirq += d;
            d
        } else {
            self.interrupt(v, ready);
            let d = self.scaled(c, Work::Irq);
            self.cpus[c].acct.irq += d;
            d
        };
        self.next_packet(c, t + d);
    }

    /// The vector's interrupt was asserted at `at`.
    fn interrupt(&mut self, v: usize, at: u64) {
        let q = &mut self.vqs[v];
        q.last_irq = at;
        q.irqs += 1;
        let ctx = ModerationCtx::at(Nanos(at), Coalescing::throttle(Nanos(q.interval)));
        if let Some(c) = q.aim.on_interrupt(&ctx) {
            q.interval = c.interval_ns;
        }
    }

    fn next_packet(&mut self, c: usize, t: u64) {
        let Some(mut job) = self.cpus[c].job else {
            return;
        };
        let rxd = self.p.rxd;
        let q = &mut self.vqs[job.v];
        q.fill(t, rxd);
        if q.ring == 0 || self.limit.get() == Some(job.taken) {
            return self.finish_job(c, t);
        }
        q.ring -= 1;
        job.taken += 1;
        self.cpus[c].job = Some(job);
        let d = self.scaled(c, Work::PreNat);
        self.cpus[c].acct.softirq += d;
        self.next.schedule(c, t + d, CpuEvent::Forward);
    }

    fn nat_step(&mut self, c: usize, t: u64) {
        let Some(job) = self.cpus[c].job else { return };
        let key = self.vqs[job.v].rng.next_u64() as u32;
        let s = self.nat.enter(c as u32, key, Nanos(t));
        let post = self.scaled(c, Work::PostNat);
        self.nat_spin += s.spin.0;
        self.cpus[c].acct.softirq += (s.end.0 - t) + post;
        self.forwarded += 1;
        self.next_packet(c, s.end.0 + post);
    }

    fn finish_job(&mut self, c: usize, t: u64) {
        let Some(job) = self.cpus[c].job.take() else {
            return;
        };
        let frame = self.p.frame.0;
        let q = &mut self.vqs[job.v];
        let window = Traffic::rx(job.taken as u64, job.taken as u64 * frame);
        let ctx = ModerationCtx::at(Nanos(t), Coalescing::throttle(Nanos(q.interval)));
        if let Some(c) = q.aim.on_poll_complete(&ctx, &window) {
            q.interval = c.interval_ns;
        }
        if self.limit.get() == Some(job.taken) && q.ring > 0 {
            q.ready = t;
            q.requeued = true;
        } else {
            self.arm(job.v, t);
        }
        self.pick_next(c, t);
    }
}

/// Share of each queue in a port's traffic: the flow population hashed by RSS.
fn queue_shares(queues: u32, flows: u32, port: u32) -> Vec<f64> {
    let rss = Rss::new(queues as u16);
    let mut n = vec![0u32; queues as usize];
    for i in 0..flows {
        let f = FlowKey {
            src: [198, 18, (i >> 8) as u8, i as u8],
            dst: [198, 19, port as u8, 1],
            sport: 1024 + (i % 60000) as u16,
            dport: 443,
        };
        n[rss.queue(&f) as usize] += 1;
    }
    n.iter().map(|&k| k as f64 / flows.max(1) as f64).collect()
}

/// Runs the router scenario.
pub fn run(p: &RouterParams) -> RouterOutcome {
    let mut pool = Pool::new(ZoneLimits {
        nmbclusters: p.nmbclusters,
        nmbjumbop: p.nmbclusters / 2,
        nmbjumbo9: p.nmbclusters / 4,
        nmbjumbo16: p.nmbclusters / 8,
    });
    let started = bring_up(&mut pool, "igb", p.ports, p.queues, p.rxd, p.frame);
    let up: Vec<u32> = (0..p.ports)
        .filter(|&i| started[i as usize].is_ok())
        .collect();
    let setup_errors: Vec<SetupError> = started.into_iter().filter_map(Result::err).collect();
    let per_port_pps = p.offered_pps as f64 / p.ports.max(1) as f64;
    let down_drops =
        (per_port_pps * (p.ports as usize - up.len()) as f64 * p.duration.as_secs_f64()) as u64;
    let ncpus = p.topology.cpus();
    let initial = crate::moderation::rate_to_256ns_throttle(p.max_interrupt_rate).interval_ns;
    let mut vqs = Vec::new();
    for &port in &up {
        for (queue, share) in queue_shares(p.queues, p.flows_per_port, port)
            .into_iter()
            .enumerate()
        {
            let queue = queue as u32;
            let mut rng = Rng::new(p.seed, (port * p.queues + queue) as u64);
            let mean_gap = if share > 0.0 {
                1e9 / (per_port_pps * share)
            } else {
                f64::INFINITY
            };
            let first = if mean_gap.is_finite() {
                super::exp_ns(&mut rng, mean_gap)
            } else {
                u64::MAX / 2
            };
            vqs.push(Vq {
                cpu: p.binding.cpu(Vector { port, queue }, p.queues, ncpus),
                mean_gap,
                next_arrival: first,
                ring: 0,
                last_irq: 0,
                interval: initial,
                ready: NEVER,
                requeued: false,
                aim: SizeAim::new(true, p.max_interrupt_rate),
                rng,
                arrived: 0,
                drops: 0,
                irqs: 0,
            });
        }
    }
    let mut cpus: Vec<Cpu> = (0..ncpus).map(|_| Cpu::default()).collect();
    for (v, q) in vqs.iter().enumerate() {
        cpus[q.cpu as usize].vectors.push(v);
    }
    let mut sim = Sim {
        p,
        vqs,
        cpus,
        next: EntityQueue::new(ncpus as usize, CpuEvent::Wake),
        siblings: (0..ncpus)
            .map(|c| p.topology.sibling(c).unwrap_or(NO_SIBLING))
            .collect(),
        work: work_table(p),
        nat: NatLocks::new(p.nat_instances, p.costs.nat_hold, p.costs.nat_handoff),
        forwarded: 0,
        nat_spin: 0,
        limit: p.rx_process_limit,
    };
    for v in 0..sim.vqs.len() {
        sim.arm(v, 0);
    }
    for c in 0..sim.cpus.len() {
        sim.pick_next(c, 0);
    }
    let end = p.duration.0;
    let mut events = 0u64;
    loop {
        let (t, c, ev) = sim.next.next();
        events += 1;
        if t > end {
            break;
        }
        match ev {
            CpuEvent::Forward => sim.nat_step(c, t),
            CpuEvent::Wake => sim.pick_next(c, t),
        }
    }
    // Steps are charged when they start; a CPU serving a vector has its work committed
    // without a gap up to its next event, so what lies past the end is taken back (from the
    // softirq work that ends a step first, then the interrupt that may begin it).
    for c in 0..sim.cpus.len() {
        if sim.cpus[c].job.is_some() {
            let mut tail = sim.next.time(c).saturating_sub(end);
            let acct = &mut sim.cpus[c].acct;
            for class in [&mut acct.softirq, &mut acct.irq] {
                let cut = tail.min(*class);
                *class -= cut;
                tail -= cut;
            }
        }
    }
    outcome(p, sim, setup_errors, down_drops, events)
}

fn outcome(
    p: &RouterParams,
    sim: Sim,
    setup_errors: Vec<SetupError>,
    down_drops: u64,
    events: u64,
) -> RouterOutcome {
    let span = p.duration.0;
    let secs = p.duration.as_secs_f64();
    let cores: Vec<CoreNs> = sim.cpus.iter().map(|c| c.acct).collect();
    let irqs: u64 = sim.vqs.iter().map(|q| q.irqs).sum();
    let ring_drops: u64 = sim.vqs.iter().map(|q| q.drops).sum();
    let mut host = HostMetrics {
        interrupts_per_sec: Some(irqs as f64 / secs),
        packets_per_interrupt: (irqs > 0).then(|| sim.forwarded as f64 / irqs as f64),
        cpu: cpu_split(&cores, span),
        ..HostMetrics::default()
    };
    host.drops.insert("ring_full".into(), ring_drops);
    host.drops.insert("interface_down".into(), down_drops);
    let cpu_total = host.cpu.per_core.iter().map(|c| c.busy()).sum();
    let mut metrics = Metrics {
        throughput_bps: Some(sim.forwarded as f64 * p.frame.0 as f64 * 8.0 / secs),
        ..Metrics::default()
    };
    metrics.hosts.insert("router".into(), host);
    // A CPU with a job holds one packet between taking it from the ring and forwarding it.
    let in_jobs = sim.cpus.iter().filter(|c| c.job.is_some()).count() as u64;
    let rings = Ledger {
        stage: "rings",
        offered: sim.vqs.iter().map(|q| q.arrived).sum(),
        delivered: sim.forwarded,
        dropped: ring_drops,
        in_flight: sim.vqs.iter().map(|q| q.ring as u64).sum::<u64>() + in_jobs,
    };
    RouterOutcome {
        metrics,
        setup_errors,
        forwarded: sim.forwarded,
        dropped: ring_drops + down_drops,
        nat_spin: Nanos(sim.nat_spin),
        cpu_total,
        events,
        ledgers: vec![rings],
    }
}

/// The model's assumptions, for `nictune sim seed-igb-router --explain`.
pub const EXPLAIN: &str = "\
seed-igb-router — Case 5: FreeBSD 8.2 border router, 10 × igb (82576), 2 × Xeon X5650.

Interface start: every port fills queues × rxd receive descriptors with 2 KB clusters from
kern.ipc.nmbclusters, all or nothing, in attach order; a port that cannot is down (\"could not
setup receive structures\") and its share of the traffic is dropped.

Traffic: offered_pps spread evenly over the ports (the report does not give the split), Poisson
per queue; each port's share per queue comes from hashing flows_per_port flows with the
Toeplitz RSS hash and the default 128-entry indirection table. Mean frame 777 bytes (160 MB/s
at 206 kpps in the report).

Interrupts: one MSI-X vector per queue, bound by `binding` (default: queue N of every port on
CPU N; spread: every vector its own CPU). EITR starts at max_interrupt_rate and is then set by
FreeBSD 8 igb AIM (size formula, written one interrupt late). The receive cleanup takes packets
while descriptors are ready, up to rx_process_limit (−1 = unlimited), then requeues.

Per packet on the vector's CPU: 1.2 µs before NAT, the NAT section (4 µs under the instance
lock; +0.5 µs if another CPU held it last, +0.5 µs more per CPU spinning on it — non-scalable
lock handoff), 0.8 µs after. 3 µs per interrupt. The 4 µs hold is calibrated, not measured:
it was chosen so that one instance collapses near the report's exhaustion (all CPUs busy with
≈500 Mbit/s getting through): above ≈115 kpps offered, 24 CPUs contend, spin, and forwarding
falls to 400–520 Mbit/s. That figure is therefore a calibration point, and so is the claim
that more instances use less CPU, which rests on the hold. The hand-off costs are
assumptions. With the report's final 206 kpps each way and several instances the model leaves
≈80 % idle (report: ≈85 %). SMT: both siblings busy ⇒ each runs at
0.65 of a lone thread (Intel's \"up to 30 %\" HT gain), a parameter, not a finding.
";

#[cfg(test)]
mod tests {
    use super::*;

    fn short(p: RouterParams) -> RouterOutcome {
        run(&RouterParams {
            duration: Nanos::from_millis(300),
            ..p
        })
    }

    #[test]
    fn rss_spreads_flows_over_the_four_queues() {
        let s = queue_shares(4, 1024, 0);
        assert!(s.iter().all(|&x| (0.2..0.3).contains(&x)), "{s:?}");
    }

    #[test]
    fn case5_default_nmbclusters_leaves_interfaces_down() {
        let o = short(RouterParams {
            nmbclusters: 25_600,
            nat_instances: 8,
            ..RouterParams::default()
        });
        assert_eq!(o.setup_errors.len(), 9);
        assert!(o.setup_errors[0]
            .to_string()
            .starts_with("igb1: could not setup receive structures"));
        let fixed = short(RouterParams {
            nat_instances: 8,
            ..RouterParams::default()
        });
        assert!(fixed.setup_errors.is_empty());
        assert!(fixed.forwarded > 9 * o.forwarded);
    }

    #[test]
    fn forwarding_conserves_packets_at_moderate_load() {
        let o = short(RouterParams {
            offered_pps: 50_000,
            nat_instances: 4,
            ..RouterParams::default()
        });
        let expected = 50_000.0 * 0.3;
        assert_eq!(o.dropped, 0);
        assert!(
            (o.forwarded as f64 - expected).abs() / expected < 0.03,
            "{}",
            o.forwarded
        );
    }
}

#[cfg(test)]
mod claims {
    //! Case 5's claims (issue 4 §8): validation tests, and the `calibration_*` re-checks of
    //! the point `nat_hold` was chosen by (docs/calibration.md).
    use super::*;

    fn busiest(o: &RouterOutcome) -> f64 {
        o.metrics.hosts["router"].cpu.busiest_core()
    }

    #[test]
    fn spread_binding_lowers_the_busiest_core() {
        let base = RouterParams {
            nat_instances: 8,
            duration: Nanos::from_millis(300),
            ..RouterParams::default()
        };
        let default = run(&base);
        let spread = run(&RouterParams {
            binding: Binding::Spread,
            ..base
        });
        assert!(
            busiest(&spread) < 0.5 * busiest(&default),
            "{} vs {}",
            busiest(&spread),
            busiest(&default)
        );
        assert!(spread.forwarded as f64 >= 0.99 * default.forwarded as f64);
    }

    /// Rests on the calibrated `nat_hold` (chosen from the exhaustion load): a re-check of
    /// the calibration, not a validation.
    #[test]
    fn calibration_two_nat_instances_use_clearly_less_cpu_than_one() {
        let base = RouterParams {
            binding: Binding::Spread,
            offered_pps: 150_000,
            duration: Nanos::from_millis(300),
            ..RouterParams::default()
        };
        let one = run(&base);
        let two = run(&RouterParams {
            nat_instances: 2,
            ..base
        });
        assert!(
            two.cpu_total < 0.5 * one.cpu_total,
            "{} vs {}",
            two.cpu_total,
            one.cpu_total
        );
        assert!(two.forwarded > one.forwarded);
    }

    /// The calibration point `nat_hold` was chosen by: with one NAT instance the CPUs are
    /// exhausted while about 500 Mbit/s gets through (the report: `intr` 683 % + `kernel`
    /// 567 % at ≈300 + 200 Mbit/s).
    #[test]
    fn calibration_one_nat_instance_exhausts_the_cpus_near_500_mbit() {
        let o = run(&RouterParams {
            binding: Binding::Spread,
            offered_pps: 150_000,
            duration: Nanos::from_millis(300),
            ..RouterParams::default()
        });
        let mbit = o.metrics.throughput_bps.unwrap() / 1e6;
        assert!(o.cpu_total > 20.0, "{} CPUs", o.cpu_total);
        assert!((350.0..650.0).contains(&mbit), "{mbit} Mbit/s");
    }

    #[test]
    fn same_seed_same_result() {
        let p = RouterParams {
            duration: Nanos::from_millis(50),
            ..RouterParams::default()
        };
        let (a, b) = (run(&p), run(&p));
        assert_eq!(a.forwarded, b.forwarded);
        assert_eq!(a.metrics, b.metrics);
    }
}
