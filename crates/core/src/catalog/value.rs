//! Parsing what a user typed into a typed [`Value`], per the entry's [`ValueType`].

use super::model::{Entry, ValueType};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt;

/// A parsed value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", content = "value", rename_all = "kebab-case")]
pub enum Value {
    /// An integer.
    Integer(i64),
    /// on/off.
    Bool(bool),
    /// A named choice and the number the kernel uses for it.
    Enum {
        /// Canonical name.
        name: String,
        /// Kernel number.
        number: i64,
    },
    /// A set of CPUs (from a list or a mask).
    Cpus(CpuSet),
    /// One value per port (module parameters).
    PerPort(Vec<Value>),
    /// DIM profile entries, least moderation first.
    DimProfile(Vec<ProfileSlot>),
}

/// One DIM profile entry; `None` keeps the entry's current field (`n/a`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ProfileSlot {
    /// Timer in µs.
    pub usec: Option<u32>,
    /// Packet-count threshold.
    pub pkts: Option<u32>,
    /// Completion-count threshold.
    pub comps: Option<u32>,
}

/// Entries in a DIM profile (`NET_DIM_PARAMS_NUM_PROFILES`, include/linux/dim.h).
pub const DIM_PROFILE_ENTRIES: usize = 5;

/// A set of CPU numbers.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct CpuSet(pub BTreeSet<u32>);

/// Highest CPU number accepted in a list or mask (Linux `NR_CPUS` maximum is 8192).
pub const MAX_CPU: u32 = 8191;

/// A value that does not fit the entry's type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("setting {key}: {value:?} is not {expected}")]
pub struct ValueError {
    /// Canonical key of the setting.
    pub key: String,
    /// The value as typed.
    pub value: String,
    /// What is allowed, e.g. `an integer (µs)`.
    pub expected: String,
}

impl Value {
    /// Integers in the value: itself, the enum number, or every port's value.
    pub fn integers(&self) -> Vec<i64> {
        match self {
            Value::Integer(n) => vec![*n],
            Value::Bool(b) => vec![i64::from(*b)],
            Value::Enum { number, .. } => vec![*number],
            Value::Cpus(_) | Value::DimProfile(_) => Vec::new(),
            Value::PerPort(values) => values.iter().flat_map(Value::integers).collect(),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Integer(n) => write!(f, "{n}"),
            Value::Bool(b) => f.write_str(if *b { "on" } else { "off" }),
            Value::Enum { name, .. } => f.write_str(name),
            Value::Cpus(set) => write!(f, "{set}"),
            Value::PerPort(values) => {
                let parts: Vec<String> = values.iter().map(Value::to_string).collect();
                f.write_str(&parts.join(","))
            }
            Value::DimProfile(slots) => {
                let parts: Vec<String> = slots.iter().map(ProfileSlot::to_string).collect();
                f.write_str(&parts.join("_"))
            }
        }
    }
}

impl Entry {
    /// Parses `text` as a value of this entry (type only; ranges are [`super::check`]'s job).
    pub fn parse_value(&self, text: &str) -> Result<Value, ValueError> {
        let text = text.trim();
        if self.per_port && self.value_type != ValueType::CpuList {
            let values = text
                .split(',')
                .map(|part| self.parse_one(part.trim(), text));
            return values.collect::<Result<Vec<_>, _>>().map(Value::PerPort);
        }
        self.parse_one(text, text)
    }

    /// What one value looks like, for error messages.
    pub fn expected(&self) -> String {
        let one = match self.value_type {
            ValueType::Integer => match self.unit.symbol() {
                "" => "an integer".to_string(),
                unit => format!("an integer ({unit})"),
            },
            ValueType::Bool => "on/off (also 1/0, true/false, yes/no)".to_string(),
            ValueType::Enum => format!("one of {}", self.choice_list()),
            ValueType::CpuList => "a CPU list such as 0-3,8".to_string(),
            ValueType::CpuMask => "a hexadecimal CPU mask such as f or ff,00000000".to_string(),
            ValueType::DimProfile => format!(
                "1 to {DIM_PROFILE_ENTRIES} profile entries usec,pkts[,comps] joined by '_' \
                 (n/a keeps a field), such as 2,256_8,128_16,64_32,64_64,64"
            ),
        };
        if self.per_port {
            format!("{one}, or a comma-separated list of them, one per port")
        } else {
            one
        }
    }

