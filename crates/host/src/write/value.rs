//! Setting values: integers, switches, CPU sets and sysctl text, with the parsing users type
//! and the comparison the plan uses to decide whether anything changes.

use super::setting::ValueKind;
pub use nictune_core::cpuset::CpuSet;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A value as read from or written to the host.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostValue {
    /// A count or time in the key's unit (µs, frames, ns, descriptors, ...).
    Int(u64),
    /// A switch: ethtool features and boolean coalescing parameters.
    Bool(bool),
    /// A CPU set (IRQ affinity, RPS/XPS); serialised as a cpulist like `0-3,8`, `none` when empty.
    Cpus(#[serde(with = "cpus_text")] CpuSet),
    /// Sysctl text with runs of whitespace collapsed to one space.
    Text(String),
}

impl HostValue {
    /// Sysctl text, normalised so `4096\t87380  16777216` equals `4096 87380 16777216`.
    pub fn text(raw: &str) -> HostValue {
        HostValue::Text(raw.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// The integer inside, if this is one.
    pub fn as_int(&self) -> Option<u64> {
        match self {
            HostValue::Int(n) => Some(*n),
            HostValue::Bool(b) => Some(u64::from(*b)),
            _ => None,
        }
    }
}

impl fmt::Display for HostValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostValue::Int(n) => write!(f, "{n}"),
            HostValue::Bool(true) => f.write_str("on"),
            HostValue::Bool(false) => f.write_str("off"),
            // Spelled out: a bare "1" would read as a mask where users typed masks.
            HostValue::Cpus(c) if c.is_empty() => f.write_str("no cpus"),
            HostValue::Cpus(c) if c.len() == 1 => write!(f, "cpu {c}"),
            HostValue::Cpus(c) => write!(f, "cpus {c}"),
            HostValue::Text(t) => f.write_str(t),
        }
    }
}

/// Why a typed value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("{value:?} is not an integer; allowed: {min}..={max} ({unit})")]
    /// The text does not parse as an unsigned integer (underscores and a leading `+` allowed).
    NotInt {
        /// The text as typed.
        value: String,
        /// Smallest value the key accepts.
        min: u64,
        /// Largest value the key accepts.
        max: u64,
        /// The key's unit, for the message.
        unit: &'static str,
    },
    #[error("{value} is out of range for the setting's type; allowed: {min}..={max} ({unit})")]
    /// All digits, but larger than `u64::MAX`.
    TooLarge {
        /// The text as typed.
        value: String,
        /// Smallest value the key accepts.
        min: u64,
        /// Largest value the key accepts.
        max: u64,
        /// The key's unit, for the message.
        unit: &'static str,
    },
    #[error("{value} is out of range; allowed: {min}..={max} ({unit})")]
    /// An integer outside the key's `min..=max`.
    OutOfRange {
        /// The integer as parsed.
        value: u64,
        /// Smallest value the key accepts.
        min: u64,
        /// Largest value the key accepts.
        max: u64,
        /// The key's unit, for the message.
        unit: &'static str,
    },
    #[error("{0:?} is not a switch; allowed: on, off, true, false, 1, 0")]
    /// Not one of `on`, `off`, `true`, `false`, `yes`, `no`, `1`, `0` (any case); holds the text as
    /// typed.
    NotBool(String),
    #[error("{0:?} is not a CPU list; allowed: a list like 0-3,8 or a hex mask like 0xf")]
    /// Neither a CPU list nor a hex mask; holds the text as typed.
    NotCpus(String),
    #[error("sysctl values cannot be empty or contain newlines or control characters; allowed: printable text, words separated by spaces or tabs")]
    /// Sysctl text that is empty or holds control characters other than tab.
    BadText,
}

/// Parses what a user typed for a key of `kind`.
pub fn parse_value(kind: ValueKind, raw: &str) -> Result<HostValue, ValueError> {
    let raw = raw.trim();
    match kind {
        ValueKind::Int { min, max, unit } => parse_int(raw, min, max, unit).map(HostValue::Int),
        ValueKind::Bool => parse_bool(raw).map(HostValue::Bool),
        ValueKind::Cpus => parse_cpus(raw).map(HostValue::Cpus),
        ValueKind::Text if raw.is_empty() || raw.chars().any(|c| c.is_control() && c != '\t') => {
            Err(ValueError::BadText)
        }
        ValueKind::Text => Ok(HostValue::text(raw)),
    }
}

