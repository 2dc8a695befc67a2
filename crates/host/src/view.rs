//! The human text of `nictune show`: per NIC its driver, moderation settings, rings,
//! channels, NAPI settings and queue → NAPI → IRQ → CPU table; then rates when sampled.
//! Unreadable values print as `n/a (reason)` or `? (reason)`, never as 0.

use crate::rates::Rates;
use crate::snapshot::{HostSnapshot, Nic, Readable};
use std::fmt::Write;

/// Renders a snapshot (and optional rates) as text.
pub fn render_show(snap: &HostSnapshot, rates: Option<&Rates>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "host {}  kernel {}  cpus {}  irqbalance {}",
        snap.hostname.display(),
        snap.kernel.display(),
        snap.cpus.len(),
        snap.irqbalance_running.display()
    );
    let sysctls: Vec<String> = snap
        .sysctls
        .iter()
        .filter_map(|(k, v)| Some(format!("{}={}", k.strip_prefix("net.core.")?, v.value()?)))
        .collect();
    let _ = writeln!(out, "sysctl {}", sysctls.join(" "));
    for nic in &snap.nics {
        out.push('\n');
        render_nic(&mut out, snap, nic);
    }
    if let Some(rates) = rates {
        out.push('\n');
        render_rates(&mut out, snap, rates);
    }
    out
}

fn render_nic(out: &mut String, snap: &HostSnapshot, nic: &Nic) {
    let ifindex = nic.ifindex.map_or("?".into(), |i| i.to_string());
    let _ = writeln!(
        out,
        "{}  ifindex {ifindex}  driver {}",
        nic.name,
        nic.driver.display()
    );
    let coalesce = match &nic.coalesce {
        Readable::Value(c) => c
            .in_order()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join("  "),
        other => other.absent_text(),
    };
    let _ = writeln!(out, "  coalesce  {coalesce}");
    let rings = match &nic.rings {
        Readable::Value(r) => format!(
            "rx {}/{}  tx {}/{}",
            opt(r.rx),
            opt(r.rx_max),
            opt(r.tx),
            opt(r.tx_max)
        ),
        other => other.absent_text(),
    };
    let _ = writeln!(out, "  rings     {rings}  (current/max)");
    let channels = match &nic.channels {
        Readable::Value(c) => [
            ("combined", c.combined, c.combined_max),
            ("rx", c.rx, c.rx_max),
            ("tx", c.tx, c.tx_max),
            ("other", c.other, c.other_max),
        ]
        .iter()
        .filter(|(_, now, max)| now.is_some() || max.is_some())
        .map(|(k, now, max)| format!("{k} {}/{}", opt(*now), opt(*max)))
        .collect::<Vec<_>>()
        .join("  "),
        other => other.absent_text(),
    };
    let _ = writeln!(out, "  channels  {channels}");
    let gro = match &nic.features {
        Readable::Value(f) => f.gro().map_or("n/a".into(), |g| {
            if g {
                "on".into()
            } else {
                "off".to_string()
            }
        }),
        other => other.absent_text(),
    };
    let _ = writeln!(
        out,
        "  napi      gro {gro}  defer_hard_irqs {}  gro_flush_timeout_ns {}  threaded {}",
        nic.napi_defer_hard_irqs.display(),
        nic.gro_flush_timeout_ns.display(),
        nic.threaded.display()
    );
    render_napis(out, nic);
    render_queues(out, snap, nic);
    render_other_irqs(out, snap, nic);
}

/// Device IRQs that serve no queue (config, link, misc vectors).
fn render_other_irqs(out: &mut String, snap: &HostSnapshot, nic: &Nic) {
    let queue_irqs: Vec<u32> = nic.queues.iter().filter_map(|q| q.irq).collect();
    for irq in nic.device_irqs.iter().filter(|i| !queue_irqs.contains(i)) {
        let Some(i) = snap.irq(*irq) else { continue };
        let _ = writeln!(
            out,
            "  irq {:<6} {:<20} affinity {}  effective {}",
            irq,
            i.actions.join(","),
            i.affinity.display(),
            i.effective.display()
        );
    }
}

fn render_napis(out: &mut String, nic: &Nic) {
    match &nic.napis {
        Readable::Value(napis) => {
            for n in napis {
                let _ = writeln!(
                    out,
                    "  napi {:<6} irq {}  defer_hard_irqs {}  gro_flush_timeout_ns {}  irq_suspend_timeout_ns {}  threaded {}",
                    n.id, opt(n.irq), opt(n.defer_hard_irqs), opt(n.gro_flush_timeout_ns),
                    opt(n.irq_suspend_timeout_ns), opt(n.threaded)
                );
            }
        }
        other => {
            let _ = writeln!(out, "  napi      {}", other.absent_text());
        }
    }
}

fn render_queues(out: &mut String, snap: &HostSnapshot, nic: &Nic) {
    if nic.queues.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "  {:<7} {:<6} {:<6} {:<10} {:<10} {:<10} steering",
        "queue", "napi", "irq", "affinity", "effective", "via"
    );
    for q in &nic.queues {
        let irq = q.irq.and_then(|i| snap.irq(i));
        let (aff, eff) = irq.map_or(("-".into(), "-".into()), |i| {
            (i.affinity.display(), i.effective.display())
        });
        let _ = writeln!(
            out,
            "  {:<7} {:<6} {:<6} {:<10} {:<10} {:<10} {}",
            format!("{}-{}", q.kind, q.index),
            opt(q.napi_id),
            opt(q.irq),
            aff,
            eff,
            q.irq_from.unwrap_or("-"),
            steering(&q.steering_cpus)
        );
    }
}

