//! Parsing what a user typed into a typed [`CatalogValue`], per the entry's [`ValueType`].

use super::model::{Entry, ValueType};
use crate::cpuset::CpuSet;
use serde::{Serialize, Serializer};
use std::fmt;

/// A parsed value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", content = "value", rename_all = "kebab-case")]
pub enum CatalogValue {
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
    /// A set of CPUs (from a list or a mask); JSON: the CPU numbers.
    Cpus(#[serde(serialize_with = "cpu_numbers")] CpuSet),
    /// One value per port (module parameters).
    PerPort(Vec<CatalogValue>),
    /// DIM profile entries, least moderation first.
    DimProfile(Vec<ProfileSlot>),
    /// Minimum, default and maximum (`tcp_rmem`).
    Triple([i64; 3]),
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

/// A value that does not fit the entry's type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("setting {key}: {value:?} is {problem}")]
pub struct ValueError {
    /// Canonical key of the setting.
    pub key: String,
    /// The value as typed.
    pub value: String,
    /// What is wrong, naming what is allowed: `not an integer (µs)`, or for digits too many
    /// for any integer `out of range for kernel (any driver): allowed 0–4294967295 µs`.
    pub problem: String,
    /// The value is an integer with more digits than 64 bits hold: out of range rather
    /// than of the wrong type (`check` reports it as it reports any value out of range).
    pub too_large: bool,
}

/// Why text is not an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IntError {
    /// Not digits at all.
    NotInt,
    /// Digits, but beyond what 64 bits hold.
    TooLarge,
}

impl CatalogValue {
    /// Integers in the value: itself, the enum number, or every port's value.
    pub fn integers(&self) -> Vec<i64> {
        match self {
            CatalogValue::Integer(n) => vec![*n],
            CatalogValue::Bool(b) => vec![i64::from(*b)],
            CatalogValue::Enum { number, .. } => vec![*number],
            CatalogValue::Cpus(_) | CatalogValue::DimProfile(_) => Vec::new(),
            CatalogValue::PerPort(values) => {
                values.iter().flat_map(CatalogValue::integers).collect()
            }
            CatalogValue::Triple(t) => t.to_vec(),
        }
    }
}

impl fmt::Display for CatalogValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogValue::Integer(n) => write!(f, "{n}"),
            CatalogValue::Bool(b) => f.write_str(if *b { "on" } else { "off" }),
            CatalogValue::Enum { name, .. } => f.write_str(name),
            CatalogValue::Cpus(set) => write!(f, "{set}"),
            CatalogValue::PerPort(values) => {
                let parts: Vec<String> = values.iter().map(CatalogValue::to_string).collect();
                f.write_str(&parts.join(","))
            }
            CatalogValue::DimProfile(slots) => {
                let parts: Vec<String> = slots.iter().map(ProfileSlot::to_string).collect();
                f.write_str(&parts.join("_"))
            }
            CatalogValue::Triple([min, default, max]) => write!(f, "{min} {default} {max}"),
        }
    }
}

