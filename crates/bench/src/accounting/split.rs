//! CPU time split from two `/proc/stat` samples.

use nictune_core::metrics::{CoreSplit, CpuSplit};
use nictune_host::procfs::{CpuTimes, ProcStat};

/// Per-CPU fractions of the interval (steal left out, so each CPU's split sums to 1), and
/// their average. `nice` counts as user, `iowait` as idle.
pub fn cpu_split(before: &ProcStat, after: &ProcStat) -> CpuSplit {
    let cores = after
        .cpus
        .iter()
        .map(|(cpu, a)| core(&a.since(before.cpu(*cpu).unwrap_or(&CpuTimes::default()))))
        .collect();
    CpuSplit::from_cores(cores)
}

fn own_time(d: &CpuTimes) -> u64 {
    d.total().0 - d.steal.0
}

fn core(d: &CpuTimes) -> CoreSplit {
    let total = own_time(d);
    if total == 0 {
        // No tick landed on this CPU: it was idle (tickless) for the whole interval.
        return CoreSplit {
            irq: 0.0,
            softirq: 0.0,
            system: Some(0.0),
            user: 0.0,
            idle: 1.0,
        };
    }
    let f = |t: u64| t as f64 / total as f64;
    CoreSplit {
        irq: f(d.irq.0),
        softirq: f(d.softirq.0),
        system: Some(f(d.system.0)),
        user: f(d.user.0 + d.nice.0),
        idle: f(d.idle.0 + d.iowait.0),
    }
}

/// Busy time of all CPUs together, in ns.
pub fn busy_nanos(before: &ProcStat, after: &ProcStat, user_hz: u32) -> u64 {
    let d = after.all.since(&before.all);
    let busy = d.busy().0.saturating_sub(d.steal.0);
    nictune_host::procfs::Ticks(busy).to_nanos(user_hz).0
}

/// Steal as a fraction of all time.
pub fn steal_fraction(before: &ProcStat, after: &ProcStat) -> f64 {
    let d = after.all.since(&before.all);
    let total = d.total().0;
    if total == 0 {
        0.0
    } else {
        d.steal.0 as f64 / total as f64
    }
}

/// Whether the kernel charges hard-IRQ time: false when irq stayed 0 over at least 20 busy
/// ticks (a busy network path always takes interrupts or IPIs), unknown with less evidence.
pub fn irq_time_accounted(before: &ProcStat, after: &ProcStat) -> Option<bool> {
    let d = after.all.since(&before.all);
    if d.irq.0 > 0 {
        Some(true)
    } else if d.busy().0 >= 20 {
        Some(false)
    } else {
        None
    }
}
