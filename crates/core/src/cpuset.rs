//! A set of CPU ids in the kernel's two notations: CPU lists (`smp_affinity_list`,
//! `effective_affinity_list`, `thread_siblings_list`: `0-3,8,10-11`) and comma-grouped hex
//! masks (`smp_affinity`, `rps_cpus`, `xps_cpus`: `00000000,00000f0f`, lowest CPU rightmost).
//!
//! One type serves both the values a user types (the catalog) and the files the kernel
//! writes (the host snapshot). JSON shows the set in list notation.

use serde::{Serialize, Serializer};
use std::collections::BTreeSet;
use std::fmt;

/// Highest CPU number accepted in a list or mask (Linux `NR_CPUS` maximum is 8192).
pub const MAX_CPU: u32 = 8191;

/// Hex digits in one comma-separated group of a mask (the kernel prints 32-bit words).
const GROUP_DIGITS: usize = 8;

/// CPUs 0..=[`MAX_CPU`] as bits, for parsing.
struct Bitmap([u64; (MAX_CPU as usize + 1) / 64]);

impl Default for Bitmap {
    fn default() -> Self {
        Bitmap([0; (MAX_CPU as usize + 1) / 64])
    }
}

impl Bitmap {
    /// Sets CPUs `lo..=hi` (both at most [`MAX_CPU`]).
    fn fill(&mut self, lo: u32, hi: u32) {
        for word in lo / 64..=hi / 64 {
            let first = if word == lo / 64 { lo % 64 } else { 0 };
            let last = if word == hi / 64 { hi % 64 } else { 63 };
            let ones = u64::MAX >> (63 - (last - first));
            self.0[word as usize] |= ones << first;
        }
    }

    fn into_set(self) -> CpuSet {
        let cpus = self.0.iter().enumerate().flat_map(|(w, bits)| {
            (0..64u32)
                .filter(move |b| bits & (1 << b) != 0)
                .map(move |b| w as u32 * 64 + b)
        });
        CpuSet(cpus.collect())
    }
}

/// Ordered CPU ids.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, PartialOrd, Ord)]
pub struct CpuSet(pub BTreeSet<u32>);

/// Text that is not a CPU list or mask.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{notation} {text:?}: {problem}")]
pub struct CpuSetError {
    /// `CPU list` or `CPU mask`.
    pub notation: &'static str,
    /// The text as given.
    pub text: String,
    /// What was wrong, naming the offending part.
    pub problem: String,
}

impl CpuSet {
    /// The empty set.
    pub fn new() -> Self {
        CpuSet::default()
    }

    /// Parses a CPU list such as `0-3,8`. Blank text (an empty kernel list) is the empty set.
    pub fn parse_list(text: &str) -> Result<Self, CpuSetError> {
        let bad = |problem: String| CpuSetError::new("CPU list", text, problem);
        // Ranges fill a bitmap word by word, so a long list of wide ranges costs time in
        // proportion to its length, not to the CPUs it names over and over.
        let mut bits = Bitmap::default();
        if text.trim().is_empty() {
            return Ok(CpuSet::new());
        }
        for part in text.trim().split(',').map(str::trim) {
            let (lo, hi) = part.split_once('-').unwrap_or((part, part));
            let (lo, hi) = (cpu_number(lo).map_err(&bad)?, cpu_number(hi).map_err(&bad)?);
            if lo > hi {
                return Err(bad(format!("range {part:?} runs backwards")));
            }
            bits.fill(lo, hi);
        }
        Ok(bits.into_set())
    }

