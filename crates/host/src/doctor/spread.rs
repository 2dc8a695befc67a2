//! A spread map: each queue IRQ on its own CPU, heaviest first onto the least-loaded CPU,
//! preferring CPUs whose SMT siblings are idle. Pure; the rules turn it into commands.

use crate::cpuset::CpuSet;
use std::collections::BTreeMap;

/// One IRQ to place, with its observed weight (interrupts/s, or counts since boot).
#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    /// IRQ number.
    pub irq: u32,
    /// Interrupts per second, or counts since boot when no rate was measured. It sets the
    /// placement order (heaviest first) and breaks ties between CPUs holding as many IRQs by
    /// their summed weight, so every load of one `spread` call must be in the same unit.
    pub weight: f64,
}

/// True when the busiest CPU serves more than an even share of `irqs` over `cpus` (rounded
/// up) while some CPU serves none: the condition for an `irq-pileup` finding.
pub fn crowded<T>(per_cpu: &BTreeMap<u32, Vec<T>>, irqs: usize, cpus: usize) -> bool {
    let fair = irqs.div_ceil(cpus.max(1));
    let worst = per_cpu.values().map(Vec::len).max().unwrap_or(0);
    worst > fair && per_cpu.len() < cpus
}

/// Assigns every IRQ a CPU from `cpus`. `siblings(cpu)` lists the CPU's core mates
/// (itself included). Ties go to the lowest CPU number, so the map is deterministic.
pub fn spread(loads: &[Load], cpus: &[u32], siblings: &dyn Fn(u32) -> CpuSet) -> Vec<(u32, u32)> {
    if cpus.is_empty() {
        return Vec::new();
    }
    let mut order: Vec<&Load> = loads.iter().collect();
    order.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.irq.cmp(&b.irq)));
    let mut cpu_load: BTreeMap<u32, (usize, f64)> = cpus.iter().map(|&c| (c, (0, 0.0))).collect();
    let mut out = Vec::new();
    for l in order {
        let core_load = |cpu: u32| -> usize {
            siblings(cpu)
                .iter()
                .filter(|s| *s != cpu)
                .map(|s| cpu_load.get(&s).map_or(0, |x| x.0))
                .sum()
        };
        let best = *cpus
            .iter()
            .min_by(|&&a, &&b| {
                let (ca, wa) = cpu_load[&a];
                let (cb, wb) = cpu_load[&b];
                ca.cmp(&cb)
                    .then(core_load(a).cmp(&core_load(b)))
                    .then(wa.total_cmp(&wb))
                    .then(a.cmp(&b))
            })
            .expect("cpus is not empty");
        let slot = cpu_load.get_mut(&best).expect("known cpu");
        slot.0 += 1;
        slot.1 += l.weight;
        out.push((l.irq, best));
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alone(cpu: u32) -> CpuSet {
        [cpu].into_iter().collect()
    }

    #[test]
    fn one_irq_per_cpu_while_cpus_last() {
        let loads: Vec<Load> = (0..4)
            .map(|i| Load {
                irq: 100 + i,
                weight: 1.0,
            })
            .collect();
        let map = spread(&loads, &[0, 1, 2, 3], &alone);
        let cpus: CpuSet = map.iter().map(|(_, c)| *c).collect();
        assert_eq!(cpus.len(), 4);
    }

    #[test]
    fn smt_siblings_are_filled_last() {
        // CPUs 0/2 and 1/3 are sibling pairs: two IRQs go to different cores.
        let sib = |c: u32| -> CpuSet { [c % 2, c % 2 + 2].into_iter().collect() };
        let loads = [
            Load {
                irq: 1,
                weight: 5.0,
            },
            Load {
                irq: 2,
                weight: 4.0,
            },
        ];
        let map = spread(&loads, &[0, 1, 2, 3], &sib);
        assert_eq!(map, [(1, 0), (2, 1)]);
    }

    #[test]
    fn heaviest_irqs_share_least_when_irqs_outnumber_cpus() {
        let loads = [
            Load {
                irq: 1,
                weight: 100.0,
            },
            Load {
                irq: 2,
                weight: 90.0,
            },
            Load {
                irq: 3,
                weight: 1.0,
            },
        ];
        let map = spread(&loads, &[0, 1], &alone);
        // 1 → cpu0, 2 → cpu1, 3 joins the lighter cpu1.
        assert_eq!(map, [(1, 0), (2, 1), (3, 1)]);
    }

    #[test]
    fn crowded_means_above_an_even_share_with_a_cpu_left_idle() {
        let map = |cpus: &[(u32, usize)]| -> BTreeMap<u32, Vec<u32>> {
            cpus.iter().map(|&(c, n)| (c, vec![0; n])).collect()
        };
        assert!(crowded(&map(&[(0, 4)]), 4, 4));
        assert!(crowded(&map(&[(0, 2), (1, 2)]), 4, 4));
        assert!(!crowded(&map(&[(0, 1), (1, 1), (2, 1), (3, 1)]), 4, 4));
        assert!(
            !crowded(&map(&[(0, 2), (1, 2)]), 4, 2),
            "an even share on every CPU"
        );
        assert!(!crowded(&map(&[(0, 3), (1, 1)]), 4, 2), "no CPU is idle");
    }
}
