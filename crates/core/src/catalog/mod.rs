//! The settings catalog: every knob nictune knows, as data — names and aliases, unit and
//! conversions, valid range and default per driver and driver generation, documentation vs
//! source disagreements, caveats with the condition that triggers them, and how to set the
//! knob on Linux and FreeBSD. `explain`, `check`, the simulator, `apply`, `export` and `tune`
//! all read it from here.
//!
//! # Why embedded TOML
//! The entries live in `catalog/data/*.toml`, compiled into the binary with `include_str!` and
//! parsed once on first use. TOML keeps the catalog *data*: one readable record per knob, a
//! comment beside each fact naming its source, reviewable by people who do not read Rust, and
//! no constructor boilerplate for ~120 entries with nested specs, claims and caveats. The cost
//! is a parse at run time — small: a whole release `nictune explain` run takes about 6 ms —
//! and the "malformed data" failure is ruled out by the test suite (every file is parsed with
//! `deny_unknown_fields`, and every entry is checked for consistency), so the only panic left
//! is a build that skipped its tests.
//!
//! # API
//! - [`catalog()`] → [`Catalog`]: all entries, [`Catalog::lookup`] by key or alias
//!   (unknown → nearest names, ambiguous alias → candidates), [`Catalog::matches`].
//! - [`Entry::parse_value`] → [`CatalogValue`] or [`ValueError`].
//! - [`check()`] / [`check_many`] → [`CheckReport`] with errors (out of range), warnings
//!   (caveats) and conversions; [`select_spec`] picks the range/default record for a
//!   [`Context`] and [`default_value`] the value the driver's code starts with.
//! - [`convert`]: unit-typed conversion functions (ITR 256 ns, 1.024 µs ticks, igb 0.25 µs,
//!   ixgbe 2 µs, interrupts/s ↔ µs).

mod check;
pub mod conversion;
pub mod convert;
mod labels;
mod lookup;
pub mod model;
mod native;
mod value;

pub use crate::cpuset::CpuSet;
pub use check::{
    check, check_many, check_many_at, default_value, select_spec, too_large, CheckReport, Context,
    ContextError, Finding,
};
pub use conversion::Converted;
pub use lookup::{edit_distance, LookupError};
pub use model::{
    Alias, AliasKind, Caveat, Choice, Claim, Condition, Conflict, ConversionKind, Entry, Guard, Os,
    Scope, SetMethod, Severity, SourceKind, Spec, Special, Unit, ValueType, Via,
};
pub use value::{parse_dim_profile, CatalogValue, ProfileSlot, ValueError, DIM_PROFILE_ENTRIES};

use lookup::NameIndex;
use serde::Deserialize;
use std::sync::OnceLock;

/// The embedded data files, by family.
const FILES: [(&str, &str); 7] = [
    ("coalesce.toml", include_str!("data/coalesce.toml")),
    ("netdev.toml", include_str!("data/netdev.toml")),
    ("napi.toml", include_str!("data/napi.toml")),
    ("sysctl.toml", include_str!("data/sysctl.toml")),
    ("modparams.toml", include_str!("data/modparams.toml")),
    ("freebsd.toml", include_str!("data/freebsd.toml")),
    ("buffers.toml", include_str!("data/buffers.toml")),
];

/// How many suggestions an unknown name gets.
const SUGGESTIONS: usize = 5;

/// A data file failed to parse.
#[derive(Debug, thiserror::Error)]
#[error("catalog data file {file}: {source}")]
pub struct LoadError {
    /// File name under `catalog/data/`.
    pub file: &'static str,
    /// The TOML error.
    #[source]
    pub source: toml::de::Error,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DataFile {
    entry: Vec<Entry>,
}

/// All entries, with a name index.
#[derive(Debug)]
pub struct Catalog {
    entries: Vec<Entry>,
    index: NameIndex,
}

/// The catalog, parsed on first use.
///
/// # Panics
/// If the embedded data is malformed — a build defect the test suite rules out.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        Catalog::load().unwrap_or_else(|e| panic!("embedded settings catalog is broken: {e}"))
    })
}

/// [`Catalog::lookup`] on the embedded catalog.
pub fn lookup(name: &str) -> Result<&'static Entry, LookupError> {
    catalog().lookup(name, None)
}

impl Catalog {
    /// Parses the embedded data files.
    pub fn load() -> Result<Catalog, LoadError> {
        let mut entries = Vec::new();
        for (file, text) in FILES {
            let data: DataFile =
                toml::from_str(text).map_err(|source| LoadError { file, source })?;
            entries.extend(data.entry);
        }
        let index = NameIndex::build(&entries);
        Ok(Catalog { entries, index })
    }

    /// Every entry, in data-file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry with exactly this canonical key.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// Every entry `name` may mean (key or alias, case-insensitive).
    pub fn matches(&self, name: &str) -> Vec<&Entry> {
        self.index
            .positions(name)
            .iter()
            .map(|&p| &self.entries[p])
            .collect()
    }

    /// Nearest canonical keys to `name`, best first.
    pub fn suggest(&self, name: &str) -> Vec<String> {
        self.index.suggest(name, &self.entries, SUGGESTIONS)
    }

    /// Every driver the catalog names (a knob's owner, a spec's driver, a caveat's driver
    /// list), sorted.
    pub fn drivers(&self) -> Vec<&str> {
        let mut all = std::collections::BTreeSet::new();
        for entry in &self.entries {
            all.extend(entry.driver.as_deref());
            all.extend(entry.specs.iter().filter_map(|s| s.driver.as_deref()));
            for caveat in &entry.caveats {
                let when = &caveat.when;
                all.extend(
                    when.drivers
                        .iter()
                        .chain(&when.drivers_not)
                        .map(String::as_str),
                );
            }
        }
        all.into_iter().collect()
    }

    /// The one entry `name` means. With `driver`, an alias shared by several drivers'
    /// parameters (`InterruptThrottleRate`) resolves to that driver's, and an entry owned by
    /// another driver is an error.
    pub fn lookup(&self, name: &str, driver: Option<&str>) -> Result<&Entry, LookupError> {
        let found = self.matches(name);
        let found = match driver {
            Some(d) if found.len() > 1 => narrow_to_driver(found, d),
            _ => found,
        };
        match found.as_slice() {
            [] => Err(LookupError::Unknown {
                name: name.to_string(),
                suggestions: self.suggest(name),
            }),
            [entry] => owned_by(entry, driver),
            many => Err(LookupError::Ambiguous {
                name: name.to_string(),
                candidates: many.iter().map(|e| e.key.clone()).collect(),
            }),
        }
    }
}

/// Keeps the entries of `driver` when there are any, else all of them.
fn narrow_to_driver<'e>(found: Vec<&'e Entry>, driver: &str) -> Vec<&'e Entry> {
    let own: Vec<&Entry> = found
        .iter()
        .copied()
        .filter(|e| {
            e.driver
                .as_deref()
                .is_some_and(|d| d.eq_ignore_ascii_case(driver))
        })
        .collect();
    if own.is_empty() {
        found
    } else {
        own
    }
}

fn owned_by<'e>(entry: &'e Entry, driver: Option<&str>) -> Result<&'e Entry, LookupError> {
    match (entry.driver.as_deref(), driver) {
        (Some(owner), Some(d)) if !owner.eq_ignore_ascii_case(d) => Err(LookupError::WrongDriver {
            key: entry.key.clone(),
            owner: owner.to_string(),
            driver: d.to_string(),
        }),
        _ => Ok(entry),
    }
}
