//! Setting values: integers, switches, CPU sets and sysctl text, with the parsing users type
//! and the comparison the plan uses to decide whether anything changes.

use crate::setting::ValueKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// A value as read from or written to the host.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Value {
    Int(u64),
    Bool(bool),
    Cpus(CpuSet),
    /// Sysctl text with runs of whitespace collapsed to one space.
    Text(String),
}

impl Value {
    /// Sysctl text, normalised so `4096\t87380  16777216` equals `4096 87380 16777216`.
    pub fn text(raw: &str) -> Value {
        Value::Text(raw.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// The integer inside, if this is one.
    pub fn as_int(&self) -> Option<u64> {
        match self {
            Value::Int(n) => Some(*n),
            Value::Bool(b) => Some(u64::from(*b)),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(n) => write!(f, "{n}"),
            Value::Bool(true) => f.write_str("on"),
            Value::Bool(false) => f.write_str("off"),
            // Spelled out: a bare "1" would read as a mask where users typed masks.
            Value::Cpus(c) if c.is_empty() => f.write_str("no cpus"),
            Value::Cpus(c) if c.cpus().count() == 1 => write!(f, "cpu {c}"),
            Value::Cpus(c) => write!(f, "cpus {c}"),
            Value::Text(t) => f.write_str(t),
        }
    }
}

/// Why a typed value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("{value:?} is not an integer; allowed: {min}..={max} ({unit})")]
    NotInt {
        value: String,
        min: u64,
        max: u64,
        unit: &'static str,
    },
    #[error("{value} is out of range; allowed: {min}..={max} ({unit})")]
    OutOfRange {
        value: u64,
        min: u64,
        max: u64,
        unit: &'static str,
    },
    #[error("{0:?} is not a switch; allowed: on, off, true, false, 1, 0")]
    NotBool(String),
    #[error("{0:?} is not a CPU list; allowed: a list like 0-3,8 or a hex mask like 0xf")]
    NotCpus(String),
    #[error("sysctl values cannot be empty or contain newlines")]
    BadText,
}

/// Parses what a user typed for a key of `kind`.
pub fn parse_value(kind: ValueKind, raw: &str) -> Result<Value, ValueError> {
    let raw = raw.trim();
    match kind {
        ValueKind::Int { min, max, unit } => parse_int(raw, min, max, unit).map(Value::Int),
        ValueKind::Bool => parse_bool(raw).map(Value::Bool),
        ValueKind::Cpus => CpuSet::parse_user(raw).map(Value::Cpus),
        ValueKind::Text if raw.is_empty() || raw.contains('\n') => Err(ValueError::BadText),
        ValueKind::Text => Ok(Value::text(raw)),
    }
}

fn parse_int(raw: &str, min: u64, max: u64, unit: &'static str) -> Result<u64, ValueError> {
    let clean = raw.replace('_', "");
    let value: u64 = clean.parse().map_err(|_| ValueError::NotInt {
        value: raw.to_string(),
        min,
        max,
        unit,
    })?;
    if value < min || value > max {
        return Err(ValueError::OutOfRange {
            value,
            min,
            max,
            unit,
        });
    }
    Ok(value)
}

fn parse_bool(raw: &str) -> Result<bool, ValueError> {
    match raw.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(ValueError::NotBool(raw.to_string())),
    }
}

/// A set of CPU numbers; shown as a cpulist (`0-3,8`), the form `smp_affinity_list` uses.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct CpuSet(BTreeSet<u32>);

/// CPU numbers above this are refused: far beyond any machine and keeps masks bounded.
const MAX_CPU: u32 = 8191;

impl CpuSet {
    pub fn from_cpus(cpus: impl IntoIterator<Item = u32>) -> CpuSet {
        CpuSet(cpus.into_iter().collect())
    }

