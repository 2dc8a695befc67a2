//! Moderation settings against the traffic: `moderation-mismatch` (a fixed interrupt rate
//! far from the packet rate), `adaptive-off` and `busy-poll-no-napi`.

use crate::doctor::{Finding, Severity};
use crate::rates::Rates;
use crate::snapshot::{HostSnapshot, Nic, Readable};

/// Packets per second per queue above which one interrupt per packet wastes CPU.
const BUSY_QUEUE_PPS: f64 = 20_000.0;
/// Packets per second per queue below which a long timer only adds latency.
const QUIET_QUEUE_PPS: f64 = 1_000.0;
/// Interrupts per received packet above which moderation is off in effect ("nearly one each").
const PER_PACKET_SHARE: f64 = 0.8;
/// An rx timer this long (µs) or longer is a long one.
const LONG_TIMER_US: u64 = 100;

pub fn fixed_rate_mismatch(snap: &HostSnapshot, rates: Option<&Rates>) -> Vec<Finding> {
    let Some(rates) = rates else {
        return Vec::new();
    };
    snap.nics
        .iter()
        .filter_map(|nic| nic_mismatch(nic, rates))
        .collect()
}

/// `moderation-mismatch` for one NIC with a fixed (not adaptive) rx timer, if its rate is off.
fn nic_mismatch(nic: &Nic, rates: &Rates) -> Option<Finding> {
    let Readable::Value(c) = &nic.coalesce else {
        return None;
    };
    if c.get("adaptive-rx") == Some(1) {
        return None;
    }
    let usecs = c.get("rx-usecs")?;
    let n = rates.nics.iter().find(|n| n.name == nic.name)?;
    let irq_rate = queue_irq_rate(nic, rates);
    let queues = nic.channels.value().map_or(1, |c| c.rx_queues().max(1)) as f64;
    let per_queue = n.rx_pps / queues;
    let base = Finding::new("moderation-mismatch", Severity::Warning, &nic.name)
        .evidence("rx-usecs", usecs)
        .evidence("rx packets/s", format!("{:.0}", n.rx_pps))
        .evidence("queue interrupts/s", format!("{irq_rate:.0}"))
        .evidence("rx packets/s per queue", format!("{per_queue:.0}"));
    if per_queue > BUSY_QUEUE_PPS && irq_rate > PER_PACKET_SHARE * n.rx_pps {
        return Some(
            base.explain(
                "Nearly one interrupt per packet at a high packet rate: moderation is off in \
                 effect and interrupt overhead eats CPU. A timer of tens of µs batches \
                 packets with little added latency at this rate.",
            )
            .fix(format!("ethtool -C {} rx-usecs 50", nic.name)),
        );
    }
    let quiet = per_queue > 0.0 && per_queue < QUIET_QUEUE_PPS;
    (usecs >= LONG_TIMER_US && quiet).then(|| {
        base.explain(format!(
            "A fixed {usecs} µs timer at under {QUIET_QUEUE_PPS:.0} packets/s per queue \
             batches almost nothing but delays each packet up to {usecs} µs."
        ))
        .fix(format!("ethtool -C {} rx-usecs 20", nic.name))
    })
}

/// Interrupts per second of the NIC's queue IRQs.
fn queue_irq_rate(nic: &Nic, rates: &Rates) -> f64 {
    let irqs: Vec<u32> = nic.queues.iter().filter_map(|q| q.irq).collect();
    rates
        .irqs
        .iter()
        .filter(|r| irqs.contains(&r.irq))
        .map(|r| r.per_sec)
        .sum()
}

/// Average received frame size between these (bytes) means small and full-size frames
/// mixed: request/response (≈100 B) next to bulk (≈1500 B, or more with LRO/GRO-HW).
const MIXED_FRAME_BYTES: (f64, f64) = (256.0, 1200.0);

pub fn adaptive_off(snap: &HostSnapshot, rates: Option<&Rates>) -> Vec<Finding> {
    snap.nics
        .iter()
        .filter_map(|nic| {
            let c = nic.coalesce.value()?;
            let usecs = c.get("rx-usecs")?;
            if c.get("adaptive-rx") != Some(0) || usecs == 0 {
                return None;
            }
            let mut f = Finding::new("adaptive-off", Severity::Info, &nic.name)
                .evidence("adaptive-rx", 0)
                .evidence("rx-usecs", usecs);
            let traffic = rates.and_then(|r| r.nics.iter().find(|n| n.name == nic.name));
            if let Some(n) = traffic.filter(|n| n.rx_pps > 0.0) {
                let frame = n.rx_bytes_per_sec / n.rx_pps;
                f = f.evidence("average rx frame (bytes)", format!("{frame:.0}"));
                if frame > MIXED_FRAME_BYTES.0 && frame < MIXED_FRAME_BYTES.1 {
                    f.severity = Severity::Warning;
                }
            }
            Some(
                f.explain(
                    "The driver supports adaptive moderation but a fixed timer is set. A fixed \
                     value suits one traffic shape; with small and full-size frames mixed \
                     (request/response next to bulk) adaptive moderation follows the load. \
                     Keep it off only if measured better (`nictune tune`).",
                )
                .fix(format!("ethtool -C {} adaptive-rx on", nic.name)),
            )
        })
        .collect()
}

pub fn busy_poll_without_napi(snap: &HostSnapshot) -> Vec<Finding> {
    let busy_poll = snap.sysctl_u64("net.core.busy_poll").unwrap_or(0);
    let busy_read = snap.sysctl_u64("net.core.busy_read").unwrap_or(0);
    if busy_poll == 0 && busy_read == 0 {
        return Vec::new();
    }
    snap.nics
        .iter()
        .filter(|nic| !nic.queues.is_empty() && nic.napis.value().is_some_and(|n| !n.is_empty()))
        .filter(|nic| !napi_deferral_set(nic))
        .map(|nic| {
            Finding::new("busy-poll-no-napi", Severity::Warning, &nic.name)
                .evidence("net.core.busy_poll", busy_poll)
                .evidence("net.core.busy_read", busy_read)
                .evidence("napi_defer_hard_irqs", nic.napi_defer_hard_irqs.display())
                .evidence("gro_flush_timeout_ns", nic.gro_flush_timeout_ns.display())
                .explain(
                    "Busy polling is on, but with napi_defer_hard_irqs and gro_flush_timeout at 0 \
                     the device interrupts still fire and schedule NAPI between polls, so the \
                     application competes with softirq processing and saves little.",
                )
                .fix(format!(
                    "echo 2 > /sys/class/net/{}/napi_defer_hard_irqs",
                    nic.name
                ))
                .fix(format!(
                    "echo 200000 > /sys/class/net/{}/gro_flush_timeout",
                    nic.name
                ))
        })
        .collect()
}

/// True when deferral is configured device-wide or on any NAPI.
fn napi_deferral_set(nic: &Nic) -> bool {
    let sysfs = nic.napi_defer_hard_irqs.value().is_some_and(|v| *v > 0)
        && nic.gro_flush_timeout_ns.value().is_some_and(|v| *v > 0);
    let per_napi = nic.napis.value().is_some_and(|napis| {
        napis
            .iter()
            .any(|n| n.defer_hard_irqs.unwrap_or(0) > 0 && n.gro_flush_timeout_ns.unwrap_or(0) > 0)
    });
    sysfs || per_napi
}