    /// Parses a hex mask such as `f`, `0xf` or `00000001,00000000`: 32-bit groups, most
    /// significant first; every group but the first is eight digits wide. `0` is the empty set.
    pub fn parse_mask(text: &str) -> Result<Self, CpuSetError> {
        let bad = |problem: String| CpuSetError::new("CPU mask", text, problem);
        let trimmed = text.trim();
        let digits = trimmed
            .strip_prefix("0x")
            .or_else(|| trimmed.strip_prefix("0X"))
            .unwrap_or(trimmed);
        let groups: Vec<&str> = digits.split(',').collect();
        let mut set = BTreeSet::new();
        for (index, group) in groups.iter().rev().enumerate() {
            let bits = mask_group(group, index + 1 == groups.len()).map_err(&bad)?;
            if bits != 0 {
                let base = group_base(index).map_err(&bad)?;
                set.extend(
                    (0..32)
                        .filter(|bit| bits & (1 << bit) != 0)
                        .map(|bit| base + bit),
                );
            }
        }
        Ok(CpuSet(set))
    }

    /// The CPUs in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }

    /// Whether `cpu` is in the set.
    pub fn contains(&self, cpu: u32) -> bool {
        self.0.contains(&cpu)
    }

    /// Adds `cpu`.
    pub fn insert(&mut self, cpu: u32) {
        self.0.insert(cpu);
    }

    /// How many CPUs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// No CPUs.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The kernel CPU-list notation (`0-3,8`); the empty set is the empty string.
    pub fn to_list(&self) -> String {
        let mut parts = Vec::new();
        let mut cpus = self.iter().peekable();
        while let Some(start) = cpus.next() {
            let mut end = start;
            while let Some(next) = cpus.next_if_eq(&(end + 1)) {
                end = next;
            }
            parts.push(match end - start {
                0 => start.to_string(),
                _ => format!("{start}-{end}"),
            });
        }
        parts.join(",")
    }

    /// The kernel hex-mask notation: 32-bit groups, most significant first, every group but
    /// the first zero-padded (`1,00000003`). The empty set is `0`.
    pub fn to_mask(&self) -> String {
        let top = self.0.last().map_or(0, |cpu| cpu / 32);
        let mut words = vec![0u32; top as usize + 1];
        for cpu in self.iter() {
            words[(cpu / 32) as usize] |= 1 << (cpu % 32);
        }
        let groups: Vec<String> = words
            .iter()
            .rev()
            .enumerate()
            .map(|(i, w)| match i {
                0 => format!("{w:x}"),
                _ => format!("{w:08x}"),
            })
            .collect();
        groups.join(",")
    }
}

impl CpuSetError {
    fn new(notation: &'static str, text: &str, problem: String) -> Self {
        CpuSetError {
            notation,
            text: text.to_string(),
            problem,
        }
    }
}

/// One CPU number of a list, at most [`MAX_CPU`].
fn cpu_number(word: &str) -> Result<u32, String> {
    let cpu: u32 = word
        .trim()
        .parse()
        .map_err(|_| format!("{word:?} is not a CPU number"))?;
    match cpu {
        0..=MAX_CPU => Ok(cpu),
        _ => Err(format!("CPU {cpu} is above the highest, {MAX_CPU}")),
    }
}

/// The bits of one mask group; only the first (most significant) may be narrower than eight.
fn mask_group(group: &str, first: bool) -> Result<u32, String> {
    if let Some(ch) = group.chars().find(|c| !c.is_ascii_hexdigit()) {
        return Err(format!("{ch:?} is not a hex digit"));
    }
    let width_ok = match first {
        true => (1..=GROUP_DIGITS).contains(&group.len()),
        false => group.len() == GROUP_DIGITS,
    };
    if !width_ok {
        return Err(format!(
            "group {group:?} is not {} hex digits",
            if first { "1 to 8" } else { "8" }
        ));
    }
    u32::from_str_radix(group, 16).map_err(|_| format!("group {group:?} is not hex"))
}

/// The first CPU of the `index`-th group from the right, if it is within [`MAX_CPU`].
fn group_base(index: usize) -> Result<u32, String> {
    u32::try_from(index)
        .ok()
        .and_then(|i| i.checked_mul(32))
        .filter(|&base| base <= MAX_CPU)
        .ok_or_else(|| format!("a CPU above the highest, {MAX_CPU}"))
}

impl FromIterator<u32> for CpuSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        CpuSet(iter.into_iter().collect())
    }
}

