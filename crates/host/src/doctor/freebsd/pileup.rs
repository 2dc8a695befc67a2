//! `irq-pileup` on FreeBSD: queue interrupts of several ports bound to the same CPUs. The
//! binding comes from dmesg (`Bound queue Q to cpu C`) when captured, else from the igb/em/ix
//! default of binding queue Q to CPU Q (Case 5: "queue N of every port on CPU N").
//! Weighted by the `vmstat -i` rates; SMT siblings (`kern.sched.topology_spec`) are filled
//! last. Fix: one `cpuset -l CPU -x IRQ` per queue vector.

use super::queue_vectors;
use crate::cpuset::CpuSet;
use crate::doctor::spread::{spread, Load};
use crate::doctor::{Finding, Severity};
use crate::freebsd::FreeBsdSnapshot;
use std::collections::BTreeMap;

pub fn irq_pileup(snap: &FreeBsdSnapshot) -> Vec<Finding> {
    let vectors = queue_vectors(snap);
    let Some(ncpu) = snap.ncpu().filter(|n| *n > 1) else {
        return Vec::new();
    };
    if vectors.len() < 2 {
        return Vec::new();
    }
    let (binding, source) = bindings(snap, &vectors, ncpu);
    if source == DEFAULT_BINDING && default_contradicted(snap, &binding) {
        return Vec::new();
    }
    let mut per_cpu: BTreeMap<u32, Vec<(u32, u64)>> = BTreeMap::new();
    for (_, _, irq, rate) in &vectors {
        if let Some(cpu) = binding.get(irq) {
            per_cpu.entry(*cpu).or_default().push((*irq, *rate));
        }
    }
    let fair = vectors.len().div_ceil(ncpu as usize);
    let worst = per_cpu.values().map(Vec::len).max().unwrap_or(0);
    if worst <= fair || per_cpu.len() >= ncpu as usize {
        return Vec::new();
    }
    let loads: Vec<Load> = vectors
        .iter()
        .map(|(_, _, irq, rate)| Load {
            irq: *irq,
            weight: *rate as f64,
        })
        .collect();
    let cpus: Vec<u32> = (0..ncpu).collect();
    let siblings = |c: u32| -> CpuSet { snap.siblings(c) };
    let map = spread(&loads, &cpus, &siblings);
    let mut f = Finding::new("irq-pileup", Severity::Warning, ports(&vectors))
        .evidence("queue interrupt vectors", vectors.len())
        .evidence("CPUs", ncpu)
        .evidence("CPUs serving queue vectors", per_cpu.len())
        .evidence("binding from", source);
    for (cpu, irqs) in &per_cpu {
        let rate: u64 = irqs.iter().map(|(_, r)| r).sum();
        f = f.evidence(
            format!("cpu {cpu}"),
            format!("{} vectors, {rate} interrupts/s", irqs.len()),
        );
    }
    if let Some(cpus) = &snap.cpus {
        for c in cpus.iter().filter(|c| c.interrupt >= 50.0) {
            f = f.evidence(
                format!("cpu {} interrupt time (top -SIP)", c.cpu),
                format!("{:.1}%", c.interrupt),
            );
        }
    }
    f = f.explain(
        "The same queue of every port is bound to the same CPU, so one saturated CPU slows \
         that queue on all ports while most CPUs idle. Bind each (port, queue) vector to its \
         own CPU, busiest first.",
    );
    for (irq, cpu) in map {
        f = f.fix(format!("cpuset -l {cpu} -x {irq}"));
    }
    vec![f]
}

const DEFAULT_BINDING: &str = "driver default: queue Q on CPU Q (no binding in dmesg)";

/// True when `top` shows interrupt time on CPUs the assumed default binding leaves idle:
/// someone rebound the vectors (`cpuset -x`) since boot.
fn default_contradicted(snap: &FreeBsdSnapshot, binding: &BTreeMap<u32, u32>) -> bool {
    let Some(cpus) = &snap.cpus else { return false };
    cpus.iter()
        .any(|c| c.interrupt >= 1.0 && !binding.values().any(|b| *b == c.cpu))
}

/// IRQ → CPU: from dmesg when it reports bindings, else the driver default.
fn bindings(
    snap: &FreeBsdSnapshot,
    vectors: &[(String, u32, u32, u64)],
    ncpu: u32,
) -> (BTreeMap<u32, u32>, &'static str) {
    let bound = &snap.dmesg.bound_queues;
    if !bound.is_empty() {
        let map = vectors
            .iter()
            .filter_map(|(dev, q, irq, _)| {
                let (_, _, cpu) = bound.iter().find(|(d, bq, _)| d == dev && bq == q)?;
                Some((*irq, *cpu))
            })
            .collect();
        return (map, "dmesg (Bound queue Q to cpu C)");
    }
    let map = vectors
        .iter()
        .map(|(_, q, irq, _)| (*irq, q % ncpu))
        .collect();
    (
        map,
        "driver default: queue Q on CPU Q (no binding in dmesg)",
    )
}

fn ports(vectors: &[(String, u32, u32, u64)]) -> String {
    let mut names: Vec<&str> = vectors.iter().map(|(d, ..)| d.as_str()).collect();
    names.dedup();
    names.join(", ")
}