    fn choice_list(&self) -> String {
        let names: Vec<String> = self
            .choices
            .iter()
            .map(|c| format!("{} ({})", c.name, c.number))
            .collect();
        names.join(", ")
    }

    fn parse_one(&self, part: &str, whole: &str) -> Result<Value, ValueError> {
        let parsed = match self.value_type {
            ValueType::Integer => parse_integer(part).map(Value::Integer),
            ValueType::Bool => parse_bool(part).map(Value::Bool),
            ValueType::Enum => self.parse_choice(part),
            ValueType::CpuList => parse_cpu_list(part).map(Value::Cpus),
            ValueType::CpuMask => parse_cpu_mask(part).map(Value::Cpus),
            ValueType::DimProfile => parse_dim_profile(part).map(Value::DimProfile),
        };
        parsed.ok_or_else(|| ValueError {
            key: self.key.clone(),
            value: whole.to_string(),
            expected: self.expected(),
        })
    }

    fn parse_choice(&self, text: &str) -> Option<Value> {
        let number = parse_integer(text);
        self.choices
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(text) || Some(c.number) == number)
            .map(|c| Value::Enum {
                name: c.name.clone(),
                number: c.number,
            })
    }
}

/// Decimal, or hexadecimal with `0x`, optionally negative.
fn parse_integer(text: &str) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let magnitude = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => i64::from_str_radix(hex, 16).ok()?,
        None if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse().ok()?
        }
        None => return None,
    };
    Some(if negative { -magnitude } else { magnitude })
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" | "enabled" => Some(true),
        "off" | "0" | "false" | "no" | "disabled" => Some(false),
        _ => None,
    }
}

/// `2,256_8,128,n/a_...` (ethtool's rx-profile syntax): 1–5 entries of up to three fields.
pub fn parse_dim_profile(text: &str) -> Option<Vec<ProfileSlot>> {
    let slots = text
        .split(['_', ';', ' '])
        .filter(|s| !s.is_empty())
        .map(parse_profile_slot)
        .collect::<Option<Vec<_>>>()?;
    (1..=DIM_PROFILE_ENTRIES)
        .contains(&slots.len())
        .then_some(slots)
}

fn parse_profile_slot(text: &str) -> Option<ProfileSlot> {
    let fields: Vec<Option<u32>> = text
        .split(',')
        .map(|f| match f.trim() {
            "n/a" => Some(None),
            number => number.parse::<u32>().ok().map(Some),
        })
        .collect::<Option<Vec<_>>>()?;
    match fields.as_slice() {
        [usec, rest @ ..] if rest.len() <= 2 => Some(ProfileSlot {
            usec: *usec,
            pkts: rest.first().copied().flatten(),
            comps: rest.get(1).copied().flatten(),
        }),
        _ => None,
    }
}

impl fmt::Display for ProfileSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = |v: Option<u32>| v.map_or("n/a".to_string(), |n| n.to_string());
        write!(
            f,
            "{},{},{}",
            field(self.usec),
            field(self.pkts),
            field(self.comps)
        )
    }
}

/// `0-3,8,10-11` (the kernel's cpulist format).
pub fn parse_cpu_list(text: &str) -> Option<CpuSet> {
    let mut set = BTreeSet::new();
    for part in text.split(',').map(str::trim) {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo.parse::<u32>().ok()?, hi.parse::<u32>().ok()?),
            None => {
                let cpu = part.parse::<u32>().ok()?;
                (cpu, cpu)
            }
        };
        if lo > hi || hi > MAX_CPU {
            return None;
        }
        set.extend(lo..=hi);
    }
    Some(CpuSet(set))
}

