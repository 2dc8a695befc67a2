//! Rates between two counter samples: interrupts per second per IRQ and CPU, CPU time
//! shares, packets, drops and squeezes per second. Counters that went backwards (a CPU
//! re-onlined, an interface re-created) count as zero, never as a huge number.

use crate::snapshot::Counters;
use nictune_core::units::Nanos;
use serde::Serialize;

/// Everything `show --interval` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rates {
    /// Time between the two samples, as measured by the caller (JSON: `elapsed_s`, seconds).
    #[serde(rename = "elapsed_s", serialize_with = "crate::json::seconds")]
    pub elapsed: Nanos,
    /// One row per device IRQ present (numbered) in both `/proc/interrupts` samples; empty when
    /// either is unreadable.
    pub irqs: Vec<IrqRate>,
    /// One row per CPU of the later `/proc/stat` that the earlier one also has.
    pub cpus: Vec<CpuRate>,
    /// One row per interface of the later `/proc/net/dev` that the earlier one also has.
    pub nics: Vec<NicRate>,
}

/// Interrupts per second of one device IRQ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IrqRate {
    /// IRQ number.
    pub irq: u32,
    /// Interrupts per second summed over all CPUs.
    pub per_sec: f64,
    /// `(cpu, interrupts/s)` for every CPU column (JSON: `{"cpu", "per_sec"}` objects).
    #[serde(serialize_with = "crate::json::cpu_rates")]
    pub per_cpu: Vec<(u32, f64)>,
}

/// One CPU's time split (percent of the interval) and its network softirq counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuRate {
    /// CPU number.
    pub cpu: u32,
    /// Busy time, percent of the CPU's ticks: everything but idle and iowait.
    pub busy_pct: f64,
    /// Hard interrupt time (`/proc/stat` `irq`), percent of the CPU's ticks.
    pub irq_pct: f64,
    /// Softirq time (`/proc/stat` `softirq`), percent of the CPU's ticks.
    pub softirq_pct: f64,
    /// NET_RX softirqs per second on this CPU (`/proc/softirqs`); 0 when unreadable.
    pub net_rx_per_sec: f64,
    /// Packets processed per second by NET_RX on this CPU (softnet_stat `processed`); 0 when
    /// unreadable.
    pub softnet_processed_per_sec: f64,
    /// Packets dropped per second because the backlog was full (softnet_stat `dropped`); 0 when
    /// unreadable.
    pub softnet_dropped_per_sec: f64,
    /// NAPI polls per second that ran out of budget or time with work left (softnet_stat
    /// `time_squeeze`); 0 when unreadable.
    pub time_squeeze_per_sec: f64,
}

/// Packet counters of one interface per second.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NicRate {
    /// Interface name as in `/proc/net/dev`.
    pub name: String,
    /// Received packets per second.
    pub rx_pps: f64,
    /// Transmitted packets per second.
    pub tx_pps: f64,
    /// Received bytes per second.
    pub rx_bytes_per_sec: f64,
    /// Receive drops per second (`/proc/net/dev` rx `drop`).
    pub rx_drops_per_sec: f64,
    /// Receive FIFO overruns per second (`/proc/net/dev` rx `fifo`).
    pub rx_fifo_per_sec: f64,
    /// Receive errors per second (`/proc/net/dev` rx `errs`).
    pub rx_errors_per_sec: f64,
    /// Transmit drops per second (`/proc/net/dev` tx `drop`).
    pub tx_drops_per_sec: f64,
}

/// Rates from `before` to `after`, `elapsed` apart. Parts unreadable in either sample are
/// left out.
pub fn between(before: &Counters, after: &Counters, elapsed: Nanos) -> Rates {
    let secs = elapsed.as_secs_f64().max(1e-9);
    let per_sec = |a: u64, b: u64| b.saturating_sub(a) as f64 / secs;
    Rates {
        elapsed,
        irqs: irq_rates(before, after, &per_sec),
        cpus: cpu_rates(before, after, &per_sec),
        nics: nic_rates(before, after, &per_sec),
    }
}

fn irq_rates(
    before: &Counters,
    after: &Counters,
    per_sec: &dyn Fn(u64, u64) -> f64,
) -> Vec<IrqRate> {
    let (Some(a), Some(b)) = (before.interrupts.value(), after.interrupts.value()) else {
        return Vec::new();
    };
    b.lines
        .iter()
        .filter_map(|line| {
            let irq = line.irq()?;
            let old = a.irq(irq)?;
            let per_cpu: Vec<(u32, f64)> = b
                .cpus
                .iter()
                .enumerate()
                .map(|(col, &cpu)| {
                    let was = a.column_of(cpu).and_then(|c| old.per_cpu.get(c)).copied();
                    let now = line.per_cpu.get(col).copied().unwrap_or(0);
                    (cpu, per_sec(was.unwrap_or(now), now))
                })
                .collect();
            Some(IrqRate {
                irq,
                per_sec: per_cpu.iter().map(|(_, r)| r).sum(),
                per_cpu,
            })
        })
        .collect()
}