/// The list notation; the empty set is `none`.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.is_empty() {
            true => f.write_str("none"),
            false => f.write_str(&self.to_list()),
        }
    }
}

/// The list notation, `""` for the empty set.
impl Serialize for CpuSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_list())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(text: &str) -> Vec<u32> {
        CpuSet::parse_list(text).unwrap().iter().collect()
    }

    #[test]
    fn lists_parse_and_print_compactly() {
        assert_eq!(list("0-3,8,10-11\n"), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(CpuSet::parse_list("0-3, 8").unwrap().to_list(), "0-3,8");
        assert_eq!(CpuSet::parse_list("").unwrap(), CpuSet::new());
        assert_eq!(CpuSet::parse_list("\n").unwrap().to_string(), "none");
    }

    #[test]
    fn masks_parse_lowest_cpu_rightmost() {
        let set = CpuSet::parse_mask("00000001,00000003\n").unwrap();
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 1, 32]);
        assert_eq!(set.to_mask(), "1,00000003");
        assert_eq!(CpuSet::parse_mask("f0").unwrap().to_list(), "4-7");
        assert_eq!(CpuSet::parse_mask("0x10f").unwrap().to_list(), "0-3,8");
        assert_eq!(CpuSet::new().to_mask(), "0");
        assert!(CpuSet::parse_mask("0").unwrap().is_empty());
    }

    #[test]
    fn list_and_mask_round_trip() {
        for text in ["0", "1", "0-1", "5,7,9", "0-63", "31-33", "100", "8191"] {
            let set = CpuSet::parse_list(text).unwrap();
            assert_eq!(CpuSet::parse_mask(&set.to_mask()).unwrap(), set, "{text}");
            assert_eq!(set.to_list(), text);
        }
    }

    #[test]
    fn malformed_lists_name_the_part() {
        let problem = |text| CpuSet::parse_list(text).unwrap_err().problem;
        assert!(problem("3-1").contains("\"3-1\" runs backwards"));
        assert!(problem("a").contains("\"a\" is not a CPU number"));
        assert!(problem("1,,2").contains("\"\" is not a CPU number"));
        assert!(problem("0-").contains("\"\" is not a CPU number"));
        assert!(problem("9000").contains("above the highest, 8191"));
    }

    #[test]
    fn malformed_masks_name_the_part() {
        let problem = |text| CpuSet::parse_mask(text).unwrap_err().problem;
        assert!(problem("fg").contains("'g' is not a hex digit"));
        assert!(problem("").contains("group \"\" is not 1 to 8"));
        assert!(problem("1,1").contains("group \"1\" is not 8"));
        assert!(problem("123456789").contains("is not 1 to 8"));
        let too_high = format!("1{}", ",00000000".repeat(256));
        assert!(problem(&too_high).contains("above the highest"));
    }

    #[test]
    fn json_is_the_list_notation() {
        let set: CpuSet = [0, 1, 2, 8].into_iter().collect();
        assert_eq!(serde_json::to_string(&set).unwrap(), "\"0-2,8\"");
    }
}

#[cfg(test)]
mod bitmap_tests {
    use super::*;

    #[test]
    fn ranges_fill_exactly_their_cpus() {
        for (lo, hi) in [
            (0, 0),
            (0, 63),
            (1, 64),
            (63, 64),
            (5, 200),
            (0, MAX_CPU),
            (8191, 8191),
        ] {
            let set = CpuSet::parse_list(&format!("{lo}-{hi}")).unwrap();
            let naive: CpuSet = (lo..=hi).collect();
            assert_eq!(set, naive, "{lo}-{hi}");
        }
    }

    #[test]
    fn a_megabyte_of_full_ranges_parses_in_time_proportional_to_its_length() {
        let text = "0-8191,".repeat((1 << 20) / 7) + "0";
        let started = std::time::Instant::now();
        let set = CpuSet::parse_list(&text).unwrap();
        assert_eq!(set.len(), 8192);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
}
