//! Resolved parameters → a [`SimSpec`]: hosts, topology, workload.

use super::error::ScenarioError;
use super::value::{get_int as int, get_num as num, get_text as text, Params};
use crate::driver::e1000::{DelayTicks, Generation, E1000};
use crate::engine::rng::Rng;
use crate::engine::sim::{HostSpec, Phases, SimSpec, Topology};
use crate::host::costs::Costs;
use crate::host::napi::NapiConfig;
use crate::moderation::ModerationPolicy;
use crate::nic::link::Link;
use crate::nic::throttle::ItrReading;
use crate::nic::NicConfig;
use crate::workload::bulk::{Bulk, BulkConfig};
use crate::workload::ping::{Ping, PingConfig};
use crate::workload::rr::{Rr, RrConfig};
use crate::workload::stream::{Generator, Pattern, SizeMix};
use crate::workload::Workload;
use nictune_core::units::Nanos;

/// The e1000 generation named by a `driver` value.
pub fn generation(driver: &str) -> Option<Generation> {
    match driver {
        "e1000-7.0" => Some(Generation::V7_0),
        "e1000-7.3" => Some(Generation::V7_3),
        _ => None,
    }
}

/// The settings catalog's generation id for an e1000 generation.
fn catalog_generation(gen: Generation) -> &'static str {
    match gen {
        Generation::V7_0 => "7.0",
        Generation::V7_3 => "7.3+",
    }
}

/// Checks an `itr` value with the settings catalog's `e1000.InterruptThrottleRate` spec for
/// the generation — the rule `nictune check` applies to the same value on a real host.
fn check_itr(key: &str, gen: Generation, value: i64) -> Result<(), ScenarioError> {
    use nictune_core::catalog::{check, lookup, Context};
    let Ok(entry) = lookup("e1000.InterruptThrottleRate") else {
        return Ok(());
    };
    let context = Context {
        driver: Some("e1000".into()),
        generation: Some(catalog_generation(gen).into()),
        device: None,
    };
    let report = entry
        .parse_value(&value.to_string())
        .ok()
        .and_then(|v| check(entry, &v, &context).ok());
    match report.and_then(|r| r.errors.into_iter().next()) {
        Some(finding) => {
            // "N is out of range for LABEL: allowed LIST" → "LIST (LABEL)".
            let allowed = match finding.message.split_once(": allowed ") {
                Some((head, list)) => {
                    let label = head.split_once("out of range for ").map_or(head, |h| h.1);
                    format!("{list} ({label})")
                }
                None => finding.message,
            };
            Err(ScenarioError::BadValue {
                key: key.to_string(),
                value: value.to_string(),
                problem: "not accepted by this driver",
                allowed,
            })
        }
        None => Ok(()),
    }
}

/// Builds the moderation policy for `host` (the place to add further drivers).
pub fn policy(p: &Params, host: &str) -> Result<Box<dyn ModerationPolicy>, ScenarioError> {
    let driver = text(p, "driver")?;
    let key = |k: &str| format!("{host}.{k}");
    let itr = int(p, &key("itr"))?;
    if let Some(family) = super::families::policy(driver, itr, &key("itr"), num(p, "link.gbps")?) {
        return family;
    }
    let gen = generation(driver).ok_or_else(|| ScenarioError::BadValue {
        key: "driver".into(),
        value: driver.into(),
        problem: "not a choice",
        allowed: super::keys::DRIVERS.join(", "),
    })?;
    let ticks = |k: &str| int(p, &key(k)).map(|t| t as u16);
    let delays = DelayTicks {
        rx: ticks("rx_int_delay")?,
        rx_abs: ticks("rx_abs_int_delay")?,
        tx: ticks("tx_int_delay")?,
        tx_abs: ticks("tx_abs_int_delay")?,
    };
    let itr = int(p, &key("itr"))?;
    check_itr(&key("itr"), gen, itr)?;
    E1000::new(gen, itr, delays)
        .map(|e| Box::new(e) as Box<dyn ModerationPolicy>)
        .map_err(|e| ScenarioError::BadValue {
            key: key("itr"),
            value: itr.to_string(),
            problem: "not accepted by this driver",
            allowed: format!("{} (driver {driver})", e.allowed),
        })
}

/// RNG stream of host `name`'s timer phases.
fn phases(
    p: &Params,
    name: &str,
    policy: &dyn ModerationPolicy,
    interval: u64,
) -> Result<Phases, ScenarioError> {
    let stream = 100
        + super::keys::HOSTS
            .iter()
            .position(|h| *h == name)
            .unwrap_or(0) as u64;
    let mut rng = Rng::new(int(p, "seed")? as u64, stream);
    let period = policy.watchdog_period().map_or(1, |p| p.0);
    Ok(Phases {
        throttle_ns: rng.below(interval.max(1)),
        watchdog_ns: rng.below(period),
    })
}

