//! `irq-pileup` on FreeBSD: queue interrupts of several ports bound to the same CPUs. The
//! binding comes from dmesg (`Bound queue Q to cpu C`) when captured, else from the igb/em/ix
//! default of binding queue Q to CPU Q (Case 5: "queue N of every port on CPU N").
//! Weighted by the `vmstat -i` rates; SMT siblings (`kern.sched.topology_spec`) are filled
//! last. Fix: one `cpuset -l CPU -x IRQ` per queue vector.

use super::{queue_vectors, QueueVector};
use crate::cpuset::CpuSet;
use crate::doctor::spread::{crowded, spread, Load};
use crate::doctor::{Finding, Severity};
use crate::freebsd::FreeBsdSnapshot;
use std::collections::BTreeMap;

/// `top -SIP` interrupt time (%) from which a CPU's figure is shown as evidence.
const HOT_INTERRUPT_PCT: f64 = 50.0;

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
    let per_cpu = vectors_per_cpu(&vectors, &binding);
    if !crowded(&per_cpu, vectors.len(), ncpu as usize) {
        return Vec::new();
    }
    let mut f = Finding::new("irq-pileup", Severity::Warning, ports(&vectors))
        .evidence("queue interrupt vectors", vectors.len())
        .evidence("CPUs", ncpu)
        .evidence("CPUs serving queue vectors", per_cpu.len())
        .evidence("binding from", source)
        .evidence("interrupt rates", rates_source(snap));
    for (cpu, irqs) in &per_cpu {
        let rate = crate::procfs::total(irqs.iter().map(|(_, r)| r));
        f = f.evidence(
            format!("cpu {cpu}"),
            format!("{} vectors, {rate} interrupts/s", irqs.len()),
        );
    }
    let hot = snap
        .cpus
        .iter()
        .flatten()
        .filter(|c| c.interrupt >= HOT_INTERRUPT_PCT);
    for c in hot {
        f = f.evidence(
            format!("cpu {} interrupt time (top -SIP)", c.cpu),
            format!("{:.1}%", c.interrupt),
        );
    }
    f = f.explain(
        "The same queue of every port is bound to the same CPU, so one saturated CPU slows \
         that queue on all ports while most CPUs idle. Bind each (port, queue) vector to its \
         own CPU, busiest first. The cpuset lines use this boot's IRQ numbers and last until \
         a reboot; to bind at every boot by the interrupt's name, put the map in a profile \
         per port (freebsd.irq.queue-cpus@Q = CPU) and install its \
         `nictune export --format cpuset` rc.d script.",
    );
    for (irq, cpu) in spread_map(snap, &vectors, ncpu) {
        f = f.fix(format!("cpuset -l {cpu} -x {irq}"));
    }
    vec![f]
}

/// CPU → the (IRQ, interrupts/s) of the vectors bound to it.
fn vectors_per_cpu(
    vectors: &[QueueVector],
    binding: &BTreeMap<u32, u32>,
) -> BTreeMap<u32, Vec<(u32, u64)>> {
    let mut per_cpu: BTreeMap<u32, Vec<(u32, u64)>> = BTreeMap::new();
    for v in vectors {
        if let Some(cpu) = binding.get(&v.irq) {
            per_cpu.entry(*cpu).or_default().push((v.irq, v.rate));
        }
    }
    per_cpu
}

/// IRQ → CPU: every vector spread by its rate over CPUs 0..ncpu, SMT siblings filled last.
fn spread_map(snap: &FreeBsdSnapshot, vectors: &[QueueVector], ncpu: u32) -> Vec<(u32, u32)> {
    let loads: Vec<Load> = vectors
        .iter()
        .map(|v| Load {
            irq: v.irq,
            weight: v.rate as f64,
        })
        .collect();
    let cpus: Vec<u32> = (0..ncpu).collect();
    let siblings = |c: u32| -> CpuSet { snap.siblings(c) };
    spread(&loads, &cpus, &siblings)
}

/// Where the `vmstat -i` rates come from: measured between two samples, or boot averages.
pub fn rates_source(snap: &FreeBsdSnapshot) -> String {
    match snap.rates_over_secs {
        Some(s) => format!("measured over {s} s (two vmstat -i samples)"),
        None => "vmstat -i averages since boot".into(),
    }
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
    vectors: &[QueueVector],
    ncpu: u32,
) -> (BTreeMap<u32, u32>, &'static str) {
    let bound = &snap.dmesg.bound_queues;
    if !bound.is_empty() {
        // The first line for a (port, queue) wins, as a linear search would find it.
        let mut by_queue: BTreeMap<(&str, u32), u32> = BTreeMap::new();
        for (d, q, cpu) in bound {
            by_queue.entry((d.as_str(), *q)).or_insert(*cpu);
        }
        let map = vectors
            .iter()
            .filter_map(|v| Some((v.irq, *by_queue.get(&(v.dev.as_str(), v.queue))?)))
            .collect();
        return (map, "dmesg (Bound queue Q to cpu C)");
    }
    let map = vectors.iter().map(|v| (v.irq, v.queue % ncpu)).collect();
    (map, DEFAULT_BINDING)
}

fn ports(vectors: &[QueueVector]) -> String {
    let mut names: Vec<&str> = vectors.iter().map(|v| v.dev.as_str()).collect();
    names.dedup();
    names.join(", ")
}
