//! `/proc/stat`: CPU time per CPU in USER_HZ ticks, and the interrupt, context-switch and
//! softirq totals.
//!
//! Columns of a `cpuN` line, in order (older kernels print fewer; missing ones read as 0):
//! user nice system idle iowait irq softirq steal guest guest_nice. `guest` and `guest_nice`
//! are already included in `user` and `nice`.

use crate::error::{dec, ParseError};
use nictune_core::units::Nanos;
use serde::Serialize;

const INPUT: &str = "/proc/stat";

/// A count of USER_HZ clock ticks (the unit of `/proc/stat` CPU times).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize)]
#[serde(transparent)]
pub struct Ticks(pub u64);

impl Ticks {
    /// The duration these ticks stand for at `user_hz` ticks per second (sysconf(_SC_CLK_TCK),
    /// 100 on every mainstream Linux build).
    pub fn to_nanos(self, user_hz: u32) -> Nanos {
        let hz = u64::from(user_hz.max(1));
        Nanos(self.0.saturating_mul(1_000_000_000) / hz)
    }
}

/// Time one CPU (or all of them) spent in each state since boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct CpuTimes {
    /// User mode at normal priority (guest time included).
    pub user: Ticks,
    /// User mode at lowered priority (niced; guest_nice included).
    pub nice: Ticks,
    /// Kernel mode outside interrupt handlers and softirqs.
    pub system: Ticks,
    /// Idle with no I/O outstanding.
    pub idle: Ticks,
    /// Idle while waiting for I/O (unreliable on multi-core systems, as the kernel documents).
    pub iowait: Ticks,
    /// Hard interrupt handlers.
    pub irq: Ticks,
    /// Softirqs (NET_RX, NET_TX, timers, ...), where NAPI polling is accounted.
    pub softirq: Ticks,
    /// Time a hypervisor ran something else while this vCPU wanted to run.
    pub steal: Ticks,
    /// Running a guest vCPU; already part of `user`.
    pub guest: Ticks,
    /// Running a niced guest vCPU; already part of `nice`.
    pub guest_nice: Ticks,
}

impl CpuTimes {
    /// All ticks except guest time (already counted in user and nice).
    pub fn total(&self) -> Ticks {
        let parts = [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        ];
        Ticks(super::total(parts.iter().map(|t| &t.0)))
    }

    /// Ticks not spent idle or waiting for I/O.
    pub fn busy(&self) -> Ticks {
        Ticks(
            self.total()
                .0
                .saturating_sub(self.idle.0)
                .saturating_sub(self.iowait.0),
        )
    }

    /// `self - earlier`, field by field, saturating at zero (counters can step back when a
    /// CPU goes offline and comes back).
    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        let d = |a: Ticks, b: Ticks| Ticks(a.0.saturating_sub(b.0));
        CpuTimes {
            user: d(self.user, earlier.user),
            nice: d(self.nice, earlier.nice),
            system: d(self.system, earlier.system),
            idle: d(self.idle, earlier.idle),
            iowait: d(self.iowait, earlier.iowait),
            irq: d(self.irq, earlier.irq),
            softirq: d(self.softirq, earlier.softirq),
            steal: d(self.steal, earlier.steal),
            guest: d(self.guest, earlier.guest),
            guest_nice: d(self.guest_nice, earlier.guest_nice),
        }
    }

    fn from_fields(fields: &[u64]) -> CpuTimes {
        let f = |i: usize| Ticks(fields.get(i).copied().unwrap_or(0));
        CpuTimes {
            user: f(0),
            nice: f(1),
            system: f(2),
            idle: f(3),
            iowait: f(4),
            irq: f(5),
            softirq: f(6),
            steal: f(7),
            guest: f(8),
            guest_nice: f(9),
        }
    }
}

/// The parts of `/proc/stat` nictune uses.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ProcStat {
    /// The `cpu` line: all CPUs together.
    pub all: CpuTimes,
    /// One entry per `cpuN` line, as `(N, times)`; offline CPUs are absent (JSON: the times
    /// with a `cpu` field).
    #[serde(serialize_with = "crate::json::per_cpu_objects")]
    pub cpus: Vec<(u32, CpuTimes)>,
    /// First number of the `intr` line: interrupts serviced since boot, all sources.
    pub interrupts_total: u64,
    /// `ctxt`: context switches since boot.
    pub context_switches: u64,
    /// First number of the `softirq` line: softirqs run since boot, all types.
    pub softirqs_total: u64,
}

