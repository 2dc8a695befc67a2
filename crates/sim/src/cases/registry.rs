//! The case models as named built-in scenarios: their keys (with defaults, ranges and help),
//! their `--explain` text, and one `run` returning the same [`RunResult`] as the engine's
//! scenarios, so `nictune sim` lists, runs and prints both alike.
//!
//! Keys reuse the engine's value kinds and errors ([`crate::scenario::value`]): an unknown
//! key or a bad value names the key, the value and what is allowed.

use super::rxhost::RxHostOutcome;
use super::{dim_bulk, isa, ixgbevf, napi_rr, polling, router, Ledger};
use crate::bus::{CardAccess, IsaWidth};
use crate::freebsd::polling::PollingConfig;
use crate::freebsd::rx_limit::{self, RxProcessLimit};
use crate::multiqueue::binding::{parse_map, Binding};
use crate::multiqueue::smt::Topology;
use crate::scenario::error::ScenarioError;
use crate::scenario::keys::{closest, KeyDef};
use crate::scenario::value::{get_int, get_num, get_text, Kind, ParamValue, Params};
use crate::scenario::{EngineInfo, RunResult};
use nictune_core::metrics::Metrics;
use nictune_core::units::{Bytes, Nanos};

/// A built-in case scenario.
#[derive(Debug)]
pub struct CaseScenario {
    /// Name (`nictune sim NAME`).
    pub name: &'static str,
    /// One line for `--list`.
    pub description: &'static str,
    /// The model's assumptions (`--explain`).
    pub explain: &'static str,
    keys: fn() -> Vec<KeyDef>,
    run: fn(&Params) -> Result<Raw, ScenarioError>,
}

/// What a case model returns.
struct Raw {
    metrics: Metrics,
    /// Events (or simulation steps) the run took.
    events: u64,
    /// Packets the run handled (offered at its first stage).
    packets: u64,
    /// Notes for the reader.
    notes: Vec<String>,
    /// The model's packet ledgers.
    ledgers: Vec<Ledger>,
}

impl Raw {
    fn of_isa(o: isa::IsaOutcome, note: String) -> Raw {
        Raw {
            packets: o.ledgers.iter().map(|l| l.offered).sum(),
            metrics: o.metrics,
            events: o.events,
            notes: vec![note],
            ledgers: o.ledgers,
        }
    }

    fn of_polling(o: polling::Outcome) -> Raw {
        let notes = vec![format!(
            "iperf -d: {:.3} Mbit/s host to peer, {:.3} Mbit/s peer to host; CPU spent {:.1} %, \
             as top shows it {:.1} %; {:.0} em interrupts/s, {:.0} polling handler calls/s, \
             {:.0} context switches/s",
            o.up_bps / 1e6,
            o.down_bps / 1e6,
            100.0 * o.busy,
            100.0 * o.top_busy,
            o.interrupts_per_sec,
            o.chunks_per_sec,
            o.switches_per_sec
        )];
        Raw {
            packets: o.ledgers.iter().map(|l| l.offered).sum(),
            metrics: o.metrics,
            events: o.events,
            notes,
            ledgers: o.ledgers,
        }
    }

    fn of_host(o: RxHostOutcome, notes: Vec<String>) -> Raw {
        Raw {
            metrics: o.metrics,
            events: o.events,
            packets: o.received + o.ring_drops,
            notes,
            ledgers: o.ledgers,
        }
    }
}

/// One run of a case scenario.
#[derive(Debug, Clone)]
pub struct CaseRun {
    /// Params, metrics and engine figures, as for the engine's scenarios.
    pub result: RunResult,
    /// What the reader should know beyond the metrics (e.g. interfaces that did not start).
    pub notes: Vec<String>,
    /// The model's packet ledgers (each balances: offered = delivered + dropped + in flight).
    pub ledgers: Vec<Ledger>,
}

/// Every case scenario, in listing order.
pub fn all() -> &'static [CaseScenario] {
    &CASES
}

/// The case scenario `name`.
pub fn find(name: &str) -> Option<&'static CaseScenario> {
    CASES.iter().find(|c| c.name == name)
}