impl Entry {
    /// Parses `text` as a value of this entry (type only; ranges are [`super::check`]'s job).
    pub fn parse_value(&self, text: &str) -> Result<CatalogValue, ValueError> {
        let text = text.trim();
        if self.per_port && self.value_type != ValueType::CpuList {
            let values = text
                .split(',')
                .map(|part| self.parse_one(part.trim(), text));
            return values
                .collect::<Result<Vec<_>, _>>()
                .map(CatalogValue::PerPort);
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
            ValueType::IntegerTriple => match self.unit.symbol() {
                "" => "three integers: minimum default maximum".to_string(),
                unit => format!(
                    "three integers ({unit}): minimum default maximum, such as 4096 131072 6291456"
                ),
            },
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

    fn parse_one(&self, part: &str, whole: &str) -> Result<CatalogValue, ValueError> {
        let parsed = match self.value_type {
            ValueType::Integer => match parse_integer(part) {
                Ok(n) => Some(CatalogValue::Integer(n)),
                Err(IntError::TooLarge) => return Err(self.too_large(whole)),
                Err(IntError::NotInt) => None,
            },
            ValueType::Bool => parse_bool(part).map(CatalogValue::Bool),
            ValueType::Enum => self.parse_choice(part),
            // An empty list would leave the IRQ nowhere to run; the kernel refuses it too.
            ValueType::CpuList => CpuSet::parse_list(part)
                .ok()
                .filter(|set| !set.is_empty())
                .map(CatalogValue::Cpus),
            ValueType::CpuMask => CpuSet::parse_mask(part).ok().map(CatalogValue::Cpus),
            ValueType::DimProfile => parse_dim_profile(part).map(CatalogValue::DimProfile),
            ValueType::IntegerTriple => parse_triple(part).map(CatalogValue::Triple),
        };
        parsed.ok_or_else(|| ValueError {
            key: self.key.clone(),
            value: whole.to_string(),
            problem: format!("not {}", self.expected()),
            too_large: false,
        })
    }

    /// An integer with more digits than 64 bits hold: out of range of the entry's generic
    /// spec (the kernel's type), else of a 64-bit integer.
    fn too_large(&self, whole: &str) -> ValueError {
        let spec = super::check::select_spec(self, &super::check::Context::default())
            .ok()
            .flatten()
            .filter(|s| s.is_ranged());
        let problem = match spec {
            Some(s) => format!(
                "out of range for {}: allowed {}",
                s.label,
                s.allowed(self.unit)
            ),
            None => format!(
                "out of range for a 64-bit integer: allowed {}–{}",
                i64::MIN,
                i64::MAX
            ),
        };
        ValueError {
            key: self.key.clone(),
            value: whole.to_string(),
            problem,
            too_large: true,
        }
    }

    fn parse_choice(&self, text: &str) -> Option<CatalogValue> {
        let number = parse_integer(text).ok();
        self.choices
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(text) || Some(c.number) == number)
            .map(|c| CatalogValue::Enum {
                name: c.name.clone(),
                number: c.number,
            })
    }
}

/// Decimal, or hexadecimal with `0x`, optionally negative.
fn parse_integer(text: &str) -> Result<i64, IntError> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (digits, radix) = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => (hex, 16),
        None => (digits, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(IntError::NotInt);
    }
    let magnitude = i128::from_str_radix(digits, radix).map_err(|_| IntError::TooLarge)?;
    let n = if negative { -magnitude } else { magnitude };
    i64::try_from(n).map_err(|_| IntError::TooLarge)
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" | "enabled" => Some(true),
        "off" | "0" | "false" | "no" | "disabled" => Some(false),
        _ => None,
    }
}

/// `4096 131072 6291456` (as sysctl prints it; tabs and commas also separate), each no
/// larger than the one after it, as the kernel keeps them.
fn parse_triple(text: &str) -> Option<[i64; 3]> {
    let parts: Vec<i64> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|p| !p.is_empty())
        .map(|p| parse_integer(p).ok())
        .collect::<Option<_>>()?;
    let [min, default, max] = parts[..] else {
        return None;
    };
    (min <= default && default <= max).then_some([min, default, max])
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

/// `CatalogValue::Cpus` in JSON: the CPU numbers, e.g. `[0, 1, 8]`.
fn cpu_numbers<S: Serializer>(set: &CpuSet, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(set.iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_in_decimal_hex_and_negative() {
        assert_eq!(parse_integer("8000"), Ok(8000));
        assert_eq!(parse_integer("0x20"), Ok(32));
        assert_eq!(parse_integer("-1"), Ok(-1));
        assert_eq!(parse_integer("abc"), Err(IntError::NotInt));
        assert_eq!(parse_integer("1e3"), Err(IntError::NotInt));
        assert_eq!(parse_integer(""), Err(IntError::NotInt));
        assert_eq!(parse_integer("0x"), Err(IntError::NotInt));
        assert_eq!(parse_integer(&i64::MIN.to_string()), Ok(i64::MIN));
    }

    /// Issue #12 item 11b: too many digits said "not an integer".
    #[test]
    fn integers_beyond_64_bits_are_out_of_range_not_not_integers() {
        for text in [
            "99999999999999999999",
            "-99999999999999999999",
            "0xfffffffffffffffff",
        ] {
            assert_eq!(parse_integer(text), Err(IntError::TooLarge), "{text}");
        }
        assert_eq!(parse_integer(&"9".repeat(10_000)), Err(IntError::TooLarge));
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
    fn cpu_values_refuse_an_empty_list_and_show_numbers_in_json() {
        let irq = crate::catalog::lookup("irq.affinity").unwrap();
        for bad in ["", "3-1", "1,,2", "9000"] {
            assert!(irq.parse_value(bad).is_err(), "{bad:?}");
        }
        let rps = crate::catalog::lookup("rps.cpus").unwrap();
        assert!(rps.parse_value("1,1").is_err());
        let value = rps.parse_value("0x10f").unwrap();
        assert_eq!(value.to_string(), "0-3,8");
        assert_eq!(
            serde_json::to_string(&value).unwrap(),
            r#"{"type":"cpus","value":[0,1,2,3,8]}"#
        );
    }
}
