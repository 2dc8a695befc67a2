//! Validating a parsed value against an entry: which spec applies (driver, generation,
//! device), whether the value is in range, which caveats fire, and what it converts to.

use super::conversion::{convert, Converted};
use super::model::{Caveat, Condition, Entry, Severity, SourceKind, Spec};
use super::value::CatalogValue;
use serde::Serialize;

/// What is known about the target: all optional; the more is known, the sharper the check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Context {
    /// Kernel driver, e.g. `e1000`.
    pub driver: Option<String>,
    /// Device model, e.g. `82547` (matched as a substring, case-insensitive).
    pub device: Option<String>,
    /// Driver generation id, e.g. `7.0`.
    pub generation: Option<String>,
}

/// One finding with where its rule comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// What is wrong or worth knowing.
    pub message: String,
    /// Source of the rule.
    pub source: Option<String>,
}

/// The result of checking one value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    /// Canonical key.
    pub key: String,
    /// The parsed value.
    pub value: CatalogValue,
    /// Label of the spec the value was checked against, if one applied.
    pub spec: Option<String>,
    /// Out-of-range values.
    pub errors: Vec<Finding>,
    /// Caveats with severity `warning` that apply.
    pub warnings: Vec<Finding>,
    /// Caveats with severity `note`, special-value meanings, caveats that may apply.
    pub notes: Vec<Finding>,
    /// What the value means in other units.
    pub conversions: Vec<Converted>,
}

impl CheckReport {
    /// No errors and no warnings.
    pub fn is_clean(&self) -> bool {
        self.errors.is_empty() && self.warnings.is_empty()
    }
}

/// A context that cannot be used with this entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    /// The generation is not one the catalog knows for this driver.
    #[error(
        "{key}: no generation {generation:?} known for driver {driver}; {}",
        if known.is_empty() {
            "the catalog has one set of values for every generation: drop --generation".to_string()
        } else {
            format!("known: {}", known.join(", "))
        }
    )]
    UnknownGeneration {
        /// Canonical key.
        key: String,
        /// Driver in effect.
        driver: String,
        /// Generation given.
        generation: String,
        /// Generations the catalog knows.
        known: Vec<String>,
    },
}

/// Checks `value` for `entry` in `context`, on its own.
pub fn check(
    entry: &Entry,
    value: &CatalogValue,
    context: &Context,
) -> Result<CheckReport, ContextError> {
    check_among(entry, value, context, &[])
}

/// Checks settings meant to be applied together: a caveat whose
/// [`Guard`](super::model::Guard) another setting
/// of the set satisfies is dropped (`napi.defer-hard-irqs=2` with
/// `napi.gro-flush-timeout=20000` does not warn that the timeout is missing).
pub fn check_many(
    settings: &[(&Entry, CatalogValue)],
    context: &Context,
) -> Result<Vec<CheckReport>, ContextError> {
    let all: Vec<(&Entry, CatalogValue, Option<u32>)> = settings
        .iter()
        .map(|(e, v)| (*e, v.clone(), None))
        .collect();
    check_many_at(&all, context)
}

/// [`check_many`] for settings of one instance each (`napi.defer-hard-irqs@1`: `Some(1)`)
/// or of every instance (`None`): another setting answers a caveat only for the same
/// instance, or when it is set for every instance (`napi.gro-flush-timeout@2=20000` does
/// not answer `napi.defer-hard-irqs@1=2`'s caveat; `napi.gro-flush-timeout=20000` does).
pub fn check_many_at(
    settings: &[(&Entry, CatalogValue, Option<u32>)],
    context: &Context,
) -> Result<Vec<CheckReport>, ContextError> {
    settings
        .iter()
        .map(|(entry, value, at)| {
            let together: Vec<(&Entry, CatalogValue)> = settings
                .iter()
                .filter(|(_, _, other)| other.is_none() || *other == *at)
                .map(|(e, v, _)| (*e, v.clone()))
                .collect();
            check_among(entry, value, context, &together)
        })
        .collect()
}

