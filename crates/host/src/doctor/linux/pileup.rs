//! `irq-pileup`: queue IRQs of one or several NICs crowded on the same CPUs, or on SMT
//! siblings of one core, while other CPUs serve none. Weighted by observed interrupt rates
//! when sampled, else by counts since boot. Fix: a spread map as affinity writes.

use crate::doctor::spread::{crowded, spread, Load};
use crate::doctor::{Finding, Severity};
use crate::rates::Rates;
use crate::snapshot::HostSnapshot;
use std::collections::{BTreeMap, BTreeSet};

pub fn irq_pileup(snap: &HostSnapshot, rates: Option<&Rates>) -> Vec<Finding> {
    let owners = queue_irqs(snap);
    if owners.len() < 2 || snap.cpus.len() < 2 {
        return Vec::new();
    }
    let per_cpu = irqs_per_cpu(snap, &owners);
    let smt_shared = smt_crowded(snap, &per_cpu);
    if !crowded(&per_cpu, owners.len(), snap.cpus.len()) && smt_shared.is_empty() {
        return Vec::new();
    }
    let weight = |irq: u32| weight_of(snap, rates, irq);
    let nics: BTreeSet<&str> = owners.values().map(|s| s.as_str()).collect();
    let mut f = Finding::new(
        "irq-pileup",
        Severity::Warning,
        nics.into_iter().collect::<Vec<_>>().join(", "),
    )
    .evidence("queue IRQs", owners.len())
    .evidence(
        "CPUs serving them",
        format!("{} of {}", per_cpu.len(), snap.cpus.len()),
    )
    .evidence(
        "weights from",
        if rates.is_some() {
            "interrupts/s over the interval"
        } else {
            "interrupt counts since boot"
        },
    );
    for (cpu, irqs) in &per_cpu {
        let w: f64 = irqs.iter().map(|&i| weight(i)).sum();
        f = f.evidence(
            format!("cpu {cpu}"),
            format!("irqs {irqs:?}, weight {w:.0}"),
        );
    }
    for (a, b) in &smt_shared {
        f = f.evidence(
            "SMT siblings both serving queue IRQs",
            format!("cpu {a} and cpu {b}"),
        );
    }
    vec![with_fixes(f, snap, &spread_map(snap, &owners, &weight))]
}

/// The CPU each queue IRQ runs on (the first of its affinity), as CPU → IRQs.
fn irqs_per_cpu(snap: &HostSnapshot, owners: &BTreeMap<u32, String>) -> BTreeMap<u32, Vec<u32>> {
    let mut per_cpu: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for &irq in owners.keys() {
        let cpu = snap
            .irq(irq)
            .and_then(|i| i.cpus())
            .and_then(|c| c.iter().next());
        if let Some(cpu) = cpu {
            per_cpu.entry(cpu).or_default().push(irq);
        }
    }
    per_cpu
}

/// IRQ → CPU: every queue IRQ spread by weight, SMT siblings filled last.
fn spread_map(
    snap: &HostSnapshot,
    owners: &BTreeMap<u32, String>,
    weight: &dyn Fn(u32) -> f64,
) -> Vec<(u32, u32)> {
    let loads: Vec<Load> = owners
        .keys()
        .map(|&irq| Load {
            irq,
            weight: weight(irq),
        })
        .collect();
    let cpus: Vec<u32> = snap.cpus.iter().map(|c| c.id).collect();
    let siblings = |cpu: u32| {
        snap.cpu(cpu)
            .map(|c| c.thread_siblings.clone())
            .unwrap_or_default()
    };
    spread(&loads, &cpus, &siblings)
}

/// The explanation and the affinity writes of `map`, behind a warning when irqbalance runs.
fn with_fixes(f: Finding, snap: &HostSnapshot, map: &[(u32, u32)]) -> Finding {
    let mut f = f.explain(
        "Queue interrupts crowded on a few CPUs (or on two hardware threads of one core) make \
         those CPUs the bottleneck: their softirq time caps throughput and adds latency while \
         other CPUs idle. Spread one queue IRQ per CPU, busiest first.",
    );
    if snap.irqbalance_running.value() == Some(&true) {
        f = f.fix("# irqbalance is running and will undo these; ban the IRQs first (see irqbalance-pinned)");
    }
    for (irq, cpu) in map {
        f = f.fix(format!("echo {cpu} > /proc/irq/{irq}/smp_affinity_list"));
    }
    f
}

/// Queue IRQs and the NIC each belongs to.
pub(super) fn queue_irqs(snap: &HostSnapshot) -> BTreeMap<u32, String> {
    snap.nics
        .iter()
        .flat_map(|n| {
            n.queues
                .iter()
                .filter_map(move |q| Some((q.irq?, n.name.clone())))
        })
        .collect()
}

fn weight_of(snap: &HostSnapshot, rates: Option<&Rates>, irq: u32) -> f64 {
    if let Some(r) = rates.and_then(|r| r.irqs.iter().find(|r| r.irq == irq)) {
        return r.per_sec;
    }
    snap.irq(irq)
        .map_or(0.0, |i| i.per_cpu.iter().map(|(_, c)| *c as f64).sum())
}

/// Pairs of sibling CPUs both serving queue IRQs while some core serves none.
fn smt_crowded(snap: &HostSnapshot, per_cpu: &BTreeMap<u32, Vec<u32>>) -> Vec<(u32, u32)> {
    let busy_core = |cpu: u32| {
        snap.cpu(cpu)
            .map(|c| c.thread_siblings.iter().any(|s| per_cpu.contains_key(&s)))
            .unwrap_or(false)
    };
    let idle_core_exists = snap.cpus.iter().any(|c| !busy_core(c.id));
    if !idle_core_exists {
        return Vec::new();
    }
    let mut pairs = Vec::new();
    for &cpu in per_cpu.keys() {
        let Some(c) = snap.cpu(cpu) else { continue };
        for s in c.thread_siblings.iter().filter(|s| *s > cpu) {
            if per_cpu.contains_key(&s) {
                pairs.push((cpu, s));
            }
        }
    }
    pairs
}
