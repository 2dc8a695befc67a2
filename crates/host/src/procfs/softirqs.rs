//! `/proc/softirqs`: softirqs raised per type and CPU since boot (NET_RX counts NAPI poll
//! rounds started by the softirq, NET_TX transmit completions deferred to softirq).

use crate::error::ParseError;
use serde::Serialize;

const INPUT: &str = "/proc/softirqs";

/// The whole file: one row per softirq type.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ProcSoftirqs {
    /// CPU ids of the count columns.
    pub cpus: Vec<u32>,
    /// `(type, count per CPU column)`, e.g. `("NET_RX", [476, 636])` (JSON: `{"name",
    /// "per_cpu"}` objects).
    #[serde(serialize_with = "crate::json::named_rows")]
    pub rows: Vec<(String, Vec<u64>)>,
}

impl ProcSoftirqs {
    /// Counts per CPU column of softirq type `name` (`NET_RX`, `NET_TX`, `TIMER`, ...).
    pub fn get(&self, name: &str) -> Option<&[u64]> {
        self.rows
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c.as_slice())
    }

    /// Count of type `name` on CPU `cpu` (0 if either is absent).
    pub fn on_cpu(&self, name: &str, cpu: u32) -> u64 {
        let column = self.cpus.iter().position(|&c| c == cpu);
        match (self.get(name), column) {
            (Some(counts), Some(col)) => counts.get(col).copied().unwrap_or(0),
            _ => 0,
        }
    }
}

/// Parses the text of `/proc/softirqs`.
pub fn parse_softirqs(text: &str) -> Result<ProcSoftirqs, ParseError> {
    let (cpus, lines) = super::cpu_table(INPUT, text)?;
    let rows = lines
        .map(|(n, line)| parse_row(line, n, cpus.len()))
        .collect::<Result<_, _>>()?;
    Ok(ProcSoftirqs { cpus, rows })
}

/// `NET_RX: n1 n2 ...`, one count per CPU column.
fn parse_row(line: &str, n: usize, ncpu: usize) -> Result<(String, Vec<u64>), ParseError> {
    let (name, counts) = super::labelled_counts(INPUT, n, line)?;
    if counts.len() != ncpu {
        let problem = format!("{} counts for {ncpu} CPU columns", counts.len());
        return Err(ParseError::new(INPUT, n, problem));
    }
    Ok((name.to_string(), counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../../../fixtures/linux-vm-6.18/proc/softirqs");

    #[test]
    fn parses_the_captured_file() {
        let s = parse_softirqs(FIXTURE).unwrap();
        assert_eq!(s.cpus, vec![0, 1]);
        assert_eq!(s.rows.len(), 10);
        let rx = s.get("NET_RX").unwrap();
        assert_eq!(s.on_cpu("NET_RX", 1), rx[1]);
        assert!(s.get("NET_TX").is_some());
        assert_eq!(s.on_cpu("NET_RX", 7), 0);
    }

    #[test]
    fn a_row_with_missing_columns_is_an_error() {
        let err = parse_softirqs("    CPU0 CPU1\n NET_RX: 1\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.problem.contains("1 counts for 2"), "{err}");
    }
}