fn check_among(
    entry: &Entry,
    value: &CatalogValue,
    context: &Context,
    together: &[(&Entry, CatalogValue)],
) -> Result<CheckReport, ContextError> {
    let context = effective_context(entry, context);
    let spec = select_spec(entry, &context)?;
    let mut report = CheckReport {
        key: entry.key.clone(),
        value: value.clone(),
        spec: spec.map(|s| s.label.clone()),
        errors: Vec::new(),
        warnings: Vec::new(),
        notes: Vec::new(),
        conversions: Vec::new(),
    };
    if let Some(spec) = spec {
        check_against_spec(entry, spec, value, &mut report);
    } else if entry.specs.iter().any(|s| s.driver.is_some()) {
        report.notes.push(Finding {
            message: format!(
                "ranges differ by driver ({}); give --driver for a sharper check",
                spec_drivers(entry).join(", ")
            ),
            source: None,
        });
    }
    let live = entry.caveats.iter().filter(|c| !guarded(c, together));
    for caveat in live {
        if related(caveat, value, together) {
            apply_caveat(caveat, value, &context, &mut report);
        }
    }
    Ok(report)
}

/// The entry's own driver fills in a missing `--driver`.
fn effective_context(entry: &Entry, context: &Context) -> Context {
    let mut context = context.clone();
    if context.driver.is_none() {
        context.driver.clone_from(&entry.driver);
    }
    context
}

fn spec_drivers(entry: &Entry) -> Vec<String> {
    let mut drivers: Vec<String> = entry
        .specs
        .iter()
        .filter_map(|s| s.driver.clone())
        .collect();
    drivers.dedup();
    drivers
}

/// The spec that applies: the driver's (the context's, else the entry's own; else the generic
/// one), the given generation (else the current one), the device-specific one when the
/// device matches.
pub fn select_spec<'e>(
    entry: &'e Entry,
    context: &Context,
) -> Result<Option<&'e Spec>, ContextError> {
    let context = &effective_context(entry, context);
    let driver = context.driver.as_deref();
    let mut candidates: Vec<&Spec> = entry
        .specs
        .iter()
        .filter(|s| s.driver.as_deref() == driver)
        .collect();
    if candidates.is_empty() {
        candidates = entry.specs.iter().filter(|s| s.driver.is_none()).collect();
    }
    let candidates = by_generation(entry, candidates, context)?;
    let device = context.device.as_deref();
    let device_match =
        |s: &&&Spec| device.is_some_and(|d| s.devices.iter().any(|p| contains_ci(d, p)));
    let chosen = candidates
        .iter()
        .find(device_match)
        .or_else(|| candidates.iter().find(|s| s.devices.is_empty()));
    Ok(chosen.copied())
}

/// The default the code uses in this context: the first `code` claim of the selected spec
/// that parses as a value of the entry (`None` when it is descriptive, e.g. driver-specific).
/// For per-port module parameters it is the value of one port.
pub fn default_value(
    entry: &Entry,
    context: &Context,
) -> Result<Option<CatalogValue>, ContextError> {
    let Some(spec) = select_spec(entry, context)? else {
        return Ok(None);
    };
    let mut code = spec.defaults.iter().filter(|c| c.kind == SourceKind::Code);
    let value = code.find_map(|claim| entry.parse_value(&claim.value).ok());
    Ok(value.map(|v| match v {
        CatalogValue::PerPort(mut ports) if ports.len() == 1 => ports.remove(0),
        other => other,
    }))
}

fn by_generation<'e>(
    entry: &Entry,
    candidates: Vec<&'e Spec>,
    context: &Context,
) -> Result<Vec<&'e Spec>, ContextError> {
    let Some(generation) = context.generation.as_deref() else {
        return Ok(candidates.into_iter().filter(|s| s.current).collect());
    };
    let known: Vec<String> = candidates
        .iter()
        .filter_map(|s| s.generation.clone())
        .collect();
    if known.is_empty() {
        // One set of values for every generation: any generation the catalog knows for the
        // driver reads (`--generation 7.0` for the whole e1000 request), a made-up one not.
        let driver_knows = driver_generations(context.driver.as_deref());
        if driver_knows
            .iter()
            .any(|g| g.eq_ignore_ascii_case(generation))
        {
            return Ok(candidates);
        }
        return Err(ContextError::UnknownGeneration {
            key: entry.key.clone(),
            driver: context.driver.clone().unwrap_or_else(|| "(any)".into()),
            generation: generation.to_string(),
            known: driver_knows,
        });
    }
    let chosen: Vec<&Spec> = candidates
        .into_iter()
        .filter(|s| {
            s.generation
                .as_deref()
                .is_none_or(|g| g.eq_ignore_ascii_case(generation))
        })
        .collect();
    if chosen.iter().any(|s| s.generation.is_some()) {
        return Ok(chosen);
    }
    Err(ContextError::UnknownGeneration {
        key: entry.key.clone(),
        driver: context.driver.clone().unwrap_or_else(|| "(any)".into()),
        generation: generation.to_string(),
        known,
    })
}