static CASES: [CaseScenario; 7] = [
    CaseScenario {
        name: "seed-freebsd-polling",
        description: "Case 2: FreeBSD 7.2 em, DEVICE_POLLING vs interrupts, iperf -d on 10 Mbit/s (2009)",
        explain: polling::EXPLAIN,
        keys: polling_keys,
        run: run_polling,
    },
    CaseScenario {
        name: "seed-ixgbevf-sriov",
        description: "Case 3: ixgbevf InterruptThrottleRate, 150 × 40-byte iperf streams into an EC2 VF (2014)",
        explain: ixgbevf::EXPLAIN,
        keys: ixgbevf_keys,
        run: run_ixgbevf,
    },
    CaseScenario {
        name: "seed-isa-ttcp",
        description: "Case 4: TTCP into an ISA card on a 40 MHz 486 at a given ISA bus clock (1990s)",
        explain: isa::EXPLAIN,
        keys: ttcp_keys,
        run: run_ttcp,
    },
    CaseScenario {
        name: "seed-isa-nfs",
        description: "Case 4: NFS reads of 1–8 kB through an ISA card at 8 MHz (1990s)",
        explain: isa::EXPLAIN,
        keys: nfs_keys,
        run: run_nfs,
    },
    CaseScenario {
        name: "seed-igb-router",
        description: "Case 5: FreeBSD 8.2 router, 10 igb ports × 4 queues, 24 CPUs, ipfw NAT (2011)",
        explain: router::EXPLAIN,
        keys: router_keys,
        run: run_router,
    },
    CaseScenario {
        name: "dim-bulk",
        description: "Linux DIM vs a fixed 8 µs coalescing on a 10 Gbit/s bulk stream",
        explain: DIM_EXPLAIN,
        keys: dim_keys,
        run: run_dim,
    },
    CaseScenario {
        name: "napi-memcached",
        description: "memcached-like request/response on a multi-queue 100 GbE NIC: NAPI base, defer, suspend, busy-poll",
        explain: napi_rr::EXPLAIN,
        keys: napi_keys,
        run: run_napi,
    },
];

const DIM_EXPLAIN: &str = "\
dim-bulk — Linux DIM (EQE rx profiles, 64-event windows, >10 % significance, parking and
tired states) against a fixed 8 µs / 256-frame timer, 812 kpps of 1514-byte frames into one
queue; 1.5 µs per interrupt, 0.5 µs per poll, 0.3 µs per frame (sim-notes §4.3 orders).
";

fn int(
    name: &'static str,
    min: i64,
    max: i64,
    unit: &'static str,
    default: i64,
    help: &'static str,
) -> KeyDef {
    KeyDef {
        name: name.to_string(),
        kind: Kind::Int { min, max, unit },
        default: ParamValue::Int(default),
        help,
    }
}

fn float(
    name: &'static str,
    min: f64,
    max: f64,
    unit: &'static str,
    default: f64,
    help: &'static str,
) -> KeyDef {
    KeyDef {
        name: name.to_string(),
        kind: Kind::Float { min, max, unit },
        default: ParamValue::Float(default),
        help,
    }
}

fn choice(
    name: &'static str,
    c: &'static [&'static str],
    default: &str,
    help: &'static str,
) -> KeyDef {
    KeyDef {
        name: name.to_string(),
        kind: Kind::Choice(c),
        default: ParamValue::Text(default.to_string()),
        help,
    }
}

fn common(duration: f64, keys: Vec<KeyDef>) -> Vec<KeyDef> {
    common_seeded(duration, 1, keys)
}

/// `common` for a case whose default seed is not 1 (kept from when the case fixed its seed,
/// so the default run stays the one its figures were taken from).
fn common_seeded(duration: f64, seed: u64, mut keys: Vec<KeyDef>) -> Vec<KeyDef> {
    keys.push(float(
        "duration",
        0.001,
        3600.0,
        "simulated seconds",
        duration,
        "simulated time",
    ));
    keys.push(int("seed", 0, i64::MAX, "", seed as i64, "random seed"));
    keys
}

impl CaseScenario {
    /// The keys with their defaults.
    pub fn keys(&self) -> Vec<KeyDef> {
        (self.keys)()
    }

    /// Checks `key=text` against the keys and records it in `set`.
    pub fn assign(&self, set: &mut Params, key: &str, text: &str) -> Result<(), ScenarioError> {
        let keys = self.keys();
        let def = keys
            .iter()
            .find(|k| k.name == key)
            .ok_or_else(|| ScenarioError::UnknownKey {
                key: key.to_string(),
                suggestion: closest(key, keys.iter().map(|k| k.name.as_str())),
            })?;
        set.insert(key.to_string(), def.kind.parse(key, text)?);
        Ok(())
    }

    /// Defaults overridden by `set`.
    pub fn resolved(&self, set: &Params) -> Params {
        let mut out: Params = self
            .keys()
            .into_iter()
            .map(|k| (k.name.to_string(), k.default))
            .collect();
        out.extend(set.clone());
        out
    }

