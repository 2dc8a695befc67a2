//! `top -SIP` per-CPU lines: `CPU 3:  0.0% user,  0.0% nice,  5.1% system, 61.4% interrupt,
//! 33.5% idle`.

use crate::error::ParseError;
use nictune_core::input;
use serde::Serialize;

const INPUT: &str = "top -SIP";

/// One CPU's shares in percent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopCpu {
    pub cpu: u32,
    pub user: f64,
    pub nice: f64,
    pub system: f64,
    pub interrupt: f64,
    pub idle: f64,
}

/// Parses the `CPU N:` lines of `top -SIP` output (the summary `CPU:` line is skipped).
pub fn parse_top(text: &str) -> Result<Vec<TopCpu>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
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
}
