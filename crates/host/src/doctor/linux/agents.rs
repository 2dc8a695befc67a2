//! `irqbalance-pinned`: irqbalance running while queue IRQs are pinned to single CPUs by
//! hand — it will move them back within its 10 s interval.

use super::pileup::queue_irqs;
use crate::doctor::{Finding, Severity};
use crate::snapshot::HostSnapshot;

pub fn irqbalance_vs_pins(snap: &HostSnapshot) -> Vec<Finding> {
    if snap.irqbalance_running.value() != Some(&true) {
        return Vec::new();
    }
    let pinned: Vec<u32> = queue_irqs(snap)
        .keys()
        .copied()
        .filter(|irq| {
            snap.irq(*irq)
                .and_then(|i| i.affinity.value())
                .is_some_and(|a| a.len() == 1 && snap.cpus.len() > 1)
        })
        .collect();
    if pinned.is_empty() {
        return Vec::new();
    }
    let list = pinned.iter().map(u32::to_string).collect::<Vec<_>>();
    let mut f = Finding::new("irqbalance-pinned", Severity::Warning, "host")
        .evidence("irqbalance", "running")
        .evidence("queue IRQs pinned to one CPU", list.join(", "))
        .explain(
            "irqbalance rewrites IRQ affinity every 10 s by load; hand-pinned queue IRQs \
             will drift back. Ban them from irqbalance, or stop irqbalance.",
        );
    let bans: Vec<String> = pinned.iter().map(|irq| format!("--banirq={irq}")).collect();
    f = f.fix(format!(
        "echo 'IRQBALANCE_ARGS=\"{}\"' >> /etc/default/irqbalance",
        bans.join(" ")
    ));
    f = f.fix("systemctl restart irqbalance");
    vec![f]
}