fn parse_int(raw: &str, min: u64, max: u64, unit: &'static str) -> Result<u64, ValueError> {
    let clean = raw.replace('_', "");
    let digits = clean.strip_prefix('+').unwrap_or(&clean);
    let value: u64 = clean.parse().map_err(|_| {
        let (value, min, max, unit) = (raw.to_string(), min, max, unit);
        match !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            true => ValueError::TooLarge {
                value,
                min,
                max,
                unit,
            },
            false => ValueError::NotInt {
                value,
                min,
                max,
                unit,
            },
        }
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

/// A user's CPU set: a cpulist (`0-3,8`), a hex mask (`0xf`, `0xff,00000001`, or one long
/// run of hex digits such as `0x1ffffffff`), or `none`/`0x0`.
pub fn parse_cpus(raw: &str) -> Result<CpuSet, ValueError> {
    let bad = |_| ValueError::NotCpus(raw.to_string());
    if raw == "none" {
        return Ok(CpuSet::default());
    }
    match raw.strip_prefix("0x").or_else(|| raw.strip_prefix("0X")) {
        Some(hex) => CpuSet::parse_mask(&mask_groups(hex)).map_err(bad),
        None => CpuSet::parse_list(raw).map_err(bad),
    }
}

/// A run of hex digits cut into the kernel's 32-bit groups (`1ffffffff` → `1,ffffffff`), so
/// users need not type the commas; text that already has commas is left as typed.
fn mask_groups(hex: &str) -> String {
    if hex.contains(',') {
        return hex.to_string();
    }
    let digits: Vec<char> = hex.chars().collect();
    let groups: Vec<String> = digits
        .rchunks(8)
        .rev()
        .map(|group| group.iter().collect())
        .collect();
    groups.join(",")
}

/// A CPU set in journal and JSON text: the cpulist, `none` for the empty set, so a journal
/// entry reads back as the user would type it.
mod cpus_text {
    use super::{parse_cpus, CpuSet};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(cpus: &CpuSet, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(cpus)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CpuSet, D::Error> {
        let text = String::deserialize(d)?;
        parse_cpus(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_text_with_control_characters_is_refused() {
        for bad in ["1\n2", "a\rb", "x\u{1b}[2J", "\u{7}"] {
            assert_eq!(
                parse_value(ValueKind::Text, bad),
                Err(ValueError::BadText),
                "{bad:?}"
            );
        }
        assert_eq!(
            parse_value(ValueKind::Text, "4096\t87380  16777216"),
            Ok(HostValue::text("4096 87380 16777216"))
        );
    }

    #[test]
    fn integers_beyond_64_bits_are_out_of_range_for_the_type() {
        let kind = ValueKind::Int {
            min: 0,
            max: u64::from(u32::MAX),
            unit: "µs",
        };
        let err = parse_value(kind, "99999999999999999999999").unwrap_err();
        assert_eq!(
            err.to_string(),
            "99999999999999999999999 is out of range for the setting's type; allowed: 0..=4294967295 (µs)"
        );
        assert!(matches!(
            parse_value(kind, "9x"),
            Err(ValueError::NotInt { .. })
        ));
    }

    #[test]
    fn user_forms_are_accepted_and_nonsense_named() {
        assert_eq!(parse_cpus("0xf").unwrap().to_string(), "0-3");
        assert_eq!(parse_cpus("0x1ffffffff").unwrap().to_string(), "0-32");
        assert_eq!(parse_cpus("0x1,00000000").unwrap().to_string(), "32");
        assert_eq!(parse_cpus("none").unwrap(), CpuSet::default());
        let err = parse_cpus("3-1").unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"3-1\" is not a CPU list; allowed: a list like 0-3,8 or a hex mask like 0xf"
        );
    }

    #[test]
    fn cpu_sets_keep_their_journal_text() {
        let cpus = HostValue::Cpus([0, 1, 2, 3, 8].into_iter().collect());
        let json = serde_json::to_string(&cpus).unwrap();
        assert_eq!(json, r#"{"cpus":"0-3,8"}"#);
        assert_eq!(serde_json::from_str::<HostValue>(&json).unwrap(), cpus);
        let none = serde_json::to_string(&HostValue::Cpus(CpuSet::default())).unwrap();
        assert_eq!(none, r#"{"cpus":"none"}"#);
    }

    #[test]
    fn integers_name_their_range_and_unit() {
        let kind = ValueKind::Int {
            min: 0,
            max: 10,
            unit: "polls",
        };
        assert_eq!(parse_value(kind, "1_0").unwrap(), HostValue::Int(10));
        let err = parse_value(kind, "11").unwrap_err().to_string();
        assert_eq!(err, "11 is out of range; allowed: 0..=10 (polls)");
        assert!(parse_value(kind, "-1").is_err());
    }

    #[test]
    fn sysctl_text_compares_without_whitespace_noise() {
        assert_eq!(
            HostValue::text("4096\t87380  16777216\n"),
            HostValue::text("4096 87380 16777216")
        );
        assert!(parse_value(ValueKind::Text, "").is_err());
    }
}
