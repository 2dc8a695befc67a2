//! Drops and squeezes: `nic-drops` (drops, FIFO overruns, errors), `rx-overruns` (FIFO
//! overruns growing while sampled: the levers are the ring, how soon the card is emptied and
//! the window peers may fill), `softnet-squeeze` (time_squeeze, backlog drops) and
//! `ring-small` (rings far below the driver maximum while the NIC drops). Growing counts
//! (sampled with `--interval`) are warnings; counts since boot without a sample are
//! information.

use crate::doctor::{Finding, Severity};
use crate::procfs::SoftnetRow;
use crate::rates::Rates;
use crate::snapshot::{HostSnapshot, Readable};

pub fn nic_drops(snap: &HostSnapshot, rates: Option<&Rates>) -> Vec<Finding> {
    let Some(devs) = snap.counters.net_dev.value() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for nic in &snap.nics {
        let Some(d) = devs.iter().find(|d| d.name == nic.name) else {
            continue;
        };
        let since_boot = d.rx_drop + d.rx_fifo + d.rx_errs;
        let rate = rates.and_then(|r| r.nics.iter().find(|n| n.name == nic.name));
        let growing = rate.map(|r| r.rx_drops_per_sec + r.rx_fifo_per_sec + r.rx_errors_per_sec);
        let severity = match growing {
            Some(g) if g > 0.0 => Severity::Warning,
            Some(_) => continue,
            None if since_boot > 0 => Severity::Info,
            None => continue,
        };
        let mut f = Finding::new("nic-drops", severity, &nic.name)
            .evidence("rx_drop since boot", d.rx_drop)
            .evidence("rx_fifo (overruns) since boot", d.rx_fifo)
            .evidence("rx_errs since boot", d.rx_errs);
        if let Some(r) = rate {
            f = f
                .evidence("rx drops/s", format!("{:.1}", r.rx_drops_per_sec))
                .evidence("rx overruns/s", format!("{:.1}", r.rx_fifo_per_sec));
        }
        f = f.explain(
            "Packets are lost before or at the stack: overruns mean the NIC ring filled before \
             the CPU emptied it (ring too small, interrupts too late, or the CPU too busy); \
             drops counted by the stack mean the backlog or socket queues overflowed.",
        );
        if growing.is_none() {
            f = f.fix(format!(
                "nictune show {} --interval 5   # are they still growing?",
                nic.name
            ));
        }
        out.push(f);
    }
    out
}

/// TCP payload of one full Ethernet frame with timestamps (1500 − 20 − 20 − 12): what one
/// receive descriptor holds of a back-to-back burst.
const FRAME_PAYLOAD: u64 = 1448;

