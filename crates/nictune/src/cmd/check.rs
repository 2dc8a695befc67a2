//! `nictune check KEY=VALUE...`: validates values against the catalog (`nictune.check/v1`).
//!
//! Two stages: every argument is resolved and parsed first — an unknown key, an ambiguous
//! alias or an unparsable value exits 2 before anything is reported — then each value is
//! checked. Exit 0 when every value is fine, 1 when any is out of range or triggers a
//! warning caveat.

use super::explain::lookup_error;
use crate::output::{Ctx, HintExt, Outcome};
use anyhow::Result;
use nictune_apply::desired::{self, Desired};
use nictune_core::catalog::{
    catalog, check_many_at, edit_distance, select_spec, too_large, CatalogValue, CheckReport,
    Context, Converted, Entry, Finding, LookupError,
};
use nictune_core::error::InvalidInput;
use serde::Serialize;
use std::fmt::Write as _;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  nictune check InterruptThrottleRate=8000 --driver e1000
  nictune check rx-usecs=50 --driver igb
  nictune check InterruptThrottleRate=80000 --driver e1000 --device 82547
  nictune check net.core.busy_poll=50 napi.gro-flush-timeout=20000 --json")]
pub struct Args {
    /// Settings to check, as KEY=VALUE (any key or alias `nictune explain` accepts).
    #[arg(value_name = "KEY=VALUE", required = true)]
    pub settings: Vec<String>,
    /// Kernel driver of the target NIC (e1000, e1000e, igb, ixgbe, ixgbevf, ...).
    #[arg(long, value_name = "NAME")]
    pub driver: Option<String>,
    /// Device model, matched as a substring (82547, 82547GI, I350, ...).
    #[arg(long, value_name = "MODEL")]
    pub device: Option<String>,
    /// Driver generation when ranges or defaults changed over time (e.g. 7.0 for e1000).
    #[arg(long, value_name = "G")]
    pub generation: Option<String>,
}

/// One checked setting.
#[derive(Debug, Serialize)]
struct Checked {
    /// The argument as typed.
    input: String,
    #[serde(flatten)]
    report: Report,
}

/// What was found about one setting: the catalog's check, or — for a key `apply` takes that
/// the catalog does not list (any `sysctl.net.*`, another ethtool feature, `rps.flow-cnt`) —
/// the same fields with only the form checked.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Report {
    Catalog(CheckReport),
    Outside(OutsideReport),
}

/// [`CheckReport`]'s fields for a setting outside the catalog, or for an integer too large
/// for any setting's type (`rx-usecs=18446744073709551616`).
#[derive(Debug, Serialize)]
struct OutsideReport {
    key: String,
    /// `{"type": "integer"|"bool"|"cpus"|"text", "value": ...}`, as the catalog's values;
    /// `{"type": "integer", "value": null}` for an integer past 64 bits (`input` has it).
    value: serde_json::Value,
    /// `null` outside the catalog: no spec applies; the spec the too-large value is out of
    /// range for otherwise.
    spec: Option<String>,
    errors: Vec<Finding>,
    warnings: Vec<Finding>,
    notes: Vec<Finding>,
    conversions: Vec<Converted>,
    /// The value as `apply` reads it, for the text output.
    #[serde(skip)]
    text: String,
}

impl OutsideReport {
    fn new(d: &Desired) -> OutsideReport {
        use nictune_host::write::value::HostValue as V;
        let (kind, value) = match &d.value {
            V::Int(n) => ("integer", serde_json::json!(n)),
            V::Bool(b) => ("bool", serde_json::json!(b)),
            V::Cpus(set) => ("cpus", serde_json::json!(set.iter().collect::<Vec<_>>())),
            // A one-number sysctl is a number; `4096 87380 6291456` or `bbr` stay text.
            V::Text(t) => match t.parse::<u64>() {
                Ok(n) => ("integer", serde_json::json!(n)),
                Err(_) => ("text", serde_json::json!(t)),
            },
        };
        let note = Finding {
            message: "not in the catalog: the key and the value's form are checked as `apply` \
                      checks them; no range, default or caveat is known"
                .to_string(),
            source: None,
        };
        OutsideReport {
            key: at_key(&d.key.to_string(), d.instance),
            value: serde_json::json!({ "type": kind, "value": value }),
            spec: None,
            errors: Vec::new(),
            warnings: Vec::new(),
            notes: vec![note],
            conversions: Vec::new(),
            text: d.value.to_string(),
        }
    }