    /// Runs the case with `set` applied.
    pub fn run(&self, set: &Params) -> Result<CaseRun, ScenarioError> {
        let params = self.resolved(set);
        let Raw {
            metrics,
            events,
            packets,
            notes,
            ledgers,
        } = (self.run)(&params)?;
        let engine = EngineInfo {
            seed: get_int(&params, "seed")? as u64,
            events,
            packets,
            sim_seconds: get_num(&params, "duration")?,
            wall_seconds: None,
        };
        Ok(CaseRun {
            result: RunResult {
                engine,
                metrics,
                params,
            },
            notes,
            ledgers,
        })
    }
}

fn duration(p: &Params) -> Result<Nanos, ScenarioError> {
    Ok(Nanos::from_secs_f64(get_num(p, "duration")?))
}

/// The `rx_process_limit` key: one range for every FreeBSD case ([`rx_limit::ALLOWED`]).
fn rx_process_limit(p: &Params) -> Result<RxProcessLimit, ScenarioError> {
    let limit = get_int(p, "rx_process_limit")?;
    RxProcessLimit::from_tunable(limit).map_err(|e| {
        bad(
            "rx_process_limit",
            limit.to_string(),
            "out of range",
            e.allowed,
        )
    })
}

fn bad(key: &str, value: String, problem: &'static str, allowed: &str) -> ScenarioError {
    ScenarioError::BadValue {
        key: key.to_string(),
        value,
        problem,
        allowed: allowed.to_string(),
    }
}

// --- Case 2 ---------------------------------------------------------------------------

fn polling_keys() -> Vec<KeyDef> {
    common_seeded(
        10.0,
        polling::DEFAULT_SEED,
        vec![
            choice(
                "mode",
                &["polling", "interrupts"],
                "polling",
                "ifconfig em0 polling, or interrupts",
            ),
            float(
                "cpu_mhz",
                10.0,
                10_000.0,
                "MHz",
                polling::DEFAULT_MHZ,
                "the host's clock, P6-class cycles per operation (default: pfSense 1.2.3's sizing floor for 10-20 Mbit/s)",
            ),
            choice(
                "statclock",
                &["lapic", "rtc"],
                "lapic",
                "what drives top's statistics clock: the local APIC timer, shared with hardclock (any CPU with an APIC), or the RTC (no APIC)",
            ),
            int(
                "hz",
                100,
                10_000,
                "ticks/s",
                1000,
                "kern.hz (options HZ=1000)",
            ),
            int(
                "burst_max",
                10,
                1000,
                "frames",
                150,
                "kern.polling.burst_max",
            ),
            int(
                "each_burst",
                1,
                1000,
                "frames",
                5,
                "kern.polling.each_burst",
            ),
            int("user_frac", 0, 99, "%", 50, "kern.polling.user_frac"),
            int("reg_frac", 1, 10_000, "ticks", 20, "kern.polling.reg_frac"),
            int("idle_poll", 0, 1, "", 0, "kern.polling.idle_poll"),
            int(
                "max_interrupt_rate",
                100,
                100_000,
                "interrupts/s",
                8000,
                "hw.em.max_interrupt_rate (interrupts mode)",
            ),
            int(
                "rx_process_limit",
                -1,
                rx_limit::MAX,
                "packets",
                100,
                "hw.em.rx_process_limit: -1 unlimited, or 1..2147483647 (0 is rejected)",
            ),
        ],
    )
}

fn run_polling(p: &Params) -> Result<Raw, ScenarioError> {
    let hz = get_int(p, "hz")? as u32;
    let mut cfg = PollingConfig::new(
        hz,
        get_int(p, "burst_max")?,
        get_int(p, "each_burst")?,
        get_int(p, "user_frac")?,
        get_int(p, "reg_frac")?,
    )
    .map_err(|e| bad(e.name, e.value.to_string(), "out of range", e.allowed))?;
    cfg.idle_poll = get_int(p, "idle_poll")? == 1;
    let mode = match get_text(p, "mode")? {
        "interrupts" => polling::Mode::Interrupts {
            max_interrupt_rate: get_int(p, "max_interrupt_rate")? as u32,
        },
        _ => polling::Mode::Polling(cfg),
    };
    let mut params = polling::Params::report(mode);
    params.cpu_mhz = get_num(p, "cpu_mhz")?;
    params.statclock = match get_text(p, "statclock")? {
        "rtc" => polling::StatClock::Rtc,
        _ => polling::StatClock::Lapic,
    };
    params.hz = hz;
    params.rx_process_limit = rx_process_limit(p)?;
    params.duration = duration(p)?;
    params.seed = get_int(p, "seed")? as u64;
    Ok(Raw::of_polling(polling::run(&params)))
}

