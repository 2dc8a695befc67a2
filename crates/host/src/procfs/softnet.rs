//! `/proc/net/softnet_stat`: per-CPU packet-processing counters in hex, one row per online CPU.
//!
//! Columns (net/core/net-procfs.c; the count grew over the years, so every column past the
//! first three is optional): 0 processed, 1 dropped (backlog full), 2 time_squeeze (budget or
//! time ran out with work left), 3–8 unused (once fastroute and cpu_collision), 9 received_rps,
//! 10 flow_limit_count, 11 backlog length, 12 CPU index, 13 input queue length,
//! 14 process queue length. Rows skip offline CPUs, so the row number is not the CPU id; the
//! CPU index column (kernels ≥ 5.10) gives it.

use crate::error::ParseError;
use serde::Serialize;

const INPUT: &str = "/proc/net/softnet_stat";

/// One CPU's row.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SoftnetRow {
    /// The CPU this row belongs to: the index column when present, else the row number.
    pub cpu: u32,
    /// Packets taken off the backlog / processed by NET_RX on this CPU.
    pub processed: u64,
    /// Packets dropped because the backlog (netdev_max_backlog) was full.
    pub dropped: u64,
    /// NET_RX rounds ended by netdev_budget or netdev_budget_usecs with work left.
    pub time_squeeze: u64,
    /// Times another CPU woke this one with an IPI to process RPS-steered packets (column 9);
    /// `None` on kernels without the column.
    pub received_rps: Option<u64>,
    /// Packets dropped by the RPS flow limit (`net.core.flow_limit_cpu_bitmap`, column 10);
    /// `None` when absent.
    pub flow_limit_count: Option<u64>,
    /// Packets waiting in this CPU's backlog when read (column 11, kernels ≥ 5.10); `None`
    /// when absent.
    pub backlog_len: Option<u64>,
    /// Every column as read, for columns newer than this parser.
    pub columns: Vec<u64>,
}

/// Parses the text of `/proc/net/softnet_stat`.
pub fn parse_softnet_stat(text: &str) -> Result<Vec<SoftnetRow>, ParseError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| parse_row(line, i + 1, i as u32))
        .collect()
}

fn parse_row(line: &str, n: usize, row_index: u32) -> Result<SoftnetRow, ParseError> {
    let columns = line
        .split_whitespace()
        .map(|w| {
            u64::from_str_radix(w, 16)
                .map_err(|_| ParseError::new(INPUT, n, format!("column {w:?} is not hexadecimal")))
        })
        .collect::<Result<Vec<u64>, _>>()?;
    if columns.len() < 3 {
        let problem = format!("{} columns; at least 3 expected", columns.len());
        return Err(ParseError::new(INPUT, n, problem));
    }
    let col = |i: usize| columns.get(i).copied();
    Ok(SoftnetRow {
        cpu: col(12).map_or(row_index, |c| c as u32),
        processed: columns[0],
        dropped: columns[1],
        time_squeeze: columns[2],
        received_rps: col(9),
        flow_limit_count: col(10),
        backlog_len: col(11),
        columns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../../../fixtures/linux-vm-6.18/proc/net/softnet_stat");

    #[test]
    fn parses_the_captured_fifteen_column_file() {
        let rows = parse_softnet_stat(FIXTURE).unwrap();
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.columns.len() == 15));
        assert_eq!(rows[1].cpu, 1);
        assert!(rows[0].processed > 0);
    }

    #[test]
    fn old_eleven_column_rows_use_the_row_number_as_cpu() {
        let text = "0000ff00 00000002 00000010 00000000 00000000 00000000 00000000 00000000 00000000 00000003 00000001\n\
                    00000010 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n";
        let rows = parse_softnet_stat(text).unwrap();
        assert_eq!(rows[0].processed, 0xff00);
        assert_eq!((rows[0].dropped, rows[0].time_squeeze), (2, 16));
        assert_eq!(rows[0].received_rps, Some(3));
        assert_eq!(rows[0].backlog_len, None);
        assert_eq!(rows[1].cpu, 1);
    }

    #[test]
    fn the_cpu_index_column_wins_over_the_row_number() {
        // CPU 1 offline: the second row is CPU 2.
        let row = "00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000002\n";
        let rows = parse_softnet_stat(&format!("{row}{row}")).unwrap();
        assert_eq!(rows[0].cpu, 2);
    }

    #[test]
    fn bad_rows_are_errors() {
        assert_eq!(parse_softnet_stat("0000000z 0 0\n").unwrap_err().line, 1);
        assert!(parse_softnet_stat("00000001 00000000\n").is_err());
    }
}