impl ProcStat {
    /// The times of CPU `cpu`, if it is online.
    pub fn cpu(&self, cpu: u32) -> Option<&CpuTimes> {
        self.cpus.iter().find(|(n, _)| *n == cpu).map(|(_, t)| t)
    }
}

/// Parses the text of `/proc/stat`. Unknown lines are ignored.
pub fn parse_stat(text: &str) -> Result<ProcStat, ParseError> {
    let mut stat = ProcStat::default();
    let mut saw_cpu = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let mut words = line.split_whitespace();
        let Some(key) = words.next() else { continue };
        let values = || -> Result<Vec<u64>, ParseError> {
            line.split_whitespace()
                .skip(1)
                .map(|w| dec(INPUT, n, key, w))
                .collect()
        };
        match key {
            "cpu" => {
                stat.all = CpuTimes::from_fields(&values()?);
                saw_cpu = true;
            }
            "intr" => stat.interrupts_total = first(values()?),
            "ctxt" => stat.context_switches = first(values()?),
            "softirq" => stat.softirqs_total = first(values()?),
            _ => {
                if let Some(id) = key.strip_prefix("cpu") {
                    let id = dec(INPUT, n, "cpu id", id)? as u32;
                    stat.cpus.push((id, CpuTimes::from_fields(&values()?)));
                }
            }
        }
    }
    if !saw_cpu {
        return Err(ParseError::new(INPUT, 0, "no `cpu` line"));
    }
    Ok(stat)
}

fn first(values: Vec<u64>) -> u64 {
    values.first().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../../../fixtures/linux-vm-6.18/proc/stat");

    #[test]
    fn parses_the_captured_file() {
        let stat = parse_stat(FIXTURE).unwrap();
        assert_eq!(stat.cpus.len(), 2);
        assert_eq!(stat.cpus[1].0, 1);
        let sum: u64 = stat.cpus.iter().map(|(_, t)| t.user.0).sum();
        // The `cpu` line is the sum of the `cpuN` lines (up to rounding per tick read).
        assert!(
            stat.all.user.0.abs_diff(sum) <= 2,
            "{} vs {sum}",
            stat.all.user.0
        );
        assert!(stat.interrupts_total > 0 && stat.context_switches > 0);
        assert!(stat.softirqs_total > 0);
    }

    #[test]
    fn short_cpu_lines_from_old_kernels_read_missing_fields_as_zero() {
        let stat = parse_stat("cpu 1 2 3 4\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(stat.all.system, Ticks(3));
        assert_eq!(stat.all.steal, Ticks(0));
        assert_eq!(stat.cpu(0).unwrap().idle, Ticks(4));
    }

    #[test]
    fn busy_excludes_idle_iowait_and_guest() {
        let stat = parse_stat("cpu 10 1 5 100 7 2 3 4 9 1\n").unwrap();
        assert_eq!(stat.all.total(), Ticks(10 + 1 + 5 + 100 + 7 + 2 + 3 + 4));
        assert_eq!(stat.all.busy(), Ticks(10 + 1 + 5 + 2 + 3 + 4));
    }

    #[test]
    fn since_saturates() {
        let a = parse_stat("cpu 10 0 0 0\n").unwrap().all;
        let b = parse_stat("cpu 4 0 0 5\n").unwrap().all;
        let d = a.since(&b);
        assert_eq!((d.user, d.idle), (Ticks(6), Ticks(0)));
    }

    #[test]
    fn ticks_convert_with_the_given_user_hz() {
        assert_eq!(Ticks(150).to_nanos(100), Nanos::from_millis(1500));
        assert_eq!(Ticks(3).to_nanos(1000), Nanos::from_millis(3));
    }

    #[test]
    fn a_bad_number_names_line_and_field() {
        let err = parse_stat("cpu 1 2 3 4\ncpu0 1 x 3 4\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.problem.contains("\"x\""), "{err}");
        assert!(parse_stat("intr 5\n").is_err());
    }
}