// --- Case 3 ---------------------------------------------------------------------------

fn ixgbevf_keys() -> Vec<KeyDef> {
    common(
        10.0,
        vec![int(
            "itr",
            0,
            488_281,
            "",
            1,
            "InterruptThrottleRate: 0 off, 1 dynamic, 3 conservative, 956–488281 interrupts/s",
        )],
    )
}

fn run_ixgbevf(p: &Params) -> Result<Raw, ScenarioError> {
    let itr = get_int(p, "itr")?;
    let setting = ixgbevf::setting(itr).map_err(|_| {
        bad(
            "itr",
            itr.to_string(),
            "not accepted by ixgbevf",
            "0, 1, 3 or 956–488281",
        )
    })?;
    let o = ixgbevf::run(setting, duration(p)?, get_int(p, "seed")? as u64);
    Ok(Raw::of_host(o, vec![]))
}

// --- Case 4 ---------------------------------------------------------------------------

/// The `card` choices: 8- and 16-bit shared-memory WD80x3 boards, and the NE1000/NE2000
/// that move frames through the 8390's remote DMA.
const ISA_CARDS: &[&str] = &["8bit", "16bit", "ne1000", "ne2000"];

fn isa_card(p: &Params) -> Result<(IsaWidth, CardAccess), ScenarioError> {
    Ok(match get_text(p, "card")? {
        "16bit" => (IsaWidth::Bits16, CardAccess::SharedMemory),
        "ne1000" => (IsaWidth::Bits8, CardAccess::RemoteDma),
        "ne2000" => (IsaWidth::Bits16, CardAccess::RemoteDma),
        _ => (IsaWidth::Bits8, CardAccess::SharedMemory),
    })
}

fn ttcp_keys() -> Vec<KeyDef> {
    common(
        10.0,
        vec![
            float("isa_mhz", 4.0, 40.0, "MHz", 6.7, "ISA bus clock"),
            choice(
                "card",
                ISA_CARDS,
                "8bit",
                "8bit/16bit: WD8003/WD8013 shared memory; ne1000/ne2000: remote DMA (8 or 16 kB on board)",
            ),
            int(
                "tcp_window",
                536,
                65_535,
                "bytes",
                16_384,
                "TCP window (route add … window W)",
            ),
            int(
                "extra_wait_states",
                0,
                16,
                "bus clocks",
                0,
                "wait states the card adds per bus cycle",
            ),
        ],
    )
}

fn run_ttcp(p: &Params) -> Result<Raw, ScenarioError> {
    let (width, access) = isa_card(p)?;
    let mut params = isa::IsaParams::ttcp(
        width,
        (get_num(p, "isa_mhz")? * 1e6) as u64,
        Bytes(get_int(p, "tcp_window")? as u64),
    );
    params.access = access;
    params.extra_wait_states = get_int(p, "extra_wait_states")? as u64;
    params.duration = duration(p)?;
    params.seed = get_int(p, "seed")? as u64;
    let o = isa::run(&params);
    let note = format!(
        "{:.0} KB/s of TTCP payload, {} card overflows, {} retransmission timeouts, {} fast retransmits",
        o.kbytes_per_sec, o.card_overflows, o.retransmissions, o.fast_retransmits
    );
    Ok(Raw::of_isa(o, note))
}

fn nfs_keys() -> Vec<KeyDef> {
    common(
        10.0,
        vec![
            int(
                "nfs_size",
                512,
                8192,
                "bytes",
                8192,
                "NFS rsize: 1024, 2048, 4096 or 8192",
            ),
            float("isa_mhz", 4.0, 40.0, "MHz", 8.0, "ISA bus clock"),
            choice("card", ISA_CARDS, "8bit", "card (see seed-isa-ttcp)"),
            int(
                "outstanding",
                1,
                16,
                "requests",
                4,
                "reads in flight (block I/O daemons)",
            ),
            int(
                "extra_wait_states",
                -1,
                16,
                "bus clocks",
                -1,
                "wait states the card adds to its packet-RAM cycles; -1: 2 on the 8-bit WD (the old WD8003E, ≈1 MB/s per NetBSD we(4)), 0 otherwise",
            ),
        ],
    )
}

