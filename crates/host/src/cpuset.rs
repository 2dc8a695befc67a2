//! A set of CPU ids, read from and written as the kernel's two notations: CPU lists
//! (`smp_affinity_list`, `effective_affinity_list`: `0-3,8,10-11`) and comma-grouped hex
//! masks (`smp_affinity`, `rps_cpus`, `xps_cpus`: `00000000,00000f0f`, lowest CPU rightmost).

use crate::error::ParseError;
use serde::{Serialize, Serializer};
use std::collections::BTreeSet;
use std::fmt;

/// Ordered CPU ids.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, PartialOrd, Ord)]
pub struct CpuSet(BTreeSet<u32>);

impl CpuSet {
    /// The empty set.
    pub fn new() -> Self {
        CpuSet::default()
    }

    /// Parses a CPU list such as `0-3,8`. An empty string is the empty set.
    pub fn parse_list(text: &str) -> Result<Self, ParseError> {
        let mut set = BTreeSet::new();
        for part in text.trim().split(',').filter(|p| !p.is_empty()) {
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (list_num(a, text)?, list_num(b, text)?),
                None => (list_num(part, text)?, list_num(part, text)?),
            };
            if lo > hi {
                return Err(bad_list(text, &format!("range {part:?} runs backwards")));
            }
            set.extend(lo..=hi);
        }
        Ok(CpuSet(set))
    }

    /// Parses a hex mask such as `ff` or `00000001,00000000` (32-bit groups, lowest last).
    pub fn parse_mask(text: &str) -> Result<Self, ParseError> {
        let digits: String = text.trim().chars().filter(|&c| c != ',').collect();
        let mut set = BTreeSet::new();
        for (pos, ch) in digits.chars().rev().enumerate() {
            let nibble = ch.to_digit(16).ok_or_else(|| {
                ParseError::new(
                    "CPU mask",
                    1,
                    format!("{text:?}: {ch:?} is not a hex digit"),
                )
            })?;
            for bit in 0..4 {
                if nibble & (1 << bit) != 0 {
                    set.insert(pos as u32 * 4 + bit);
                }
            }
        }
        Ok(CpuSet(set))
    }

    /// The CPUs in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }

    pub fn contains(&self, cpu: u32) -> bool {
        self.0.contains(&cpu)
    }

    pub fn insert(&mut self, cpu: u32) {
        self.0.insert(cpu);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The kernel CPU-list notation (`0-3,8`).
    pub fn to_list(&self) -> String {
        self.to_string()
    }

    /// The kernel hex-mask notation, 32-bit groups separated by commas (`0,00000101`-style
    /// zero padding on every group but the first). The empty set is `0`.
    pub fn to_mask(&self) -> String {
        let Some(&max) = self.0.iter().next_back() else {
            return "0".to_string();
        };
        let groups = max / 32 + 1;
        let mut words = vec![0u32; groups as usize];
        for &cpu in &self.0 {
            words[(cpu / 32) as usize] |= 1 << (cpu % 32);
        }
        let mut parts: Vec<String> = words.iter().rev().map(|w| format!("{w:08x}")).collect();
        parts[0] = format!("{:x}", words[words.len() - 1]);
        parts.join(",")
    }
}

impl FromIterator<u32> for CpuSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        CpuSet(iter.into_iter().collect())
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cpus: Vec<u32> = self.iter().collect();
        let mut first = true;
        let mut i = 0;
        while i < cpus.len() {
            let mut j = i;
            while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
                j += 1;
            }
            let sep = if first { "" } else { "," };
            match j - i {
                0 => write!(f, "{sep}{}", cpus[i])?,
                _ => write!(f, "{sep}{}-{}", cpus[i], cpus[j])?,
            }
            first = false;
            i = j + 1;
        }
        Ok(())
    }
}

impl Serialize for CpuSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_list())
    }
}

fn list_num(word: &str, whole: &str) -> Result<u32, ParseError> {
    word.trim()
        .parse()
        .map_err(|_| bad_list(whole, &format!("{word:?} is not a CPU number")))
}

fn bad_list(whole: &str, problem: &str) -> ParseError {
    ParseError::new("CPU list", 1, format!("{whole:?}: {problem}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_print_compactly() {
        let set = CpuSet::parse_list("0-3,8,10-11\n").unwrap();
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(set.to_list(), "0-3,8,10-11");
        assert!(CpuSet::parse_list("").unwrap().is_empty());
    }

    #[test]
    fn masks_parse_lowest_cpu_rightmost() {
        let set = CpuSet::parse_mask("00000001,00000003\n").unwrap();
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 1, 32]);
        assert_eq!(set.to_mask(), "1,00000003");
        assert_eq!(CpuSet::parse_mask("f0").unwrap().to_list(), "4-7");
        assert_eq!(CpuSet::new().to_mask(), "0");
        assert!(CpuSet::parse_mask("0").unwrap().is_empty());
    }

    #[test]
    fn list_and_mask_round_trip() {
        for list in ["0", "1", "0-1", "5,7,9", "0-63", "31-33", "100"] {
            let set = CpuSet::parse_list(list).unwrap();
            assert_eq!(CpuSet::parse_mask(&set.to_mask()).unwrap(), set, "{list}");
            assert_eq!(set.to_list(), list);
        }
    }

    #[test]
    fn bad_input_names_the_text() {
        let err = CpuSet::parse_list("3-1").unwrap_err();
        assert!(err.problem.contains("backwards"), "{err}");
        assert!(CpuSet::parse_list("a").is_err());
        assert!(CpuSet::parse_mask("fg")
            .unwrap_err()
            .problem
            .contains("'g'"));
    }
}