fn host(p: &Params, name: &str) -> Result<HostSpec, ScenarioError> {
    let k = |s: &str| format!("{name}.{s}");
    let i = |s: &str| int(p, &k(s)).map(|v| v as u64);
    let cores = i("cores")? as usize;
    for core_key in ["irq_core", "app_core"] {
        if i(core_key)? as usize >= cores {
            return Err(ScenarioError::Inconsistent(format!(
                "{} = {} but {} = {cores}; cores are numbered from 0",
                k(core_key),
                i(core_key)?,
                k("cores")
            )));
        }
    }
    let reading = match text(p, &k("nic"))? {
        "8254x-gap" => ItrReading::MinimumGap,
        _ => ItrReading::IntervalClock,
    };
    let mut policy = policy(p, name)?;
    let interval = policy.initial().interval_ns;
    let phase = phases(p, name, policy.as_ref(), interval)?;
    Ok(HostSpec {
        name: name.to_string(),
        nic: NicConfig {
            reading,
            rx_ring: i("rx_ring")? as u32,
            tx_ring: i("tx_ring")? as u32,
            card_buffer: i("card_buffer_kb")? * 1024,
            bus_bps: num(p, &k("bus_gbps"))? * 1e9,
            rx_dma_ns: i("rx_dma_ns")?,
            tx_dma_ns: i("tx_dma_ns")?,
            link_mbps: (num(p, "link.gbps")? * 1000.0).round() as u32,
        },
        clock_ppm: num(p, &k("clock_ppm"))?,
        host_clock_ppm: num(p, &k("host_clock_ppm"))?,
        cores,
        irq_core: i("irq_core")? as usize,
        app_core: i("app_core")? as usize,
        costs: Costs {
            irq_ns: i("cost.irq_ns")?,
            poll_ns: i("cost.poll_ns")?,
            rx_pkt_ns: i("cost.rx_pkt_ns")?,
            tx_pkt_ns: i("cost.tx_pkt_ns")?,
            tx_clean_ns: i("cost.tx_clean_ns")?,
            app_ns: i("cost.app_ns")?,
            hrtimer_ns: i("cost.hrtimer_ns")?,
        },
        napi: NapiConfig {
            weight: i("napi.weight")? as u32,
            budget: i("napi.netdev_budget")? as u32,
            budget_time: Nanos::from_micros(i("napi.netdev_budget_usecs")?),
            hz: i("napi.hz")? as u32,
            defer_hard_irqs: i("napi.defer_hard_irqs")? as u32,
            gro_flush_timeout: Nanos(i("napi.gro_flush_timeout_ns")?),
            irq_suspend_timeout: Nanos::ZERO,
            gro: true,
        },
        policy,
        phase,
    })
}

/// Parses `BYTES:WEIGHT,...`.
pub fn size_mix(text: &str) -> Result<SizeMix, ScenarioError> {
    let bad = || ScenarioError::BadValue {
        key: "workload.size_mix".into(),
        value: format!("{text:?}"),
        problem: "not a size mix",
        allowed: "BYTES:WEIGHT pairs separated by commas, BYTES 64–9018, e.g. 64:7,594:4,1518:1"
            .into(),
    };
    let mut entries = Vec::new();
    for part in text.split(',') {
        let (b, w) = part.trim().split_once(':').ok_or_else(bad)?;
        let b: u32 = b.trim().parse().map_err(|_| bad())?;
        let w: u64 = w.trim().parse().map_err(|_| bad())?;
        if !(64..=9018).contains(&b) {
            return Err(bad());
        }
        entries.push((b, w));
    }
    if entries.iter().all(|&(_, w)| w == 0) {
        return Err(bad());
    }
    Ok(SizeMix::weighted(&entries))
}

fn stream(p: &Params, duration_ns: u64) -> Result<Generator, ScenarioError> {
    let pattern = match text(p, "workload.pattern")? {
        "poisson" => Pattern::Poisson,
        "onoff" => Pattern::OnOff {
            on_ns: (num(p, "workload.on_ms")? * 1e6) as u64,
            off_ns: (num(p, "workload.off_ms")? * 1e6) as u64,
        },
        _ => Pattern::Constant,
    };
    let mix = match text(p, "workload.size_mix")? {
        "" => SizeMix::fixed(int(p, "workload.frame_bytes")? as u32),
        m => size_mix(m)?,
    };
    let link = Link::new(
        num(p, "link.gbps")? * 1e9,
        int(p, "link.propagation_ns")? as u64,
    );
    let rng = Rng::new(int(p, "seed")? as u64, 1);
    let rate = num(p, "workload.rate_pps")?;
    Ok(Generator::new(pattern, rate, mix, link, rng, duration_ns))
}

/// Builds the run described by resolved parameters.
pub fn spec(p: &Params) -> Result<SimSpec, ScenarioError> {
    let duration_ns = (num(p, "duration")? * 1e9).round() as u64;
    let kind = text(p, "workload.kind")?;
    let generator = text(p, "topology")? == "generator";
    if generator != (kind == "stream") {
        return Err(ScenarioError::Inconsistent(format!(
            "workload.kind = {kind:?} needs topology = {:?}",
            if kind == "stream" {
                "generator"
            } else {
                "pair"
            }
        )));
    }
    let mss = int(p, "workload.mss")? as u32;
    let workload = match kind {
        "rr" => Workload::Rr(Box::new(Rr::new(RrConfig {
            request: int(p, "workload.request_bytes")? as u32,
            response: int(p, "workload.response_bytes")? as u32,
            outstanding: int(p, "workload.outstanding")? as u32,
            mss,
        }))),
        "ping" => Workload::Ping(Ping::new(PingConfig {
            interval_ns: (num(p, "workload.interval_ms")? * 1e6).round() as u64,
            payload: int(p, "workload.payload_bytes")? as u32,
        })),
        "bulk" => Workload::Bulk(Bulk::new(BulkConfig {
            window: int(p, "workload.window_bytes")? as u64,
            mss,
        })),
        _ => Workload::Stream,
    };
    let (hosts, topology) = if generator {
        (
            vec![host(p, "server")?],
            Topology::Generator(stream(p, duration_ns)?),
        )
    } else {
        (
            vec![host(p, "client")?, host(p, "server")?],
            Topology::Pair {
                bits_per_sec: num(p, "link.gbps")? * 1e9,
                propagation_ns: int(p, "link.propagation_ns")? as u64,
            },
        )
    };
    Ok(SimSpec {
        hosts,
        topology,
        workload,
        duration_ns,
    })
}
