//! `nictune explain KEY`: one catalog entry as a readable card, or as data with `--json`
//! (`nictune.explain/v1`). An alias shared by several drivers shows every candidate unless
//! `--driver` picks one; an unknown key exits 2 naming the nearest keys.

use crate::output::{Ctx, HintExt, Outcome};
use anyhow::Result;
use nictune_core::catalog::conversion::convert;
use nictune_core::catalog::{catalog, Claim, Entry, LookupError, Spec, ValueType};
use serde::Serialize;
use std::fmt::Write as _;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  nictune explain InterruptThrottleRate
  nictune explain RxAbsIntDelay --driver e1000 --json
  nictune explain net.core.busy_poll
  nictune explain --list")]
pub struct Args {
    /// Setting: canonical key (coalesce.rx-usecs) or any alias (rx-usecs, RxIntDelay,
    /// ETHTOOL_A_COALESCE_RX_USECS, net.core.busy_poll, hw.igb.rxd).
    #[arg(value_name = "KEY", required_unless_present = "list")]
    pub key: Option<String>,
    /// Pick the parameter of this driver when several drivers share the name.
    #[arg(long, value_name = "NAME")]
    pub driver: Option<String>,
    /// List every key with its summary instead.
    #[arg(long, conflicts_with = "key")]
    pub list: bool,
}

/// The `nictune.explain/v1` document.
#[derive(Debug, Serialize)]
struct Explained<'a> {
    /// What was asked for (`null` with `--list`).
    query: Option<&'a str>,
    /// The matching entries (all of them with `--list`).
    entries: Vec<&'a Entry>,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    if let Some(driver) = args.driver.as_deref() {
        super::check::not_empty("--driver", Some(driver), "e1000")?;
        // A driver the catalog does not know would pick nothing, silently.
        super::check::check_driver(driver, args.key.as_deref(), "see every driver's entry")?;
    }
    let (query, entries) = match args.key.as_deref() {
        Some(key) => (Some(key), resolve(key, args.driver.as_deref())?),
        None => (None, catalog().entries().iter().collect()),
    };
    let body = Explained { query, entries };
    if args.list {
        ctx.emit("explain", &body, |b| list(&b.entries))?;
    } else {
        ctx.emit("explain", &body, |b| {
            cards(b.query.unwrap_or_default(), &b.entries)
        })?;
    }
    Ok(Outcome::Success)
}

/// Every entry `key` names (one, with `--driver`), or an error with the nearest names.
fn resolve<'c>(key: &str, driver: Option<&str>) -> Result<Vec<&'c Entry>> {
    let cat = catalog();
    if let Some(driver) = driver {
        let entry = cat.lookup(key, Some(driver)).map_err(lookup_error)?;
        return Ok(vec![entry]);
    }
    let found = cat.matches(key);
    if found.is_empty() {
        return Err(lookup_error(cat.lookup(key, None).unwrap_err()));
    }
    Ok(found)
}

/// A lookup failure with its hint.
pub fn lookup_error(err: LookupError) -> anyhow::Error {
    let hint = match &err {
        LookupError::Unknown { suggestions, .. } if suggestions.is_empty() => {
            "`nictune explain --list` lists every key".to_string()
        }
        LookupError::Unknown { suggestions, .. } => format!(
            "did you mean {}? `nictune explain --list` lists every key",
            suggestions.join(", ")
        ),
        LookupError::Ambiguous { candidates, .. } => format!(
            "write the full key ({}) or add --driver NAME",
            candidates.join(", ")
        ),
        LookupError::WrongDriver { key, owner, .. } => {
            format!("drop --driver, or use --driver {owner} with {key}")
        }
    };
    Err::<(), _>(err).hint(hint).unwrap_err()
}

fn list(entries: &[&Entry]) -> String {
    let width = entries.iter().map(|e| e.key.len()).max().unwrap_or(0);
    let mut out = String::new();
    for entry in entries {
        let _ = writeln!(out, "{:width$}  {}", entry.key, entry.summary);
    }
    out
}

fn cards(query: &str, entries: &[&Entry]) -> String {
    let mut out = String::new();
    if entries.len() > 1 {
        let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
        let _ = writeln!(
            out,
            "{query} names {} settings: {}; add --driver NAME to pick one.\n",
            entries.len(),
            keys.join(", ")
        );
    }
    let rendered: Vec<String> = entries.iter().map(|e| card(e)).collect();
    out.push_str(&rendered.join("\n"));
    out
}

/// One entry as text: header, values per driver, conflicts, caveats, how to set, sources.
pub fn card(entry: &Entry) -> String {
    let mut out = String::new();
    header(&mut out, entry);
    specs(&mut out, entry);
    conflicts(&mut out, entry);
    caveats(&mut out, entry);
    set_methods(&mut out, entry);
    sources(&mut out, entry);
    out
}

fn header(out: &mut String, entry: &Entry) {
    let _ = writeln!(out, "{} — {}", entry.key, entry.summary);
    if let Some(details) = &entry.details {
        let _ = writeln!(out, "  {details}");
    }
    let mut facts = vec![
        entry.os.label().to_string(),
        entry.scope.label().to_string(),
    ];
    if let Some(driver) = &entry.driver {
        facts.push(format!("driver {driver}"));
    }
    if let Some(since) = &entry.since {
        facts.push(format!("since {since}"));
    }
    let _ = writeln!(out, "  {}", facts.join(" · "));
    let _ = writeln!(out, "  value: {}", value_kind(entry));
    if !entry.choices.is_empty() {
        for choice in &entry.choices {
            let meaning = choice.meaning.as_deref().unwrap_or("");
            let _ = writeln!(out, "    {} ({}) {meaning}", choice.name, choice.number);
        }
    }
    if !entry.aliases.is_empty() {
        let aliases: Vec<String> = entry
            .aliases
            .iter()
            .map(|a| format!("{} ({})", a.name, a.kind.label()))
            .collect();
        let _ = writeln!(out, "  aliases: {}", aliases.join(", "));
    }
}

