//! The human text of `nictune show`: per NIC its driver, moderation settings, rings,
//! channels, NAPI settings and queue → NAPI → IRQ → CPU table; then rates when sampled.
//! Unreadable values print as `n/a (reason)` or `? (reason)`, never as 0.

use crate::cpuset::CpuSet;
use crate::rates::Rates;
use crate::snapshot::{Channels, Coalesce, Features, HostSnapshot, Nic, Readable, Rings};
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
    if sysctls.is_empty() {
        // In a network namespace other than the host's, /proc/sys/net/core lacks them.
        let _ = writeln!(
            out,
            "sysctl (the host-wide net.core values are not readable here: another network namespace?)"
        );
    } else {
        let _ = writeln!(out, "sysctl {}", sysctls.join(" "));
    }
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
    let _ = writeln!(out, "  link      {}", link_text(nic));
    let none_offered = matches!(nic.coalesce, Readable::Unsupported(_))
        && matches!(nic.rings, Readable::Unsupported(_))
        && matches!(nic.channels, Readable::Unsupported(_));
    if none_offered {
        // A virtual device (ifb, dummy, bridge): one line instead of three identical reasons.
        let _ = writeln!(
            out,
            "  ethtool   n/a: the driver supports no coalescing, ring or channel settings"
        );
    } else {
        let _ = writeln!(out, "  coalesce  {}", coalesce_text(&nic.coalesce));
        let _ = writeln!(out, "  rings     {}", rings_text(&nic.rings));
        let _ = writeln!(out, "  channels  {}", channels_text(&nic.channels));
    }
    let _ = writeln!(
        out,
        "  napi      gro {}  defer_hard_irqs {}  gro_flush_timeout_ns {}  threaded {}",
        gro_text(&nic.features),
        nic.napi_defer_hard_irqs.display(),
        nic.gro_flush_timeout_ns.display(),
        nic.threaded.display()
    );
    render_napis(out, nic);
    render_device_irqs(out, nic);
    render_queues(out, snap, nic);
    render_other_irqs(out, snap, nic);
}

/// `up  mtu 1500  speed 10000 Mb/s  qdisc noqueue  txqlen 1000`; `?` for an unknown
/// state or qdisc, `-` for an unknown number, speed `n/a` when the driver reports none.
fn link_text(nic: &Nic) -> String {
    format!(
        "{}  mtu {}  speed {}  qdisc {}  txqlen {}",
        nic.operstate.as_deref().unwrap_or("?"),
        opt(nic.mtu_bytes),
        nic.speed_mbps
            .map_or_else(|| "n/a".to_string(), |s| format!("{s} Mb/s")),
        nic.qdisc.as_deref().unwrap_or("?"),
        opt(nic.txqlen)
    )
}

/// `rx-usecs 0  rx-frames 1 ...` in ethtool's order.
fn coalesce_text(coalesce: &Readable<Coalesce>) -> String {
    match coalesce {
        Readable::Value(c) => c
            .in_order()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join("  "),
        other => other.absent_text(),
    }
}

/// `rx 256/4096  tx 256/4096  (current/max)`.
fn rings_text(rings: &Readable<Rings>) -> String {
    match rings {
        Readable::Value(r) => format!(
            "rx {}/{}  tx {}/{}  (current/max)",
            opt(r.rx),
            opt(r.rx_max),
            opt(r.tx),
            opt(r.tx_max)
        ),
        other => other.absent_text(),
    }
}

/// The channel kinds the driver reports, current/max.
fn channels_text(channels: &Readable<Channels>) -> String {
    match channels {
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
    }
}

/// `on`, `off`, `n/a` when the driver lists no GRO feature.
fn gro_text(features: &Readable<Features>) -> String {
    match features {
        Readable::Value(f) => match f.gro() {
            Some(true) => "on".into(),
            Some(false) => "off".into(),
            None => "n/a".into(),
        },
        other => other.absent_text(),
    }
}

/// `irqs      msix 26 27 28`: the device's interrupts and, when known, how it signals them.
fn render_device_irqs(out: &mut String, nic: &Nic) {
    if nic.device_irqs.is_empty() {
        return;
    }
    let mut words: Vec<String> = nic.irq_mode.iter().map(|m| m.to_string()).collect();
    words.extend(nic.device_irqs.iter().map(u32::to_string));
    let _ = writeln!(out, "  irqs      {}", words.join(" "));
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
    render_cpu_rates(out, rates);
    render_nic_rates(out, snap, rates);
    render_irq_rates(out, snap, rates);
}

/// Busy, IRQ and softirq time, NET_RX, backlog drops and squeezes per CPU.
fn render_cpu_rates(out: &mut String, rates: &Rates) {
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
            c.net_rx_per_sec,
            c.softnet_dropped_per_sec,
            c.time_squeeze_per_sec
        );
    }
}