/// `rx-overruns`: the receive FIFO overflowing during `--interval`. What a peer sends back to
/// back must fit in the card's buffer and the rx ring until the host empties them (the
/// HOWTO's advice for small-buffer cards, seed-cases.md case 4), so the levers are the ring
/// size, how soon the card is emptied (interrupt moderation), and the window that bounds a
/// burst (per route, or NFS rsize/wsize for NFS traffic).
pub fn rx_overruns(snap: &HostSnapshot, rates: Option<&Rates>) -> Vec<Finding> {
    let (Some(rates), Some(devs)) = (rates, snap.counters.net_dev.value()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for nic in &snap.nics {
        let Some(rate) = rates.nics.iter().find(|n| n.name == nic.name) else {
            continue;
        };
        if rate.rx_fifo_per_sec <= 0.0 {
            continue;
        }
        let name = &nic.name;
        let fifo = devs
            .iter()
            .find(|d| &d.name == name)
            .map_or(0, |d| d.rx_fifo);
        let mut f = Finding::new("rx-overruns", Severity::Warning, name)
            .evidence(
                "rx overruns/s (rx_fifo)",
                format!("{:.1}", rate.rx_fifo_per_sec),
            )
            .evidence("rx packets/s", format!("{:.0}", rate.rx_pps))
            .evidence("rx_fifo since boot", fifo);
        let rings = match &nic.rings {
            Readable::Value(r) => r.rx.zip(r.rx_max),
            _ => None,
        };
        if let Some((rx, max)) = rings {
            f = f.evidence("rx ring (now / driver maximum)", format!("{rx} / {max}"));
        }
        let rx_usecs = match &nic.coalesce {
            Readable::Value(c) => c.get("rx-usecs"),
            _ => None,
        };
        if let Some(usecs) = rx_usecs {
            f = f.evidence("coalesce rx-usecs", usecs);
        }
        f = f.explain(
            "The card's receive buffer overflowed before the host emptied it: a burst larger              than the card's buffer plus the rx ring arrived faster than it was taken. Three              levers: a larger rx ring; emptying the card sooner (a lower rx-usecs, or a CPU              less busy); and a smaller window, so peers send less back to back — per route              (route.window) for the slow path, or smaller NFS rsize/wsize for NFS traffic.",
        );
        match rings {
            Some((rx, max)) if rx < max => f = f.fix(format!("ethtool -G {name} rx {max}")),
            _ => {}
        }
        if let Some(usecs) = rx_usecs.filter(|u| *u > 1) {
            f = f.fix(format!("ethtool -C {name} rx-usecs {}", usecs / 2));
        }
        // After the ring fix the ring holds `max` frames: a window no larger than that.
        let window = rings.map_or("<bytes>".to_string(), |(_, max)| {
            (u64::from(max) * FRAME_PAYLOAD).to_string()
        });
        f = f
            .fix(format!(
                "ip route change <destination> dev {name} window {window}   # route.window: at most what the ring holds"
            ))
            .fix("nictune explain nfs.rsize   # NFS over this port: smaller rsize/wsize (export --format fstab)");
        out.push(f);
    }
    out
}

/// `net.core.netdev_budget` when the sysctl could not be read (net/core/dev.c default).
const DEFAULT_BUDGET: u64 = 300;
/// `net.core.netdev_budget_usecs` when unreadable: the kernel's `2 * USEC_PER_SEC / HZ`, here
/// for HZ=1000 (net/core/dev.c).
const DEFAULT_BUDGET_USECS: u64 = 2000;

pub fn softnet(snap: &HostSnapshot, rates: Option<&Rates>) -> Vec<Finding> {
    let Some(rows) = snap.counters.softnet.value() else {
        return Vec::new();
    };
    let squeeze = crate::procfs::total(rows.iter().map(|r| &r.time_squeeze));
    let dropped = crate::procfs::total(rows.iter().map(|r| &r.dropped));
    let growing = rates.map(|r| {
        r.cpus
            .iter()
            .map(|c| c.time_squeeze_per_sec + c.softnet_dropped_per_sec)
            .sum::<f64>()
    });
    let severity = match growing {
        Some(g) if g > 0.0 => Severity::Warning,
        Some(_) => return Vec::new(),
        None if squeeze + dropped > 0 => Severity::Info,
        None => return Vec::new(),
    };
    let budget = snap
        .sysctl_u64("net.core.netdev_budget")
        .unwrap_or(DEFAULT_BUDGET);
    let usecs = snap
        .sysctl_u64("net.core.netdev_budget_usecs")
        .unwrap_or(DEFAULT_BUDGET_USECS);
    let mut f = Finding::new("softnet-squeeze", severity, "host")
        .evidence("time_squeeze since boot", squeeze)
        .evidence("backlog drops since boot", dropped)
        .evidence("net.core.netdev_budget", budget)
        .evidence("net.core.netdev_budget_usecs", usecs);
    let queue_irqs: Vec<u32> = super::pileup::queue_irqs(snap).into_keys().collect();
    for row in rows.iter().filter(|r| r.time_squeeze + r.dropped > 0) {
        let text = squeeze_on_cpu(snap, &queue_irqs, row);
        f = f.evidence(format!("cpu {}", row.cpu), text);
    }
    f = f.explain(
        "NET_RX ran out of budget (packets or time) with work left: either the budget is \
         small for the packet rate, or one CPU carries too many queues. A squeeze defers \
         the rest to ksoftirqd, adding latency; backlog drops lose packets.",
    );
    if severity == Severity::Info {
        return vec![f.fix("nictune doctor --interval 5   # are squeezes still growing?")];
    }
    f = f
        .fix(format!("sysctl -w net.core.netdev_budget={}", budget * 2))
        .fix(format!(
            "sysctl -w net.core.netdev_budget_usecs={}",
            usecs * 2
        ));
    vec![f]
}

/// `squeeze S dropped D`, and the queue IRQs the CPU serves when it serves several.
fn squeeze_on_cpu(snap: &HostSnapshot, queue_irqs: &[u32], row: &SoftnetRow) -> String {
    let served: Vec<u32> = queue_irqs
        .iter()
        .copied()
        .filter(|irq| {
            snap.irq(*irq)
                .and_then(|i| i.cpus())
                .is_some_and(|c| c.iter().next() == Some(row.cpu))
        })
        .collect();
    let hot = if served.len() > 1 {
        format!(", serves queue IRQs {served:?}")
    } else {
        String::new()
    };
    format!("squeeze {} dropped {}{hot}", row.time_squeeze, row.dropped)
}

pub fn small_rings(snap: &HostSnapshot, rates: Option<&Rates>) -> Vec<Finding> {
    let Some(devs) = snap.counters.net_dev.value() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for nic in &snap.nics {
        let Readable::Value(r) = &nic.rings else {
            continue;
        };
        let (Some(rx), Some(max)) = (r.rx, r.rx_max) else {
            continue;
        };
        let Some(d) = devs.iter().find(|d| d.name == nic.name) else {
            continue;
        };
        let losing = match rates.and_then(|r| r.nics.iter().find(|n| n.name == nic.name)) {
            Some(n) => n.rx_fifo_per_sec + n.rx_drops_per_sec > 0.0,
            None => d.rx_fifo + d.rx_drop > 0,
        };
        if rx * 4 > max || !losing {
            continue;
        }
        out.push(
            Finding::new("ring-small", Severity::Warning, &nic.name)
                .evidence("rx ring", rx)
                .evidence("rx ring maximum", max)
                .evidence("rx_fifo since boot", d.rx_fifo)
                .evidence("rx_drop since boot", d.rx_drop)
                .explain(
                    "The receive ring is a quarter of what the driver allows or less, and the \
                     NIC is losing packets. A larger ring absorbs bursts while interrupts are \
                     coalesced or the CPU is busy (at some cost in cache footprint).",
                )
                .fix(format!("ethtool -G {} rx {}", nic.name, max.min(rx * 4))),
        );
    }
    out
}