/// The generations the catalog knows for `driver` (for any driver without one), in any entry.
fn driver_generations(driver: Option<&str>) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for entry in super::catalog().entries() {
        let specs = entry.specs.iter().filter(|s| {
            driver.is_none_or(|d| s.driver.as_deref().or(entry.driver.as_deref()) == Some(d))
        });
        for g in specs.filter_map(|s| s.generation.as_ref()) {
            if !all.contains(g) {
                all.push(g.clone());
            }
        }
    }
    all
}

fn contains_ci(haystack: &str, needle: &str) -> bool {
    haystack
        .to_ascii_lowercase()
        .contains(&needle.to_ascii_lowercase())
}

fn check_against_spec(entry: &Entry, spec: &Spec, value: &CatalogValue, report: &mut CheckReport) {
    let mut seen: Vec<i64> = Vec::new();
    for n in value.integers() {
        if seen.contains(&n) {
            continue;
        }
        seen.push(n);
        if let Some(special) = spec.specials.iter().find(|s| s.value == n) {
            report.notes.push(Finding {
                message: format!("{n} = {}", special.meaning),
                source: Some(spec.source.clone()),
            });
        } else if spec.in_range(n) {
            if let Some(kind) = spec.conversion {
                report.conversions.extend(convert(kind, n));
            }
        } else if spec.is_ranged() {
            report.errors.push(out_of_range(entry, spec, n));
        }
    }
}

fn out_of_range(entry: &Entry, spec: &Spec, n: impl std::fmt::Display) -> Finding {
    let mut message = format!(
        "{n} is out of range for {}: allowed {}",
        spec.label,
        spec.allowed(entry.unit)
    );
    if let Some(what) = &spec.on_invalid {
        message.push_str(&format!("; {what}"));
    }
    Finding {
        message,
        source: Some(spec.source.clone()),
    }
}

/// The error for an integer with more digits than 64 bits hold ([`ValueError::too_large`]),
/// named against the spec `context` selects as any value out of range is: the label of the
/// spec (`None` when the entry has no ranged one) and the finding.
///
/// [`ValueError::too_large`]: super::ValueError::too_large
pub fn too_large(
    entry: &Entry,
    text: &str,
    context: &Context,
) -> Result<(Option<String>, Finding), ContextError> {
    Ok(
        match select_spec(entry, context)?.filter(|s| s.is_ranged()) {
            Some(spec) => (Some(spec.label.clone()), out_of_range(entry, spec, text)),
            None => (
                None,
                Finding {
                    message: format!(
                        "{text} is out of range for a 64-bit integer: allowed {}–{}",
                        i64::MIN,
                        i64::MAX
                    ),
                    source: None,
                },
            ),
        },
    )
}

impl Spec {
    /// Whether the spec limits integer values at all.
    pub fn is_ranged(&self) -> bool {
        !self.ranges.is_empty() || !self.specials.is_empty()
    }

    /// Whether `n` is inside one of the ranges.
    pub fn in_range(&self, n: i64) -> bool {
        self.ranges.iter().any(|[lo, hi]| (*lo..=*hi).contains(&n))
    }

    /// Allowed values in words: `0 (off), 1 (dynamic), 100–100000 interrupts/s`.
    pub fn allowed(&self, unit: super::model::Unit) -> String {
        let mut parts: Vec<String> = self
            .specials
            .iter()
            .map(|s| format!("{} ({})", s.value, s.meaning))
            .collect();
        parts.extend(self.ranges.iter().map(|[lo, hi]| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}–{hi}")
            }
        }));
        let unit = unit.symbol();
        let list = parts.join(", ");
        if unit.is_empty() || self.ranges.is_empty() {
            list
        } else {
            format!("{list} {unit}")
        }
    }
}