    /// An integer with more digits than 64 bits hold: out of range of the spec the context
    /// selects, reported as any value out of range is (exit 1), not as unusable input.
    fn too_large(entry: &Entry, text: &str, context: &Context) -> Result<OutsideReport> {
        let (spec, error) = too_large(entry, text, context)
            .hint("`nictune explain KEY` lists the generations the catalog knows")?;
        Ok(OutsideReport {
            key: entry.key.clone(),
            value: serde_json::json!({ "type": "integer", "value": null }),
            spec,
            errors: vec![error],
            warnings: Vec::new(),
            notes: Vec::new(),
            conversions: Vec::new(),
            text: text.to_string(),
        })
    }
}

impl Report {
    fn errors(&self) -> usize {
        match self {
            Report::Catalog(r) => r.errors.len(),
            Report::Outside(r) => r.errors.len(),
        }
    }
    fn warnings(&self) -> usize {
        match self {
            Report::Catalog(r) => r.warnings.len(),
            Report::Outside(r) => r.warnings.len(),
        }
    }
}

/// One argument, parsed.
enum Parsed<'a> {
    /// A catalog entry, the value and the `@N` instance (`None`: every instance).
    Catalog(&'a str, &'static Entry, CatalogValue, Option<u32>),
    /// A key `apply` takes that the catalog does not list.
    Outside(&'a str, Desired),
    /// A catalog entry and an integer value with more digits than 64 bits hold.
    TooLarge(&'a str, &'static Entry, &'a str),
}

/// The `nictune.check/v1` document.
#[derive(Debug, Serialize)]
struct Checks {
    context: Context,
    settings: Vec<Checked>,
    errors: usize,
    warnings: usize,
    ok: bool,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    not_empty("--driver", args.driver.as_deref(), "e1000")?;
    not_empty("--device", args.device.as_deref(), "82547")?;
    not_empty("--generation", args.generation.as_deref(), "7.0")?;
    if let Some(driver) = &args.driver {
        let keys = args
            .settings
            .iter()
            .map(|arg| arg.split_once('=').map_or(arg.as_str(), |(k, _)| k));
        check_driver(driver, keys, "check against the kernel's generic limits")?;
    }
    let context = Context {
        driver: args.driver,
        device: args.device,
        generation: args.generation,
    };
    let parsed = args
        .settings
        .iter()
        .map(|arg| parse_setting(arg, &context))
        .collect::<Result<Vec<_>>>()?;
    let settings = check_all(parsed, &context)?;
    let body = summarise(context, settings);
    ctx.emit("check", &body, render)?;
    Ok(if body.ok {
        Outcome::Success
    } else {
        Outcome::Problems
    })
}

/// `KEY=VALUE` → the entry and the parsed value, or an error naming what was wrong.
fn parse_setting<'a>(arg: &'a str, context: &Context) -> Result<Parsed<'a>> {
    let Some((key, text)) = arg.split_once('=') else {
        return Err(InvalidInput::new("setting", arg, "KEY=VALUE"))
            .hint("write the setting and its value joined by '=', e.g. rx-usecs=50");
    };
    let driver = context.driver.as_deref();
    let mut name = key.trim();
    if name.contains('@') {
        // Per-queue and per-IRQ keys (`xps.cpus@0`, `irq.affinity@45`): the instance is read
        // by apply's own rules, the value checked through the key's catalog entry.
        name = desired::check_key_text(name).hint(
            "per-queue keys take @QUEUE (rps.cpus@0, napi.defer-hard-irqs@1), irq.affinity \
             takes @IRQ (irq.affinity@45); device-wide keys take none",
        )?;
    }
    let entry = match catalog().lookup(name, driver) {
        Ok(entry) => entry,
        Err(e @ LookupError::Unknown { .. }) => {
            // Not in the catalog, but maybe a key `apply` takes by its form.
            return match desired::parse_assignment(arg) {
                Ok(d) => Ok(Parsed::Outside(arg, d)),
                Err(desired::DesiredError::UnknownKey { .. }) => Err(lookup_error(e)),
                Err(bad) => Err(bad).hint(
                    "the key is outside the catalog: its value is checked by its form, as `apply` does",
                ),
            };
        }
        Err(e) => return Err(lookup_error(e)),
    };
    match entry.parse_value(text) {
        Ok(value) => Ok(Parsed::Catalog(arg, entry, value, instance(key))),
        Err(e) if e.too_large => Ok(Parsed::TooLarge(arg, entry, text.trim())),
        Err(e) => Err(e).hint(value_hint(entry, context)),
    }
}

