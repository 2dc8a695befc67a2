//! `vmstat -i`: interrupts per source since boot and their average rate.
//!
//! ```text
//! interrupt                          total       rate
//! irq256: igb0:que 0             123456789       4567
//! cpu0:timer                      2000000       1000
//! Total                         999999999      99999
//! ```
//! The name may contain spaces (`igb7:que 0`); the last two columns are numbers.

use crate::error::{dec, ParseError};
use serde::Serialize;

const INPUT: &str = "vmstat -i";

/// One interrupt source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmstatIrq {
    /// The IRQ number of `irqN:` lines (what `cpuset -x` takes); None for `cpuN:timer`.
    pub irq: Option<u32>,
    /// The source name, e.g. `igb7:que 0`, `igb0:link`, `cpu0:timer`.
    pub name: String,
    /// Interrupts since boot (the `total` column).
    pub total: u64,
    /// Interrupts per second averaged since boot (measured between two samples when the
    /// capture has them). JSON: `rate_per_sec`.
    #[serde(rename = "rate_per_sec")]
    pub rate: u64,
}

impl VmstatIrq {
    /// `(interface, queue)` for queue vectors named `igb7:que 0` / `ix0:rxq3` / `em0:rx 0`.
    /// A name outside the interface-name rule ([`nictune_core::names`]) is not an interface:
    /// it would end up in the doctor's fix commands.
    pub fn queue(&self) -> Option<(&str, u32)> {
        let (dev, rest) = self.name.split_once(':')?;
        nictune_core::names::check_iface(dev).ok()?;
        let digits = rest.trim_start_matches(|c: char| !c.is_ascii_digit());
        let is_queue = rest.starts_with("que") || rest.starts_with("rxq") || rest.starts_with("rx");
        if !is_queue || digits.is_empty() {
            return None;
        }
        Some((dev, digits.trim().parse().ok()?))
    }
}

/// Parses `vmstat -i` output; the header and `Total` lines are skipped.
pub fn parse_vmstat_i(text: &str) -> Result<Vec<VmstatIrq>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() < 3 || words[0] == "interrupt" || words[0] == "Total" {
            continue;
        }
        let rate = dec(INPUT, n, "rate", words[words.len() - 1])?;
        let total = dec(INPUT, n, "total", words[words.len() - 2])?;
        let label = words[..words.len() - 2].join(" ");
        let (irq, name) = match label.strip_prefix("irq").and_then(|r| r.split_once(':')) {
            Some((num, name)) => (Some(dec(INPUT, n, "irq", num)? as u32), name.trim()),
            None => (None, label.as_str()),
        };
        out.push(VmstatIrq {
            irq,
            name: name.to_string(),
            total,
            rate,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_spaces_and_cpu_timers() {
        let text = "interrupt                          total       rate\n\
                    irq291: igb7:que 0                 123456       4567\n\
                    irq295: igb7:link                       2          0\n\
                    cpu0:timer                        2000000       1000\n\
                    Total                             2123458       5567\n";
        let v = parse_vmstat_i(text).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(
            (v[0].irq, v[0].name.as_str(), v[0].rate),
            (Some(291), "igb7:que 0", 4567)
        );
        assert_eq!(v[0].queue(), Some(("igb7", 0)));
        assert_eq!(v[1].queue(), None);
        assert_eq!((v[2].irq, v[2].queue()), (None, None));
    }

    #[test]
    fn bad_numbers_name_the_line() {
        let err = parse_vmstat_i("irq5: x 12 zz\n").unwrap_err();
        assert_eq!(err.line, 1);
    }
}
