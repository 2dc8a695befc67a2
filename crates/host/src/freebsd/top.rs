//! `top -SIP` per-CPU lines: `CPU 3:  0.0% user,  0.0% nice,  5.1% system, 61.4% interrupt,
//! 33.5% idle`, and the process lines' weighted CPU (`683.00% intr`): the `intr` and `kernel`
//! processes hold the interrupt threads and the kernel's own threads, so their WCPU, in
//! percent of one CPU, is where a lock-bound network stack shows.
//!
//! Batch mode with two displays (`top -b -d 2`, as the capture script runs it) prints the
//! whole screen twice; the first display's shares are not measured over an interval, so only
//! the last display counts.

use crate::error::ParseError;
use nictune_core::input;
use serde::Serialize;

const INPUT: &str = "top -SIP";

/// One CPU's shares in percent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopCpu {
    /// CPU number, the `N` of `CPU N:`.
    pub cpu: u32,
    /// User time, percent of this CPU.
    pub user: f64,
    /// Niced user time, percent of this CPU.
    pub nice: f64,
    /// Kernel time outside interrupt threads, percent of this CPU.
    pub system: f64,
    /// Interrupt threads (where FreeBSD's NIC handlers run), percent of this CPU.
    pub interrupt: f64,
    /// Idle time, percent of this CPU.
    pub idle: f64,
}

/// One process line: weighted CPU in percent of one CPU and the command.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopProcess {
    /// Process id.
    pub pid: u32,
    /// `WCPU` (or `CPU` with `-C`), percent of one CPU: above 100 for multi-threaded ones.
    pub wcpu: f64,
    /// The command without a thread suffix (`kernel{...}` → `kernel`).
    pub command: String,
}

/// The text of the last display: from the last `last pid:` header on (the whole text when
/// there is none).
fn last_display(text: &str) -> (usize, &str) {
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("last pid:") {
            start = offset;
        }
        offset += line.len();
    }
    let skipped = text[..start].lines().count();
    (skipped, &text[start..])
}

/// Parses the process lines of the last display: a line starting with a PID whose WCPU is the
/// last `NN.NN%` word, followed by the command.
pub fn parse_top_processes(text: &str) -> Vec<TopProcess> {
    let (_, text) = last_display(text);
    let mut out = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(pid) = words.first().and_then(|w| w.parse::<u32>().ok()) else {
            continue;
        };
        let Some(at) = words.iter().rposition(|w| w.ends_with('%')) else {
            continue;
        };
        let Ok(wcpu) = words[at].trim_end_matches('%').parse::<f64>() else {
            continue;
        };
        let command = words[at + 1..].join(" ");
        let command = command.split(['{', '[']).next().unwrap_or("").trim();
        if !command.is_empty() && wcpu.is_finite() {
            out.push(TopProcess {
                pid,
                wcpu,
                command: command.to_string(),
            });
        }
    }
    out
}

/// Parses the `CPU N:` lines of the last display of `top -SIP` output (the summary `CPU:`
/// line is skipped).
pub fn parse_top(text: &str) -> Result<Vec<TopCpu>, ParseError> {
    let (skipped, text) = last_display(text);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let i = i + skipped;
        let Some(rest) = line.trim().strip_prefix("CPU") else {
            continue;
        };
        let Some((id, shares)) = rest.split_once(':') else {
            continue;
        };
        let Ok(cpu) = id.trim().parse::<u32>() else {
            continue;
        };
        if u64::from(cpu) >= input::MAX_CPUS {
            let max = input::MAX_CPUS - 1;
            return Err(ParseError::new(
                INPUT,
                i + 1,
                format!("CPU {cpu} is out of range; allowed: 0..={max}"),
            ));
        }
        let mut c = TopCpu {
            cpu,
            user: 0.0,
            nice: 0.0,
            system: 0.0,
            interrupt: 0.0,
            idle: 0.0,
        };
        for part in shares.split(',') {
            let Some((pct, name)) = part.trim().split_once("% ") else {
                continue;
            };
            let value: f64 = pct.trim().parse().map_err(|_| {
                ParseError::new(INPUT, i + 1, format!("{pct:?} is not a percentage"))
            })?;
            match name.trim() {
                "user" => c.user = value,
                "nice" => c.nice = value,
                "system" => c.system = value,
                "interrupt" => c.interrupt = value,
                "idle" => c.idle = value,
                _ => {}
            }
        }
        out.push(c);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_cpu_lines() {
        let text = "CPU:  1.0% user,  0.0% nice, 23.6% system, 28.5% interrupt, 46.9% idle\n\
                    CPU 0:  0.0% user,  0.0% nice,  5.1% system, 61.4% interrupt, 33.5% idle\n\
                    CPU 1:  0.4% user,  0.0% nice,  2.0% system,  0.0% interrupt, 97.6% idle\n";
        let cpus = parse_top(text).unwrap();
        assert_eq!(cpus.len(), 2);
        assert_eq!((cpus[0].cpu, cpus[0].interrupt), (0, 61.4));
        assert_eq!(cpus[1].idle, 97.6);
        assert!(parse_top("CPU 0: x% user\n").is_err());
    }

    #[test]
    fn two_displays_count_once_and_processes_come_from_the_last() {
        let display = |intr: &str, cpu0: &str| {
            format!(
                "last pid: 1;  load averages:  1.0\n\
                 CPU 0:  0.0% user,  0.0% nice,  1.0% system, {cpu0}% interrupt, 50.0% idle\n\
                 CPU 1:  0.0% user,  0.0% nice,  1.0% system,  2.0% interrupt, 97.0% idle\n\
                 \n  PID USERNAME   THR PRI NICE   SIZE    RES STATE   C   TIME   WCPU COMMAND\n\
                 \x20  12 root        68 -68    -     0K  1088K WAIT    0 999:00 {intr}% intr\n\
                 \x20   0 root       180   8    0     0K  2880K -       1 120:00 567.00% kernel{{if_io}}\n\
                 \x20 1234 www          1  20    0 10000K  5000K select  1   0:01  0.10% nginx: worker\n"
            )
        };
        let text = display("0.00", "0.0") + &display("683.00", "49.0");
        let cpus = parse_top(&text).unwrap();
        assert_eq!(cpus.len(), 2, "one display's CPUs");
        assert_eq!(cpus[0].interrupt, 49.0);
        let procs = parse_top_processes(&text);
        let names: Vec<(&str, f64)> = procs.iter().map(|p| (p.command.as_str(), p.wcpu)).collect();
        assert_eq!(
            names,
            [("intr", 683.0), ("kernel", 567.0), ("nginx: worker", 0.1)]
        );
        let err = parse_top(&(display("1", "1") + "last pid: 2\nCPU 0: x% user\n")).unwrap_err();
        assert_eq!(err.line, 10, "line numbers count from the top of the file");
    }
}