    pub fn cpus(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A user's CPU set: a cpulist (`0-3,8`), a hex mask (`0xf`), or `none`/`0x0`.
    pub fn parse_user(raw: &str) -> Result<CpuSet, ValueError> {
        let bad = || ValueError::NotCpus(raw.to_string());
        if raw == "none" {
            return Ok(CpuSet::default());
        }
        match raw.strip_prefix("0x").or_else(|| raw.strip_prefix("0X")) {
            Some(hex) => CpuSet::parse_mask(hex).map_err(|_| bad()),
            None => CpuSet::parse_list(raw).map_err(|_| bad()),
        }
    }

    /// A cpulist as the kernel prints it (`0-3,8`; empty for none).
    pub fn parse_list(text: &str) -> Result<CpuSet, ValueError> {
        let bad = || ValueError::NotCpus(text.to_string());
        let mut set = BTreeSet::new();
        for part in text.trim().split(',').filter(|p| !p.is_empty()) {
            let (lo, hi) = part.split_once('-').unwrap_or((part, part));
            let lo: u32 = lo.trim().parse().map_err(|_| bad())?;
            let hi: u32 = hi.trim().parse().map_err(|_| bad())?;
            if lo > hi || hi > MAX_CPU {
                return Err(bad());
            }
            set.extend(lo..=hi);
        }
        Ok(CpuSet(set))
    }

    /// A hex mask as sysfs prints it: 32-bit groups separated by commas, most significant
    /// first (`00000000,0000000f`), or one run of hex digits.
    pub fn parse_mask(text: &str) -> Result<CpuSet, ValueError> {
        let bad = || ValueError::NotCpus(text.to_string());
        let digits: String = text.trim().chars().filter(|c| *c != ',').collect();
        let mut set = BTreeSet::new();
        for (pos, c) in digits.chars().rev().enumerate() {
            let nibble = c.to_digit(16).ok_or_else(bad)?;
            for bit in 0..4 {
                if nibble & (1 << bit) != 0 {
                    let cpu = u32::try_from(pos * 4 + bit).map_err(|_| bad())?;
                    if cpu > MAX_CPU {
                        return Err(bad());
                    }
                    set.insert(cpu);
                }
            }
        }
        Ok(CpuSet(set))
    }

    /// The hex mask sysfs accepts (`rps_cpus`, `xps_cpus`): comma-separated 32-bit groups.
    pub fn to_mask(&self) -> String {
        let groups = self.0.last().map_or(1, |max| max / 32 + 1);
        (0..groups)
            .rev()
            .map(|g| {
                let word = self
                    .cpus()
                    .filter(|c| c / 32 == g)
                    .fold(0u32, |w, c| w | (1 << (c % 32)));
                format!("{word:08x}")
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        for cpu in self.cpus() {
            match ranges.last_mut() {
                Some((_, hi)) if *hi + 1 == cpu => *hi = cpu,
                _ => ranges.push((cpu, cpu)),
            }
        }
        let parts: Vec<String> = ranges
            .iter()
            .map(|(lo, hi)| {
                if lo == hi {
                    format!("{lo}")
                } else {
                    format!("{lo}-{hi}")
                }
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

impl From<CpuSet> for String {
    fn from(c: CpuSet) -> String {
        c.to_string()
    }
}

impl TryFrom<String> for CpuSet {
    type Error = ValueError;
    fn try_from(s: String) -> Result<CpuSet, ValueError> {
        CpuSet::parse_user(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulist_and_mask_agree() {
        let list = CpuSet::parse_list("0-3,8,40").unwrap();
        assert_eq!(list.to_string(), "0-3,8,40");
        assert_eq!(list.to_mask(), "00000100,0000010f");
        assert_eq!(CpuSet::parse_mask(&list.to_mask()).unwrap(), list);
        // A 2-CPU machine prints rps_cpus as a single short group.
        assert_eq!(CpuSet::parse_mask("3").unwrap().to_string(), "0-1");
        assert_eq!(CpuSet::parse_mask("0").unwrap().to_string(), "none");
    }

    #[test]
    fn user_forms_are_accepted_and_nonsense_named() {
        assert_eq!(CpuSet::parse_user("0xf").unwrap().to_string(), "0-3");
        assert_eq!(CpuSet::parse_user("none").unwrap(), CpuSet::default());
        let err = CpuSet::parse_user("3-1").unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"3-1\" is not a CPU list; allowed: a list like 0-3,8 or a hex mask like 0xf"
        );
    }

    #[test]
    fn integers_name_their_range_and_unit() {
        let kind = ValueKind::Int {
            min: 0,
            max: 10,
            unit: "polls",
        };
        assert_eq!(parse_value(kind, "1_0").unwrap(), Value::Int(10));
        let err = parse_value(kind, "11").unwrap_err().to_string();
        assert_eq!(err, "11 is out of range; allowed: 0..=10 (polls)");
        assert!(parse_value(kind, "-1").is_err());
    }

    #[test]
    fn sysctl_text_compares_without_whitespace_noise() {
        assert_eq!(
            Value::text("4096\t87380  16777216\n"),
            Value::text("4096 87380 16777216")
        );
        assert!(parse_value(ValueKind::Text, "").is_err());
    }
}