/// The `N` of a `KEY@N` that [`desired::check_key_text`] has read.
fn instance(key: &str) -> Option<u32> {
    key.trim().split_once('@').and_then(|(_, n)| n.parse().ok())
}

/// The key as reports show it: canonical, with the `@N` the argument gave.
fn at_key(key: &str, at: Option<u32>) -> String {
    match at {
        Some(n) => format!("{key}@{n}"),
        None => key.to_string(),
    }
}

/// A name flag given as `""` (`--device ""`) would match every device or none, silently:
/// refused, with what to give instead.
pub(crate) fn not_empty(flag: &str, value: Option<&str>, example: &str) -> Result<()> {
    match value {
        Some(v) if v.trim().is_empty() => Err(InvalidInput::new(
            flag,
            v,
            format!("a non-empty name, e.g. {flag} {example}"),
        ))
        .hint(format!("give the name, or drop {flag}")),
        _ => Ok(()),
    }
}

/// `--driver`: a driver the catalog knows; an unknown one would silently fall back to the
/// kernel's generic limits. Any name is fine when every setting has a caveat about the
/// drivers *outside* a list (`polling=on --driver msk`: polling(4) does not list msk); a
/// setting without one beside it (`rx-usecs=5 polling=on --driver msk`) still needs a
/// known driver, or its range would be the generic one. `without` says what dropping
/// `--driver` gives, for the hint.
pub(crate) fn check_driver<'k>(
    driver: &str,
    keys: impl IntoIterator<Item = &'k str>,
    without: &str,
) -> Result<()> {
    let known = catalog().drivers();
    let mut keys = keys.into_iter().peekable();
    let outside_a_list = keys.peek().is_some()
        && keys.all(|key| {
            let name = key.trim().split_once('@').map_or(key.trim(), |(n, _)| n);
            catalog()
                .lookup(name, None)
                .is_ok_and(|entry| entry.caveats.iter().any(|c| !c.when.drivers_not.is_empty()))
        });
    if known.contains(&driver) || outside_a_list {
        return Ok(());
    }
    let mut near: Vec<(usize, &str)> = known
        .iter()
        .map(|k| (edit_distance(driver, k), *k))
        .filter(|(d, _)| *d <= 3)
        .collect();
    near.sort();
    let hint = match near.first() {
        Some((_, k)) => format!("did you mean --driver {k}? Or drop --driver to {without}"),
        None => format!("drop --driver to {without}"),
    };
    Err(InvalidInput::new(
        "--driver",
        driver,
        format!("a driver the catalog knows: {}", known.join(", ")),
    ))
    .hint(hint)
}

/// What the entry accepts in this context, and where to read more.
fn value_hint(entry: &Entry, context: &Context) -> String {
    let explain = format!(
        "`nictune explain {}` shows the values per driver",
        entry.key
    );
    match select_spec(entry, context) {
        Ok(Some(spec)) if spec.is_ranged() => {
            format!("{}: {}; {explain}", spec.label, spec.allowed(entry.unit))
        }
        _ => format!(
            "`nictune explain {}` shows the value's format and examples",
            entry.key
        ),
    }
}

