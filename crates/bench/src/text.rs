//! The human-readable summary of a [`BenchResult`] (what `nictune bench` prints without
//! `--json`). Pure: result in, text out.

use crate::accounting::Accounting;
use crate::result::{BenchResult, LoopMode};
use crate::spec::TestKind;
use std::fmt::Write;

/// How the accounting's note for a path without NIC interrupts begins.
const NO_NIC_IRQS: &str = "no NIC interrupts on this path";

/// Renders `r` as a few aligned lines plus notes and warnings.
pub fn render(r: &BenchResult) -> String {
    let mut out = String::new();
    header(&mut out, r);
    figures(&mut out, r);
    placement(&mut out, r);
    hosts(&mut out, r);
    guest(&mut out, r);
    let mut notes: Vec<&String> = Vec::new();
    // "No NIC interrupts" describes a host whose path has none (the client's tap on the
    // real-driver testbed); it misleads when the other end's NIC interrupts are shown.
    let nic_irqs = r
        .accounting
        .values()
        .any(|a| a.host.interrupts_per_sec.unwrap_or(0.0) >= 1.0);
    for n in r.accounting.values().flat_map(|a| &a.notes) {
        if nic_irqs && n.starts_with(NO_NIC_IRQS) {
            continue;
        }
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    for n in notes {
        let _ = writeln!(out, "note: {n}");
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

fn header(out: &mut String, r: &BenchResult) {
    let s = &r.spec;
    let mode = match r.mode {
        LoopMode::Closed => "closed loop".to_string(),
        LoopMode::Open => format!(
            "open loop at {}/s (latency from intended send times)",
            group(s.rate.unwrap_or(0.0))
        ),
    };
    let sizes = match s.test {
        TestKind::Stream if s.zerocopy => format!("{} B sendfile (zero-copy)", s.request_size.0),
        TestKind::Stream => format!("{} B writes", s.request_size.0),
        TestKind::Ping => format!(
            "{} B probes{}",
            s.request_size.0,
            if s.icmp { " (ICMP)" } else { " (UDP echo)" }
        ),
        _ => format!(
            "{} B request / {} B response, {} in flight",
            s.request_size.0, s.response_size.0, s.outstanding
        ),
    };
    let conns = if s.connections == 1 {
        "1 connection".into()
    } else {
        format!("{} connections", s.connections)
    };
    let load = s.load.map_or(String::new(), |l| {
        format!(
            ", under load of {} stream{}",
            l.connections,
            if l.connections == 1 { "" } else { "s" }
        )
    });
    let _ = writeln!(
        out,
        "nictune bench {} on {}: {mode}, {conns}, {sizes}{load}",
        s.test.name(),
        r.target
    );
    let _ = writeln!(
        out,
        "  measured   {:.1} s after {:.1} s warm-up",
        r.measured_s,
        s.warmup.as_secs_f64()
    );
}

fn figures(out: &mut String, r: &BenchResult) {
    rate(out, r);
    throughput(out, r);
    load(out, r);
    if let Some(l) = &r.metrics.latency_us {
        let _ = writeln!(
            out,
            "  latency µs min {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}  mean {:.1}",
            l.min, l.p50, l.p90, l.p99, l.p999, l.max, l.mean
        );
    }
}

/// Transactions (or ping replies) per second, the range of the per-second figures, losses.
fn rate(out: &mut String, r: &BenchResult) {
    let m = &r.metrics;
    let Some(tps) = m.transactions_per_sec else {
        return;
    };
    let unit = if r.spec.test == TestKind::Ping {
        "replies/s"
    } else {
        "trans/s"
    };
    let (lo, hi) = min_max(&m.interim_transactions_per_sec);
    let _ = write!(
        out,
        "  rate       {} {unit} (per second: {}–{})",
        group(tps),
        group(lo),
        group(hi)
    );
    let _ = writeln!(
        out,
        "{}",
        if r.lost > 0 {
            format!(", {} lost", r.lost)
        } else {
            String::new()
        }
    );
}

/// Stream throughput, its per-second range, retransmits and the TCP path.
fn throughput(out: &mut String, r: &BenchResult) {
    let Some(s) = &r.stream else {
        return;
    };
    let (lo, hi) = min_max(&s.interim_throughput_bps);
    let gbps = r.metrics.throughput_bps.unwrap_or(0.0) / 1e9;
    let _ = writeln!(
        out,
        "  throughput {gbps:.2} Gbit/s (per second: {:.2}–{:.2}), {} retransmits",
        lo / 1e9,
        hi / 1e9,
        s.retransmits
    );
    if let Some(p) = &s.path {
        let _ = writeln!(
            out,
            "  path       MTU {} B, MSS {} B, congestion control {}, {} B writes",
            p.pmtu, p.snd_mss, p.congestion_control, s.write_size
        );
    }
}

/// The background streams of a latency-under-load run.
fn load(out: &mut String, r: &BenchResult) {
    let Some(l) = &r.load else {
        return;
    };
    let (lo, hi) = min_max(&l.stream.interim_throughput_bps);
    let _ = writeln!(
        out,
        "  load       {:.2} Gbit/s from {} stream{} of {} B writes (per second: {:.2}–{:.2}), {} retransmits",
        l.throughput_bps / 1e9,
        l.connections,
        if l.connections == 1 { "" } else { "s" },
        l.stream.write_size,
        lo / 1e9,
        hi / 1e9,
        l.stream.retransmits
    );
}

fn placement(out: &mut String, r: &BenchResult) {
    let p = &r.placement;
    let side = |s: &crate::result::SidePlacement| {
        let seen = s
            .cpus_seen
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let asked = s
            .requested_cpu
            .map_or("unpinned".into(), |c| format!("pinned {c}"));
        format!(
            "CPU {} ({asked})",
            if seen.is_empty() { "?".into() } else { seen }
        )
    };
    let ipi = |v: Option<f64>| v.map_or("0".into(), group);
    let _ = writeln!(
        out,
        "  placement  client {}, server {}; cross-CPU wake-ups CAL {}/s RES {}/s",
        side(&p.client),
        side(&p.server),
        ipi(p.cal_per_sec),
        ipi(p.res_per_sec)
    );
    let ids = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    match r.napi.verified {
        Some(true) => {
            let _ = writeln!(
                out,
                "  NAPI       verified: socket NAPI ids client {} server {}",
                ids(&r.napi.client_ids),
                ids(&r.napi.server_ids)
            );
        }
        Some(false) => {
            let _ = writeln!(out, "  NAPI       NOT in use (socket NAPI id 0)");
        }
        None => {}
    }
}

fn hosts(out: &mut String, r: &BenchResult) {
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "  host     user  system  irq  softirq  idle   NIC irq/s  NET_RX/s  NET_TX/s  CPU µs/{}",
        if r.stream.is_some() { "KiB" } else { "trans" }
    );
    for (name, a) in &r.accounting {
        host_row(out, name, a);
    }
    // On a shared host both sides' per-core figures are the same numbers: show them once.
    let sides = if r.shared_host { 1 } else { r.accounting.len() };
    for (name, a) in r.accounting.iter().take(sides) {
        busiest_row(out, if r.shared_host { "host" } else { name }, a);
    }
    for (name, a) in &r.accounting {
        vectors_row(out, name, a);
    }
    if r.shared_host {
        let _ = writeln!(
            out,
            "  (client and server share this machine: host-wide figures are the same numbers)"
        );
    }
}

fn host_row(out: &mut String, name: &str, a: &Accounting) {
    let c = &a.host.cpu;
    let demand = a
        .cpu_us_per_transaction
        .or(a.cpu_us_per_kib)
        .map_or("-".into(), |d| format!("{d:.2}"));
    let _ = writeln!(
        out,
        "  {name:<7} {:>5} {:>7} {:>4} {:>8} {:>5} {:>11} {:>9} {:>9} {:>12}",
        pct(c.user),
        pct(c.system.unwrap_or(0.0)),
        pct(c.irq),
        pct(c.softirq),
        pct(c.idle),
        group(a.host.interrupts_per_sec.unwrap_or(0.0)),
        group(a.net_rx_softirqs_per_sec),
        group(a.net_tx_softirqs_per_sec),
        demand
    );
}

/// The busiest core of a host (least idle), when it has more than one: an average over
/// cores hides one core saturated in softirq while the others idle.
fn busiest_row(out: &mut String, name: &str, a: &Accounting) {
    let cores = &a.host.cpu.per_core;
    if cores.len() < 2 {
        return;
    }
    let Some((i, c)) = cores
        .iter()
        .enumerate()
        .min_by(|x, y| x.1.idle.total_cmp(&y.1.idle))
    else {
        return;
    };
    let _ = writeln!(
        out,
        "  busiest  {name} CPU {i}: user {} %, system {} %, irq {} %, softirq {} %, idle {} %",
        pct(c.user),
        pct(c.system.unwrap_or(0.0)),
        pct(c.irq),
        pct(c.softirq),
        pct(c.idle)
    );
}

/// The real-driver testbed's guest: what ran the NIC and what the emulator cost the host.
fn guest(out: &mut String, r: &BenchResult) {
    let Some(t) = &r.testbed else {
        return;
    };
    let cost = match (t.qemu_cpu_cores, t.qemu_rss_mib) {
        (Some(c), Some(m)) => format!("; QEMU used {c:.2} CPU cores and {m:.0} MiB"),
        (None, Some(m)) => format!("; QEMU used {m:.0} MiB"),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "  guest    Linux {} `{}` on QEMU {} ({}), booted in {:.1} s with {}{cost}",
        t.guest_kernel, t.kind, t.qemu_device, t.nic_model, t.boot_seconds, t.accel
    );
}

/// The NIC's vectors one by one (e1000e's MSI-X RX, TX and other), when it has several.
fn vectors_row(out: &mut String, name: &str, a: &Accounting) {
    let fired = a.nic_vectors.iter().any(|v| v.per_sec > 0.0);
    if a.nic_vectors.len() < 2 || !fired {
        return;
    }
    let each: Vec<String> = a
        .nic_vectors
        .iter()
        .map(|v| format!("{} {}/s", v.label(), group(v.per_sec)))
        .collect();
    let _ = writeln!(out, "  {name} NIC vectors: {}", each.join(", "));
}

/// A fraction 0–1 as a percentage with one decimal.
fn pct(f: f64) -> String {
    format!("{:.1}", f * 100.0)
}

fn min_max(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    (if lo.is_finite() { lo } else { 0.0 }, hi)
}

/// A rounded number with thousands separators: 57312.4 → "57,312".
pub fn group(v: f64) -> String {
    let n = v.round().max(0.0) as u64;
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        assert_eq!(group(57_312.4), "57,312");
        assert_eq!(group(999.6), "1,000");
        assert_eq!(group(12.0), "12");
        assert_eq!(group(1_234_567.0), "1,234,567");
    }

    #[test]
    fn a_captured_testbed_result_renders_stably() {
        let json = include_str!("../fixtures/result-testbed-rr.json");
        let r: BenchResult = serde_json::from_str(json).unwrap();
        insta::assert_snapshot!(render(&r));
    }
}
