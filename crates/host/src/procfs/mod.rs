//! Parsers for the procfs files that count interrupts, softirqs, CPU time and packets.
//!
//! Each parser takes the file's text and nothing else; facts about the machine (USER_HZ, CPU
//! ids) are arguments of the functions that need them. The fixtures in the tests are this
//! project's capture machine's real files (see `fixtures/linux-vm-6.18/PROVENANCE.md`).

pub mod interrupts;
pub mod netdev;
pub mod netstat;
pub mod softirqs;
pub mod softnet;
pub mod stat;

pub use interrupts::{parse_interrupts, ArchKind, IrqLine, IrqSource, ProcInterrupts};
pub use netdev::{parse_net_dev, NetDevCounters};
pub use softirqs::{parse_softirqs, ProcSoftirqs};
pub use softnet::{parse_softnet_stat, SoftnetRow};
pub use stat::{parse_stat, CpuTimes, ProcStat, Ticks};

/// Splits a table with one column per CPU (`/proc/interrupts`, `/proc/softirqs`) into the
/// CPU ids of its header and the non-blank lines below it, each with its 1-based number.
pub(crate) fn cpu_table<'a>(
    input: &'static str,
    text: &'a str,
) -> Result<(Vec<u32>, impl Iterator<Item = (usize, &'a str)>), crate::error::ParseError> {
    let mut lines = text.lines();
    let header = lines
        .next()
        .ok_or_else(|| crate::error::ParseError::new(input, 0, "empty input"))?;
    let rows = lines
        .enumerate()
        .map(|(i, line)| (i + 2, line))
        .filter(|(_, line)| !line.trim().is_empty());
    Ok((cpu_header(input, header)?, rows))
}

/// Parses a `CPU0 CPU1 ...` header into CPU ids (offline CPUs are missing from the list).
fn cpu_header(input: &'static str, line: &str) -> Result<Vec<u32>, crate::error::ParseError> {
    line.split_whitespace()
        .map(|word| {
            word.strip_prefix("CPU")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| {
                    crate::error::ParseError::new(
                        input,
                        1,
                        format!("header word {word:?} is not CPU<n>"),
                    )
                })
        })
        .collect()
}

/// Splits `name: n1 n2 ...` into the trimmed name and its decimal numbers.
pub(crate) fn labelled_counts<'a>(
    input: &'static str,
    n: usize,
    line: &'a str,
) -> Result<(&'a str, Vec<u64>), crate::error::ParseError> {
    let (name, rest) = line
        .split_once(':')
        .ok_or_else(|| crate::error::ParseError::new(input, n, format!("no `:` in {line:?}")))?;
    let name = name.trim();
    let counts = rest
        .split_whitespace()
        .map(|w| crate::error::dec(input, n, name, w))
        .collect::<Result<Vec<u64>, _>>()?;
    Ok((name, counts))
}

/// The sum of counters read from text, saturating at `u64::MAX` rather than overflowing: a
/// capture can hold any number.
pub fn total<'a>(counts: impl IntoIterator<Item = &'a u64>) -> u64 {
    counts.into_iter().fold(0, |sum, c| sum.saturating_add(*c))
}
