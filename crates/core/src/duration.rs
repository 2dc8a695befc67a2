//! The one duration grammar every flag and profile uses (`bench --duration`, `tune
//! --duration/--warmup/--budget`, `apply --confirm-within`, ...).
//!
//! - a bare number is seconds: `2`, `0.5`;
//! - otherwise a number with a unit, as the `humantime` crate reads it (its `parse_duration`,
//!   humantime 2.x docs): `500ms`, `2s`, `3m`, `1h`, `1h30m`, `2min`, `100us`, `250ns`.
//!   Fractions work with a unit too: `1.5s`.
//!
//! Each command checks its own range afterwards (a warm-up may be zero, a measurement not).

use crate::error::InvalidInput;
use crate::units::Nanos;
use std::fmt;

/// What the grammar allows, for error messages and `--help`.
pub const GRAMMAR: &str = "seconds (2, 0.5) or a number with a unit (500ms, 2s, 1.5s, 3m, 1h30m)";

/// A text that is not a duration in [`GRAMMAR`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadDuration {
    /// The text as typed.
    pub text: String,
}

impl fmt::Display for BadDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a duration; allowed: {GRAMMAR}; e.g. 2s or 2",
            self.text
        )
    }
}

impl std::error::Error for BadDuration {}

/// Reads `text` as a duration: bare seconds, or a number with a unit.
pub fn parse(text: &str) -> Result<Nanos, BadDuration> {
    let t = text.trim();
    let bad = || BadDuration {
        text: text.to_string(),
    };
    // Bare numbers: plain decimal digits only (no `inf`, `nan`, exponents or signs).
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let secs: f64 = t.parse().map_err(|_| bad())?;
        // At most ~584 years fit u64 nanoseconds; anything near that is a typo anyway.
        return (secs <= 1e9)
            .then(|| Nanos::from_secs_f64(secs))
            .ok_or_else(bad);
    }
    with_unit(t).ok_or_else(bad)
}

/// Reads `text` only as a number with a unit (for flags where a bare number means something
/// else, like `tune --budget 72` = 72 runs).
pub fn parse_with_unit(text: &str) -> Result<Nanos, BadDuration> {
    with_unit(text.trim()).ok_or_else(|| BadDuration {
        text: text.to_string(),
    })
}

fn with_unit(t: &str) -> Option<Nanos> {
    // humantime accepts a leading digit only; `-2s` and `+2s` are refused by it.
    let d = humantime::parse_duration(t).ok()?;
    u64::try_from(d.as_nanos()).ok().map(Nanos)
}

/// `parse`, as a clap value parser (`#[arg(value_parser = duration::arg)]`).
pub fn arg(text: &str) -> Result<Nanos, BadDuration> {
    parse(text)
}

/// `value` checked to lie in `min..=max`; the error names the flag, the range and the grammar.
pub fn in_range(flag: &str, value: Nanos, min: Nanos, max: Nanos) -> Result<Nanos, InvalidInput> {
    if (min..=max).contains(&value) {
        return Ok(value);
    }
    let allowed = format!(
        "a duration from {} to {} ({GRAMMAR})",
        human(min),
        human(max)
    );
    Err(InvalidInput::new(flag, human(value), allowed))
}

/// A duration as the grammar writes it (`1h30m`, `500ms`, `0s`).
pub fn human(value: Nanos) -> String {
    if value == Nanos::ZERO {
        return "0s".to_string();
    }
    humantime::format_duration(std::time::Duration::from_nanos(value.0))
        .to_string()
        .replace(' ', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_numbers_are_seconds_and_units_are_humantime() {
        assert_eq!(parse("2").unwrap(), Nanos::from_secs(2));
        assert_eq!(parse(" 0.5 ").unwrap(), Nanos::from_millis(500));
        assert_eq!(parse("2s").unwrap(), Nanos::from_secs(2));
        assert_eq!(parse("500ms").unwrap(), Nanos::from_millis(500));
        assert_eq!(parse("3m").unwrap(), Nanos::from_secs(180));
        assert_eq!(parse("3min").unwrap(), Nanos::from_secs(180));
        assert_eq!(parse("1h30m").unwrap(), Nanos::from_secs(5400));
        assert_eq!(parse("100us").unwrap(), Nanos::from_micros(100));
        assert_eq!(parse("0").unwrap(), Nanos::ZERO);
        assert_eq!(parse("0s").unwrap(), Nanos::ZERO);
        assert_eq!(parse("1.5s").unwrap(), Nanos::from_millis(1500));
    }

    #[test]
    fn anything_else_is_refused_naming_the_grammar() {
        for bad in [
            "", "s", "-2", "-2s", "2x", "soon", "inf", "nan", "1e3", "2 2", "1e99",
        ] {
            let err = parse(bad).unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.contains("500ms") && msg.contains("e.g. 2s"),
                "{bad}: {msg}"
            );
        }
        assert_eq!(parse("99999999999").unwrap_err().text, "99999999999");
    }

    #[test]
    fn with_unit_only_refuses_bare_numbers() {
        assert!(parse_with_unit("72").is_err());
        assert_eq!(parse_with_unit("90s").unwrap(), Nanos::from_secs(90));
    }

    #[test]
    fn ranges_name_the_flag_and_bounds() {
        let day = Nanos::from_secs(86_400);
        let err = in_range(
            "--confirm-within",
            Nanos::from_secs(90_000),
            Nanos::MILLI,
            day,
        )
        .unwrap_err();
        assert_eq!(err.what, "--confirm-within");
        assert_eq!(err.value, "1day1h");
        assert!(
            err.allowed.starts_with("a duration from 1ms to 1day"),
            "{}",
            err.allowed
        );
        assert_eq!(parse(&err.value).unwrap(), Nanos::from_secs(90_000));
        assert!(in_range("--x", day, Nanos::MILLI, day).is_ok());
    }
}