/// Whether a condition part holds: known yes/no, or unknown because the context lacks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Truth {
    Yes,
    No,
    Unknown,
}

/// A caveat on the relation to another setting (`above_setting`) applies only when that
/// setting is checked in the same set and the value is above it; other caveats always pass.
fn related(caveat: &Caveat, value: &CatalogValue, together: &[(&Entry, CatalogValue)]) -> bool {
    let Some(key) = &caveat.when.above_setting else {
        return true;
    };
    let others: Vec<i64> = together
        .iter()
        .filter(|(e, _)| &e.key == key)
        .flat_map(|(_, v)| v.integers())
        .collect();
    value
        .integers()
        .iter()
        .any(|n| others.iter().any(|o| n > o))
}

fn apply_caveat(
    caveat: &Caveat,
    value: &CatalogValue,
    context: &Context,
    report: &mut CheckReport,
) {
    let when = &caveat.when;
    if !value_matches(when, value) {
        return;
    }
    let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    let listed = list_matches(&when.drivers, context.driver.as_deref(), same);
    let unlisted = match list_matches(&when.drivers_not, context.driver.as_deref(), same) {
        _ if when.drivers_not.is_empty() => Truth::Yes,
        Truth::Yes => Truth::No,
        Truth::No => Truth::Yes,
        Truth::Unknown => Truth::Unknown,
    };
    let driver = match (listed, unlisted) {
        (Truth::No, _) | (_, Truth::No) => Truth::No,
        (Truth::Yes, Truth::Yes) => Truth::Yes,
        _ => Truth::Unknown,
    };
    let device = list_matches(&when.devices, context.device.as_deref(), contains_ci);
    let finding = |prefix: String| Finding {
        message: format!("{prefix}{}", caveat.text),
        source: Some(caveat.source.clone()),
    };
    match (driver, device) {
        (Truth::No, _) | (_, Truth::No) => {}
        (Truth::Yes, Truth::Yes) if caveat.severity == Severity::Warning => {
            report.warnings.push(finding(String::new()));
        }
        (Truth::Yes, Truth::Yes) => report.notes.push(finding(String::new())),
        _ => report
            .notes
            .push(finding(unknown_prefix(when, driver, device))),
    }
}

/// Whether another setting of the set satisfies the caveat's guard.
fn guarded(caveat: &Caveat, together: &[(&Entry, CatalogValue)]) -> bool {
    let Some(guard) = &caveat.unless else {
        return false;
    };
    together.iter().any(|(other, value)| {
        other.key == guard.key && value.integers().iter().any(|&n| n > guard.value_above)
    })
}

fn unknown_prefix(when: &Condition, driver: Truth, device: Truth) -> String {
    let mut parts = Vec::new();
    if driver == Truth::Unknown && !when.drivers.is_empty() {
        parts.push(format!("the driver is {}", when.drivers.join(" or ")));
    }
    if driver == Truth::Unknown && !when.drivers_not.is_empty() {
        parts.push("the driver is not one of those listed".to_string());
    }
    if device == Truth::Unknown {
        parts.push(format!("the device is {}", when.devices.join(" or ")));
    }
    format!("if {}: ", parts.join(" and "))
}

fn list_matches(list: &[String], actual: Option<&str>, eq: impl Fn(&str, &str) -> bool) -> Truth {
    match actual {
        _ if list.is_empty() => Truth::Yes,
        None => Truth::Unknown,
        Some(actual) if list.iter().any(|item| eq(actual, item)) => Truth::Yes,
        Some(_) => Truth::No,
    }
}

/// Value tests are alternatives; no value test means any value. Values without integers
/// (CPU sets) match only conditions without value tests.
fn value_matches(when: &Condition, value: &CatalogValue) -> bool {
    let has_tests = when.value_above.is_some()
        || when.value_below.is_some()
        || !when.value_in.is_empty()
        || when.value_not.is_some();
    if !has_tests {
        return true;
    }
    value.integers().into_iter().any(|n| {
        when.value_above.is_some_and(|limit| n > limit)
            || when.value_below.is_some_and(|limit| n < limit)
            || when.value_in.contains(&n)
            || when.value_not.is_some_and(|other| n != other)
    })
}
