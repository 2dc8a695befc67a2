//! Scenario values and their validation: each key has a kind (integer, number, choice,
//! text) with the range or choices allowed, and every rejection names the key, the value and
//! what is allowed.

use super::error::ScenarioError;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// Resolved parameters: every key of a scenario's catalog with its value.
pub type Params = BTreeMap<String, ParamValue>;

fn unread(key: &str, wanted: &'static str) -> ScenarioError {
    ScenarioError::Unread {
        key: key.to_string(),
        wanted,
    }
}

/// The integer value of `key` (a number is truncated); an error if the catalog has no such key.
pub fn get_int(p: &Params, key: &str) -> Result<i64, ScenarioError> {
    match p.get(key) {
        Some(ParamValue::Int(i)) => Ok(*i),
        Some(ParamValue::Float(f)) => Ok(*f as i64),
        _ => Err(unread(key, "an integer")),
    }
}

/// The numeric value of `key`; an error if the catalog has no such key.
pub fn get_num(p: &Params, key: &str) -> Result<f64, ScenarioError> {
    match p.get(key) {
        Some(ParamValue::Int(i)) => Ok(*i as f64),
        Some(ParamValue::Float(f)) => Ok(*f),
        _ => Err(unread(key, "a number")),
    }
}

/// The text value of `key`; an error if the catalog has no such key.
pub fn get_text<'a>(p: &'a Params, key: &str) -> Result<&'a str, ScenarioError> {
    match p.get(key) {
        Some(ParamValue::Text(t)) => Ok(t),
        _ => Err(unread(key, "text")),
    }
}

/// A scenario parameter value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// An integer.
    Int(i64),
    /// A number.
    Float(f64),
    /// A string (choices and text).
    Text(String),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// What a key accepts.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// An integer in `min..=max`, in `unit`.
    Int {
        /// Smallest value accepted.
        min: i64,
        /// Largest value accepted.
        max: i64,
        /// Unit shown in messages and `--keys` (e.g. "1.024 µs ticks"); empty for none.
        unit: &'static str,
    },
    /// A number in `min..=max`, in `unit`.
    Float {
        /// Smallest value accepted.
        min: f64,
        /// Largest value accepted.
        max: f64,
        /// Unit shown in messages and `--keys`; empty for none.
        unit: &'static str,
    },
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// Free text (checked by the key's own parser later).
    Text,
}

impl Kind {
    /// What is allowed, for messages and `--keys`.
    pub fn allowed(&self) -> String {
        let unit = |u: &str| {
            if u.is_empty() {
                String::new()
            } else {
                format!(" ({u})")
            }
        };
        match self {
            Kind::Int { min, max, unit: u } => format!("an integer from {min} to {max}{}", unit(u)),
            Kind::Float { min, max, unit: u } => format!("a number from {min} to {max}{}", unit(u)),
            Kind::Choice(c) => format!("one of {}", c.join(", ")),
            Kind::Text => "text".to_string(),
        }
    }

    /// Checks a value read from TOML.
    pub fn check(&self, key: &str, v: ParamValue) -> Result<ParamValue, ScenarioError> {
        let bad = |problem: &'static str, v: &ParamValue| ScenarioError::BadValue {
            key: key.to_string(),
            value: v.to_string(),
            problem,
            allowed: self.allowed(),
        };
        match (self, v) {
            (Kind::Int { min, max, .. }, ParamValue::Int(i)) if (*min..=*max).contains(&i) => {
                Ok(ParamValue::Int(i))
            }
            (Kind::Int { .. }, v @ ParamValue::Int(_)) => Err(bad("out of range", &v)),
            (Kind::Float { .. }, ParamValue::Int(i)) => self
                .check(key, ParamValue::Float(i as f64))
                .map_err(|_| bad("out of range", &ParamValue::Int(i))),
            (Kind::Float { min, max, .. }, ParamValue::Float(x)) if x >= *min && x <= *max => {
                Ok(ParamValue::Float(x))
            }
            (Kind::Float { .. }, v @ ParamValue::Float(_)) => Err(bad("out of range", &v)),
            (Kind::Choice(c), ParamValue::Text(s)) if c.contains(&s.as_str()) => {
                Ok(ParamValue::Text(s))
            }
            (Kind::Choice(_), v @ ParamValue::Text(_)) => Err(bad("not a choice", &v)),
            (Kind::Text, v @ ParamValue::Text(_)) => Ok(v),
            (_, v) => Err(bad("of the wrong type", &v)),
        }
    }

    /// Parses and checks a value typed on the command line.
    pub fn parse(&self, key: &str, text: &str) -> Result<ParamValue, ScenarioError> {
        let t = text.trim();
        let v = match self {
            Kind::Int { .. } => t.replace('_', "").parse::<i64>().ok().map(ParamValue::Int),
            Kind::Float { .. } => t
                .replace('_', "")
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(ParamValue::Float),
            Kind::Choice(_) | Kind::Text => Some(ParamValue::Text(t.to_string())),
        };
        // Digits past i64 are an integer out of range, not a value of another type.
        let digits = t.replace('_', "");
        let digits = digits.strip_prefix(['-', '+']).unwrap_or(&digits);
        let too_large = matches!(self, Kind::Int { .. })
            && !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit());
        match v {
            Some(v) => self.check(key, v),
            None => Err(ScenarioError::BadValue {
                key: key.to_string(),
                value: format!("{t:?}"),
                problem: if too_large {
                    "out of range"
                } else {
                    "of the wrong type"
                },
                allowed: self.allowed(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ITR: Kind = Kind::Int {
        min: 0,
        max: 100_000,
        unit: "interrupts/s",
    };

    #[test]
    fn integers_are_range_checked() {
        assert_eq!(ITR.parse("k", "8000").unwrap(), ParamValue::Int(8000));
        let e = ITR.parse("client.itr", "200000").unwrap_err().to_string();
        assert!(
            e.contains("client.itr") && e.contains("200000") && e.contains("0 to 100000"),
            "{e}"
        );
        let e = ITR.parse("client.itr", "fast").unwrap_err().to_string();
        assert!(e.contains("wrong type"), "{e}");
    }

    /// `sim --seed 9223372036854775808` said "is wrong type": it is an integer, too large.
    #[test]
    fn integers_past_64_bits_are_out_of_range_not_of_another_type() {
        let seed = Kind::Int {
            min: 0,
            max: i64::MAX,
            unit: "",
        };
        for text in [
            "9223372036854775808",
            "-9223372036854775809",
            "1_000_000_000_000_000_000_000",
        ] {
            let e = seed.parse("seed", text).unwrap_err().to_string();
            assert_eq!(
                e,
                format!(
                    "scenario key `seed`: {text:?} is out of range; allowed: an integer from 0 \
                     to 9223372036854775807"
                )
            );
        }
        let e = seed.parse("seed", "12x").unwrap_err().to_string();
        assert!(e.contains("\"12x\" is of the wrong type"), "{e}");
    }

    #[test]
    fn floats_accept_integers_and_choices_are_closed() {
        let ppm = Kind::Float {
            min: -500.0,
            max: 500.0,
            unit: "ppm",
        };
        assert_eq!(
            ppm.check("p", ParamValue::Int(10)).unwrap(),
            ParamValue::Float(10.0)
        );
        assert!(ppm.check("p", ParamValue::Int(1000)).is_err());
        assert!(ppm.check("p", ParamValue::Text("x".into())).is_err());
        let c = Kind::Choice(&["a", "b"]);
        let e = c.parse("driver", "c").unwrap_err().to_string();
        assert!(e.contains("one of a, b"), "{e}");
    }
}
