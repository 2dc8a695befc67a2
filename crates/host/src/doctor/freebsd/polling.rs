//! `polling-ceiling`: DEVICE_POLLING on with HZ × burst_max below the packet rate the
//! interface must carry (polling caps each interface at that rate without idle polling,
//! moderation-algorithms.md §7). `rx-processing-limit`: rx_processing_limit capping a busy
//! queue (§8: default 100 packets per interrupt; -1 unlimited).

use super::{queue_vectors, QueueVector};
use crate::doctor::{Finding, Severity};
use crate::freebsd::FreeBsdSnapshot;

/// kern.polling.burst_max default (kern_poll.c).
const DEFAULT_BURST_MAX: i64 = 150;
/// Packet rate above this share of the polling ceiling leaves no headroom for bursts.
const NEAR_CEILING: f64 = 0.8;
/// `kern.polling.burst` at or above this share of burst_max: the kernel has raised the
/// per-tick burst (+1 per tick while there is time left, kern_poll.c netisr_pollmore) to
/// its limit.
const NEAR_BURST_MAX: f64 = 0.9;
/// A queue vector above this many interrupts/s is busy.
const BUSY_VECTOR_RATE: u64 = 5_000;

pub fn polling_ceiling(snap: &FreeBsdSnapshot) -> Vec<Finding> {
    let Some(ifs) = &snap.interfaces else {
        return Vec::new();
    };
    let polled: Vec<&str> = ifs
        .iter()
        .filter(|i| i.polling())
        .map(|i| i.name.as_str())
        .collect();
    if polled.is_empty() {
        return Vec::new();
    }
    let hz = snap.setting_i64("kern.hz").unwrap_or(1000);
    let burst_max = snap
        .setting_i64("kern.polling.burst_max")
        .unwrap_or(DEFAULT_BURST_MAX);
    // Saturating: both come from captured text.
    let ceiling = hz.saturating_mul(burst_max);
    let idle_poll = snap.setting_i64("kern.polling.idle_poll").unwrap_or(0);
    let mut f = Finding::new("polling-ceiling", Severity::Info, polled.join(", "))
        .evidence("kern.hz", hz)
        .evidence("kern.polling.burst_max", burst_max)
        .evidence("ceiling per interface (pkt/s)", ceiling)
        .evidence("kern.polling.idle_poll", idle_poll)
        .explain(format!(
            "With polling each interface moves at most HZ × burst_max = {ceiling} packets/s \
             (without idle polling); above that packets wait in the ring and overflow it. \
             Raise burst_max or HZ if the interface carries more."
        ));
    for name in &polled {
        if let Some(pps) = average_rx_pps(snap, name) {
            f = f.evidence(
                format!("{name} average rx pkt/s since boot"),
                format!("{pps:.0}"),
            );
            if pps > NEAR_CEILING * ceiling as f64 {
                f.severity = Severity::Warning;
            }
        }
    }
    if ceiling < 100_000 {
        f.severity = Severity::Warning;
    }
    if let Some(burst) = snap.setting_i64("kern.polling.burst") {
        f = f.evidence("kern.polling.burst (current, adapted each tick)", burst);
        for counter in ["kern.polling.lost_polls", "kern.polling.stalled"] {
            if let Some(n) = snap.setting_i64(counter) {
                f = f.evidence(counter, n);
            }
        }
        if burst as f64 >= NEAR_BURST_MAX * burst_max as f64 {
            f.severity = Severity::Warning;
            f.explanation += &format!(
                " The kernel has raised the per-tick burst to {burst} of burst_max                  {burst_max}: polling already takes all it may each tick, so more traffic                  waits in the ring and is dropped there."
            );
        }
    }
    f = f.fix(format!(
        "sysctl kern.polling.burst_max={}",
        burst_max.saturating_mul(2).min(1000)
    ));
    if f.severity >= Severity::Warning && idle_poll == 0 {
        f = f.fix("sysctl kern.polling.idle_poll=1");
    }
    vec![f]
}

pub fn rx_processing_limit(snap: &FreeBsdSnapshot) -> Vec<Finding> {
    let mut out = Vec::new();
    for QueueVector {
        dev,
        queue,
        irq,
        rate,
    } in queue_vectors(snap)
    {
        if rate < BUSY_VECTOR_RATE {
            continue;
        }
        let (drv, unit) = dev.split_at(super::driver_of(&dev).len());
        let key = format!("dev.{drv}.{unit}.rx_processing_limit");
        let limit = snap
            .setting_i64(&key)
            .or_else(|| snap.setting_i64(&format!("hw.{drv}.rx_process_limit")));
        let Some(limit) = limit.filter(|l| *l > 0) else {
            continue;
        };
        out.push(
            Finding::new(
                "rx-processing-limit",
                Severity::Warning,
                format!("{dev} queue {queue}"),
            )
            .evidence(key.clone(), limit)
            .evidence(format!("irq {irq} interrupts/s (vmstat -i)"), rate)
            .explain(format!(
                "The receive handler stops after {limit} packets per pass and defers the \
                     rest; on a busy queue that means extra passes and latency, and drops when \
                     the ring fills. -1 removes the cap."
            ))
            .fix(format!("sysctl {key}=-1"))
            .fix(format!("echo '{key}=-1' >> /etc/sysctl.conf")),
        );
    }
    out
}

/// Average received packets per second since boot, from the driver's MAC counter
/// (`dev.em.0.mac_stats.good_pkts_recvd`) over the uptime.
fn average_rx_pps(snap: &FreeBsdSnapshot, ifname: &str) -> Option<f64> {
    let (drv, unit) = ifname.split_at(super::driver_of(ifname).len());
    let key = format!("dev.{drv}.{unit}.mac_stats.good_pkts_recvd");
    let packets = snap.setting_i64(&key)? as f64;
    Some(packets / snap.uptime_secs?.max(1.0))
}