fn render_rates(out: &mut String, snap: &HostSnapshot, rates: &Rates) {
    let _ = writeln!(out, "rates over {:.2} s", rates.elapsed.as_secs_f64());
    let _ = writeln!(
        out,
        "  {:<6} {:>8} {:>8} {:>9} {:>12} {:>10} {:>10}",
        "cpu", "busy%", "irq%", "softirq%", "net_rx/s", "drops/s", "squeeze/s"
    );
    for c in &rates.cpus {
        let _ = writeln!(
            out,
            "  {:<6} {:>8.1} {:>8.1} {:>9.1} {:>12.0} {:>10.0} {:>10.0}",
            c.cpu,
            c.busy_pct,
            c.irq_pct,
            c.softirq_pct,
            c.net_rx_per_s,
            c.softnet_dropped_per_s,
            c.time_squeeze_per_s
        );
    }
    let _ = writeln!(
        out,
        "  {:<12} {:>12} {:>12} {:>10} {:>10} {:>10}",
        "nic", "rx pkt/s", "tx pkt/s", "drops/s", "fifo/s", "errors/s"
    );
    for n in rates.nics.iter().filter(|n| snap.nic(&n.name).is_some()) {
        let _ = writeln!(
            out,
            "  {:<12} {:>12.0} {:>12.0} {:>10.0} {:>10.0} {:>10.0}",
            n.name,
            n.rx_pps,
            n.tx_pps,
            n.rx_drops_per_s + n.tx_drops_per_s,
            n.rx_fifo_per_s,
            n.rx_errors_per_s
        );
    }
    let nic_irqs: Vec<u32> = snap
        .nics
        .iter()
        .flat_map(|n| n.queues.iter().filter_map(|q| q.irq))
        .collect();
    for r in rates.irqs.iter().filter(|r| nic_irqs.contains(&r.irq)) {
        let per_cpu: Vec<String> = r
            .per_cpu
            .iter()
            .filter(|(_, v)| *v > 0.0)
            .map(|(c, v)| format!("cpu{c} {v:.0}"))
            .collect();
        let _ = writeln!(
            out,
            "  irq {:<5} {:>10.0}/s  {}",
            r.irq,
            r.per_s,
            per_cpu.join("  ")
        );
    }
}

/// RPS/XPS CPUs; a missing file (single-queue device, no CONFIG_XPS) is just `-`.
fn steering(cpus: &Readable<crate::cpuset::CpuSet>) -> String {
    match cpus {
        Readable::Value(set) if set.is_empty() => "none".into(),
        Readable::Value(set) => set.to_list(),
        Readable::Unsupported(_) => "-".into(),
        other => other.absent_text(),
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// The human text of `show --os freebsd`.
pub fn render_freebsd(snap: &crate::freebsd::FreeBsdSnapshot) -> String {
    let mut out = String::new();
    let release = snap.setting("kern.osrelease").unwrap_or("?");
    let ncpu = snap.ncpu().map_or("?".into(), |n| n.to_string());
    let _ = writeln!(
        out,
        "FreeBSD {release}  cpus {ncpu}  hz {}",
        snap.setting("kern.hz").unwrap_or("?")
    );
    if let Some(m) = &snap.mbufs {
        let _ = writeln!(
            out,
            "mbuf clusters {}/{} in use/max  denied {}",
            opt(m.clusters_current),
            opt(m.clusters_max),
            m.denied()
        );
    }
    for key in [
        "kern.ipc.nmbclusters",
        "hw.igb.rxd",
        "hw.igb.txd",
        "hw.igb.num_queues",
        "kern.polling.burst_max",
    ] {
        if let Some(v) = snap.setting(key) {
            let _ = writeln!(out, "  {key} = {v}");
        }
    }
    if let Some(ifs) = &snap.interfaces {
        for i in ifs {
            let polling = if i.polling() { "  polling" } else { "" };
            let _ = writeln!(out, "{}  mtu {}{polling}", i.name, opt(i.mtu));
        }
    }
    if let Some(irqs) = &snap.interrupts {
        let _ = writeln!(out, "  {:<8} {:<16} {:>10}", "irq", "source", "rate/s");
        for v in irqs.iter().filter(|v| v.irq.is_some()) {
            let _ = writeln!(out, "  {:<8} {:<16} {:>10}", opt(v.irq), v.name, v.rate);
        }
    }
    if let Some(cpus) = &snap.cpus {
        for c in cpus.iter().filter(|c| c.idle < 90.0) {
            let _ = writeln!(
                out,
                "cpu {:<3} interrupt {:>5.1}%  system {:>5.1}%  idle {:>5.1}%",
                c.cpu, c.interrupt, c.system, c.idle
            );
        }
    }
    if !snap.missing.is_empty() {
        let _ = writeln!(out, "not in the capture: {}", snap.missing.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{FakeHost, ReadError, ReadErrorKind};
    use crate::snapshot;

    #[test]
    fn unreadable_values_show_their_reason_not_zero() {
        let path = "/proc/irq/38/effective_affinity_list";
        let mut host = FakeHost::new()
            .with_file(
                "/proc/interrupts",
                "  CPU0\n 38: 5 PCI-MSIX-0000:00:03.0 1-edge eth9-TxRx-0\n",
            )
            .with_file("/proc/irq/38/smp_affinity_list", "0\n")
            .with_file("/sys/class/net/eth9/queues/rx-0/rps_cpus", "0\n");
        host.errors.insert(
            path.into(),
            ReadError::new(path, ReadErrorKind::Denied, "Permission denied"),
        );
        let text = render_show(&snapshot::build(&host, &[]), None);
        assert!(
            text.contains("? (/proc/irq/38/effective_affinity_list: Permission denied)"),
            "{text}"
        );
        assert!(text.contains("coalesce  ? (not captured)"), "{text}");
    }
}