/// Packets, drops, FIFO overruns and errors of the NICs shown.
fn render_nic_rates(out: &mut String, snap: &HostSnapshot, rates: &Rates) {
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
            n.rx_drops_per_sec + n.tx_drops_per_sec,
            n.rx_fifo_per_sec,
            n.rx_errors_per_sec
        );
    }
}

/// Each queue IRQ's rate and the CPUs that took it.
fn render_irq_rates(out: &mut String, snap: &HostSnapshot, rates: &Rates) {
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
            r.per_sec,
            per_cpu.join("  ")
        );
    }
}

/// RPS/XPS CPUs (`none` when off); a missing file (single-queue device, no CONFIG_XPS) is
/// just `-`.
fn steering(cpus: &Readable<CpuSet>) -> String {
    match cpus {
        Readable::Value(set) => set.to_string(),
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
        let _ = writeln!(
            out,
            "interrupt rates: {}",
            crate::doctor::freebsd::rates_source(snap)
        );
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
    use crate::rates::{CpuRate, IrqRate, NicRate};
    use crate::read::{FakeHost, ReadError, ReadErrorKind};
    use crate::snapshot;
    use nictune_core::units::Nanos;

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

    #[test]
    fn a_device_without_ethtool_settings_says_so_once() {
        let host = FakeHost::new()
            .with_file("/proc/interrupts", "  CPU0\n")
            .with_file("/sys/class/net/ifb0/queues/rx-0/rps_cpus", "0\n");
        let mut snap = snapshot::build(&host, &[]);
        let why = || "ethtool of ifb0: Operation not supported (os error 95)".to_string();
        let nic = snap.nics.iter_mut().find(|n| n.name == "ifb0").unwrap();
        nic.coalesce = Readable::Unsupported(why());
        nic.rings = Readable::Unsupported(why());
        nic.channels = Readable::Unsupported(why());
        let text = render_show(&snap, None);
        assert!(
            text.contains("ethtool   n/a: the driver supports no"),
            "{text}"
        );
        assert!(!text.contains("coalesce  n/a"), "{text}");
        // One of them readable: each on its own line, rings without the current/max legend.
        let nic = snap.nics.iter_mut().find(|n| n.name == "ifb0").unwrap();
        nic.coalesce = Readable::Unreadable("not captured".into());
        let text = render_show(&snap, None);
        assert!(text.contains("coalesce  ? (not captured)"), "{text}");
        assert!(text.contains("rings     n/a (ethtool of ifb0"), "{text}");
        assert!(!text.contains("(os error 95)  (current/max)"), "{text}");
    }

    #[test]
    fn rates_print_per_cpu_per_nic_and_per_queue_irq() {
        let host = FakeHost::new()
            .with_file(
                "/proc/interrupts",
                "  CPU0 CPU1\n 38: 5 0 PCI-MSIX-0000:00:03.0 1-edge eth9-TxRx-0\n",
            )
            .with_file("/sys/class/net/eth9/queues/rx-0/rps_cpus", "0\n");
        let snap = snapshot::build(&host, &[]);
        let nic = |name: &str| NicRate {
            name: name.into(),
            rx_pps: 81_234.4,
            tx_pps: 1_000.0,
            rx_bytes_per_sec: 0.0,
            rx_drops_per_sec: 2.0,
            rx_fifo_per_sec: 3.0,
            rx_errors_per_sec: 0.0,
            tx_drops_per_sec: 1.0,
        };
        let rates = Rates {
            elapsed: Nanos::from_millis(2_500),
            irqs: vec![
                IrqRate {
                    irq: 38,
                    per_sec: 8_000.0,
                    per_cpu: vec![(0, 8_000.0), (1, 0.0)],
                },
                IrqRate {
                    irq: 26,
                    per_sec: 5.0,
                    per_cpu: vec![(0, 5.0), (1, 0.0)],
                },
            ],
            cpus: vec![CpuRate {
                cpu: 1,
                busy_pct: 42.25,
                irq_pct: 3.0,
                softirq_pct: 12.5,
                net_rx_per_sec: 8_100.0,
                softnet_processed_per_sec: 81_000.0,
                softnet_dropped_per_sec: 0.0,
                time_squeeze_per_sec: 4.0,
            }],
            nics: vec![nic("eth9"), nic("not-shown0")],
        };
        let text = render_show(&snap, Some(&rates));
        let rates_text = &text[text.find("rates over").unwrap()..];
        // Only the queue IRQ 38 and the NIC shown are listed; IRQ 26 and not-shown0 are not.
        let expected = "\
rates over 2.50 s
  cpu       busy%     irq%  softirq%     net_rx/s    drops/s  squeeze/s
  1          42.2      3.0      12.5         8100          0          4
  nic              rx pkt/s     tx pkt/s    drops/s     fifo/s   errors/s
  eth9                81234         1000          3          3          0
  irq 38          8000/s  cpu0 8000
";
        assert_eq!(rates_text, expected);
    }
}