fn run_nfs(p: &Params) -> Result<Raw, ScenarioError> {
    let size = get_int(p, "nfs_size")? as u64;
    let (width, access) = isa_card(p)?;
    let mut params = isa::IsaParams::seed_nfs(width, Bytes(size));
    if access == CardAccess::RemoteDma {
        // The 2 wait states are the old WD8003E's shared memory, not an NE card's.
        params.extra_wait_states = 0;
    }
    params.access = access;
    params.clock_hz = (get_num(p, "isa_mhz")? * 1e6) as u64;
    params.workload = isa::IsaWorkload::Nfs {
        size: Bytes(size),
        outstanding: get_int(p, "outstanding")? as u32,
    };
    if let ws @ 0.. = get_int(p, "extra_wait_states")? {
        params.extra_wait_states = ws as u64;
    }
    params.duration = duration(p)?;
    params.seed = get_int(p, "seed")? as u64;
    let o = isa::run(&params);
    let note = format!(
        "{:.0} KB/s of NFS data, {} card overflows, {} re-requests",
        o.kbytes_per_sec, o.card_overflows, o.retransmissions
    );
    Ok(Raw::of_isa(o, note))
}

// --- Case 5 ---------------------------------------------------------------------------

fn router_keys() -> Vec<KeyDef> {
    let d = router::RouterParams::default();
    common(1.0, vec![
        int("ports", 1, 64, "", d.ports as i64, "igb ports"),
        int("num_queues", 1, 16, "", d.queues as i64, "hw.igb.num_queues"),
        int("rxd", 8, 4096, "descriptors", d.rxd as i64, "hw.igb.rxd"),
        int("nmbclusters", 0, 1 << 32, "clusters", 25_600, "kern.ipc.nmbclusters (25600 default on that host; 204800 fixed it)"),
        KeyDef { name: "binding".into(), kind: Kind::Text, default: ParamValue::Text("default".into()), help: "default (queue N on CPU N), spread, or a map `igbP:que Q CPU` per line (the CLI reads FILE)" },
        int("nat_instances", 1, 64, "", d.nat_instances as i64, "ipfw NAT instances"),
        float("offered_pps", 1.0, 1e8, "packets/s", d.offered_pps as f64, "forwarded packets/s over all ports (206 kpps in + out)"),
        int("frame_bytes", 64, 9018, "bytes", d.frame.0 as i64, "mean frame, Ethernet header to FCS (no preamble or gap)"),
        int("rx_process_limit", -1, rx_limit::MAX, "packets", -1, "dev.igb.N.rx_processing_limit: -1 unlimited, or 1..2147483647 (0 is rejected)"),
        choice("smt", &["on", "off"], "on", "hyper-threading: 24 logical CPUs on 12 cores, or 12 CPUs"),
        int("max_interrupt_rate", 100, 100_000, "interrupts/s", 8000, "hw.igb.max_interrupt_rate"),
    ])
}

fn run_router(p: &Params) -> Result<Raw, ScenarioError> {
    let mut r = router::RouterParams::default();
    r.topology = if get_text(p, "smt")? == "off" {
        Topology {
            threads_per_core: 1,
            ..r.topology
        }
    } else {
        r.topology
    };
    r.ports = get_int(p, "ports")? as u32;
    r.queues = get_int(p, "num_queues")? as u32;
    r.rxd = get_int(p, "rxd")? as u32;
    r.nmbclusters = get_int(p, "nmbclusters")? as u64;
    r.binding = match get_text(p, "binding")? {
        "default" => Binding::Default,
        "spread" => Binding::Spread,
        text => parse_map(text, "igb", r.topology.cpus()).map_err(|e| {
            bad(
                "binding",
                format!("{:?}", e.text),
                e.problem,
                "default, spread, or lines `igbP:que Q CPU`",
            )
        })?,
    };
    if let Binding::Explicit(map) = &r.binding {
        if let Some((v, _)) = map
            .iter()
            .find(|(v, _)| v.port >= r.ports || v.queue >= r.queues)
        {
            return Err(bad(
                "binding",
                format!("igb{}:que {}", v.port, v.queue),
                "a queue the host does not have",
                &format!(
                    "ports igb0–igb{} and queues 0–{} (ports, num_queues)",
                    r.ports.saturating_sub(1),
                    r.queues.saturating_sub(1)
                ),
            ));
        }
    }
    r.nat_instances = get_int(p, "nat_instances")? as usize;
    r.offered_pps = get_num(p, "offered_pps")? as u64;
    r.frame = Bytes(get_int(p, "frame_bytes")? as u64);
    r.rx_process_limit = rx_process_limit(p)?;
    r.max_interrupt_rate = get_int(p, "max_interrupt_rate")? as u32;
    r.duration = duration(p)?;
    r.seed = get_int(p, "seed")? as u64;
    if r.ports * r.queues >= 1 << 15 {
        return Err(bad(
            "ports",
            r.ports.to_string(),
            "too many vectors",
            "ports × num_queues below 32768",
        ));
    }
    let cap = router::line_rate_pps(r.ports, r.frame);
    if r.offered_pps as f64 > cap {
        return Err(bad(
            "offered_pps",
            r.offered_pps.to_string(),
            "more than the ports' line rate",
            &format!(
                "at most {cap:.0} packets/s: {} × 1 Gbit/s ports with {}-byte frames (raise ports or lower frame_bytes)",
                r.ports, r.frame.0
            ),
        ));
    }
    let o = router::run(&r);
    let metrics = o.metrics;
    let mut notes: Vec<String> = o.setup_errors.iter().map(ToString::to_string).collect();
    notes.push(format!(
        "{:.2} CPUs busy in all; {:.3} CPU-seconds spinning on NAT locks",
        o.cpu_total,
        o.nat_spin.as_secs_f64()
    ));
    Ok(Raw {
        metrics,
        events: o.events,
        packets: o.forwarded + o.dropped,
        notes,
        ledgers: o.ledgers,
    })
}