fn value_kind(entry: &Entry) -> String {
    let kind = match entry.value_type {
        ValueType::Integer => "integer",
        ValueType::Bool => "on/off",
        ValueType::Enum => "one of",
        ValueType::CpuList => "CPU list (0-3,8)",
        ValueType::CpuMask => "hex CPU mask (f, ff,00000000)",
        ValueType::DimProfile => "DIM profile: up to 5 usec,pkts[,comps] entries joined by _",
        ValueType::IntegerTriple => "three integers: minimum default maximum",
    };
    let unit = entry.unit.symbol();
    let mut text = if unit.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}, {unit}")
    };
    if entry.per_port {
        text.push_str("; one value per port, comma-separated");
    }
    text
}

fn specs(out: &mut String, entry: &Entry) {
    if entry.specs.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nValues");
    for spec in &entry.specs {
        spec_block(out, entry, spec);
    }
}

fn spec_block(out: &mut String, entry: &Entry, spec: &Spec) {
    let mut title = spec.label.clone();
    if let Some(generation) = &spec.generation {
        let marker = if spec.current { ", the default" } else { "" };
        let _ = write!(title, "  [--generation {generation}{marker}]");
    }
    let _ = writeln!(out, "  {title}");
    if spec.is_ranged() {
        let _ = writeln!(out, "    allowed  {}", spec.allowed(entry.unit));
    }
    let width = claims_width(&spec.defaults);
    for (i, claim) in spec.defaults.iter().enumerate() {
        let label = if i == 0 { "default" } else { "" };
        let _ = writeln!(out, "    {label:7}  {}", claim_line(claim, width));
    }
    for text in default_meaning(spec) {
        let _ = writeln!(out, "    means    {text}");
    }
    let extras = [("invalid", &spec.on_invalid), ("note", &spec.note)];
    for (label, text) in extras {
        if let Some(text) = text {
            let _ = writeln!(out, "    {label:7}  {text}");
        }
    }
    let _ = writeln!(out, "    source   {}", spec.source);
}

/// Width of the widest claimed value, for alignment.
fn claims_width(claims: &[Claim]) -> usize {
    claims
        .iter()
        .map(|c| c.value.chars().count())
        .max()
        .unwrap_or(0)
}

/// `8      code       torvalds/linux:…  (note)`
fn claim_line(claim: &Claim, width: usize) -> String {
    let pad = width - claim.value.chars().count();
    let note = claim
        .note
        .as_deref()
        .map(|n| format!("  ({n})"))
        .unwrap_or_default();
    format!(
        "{}{:pad$}  {:9}  {}{note}",
        claim.value,
        "",
        claim.kind.label(),
        claim.source
    )
}

/// The first numeric default in hardware units, e.g. `8 ticks × 1.024 µs = 8.192 µs`.
fn default_meaning(spec: &Spec) -> Vec<String> {
    let Some(kind) = spec.conversion else {
        return Vec::new();
    };
    let first = spec
        .defaults
        .iter()
        .find_map(|c| c.value.parse::<i64>().ok());
    first
        .filter(|n| !spec.specials.iter().any(|s| s.value == *n))
        .map(|n| convert(kind, n).into_iter().map(|c| c.text).collect())
        .unwrap_or_default()
}

fn conflicts(out: &mut String, entry: &Entry) {
    if entry.conflicts.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nDocumentation vs source");
    for conflict in &entry.conflicts {
        let _ = writeln!(out, "  {}:", conflict.topic);
        let width = claims_width(&conflict.claims);
        for claim in &conflict.claims {
            let _ = writeln!(out, "    {}", claim_line(claim, width));
        }
        if let Some(resolution) = &conflict.resolution {
            let _ = writeln!(out, "    → {resolution}");
        }
    }
}

fn caveats(out: &mut String, entry: &Entry) {
    if entry.caveats.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nCaveats");
    for caveat in &entry.caveats {
        let severity = match caveat.severity {
            nictune_core::catalog::Severity::Warning => "warning",
            nictune_core::catalog::Severity::Note => "note",
        };
        let when = if caveat.when.is_always() {
            String::new()
        } else {
            format!("when {}: ", caveat.when)
        };
        let unless = caveat
            .unless
            .as_ref()
            .map(|g| format!(" (not when {} > {} is set too)", g.key, g.value_above))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {severity:7}  {when}{}{unless}  [{}]",
            caveat.text, caveat.source
        );
    }
}

fn set_methods(out: &mut String, entry: &Entry) {
    if entry.set.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nHow to set");
    for method in &entry.set {
        let lasting = if method.persistent {
            "persistent"
        } else {
            "now"
        };
        let _ = writeln!(
            out,
            "  {:7} {:15} {:10}  {}",
            method.os.label(),
            method.via.label(),
            lasting,
            method.template
        );
        if let Some(note) = &method.note {
            let _ = writeln!(out, "  {:35}  ({note})", "");
        }
    }
}

fn sources(out: &mut String, entry: &Entry) {
    if entry.sources.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nSources");
    for source in &entry.sources {
        let _ = writeln!(out, "  {source}");
    }
}