/// `f`, `0xf`, `ff,00000000` (the kernel's hex mask format: 32-bit groups, most significant
/// first). `0` is the empty set.
pub fn parse_cpu_mask(text: &str) -> Option<CpuSet> {
    let text = text.strip_prefix("0x").unwrap_or(text);
    let groups: Vec<&str> = text.split(',').collect();
    let mut set = BTreeSet::new();
    for (index, group) in groups.iter().rev().enumerate() {
        if group.is_empty()
            || group.len() > 8
            || (groups.len() > 1 && index + 1 < groups.len() && group.len() != 8)
        {
            return None;
        }
        let bits = u32::from_str_radix(group, 16).ok()?;
        let base = u32::try_from(index).ok()?.checked_mul(32)?;
        set.extend(
            (0..32)
                .filter(|bit| bits & (1 << bit) != 0)
                .map(|bit| base + bit),
        );
    }
    if set.last().is_some_and(|&cpu| cpu > MAX_CPU) {
        return None;
    }
    Some(CpuSet(set))
}

impl CpuSet {
    /// The kernel's cpulist form: `0-3,8`.
    pub fn to_list(&self) -> String {
        let mut parts = Vec::new();
        let mut cpus = self.0.iter().copied().peekable();
        while let Some(start) = cpus.next() {
            let mut end = start;
            while cpus.peek() == Some(&(end + 1)) {
                end = cpus.next().unwrap_or(end);
            }
            parts.push(if start == end {
                start.to_string()
            } else {
                format!("{start}-{end}")
            });
        }
        parts.join(",")
    }

    /// The kernel's hex mask form: `ff,00000000`.
    pub fn to_mask(&self) -> String {
        let top = self.0.last().map_or(0, |cpu| cpu / 32);
        let groups: Vec<String> = (0..=top)
            .rev()
            .map(|g| {
                let bits = self
                    .0
                    .iter()
                    .filter(|cpu| *cpu / 32 == g)
                    .fold(0u32, |acc, cpu| acc | 1 << (cpu % 32));
                if g == top {
                    format!("{bits:x}")
                } else {
                    format!("{bits:08x}")
                }
            })
            .collect();
        groups.join(",")
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&self.to_list())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_in_decimal_hex_and_negative() {
        assert_eq!(parse_integer("8000"), Some(8000));
        assert_eq!(parse_integer("0x20"), Some(32));
        assert_eq!(parse_integer("-1"), Some(-1));
        assert_eq!(parse_integer("abc"), None);
        assert_eq!(parse_integer("1e3"), None);
        assert_eq!(parse_integer(""), None);
        assert_eq!(parse_integer("99999999999999999999"), None);
    }

    #[test]
    fn cpu_lists_and_masks_agree() {
        let list = parse_cpu_list("0-3,8").unwrap();
        assert_eq!(list.to_list(), "0-3,8");
        assert_eq!(list.to_mask(), "10f");
        assert_eq!(parse_cpu_mask("10f").unwrap(), list);
        assert_eq!(parse_cpu_mask("0x10f").unwrap(), list);
        let high = parse_cpu_mask("1,00000001").unwrap();
        assert_eq!(high.to_list(), "0,32");
        assert_eq!(high.to_mask(), "1,00000001");
        assert!(parse_cpu_mask("0").unwrap().0.is_empty());
    }

    #[test]
    fn dim_profiles_parse_in_ethtool_syntax() {
        let slots = parse_dim_profile("2,256_8,128,n/a_16,64_32,64_64,64").unwrap();
        assert_eq!(slots.len(), 5);
        assert_eq!(slots[1].to_string(), "8,128,n/a");
        assert_eq!(slots[0].usec, Some(2));
        assert_eq!(
            parse_dim_profile("1"),
            Some(vec![ProfileSlot {
                usec: Some(1),
                pkts: None,
                comps: None
            }])
        );
        for bad in ["", "1_2_3_4_5_6", "1,2,3,4", "x,1", "-1,2"] {
            assert_eq!(parse_dim_profile(bad), None, "{bad}");
        }
    }

    #[test]
    fn malformed_cpu_sets_are_rejected() {
        for bad in ["3-1", "a", "", "0-", "1,,2", "9000"] {
            assert_eq!(parse_cpu_list(bad), None, "{bad}");
        }
        for bad in ["g", "", "1,1", "123456789"] {
            assert_eq!(parse_cpu_mask(bad), None, "{bad}");
        }
    }
}