fn cpu_rates(
    before: &Counters,
    after: &Counters,
    per_sec: &dyn Fn(u64, u64) -> f64,
) -> Vec<CpuRate> {
    let (Some(a), Some(b)) = (before.stat.value(), after.stat.value()) else {
        return Vec::new();
    };
    b.cpus
        .iter()
        .filter_map(|(cpu, now)| {
            let d = now.since(a.cpu(*cpu)?);
            let total = d.total().0.max(1) as f64;
            let pct = |t: u64| 100.0 * t as f64 / total;
            let softirq = |name: &str| {
                let old = before.softirqs.value().map_or(0, |s| s.on_cpu(name, *cpu));
                let new = after.softirqs.value().map_or(0, |s| s.on_cpu(name, *cpu));
                per_sec(old, new)
            };
            let softnet = |field: fn(&crate::procfs::SoftnetRow) -> u64| {
                let find = |c: &Counters| {
                    c.softnet
                        .value()
                        .and_then(|rows| rows.iter().find(|r| r.cpu == *cpu).map(field))
                };
                match (find(before), find(after)) {
                    (Some(x), Some(y)) => per_sec(x, y),
                    _ => 0.0,
                }
            };
            Some(CpuRate {
                cpu: *cpu,
                busy_pct: pct(d.busy().0),
                irq_pct: pct(d.irq.0),
                softirq_pct: pct(d.softirq.0),
                net_rx_per_sec: softirq("NET_RX"),
                softnet_processed_per_sec: softnet(|r| r.processed),
                softnet_dropped_per_sec: softnet(|r| r.dropped),
                time_squeeze_per_sec: softnet(|r| r.time_squeeze),
            })
        })
        .collect()
}

fn nic_rates(
    before: &Counters,
    after: &Counters,
    per_sec: &dyn Fn(u64, u64) -> f64,
) -> Vec<NicRate> {
    let (Some(a), Some(b)) = (before.net_dev.value(), after.net_dev.value()) else {
        return Vec::new();
    };
    b.iter()
        .filter_map(|now| {
            let was = a.iter().find(|d| d.name == now.name)?;
            Some(NicRate {
                name: now.name.clone(),
                rx_pps: per_sec(was.rx_packets, now.rx_packets),
                rx_bytes_per_sec: per_sec(was.rx_bytes, now.rx_bytes),
                tx_pps: per_sec(was.tx_packets, now.tx_packets),
                rx_drops_per_sec: per_sec(was.rx_drop, now.rx_drop),
                rx_fifo_per_sec: per_sec(was.rx_fifo, now.rx_fifo),
                rx_errors_per_sec: per_sec(was.rx_errs, now.rx_errs),
                tx_drops_per_sec: per_sec(was.tx_drop, now.tx_drop),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::FakeHost;
    use crate::snapshot::build_counters;

    fn sample(irq38: [u64; 2], cpu0_idle: u64, eth0_rx: u64, squeeze: u64) -> Counters {
        let host = FakeHost::new()
            .with_file(
                "/proc/interrupts",
                &format!(
                    "  CPU0 CPU1\n 38: {} {} PCI-MSIX-0000:00:03.0 1-edge virtio2-input.0\n",
                    irq38[0], irq38[1]
                ),
            )
            .with_file(
                "/proc/stat",
                &format!("cpu 0 0 0 0\ncpu0 10 0 10 {cpu0_idle} 0 5 5 0 0 0\ncpu1 0 0 0 100\n"),
            )
            .with_file(
                "/proc/net/dev",
                &format!("h\nh\n eth0: 0 {eth0_rx} 0 3 0 0 0 0 0 7 0 0 0 0 0 0\n"),
            )
            .with_file(
                "/proc/net/softnet_stat",
                &format!("00000010 00000000 {squeeze:08x}\n"),
            )
            .with_file("/proc/softirqs", "  CPU0 CPU1\n NET_RX: 5 6\n");
        build_counters(&host)
    }

    #[test]
    fn rates_are_differences_over_the_interval() {
        let a = sample([100, 1000], 100, 1_000, 0);
        let b = sample([300, 1000], 180, 21_000, 4);
        let r = between(&a, &b, Nanos::from_secs(2));
        assert_eq!(r.irqs[0].per_sec, 100.0);
        assert_eq!(r.irqs[0].per_cpu, vec![(0, 100.0), (1, 0.0)]);
        assert_eq!(r.nics[0].rx_pps, 10_000.0);
        assert_eq!(r.nics[0].rx_drops_per_sec, 0.0);
        assert_eq!(r.cpus[0].busy_pct, 0.0, "only idle grew");
        assert_eq!(r.cpus[0].time_squeeze_per_sec, 2.0);
    }

    #[test]
    fn counters_going_backwards_count_as_zero() {
        let a = sample([300, 1000], 100, 50_000, 9);
        let b = sample([100, 1000], 100, 1_000, 0);
        let r = between(&a, &b, Nanos::from_secs(1));
        assert_eq!(r.irqs[0].per_sec, 0.0);
        assert_eq!(r.nics[0].rx_pps, 0.0);
        assert_eq!(r.cpus[0].time_squeeze_per_sec, 0.0);
    }
}