/// Checks the settings as one set, so that settings meant together do not warn about
/// each other.
fn check_all(parsed: Vec<Parsed>, context: &Context) -> Result<Vec<Checked>> {
    let generations = "`nictune explain KEY` lists the generations the catalog knows";
    let set: Vec<(&Entry, CatalogValue, Option<u32>)> = parsed
        .iter()
        .filter_map(|p| match p {
            Parsed::Catalog(_, e, v, at) => Some((*e, v.clone(), *at)),
            Parsed::Outside(..) | Parsed::TooLarge(..) => None,
        })
        .collect();
    let mut reports = check_many_at(&set, context).hint(generations)?.into_iter();
    parsed
        .iter()
        .map(|p| {
            Ok(match p {
                Parsed::Catalog(input, .., at) => {
                    let mut report = reports.next().expect("one report per entry");
                    report.key = at_key(&report.key, *at);
                    Checked {
                        input: input.to_string(),
                        report: Report::Catalog(report),
                    }
                }
                Parsed::Outside(input, d) => Checked {
                    input: input.to_string(),
                    report: Report::Outside(OutsideReport::new(d)),
                },
                Parsed::TooLarge(input, entry, text) => Checked {
                    input: input.to_string(),
                    report: Report::Outside(OutsideReport::too_large(entry, text, context)?),
                },
            })
        })
        .collect()
}

fn summarise(context: Context, settings: Vec<Checked>) -> Checks {
    let errors = settings.iter().map(|s| s.report.errors()).sum();
    let warnings = settings.iter().map(|s| s.report.warnings()).sum();
    Checks {
        context,
        settings,
        errors,
        warnings,
        ok: errors == 0 && warnings == 0,
    }
}

fn render(body: &Checks) -> String {
    let mut out = String::new();
    for setting in &body.settings {
        match &setting.report {
            Report::Catalog(r) => render_one(&mut out, r),
            Report::Outside(r) => {
                let (verdict, spec) = match &r.spec {
                    _ if r.errors.is_empty() => ("ok", "not in the catalog"),
                    Some(spec) => ("ERROR", spec.as_str()),
                    None => ("ERROR", "64-bit integer"),
                };
                let _ = writeln!(out, "{verdict:5} {} = {}  ({spec})", r.key, r.text);
                findings(&mut out, "error", &r.errors);
                findings(&mut out, "note", &r.notes);
                out.push('\n');
            }
        }
    }
    let _ = writeln!(
        out,
        "{} checked: {} {}, {} {}",
        plural(body.settings.len(), "setting"),
        body.errors,
        if body.errors == 1 { "error" } else { "errors" },
        body.warnings,
        if body.warnings == 1 {
            "warning"
        } else {
            "warnings"
        },
    );
    out
}

fn render_one(out: &mut String, report: &CheckReport) {
    let spec = report
        .spec
        .as_deref()
        .map(|s| format!("  ({s})"))
        .unwrap_or_default();
    let verdict = if !report.errors.is_empty() {
        "ERROR"
    } else if !report.warnings.is_empty() {
        "WARN"
    } else {
        "ok"
    };
    let _ = writeln!(out, "{verdict:5} {} = {}{spec}", report.key, report.value);
    findings(out, "error", &report.errors);
    findings(out, "warning", &report.warnings);
    findings(out, "note", &report.notes);
    for conversion in &report.conversions {
        let _ = writeln!(out, "      → {}", conversion.text);
    }
    out.push('\n');
}

fn findings(out: &mut String, label: &str, findings: &[Finding]) {
    for finding in findings {
        let source = finding
            .source
            .as_deref()
            .map(|s| format!("  [{s}]"))
            .unwrap_or_default();
        let _ = writeln!(out, "      {label}: {}{source}", finding.message);
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