// --- DIM ------------------------------------------------------------------------------

fn dim_keys() -> Vec<KeyDef> {
    common_seeded(
        1.0,
        dim_bulk::DEFAULT_SEED,
        vec![choice(
            "policy",
            &["dim", "fixed8"],
            "dim",
            "DIM, or a fixed 8 µs / 256-frame timer",
        )],
    )
}

fn run_dim(p: &Params) -> Result<Raw, ScenarioError> {
    let policy = if get_text(p, "policy")? == "fixed8" {
        dim_bulk::fixed_8us()
    } else {
        dim_bulk::dim()
    };
    let o = dim_bulk::run(policy, duration(p)?, get_int(p, "seed")? as u64);
    Ok(Raw::of_host(o, vec![]))
}

// --- NAPI policies --------------------------------------------------------------------

fn napi_keys() -> Vec<KeyDef> {
    let cq = napi_rr::CqModeration::default();
    common(
        1.0,
        vec![
            choice(
                "policy",
                &["base", "defer", "suspend", "busy-poll"],
                "base",
                "NAPI policy: NIC coalescing only, IRQ deferral, IRQ suspension, epoll busy polling",
            ),
            int("queues", 1, 256, "", 8, "receive queues, each with its own core and worker"),
            float(
                "rate",
                1.0,
                1e9,
                "requests/s",
                1e6,
                "requests offered to the host (Poisson, spread evenly over the queues)",
            ),
            // Defaults: the configurations of the IRQ-suspension series' memcached benchmark
            // ("Suspend IRQs during preferred busy poll", netdev 2024: defer20, suspend20,
            // busy).
            int(
                "defer_hard_irqs",
                0,
                i32::MAX as i64,
                "",
                100,
                "napi_defer_hard_irqs (defer, suspend, busy-poll)",
            ),
            float(
                "gro_flush_timeout_us",
                0.0,
                1e6,
                "µs",
                20.0,
                "gro_flush_timeout (defer, suspend)",
            ),
            float(
                "busy_flush_timeout_us",
                0.0,
                1e6,
                "µs",
                200.0,
                "gro_flush_timeout under busy-poll",
            ),
            float(
                "irq_suspend_timeout_us",
                0.0,
                1e7,
                "µs",
                20_000.0,
                "irq-suspend-timeout (suspend)",
            ),
            int(
                "busy_poll_usecs",
                0,
                1_000_000,
                "µs",
                64,
                "epoll busy_poll_usecs (busy-poll; suspend uses 0)",
            ),
            int(
                "busy_poll_budget",
                1,
                65_535,
                "packets",
                64,
                "epoll busy_poll_budget (suspend, busy-poll)",
            ),
            int("max_events", 1, 65_536, "", 64, "epoll_wait maxevents"),
            int("ring", 64, 8192, "descriptors", 1024, "rx descriptors per queue"),
            int(
                "rx_usecs",
                0,
                4095,
                "µs",
                cq.rx_usecs.0 as i64 / 1000,
                "rx coalescing timer (CQE mode)",
            ),
            int("rx_frames", 1, 65_535, "", cq.rx_frames as i64, "rx coalescing frames"),
            int(
                "tx_usecs",
                0,
                4095,
                "µs",
                cq.tx_usecs.0 as i64 / 1000,
                "tx coalescing timer (EQE mode)",
            ),
            int("tx_frames", 1, 65_535, "", cq.tx_frames as i64, "tx coalescing frames"),
        ],
    )
}

fn run_napi(p: &Params) -> Result<Raw, ScenarioError> {
    let policy = napi_rr::Policy::parse(get_text(p, "policy")?).ok_or_else(|| {
        bad(
            "policy",
            get_text(p, "policy").unwrap_or_default().to_string(),
            "unknown",
            "base, defer, suspend or busy-poll",
        )
    })?;
    let us = |k: &str| -> Result<Nanos, ScenarioError> {
        Ok(Nanos::from_secs_f64(get_num(p, k)? / 1e6))
    };
    let params = napi_rr::Params {
        policy,
        queues: get_int(p, "queues")? as u32,
        rate: get_num(p, "rate")?,
        // A GET of a short key over TCP, and a response with a 200-byte value (assumed).
        request: Bytes(128),
        response: Bytes(320),
        link_bps: 100e9,
        ring: get_int(p, "ring")? as u32,
        cq: napi_rr::CqModeration {
            rx_usecs: Nanos::from_micros(get_int(p, "rx_usecs")? as u64),
            rx_frames: get_int(p, "rx_frames")? as u32,
            tx_usecs: Nanos::from_micros(get_int(p, "tx_usecs")? as u64),
            tx_frames: get_int(p, "tx_frames")? as u32,
        },
        defer_hard_irqs: get_int(p, "defer_hard_irqs")? as u32,
        gro_flush_timeout: us("gro_flush_timeout_us")?,
        busy_gro_flush_timeout: us("busy_flush_timeout_us")?,
        irq_suspend_timeout: us("irq_suspend_timeout_us")?,
        busy_poll: Nanos::from_micros(get_int(p, "busy_poll_usecs")? as u64),
        busy_poll_budget: get_int(p, "busy_poll_budget")? as u32,
        max_events: get_int(p, "max_events")? as u32,
        costs: napi_rr::Costs::default(),
        duration: duration(p)?,
        seed: get_int(p, "seed")? as u64,
    };
    let o = napi_rr::run(&params)
        .map_err(|e| bad(e.name, e.value, "more than the link carries", &e.allowed))?;
    let note = format!(
        "{}: {} queues; the workers were woken from epoll_wait {:.0} times/s; \
         CPU {:.0} % of each core on average; {} requests answered, {} unanswered at the end \
         (in the latency at their age)",
        policy.name(),
        params.queues,
        o.wakeups as f64 / params.duration.as_secs_f64(),
        100.0 * o.cpu_busy(params.duration),
        o.answered,
        o.unanswered,
    );
    Ok(Raw {
        packets: o.ledgers[0].offered,
        metrics: o.metrics,
        events: o.events,
        notes: vec![note],
        ledgers: o.ledgers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_runs_briefly_with_its_defaults() {
        for c in all() {
            let mut set = Params::new();
            c.assign(&mut set, "duration", "0.05").unwrap();
            let r = c
                .run(&set)
                .unwrap_or_else(|e| panic!("{}: {e}", c.name))
                .result;
            assert!(!r.metrics.hosts.is_empty(), "{}", c.name);
            assert!(r.engine.events > 0, "{}", c.name);
            assert!(!c.explain.is_empty());
        }
    }

    #[test]
    fn bad_keys_and_values_name_what_is_allowed() {
        let c = find("seed-ixgbevf-sriov").unwrap();
        let mut set = Params::new();
        let e = c.assign(&mut set, "itrr", "1").unwrap_err();
        assert!(e.to_string().contains("did you mean `itr`"), "{e}");
        let nfs = find("seed-isa-nfs").unwrap();
        let e = nfs
            .assign(&mut Params::new(), "nfs_sise", "4096")
            .unwrap_err();
        assert!(e.to_string().contains("did you mean `nfs_size`"), "{e}");
        c.assign(&mut set, "itr", "100").unwrap();
        let e = c.run(&set).unwrap_err().to_string();
        assert!(e.contains("itr") && e.contains("956–488281"), "{e}");
        let r = find("seed-igb-router").unwrap();
        let mut set = Params::new();
        r.assign(&mut set, "binding", "igb7:que 0 99").unwrap();
        let e = r.run(&set).unwrap_err().to_string();
        assert!(e.contains("CPU beyond"), "{e}");
        // 10 ports of 4 queues: igb0–igb9, queues 0–3.
        for (map, named) in [
            ("igb0:que 9 1", "igb0:que 9"),
            ("igb15:que 0 1", "igb15:que 0"),
        ] {
            r.assign(&mut set, "binding", map).unwrap();
            let e = r.run(&set).unwrap_err().to_string();
            assert!(
                e.contains(named) && e.contains("igb0–igb9 and queues 0–3"),
                "{e}"
            );
        }
    }

    #[test]
    fn the_router_refuses_more_than_its_ports_carry() {
        let r = find("seed-igb-router").unwrap();
        let mut set = Params::new();
        // Three gigabit ports cannot carry 8.9 Gbit/s of 777-byte frames.
        r.assign(&mut set, "ports", "3").unwrap();
        r.assign(&mut set, "offered_pps", "1431000").unwrap();
        let e = r.run(&set).unwrap_err().to_string();
        assert!(e.contains("offered_pps") && e.contains("line rate"), "{e}");
        let cap = router::line_rate_pps(3, Bytes(777));
        assert!(e.contains(&format!("{cap:.0}")), "{e}");
        r.assign(&mut set, "offered_pps", &format!("{}", cap.floor()))
            .unwrap();
        r.assign(&mut set, "duration", "0.001").unwrap();
        assert!(r.run(&set).is_ok());
    }

    /// Request/response models report transactions, and every model with interrupts and
    /// frames reports frames per interrupt.
    #[test]
    fn request_response_and_interrupt_figures_are_filled() {
        for (name, host) in [("napi-memcached", "server"), ("seed-isa-ttcp", "pc486")] {
            let c = find(name).unwrap();
            let mut set = Params::new();
            c.assign(&mut set, "duration", "0.05").unwrap();
            let m = c.run(&set).unwrap().result.metrics;
            assert!(m.hosts[host].packets_per_interrupt.is_some(), "{name}");
            if name == "napi-memcached" {
                let (t, b) = (m.transactions_per_sec.unwrap(), m.throughput_bps.unwrap());
                // 58 + 250 payload bytes a transaction.
                assert!((b - t * 308.0 * 8.0).abs() < 1e-6 * b, "{t} {b}");
            }
        }
    }

    /// Ethernet's smallest frame is 64 bytes with the FCS: one gigabit port carries at most
    /// 1e9 / (84 · 8) = 1,488,095 of them a second.
    #[test]
    fn the_router_counts_minimum_frames_as_64_bytes() {
        let r = find("seed-igb-router").unwrap();
        let mut set = Params::new();
        let e = r
            .assign(&mut set, "frame_bytes", "60")
            .unwrap_err()
            .to_string();
        assert!(e.contains("frame_bytes") && e.contains("64"), "{e}");
        assert!((router::line_rate_pps(1, Bytes(64)) - 1e9 / 672.0).abs() < 1e-6);
        assert!((router::line_rate_pps(1, Bytes(60)) - 1e9 / 672.0).abs() < 1e-6);
        r.assign(&mut set, "ports", "1").unwrap();
        r.assign(&mut set, "frame_bytes", "64").unwrap();
        r.assign(&mut set, "offered_pps", "1562500").unwrap();
        let e = r.run(&set).unwrap_err().to_string();
        assert!(e.contains("1488095"), "{e}");
    }

    #[test]
    fn rx_process_limit_has_one_range() {
        let r = find("seed-igb-router").unwrap();
        let mut set = Params::new();
        for ok in ["-1", "1", "2147483647"] {
            r.assign(&mut set, "rx_process_limit", ok).unwrap();
            assert!(
                RxProcessLimit::from_tunable(get_int(&set, "rx_process_limit").unwrap()).is_ok()
            );
        }
        let e = r
            .assign(&mut set, "rx_process_limit", "2147483648")
            .unwrap_err();
        assert!(e.to_string().contains("2147483647"), "{e}");
        r.assign(&mut set, "rx_process_limit", "0").unwrap();
        r.assign(&mut set, "duration", "0.01").unwrap();
        let e = r.run(&set).unwrap_err().to_string();
        assert!(e.contains(rx_limit::ALLOWED), "{e}");
    }

    #[test]
    fn the_router_default_reproduces_the_start_failure() {
        let r = find("seed-igb-router").unwrap();
        let mut set = Params::new();
        r.assign(&mut set, "duration", "0.01").unwrap();
        let out = r.run(&set).unwrap();
        assert!(out.result.metrics.hosts["router"].drops["interface_down"] > 0);
        assert!(
            out.notes[0].starts_with("igb1: could not setup receive structures"),
            "{:?}",
            out.notes
        );
        r.assign(&mut set, "nmbclusters", "204800").unwrap();
        let out = r.run(&set).unwrap();
        assert_eq!(
            out.result.metrics.hosts["router"].drops["interface_down"],
            0
        );
    }
}
