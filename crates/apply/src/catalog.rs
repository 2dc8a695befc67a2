//! The bridge to the shared settings catalog (`nictune_core::catalog`): names and aliases
//! resolve to canonical keys there, and values are parsed and range-checked by the catalog's
//! entry before they become [`HostValue`]s here. Keys the catalog does not list (any `net.*`
//! sysctl, other ethtool features, `rps.flow-cnt`) fall back to this crate's own checks.

use crate::desired::DesiredError;
use nictune_core::catalog::{self as cat, Entry, LookupError, Os, Scope};
use nictune_host::write::setting::Key;
use nictune_host::write::value::{HostValue, ValueError};

/// A name resolved through the catalog: the key and, when the catalog lists it, its entry.
pub fn resolve(name: &str) -> Result<(String, Option<&'static Entry>), DesiredError> {
    match cat::lookup(name) {
        Ok(entry) => Ok((entry.key.clone(), Some(entry))),
        Err(LookupError::Unknown { .. }) => Ok((name.to_string(), None)),
        Err(e) => Err(DesiredError::Catalog(e.to_string())),
    }
}

/// The catalog's nearest keys to a name nobody knows, for the error message.
pub fn suggest(name: &str) -> Vec<String> {
    cat::catalog().suggest(name)
}

/// Refuses catalog entries `apply` cannot change at run time on Linux. Driver module
/// parameters are appliable: the write reloads the driver.
pub fn check_appliable(entry: &Entry) -> Result<(), DesiredError> {
    let why = match (entry.os, entry.scope) {
        (Os::Freebsd, _) => {
            return Err(DesiredError::NotAppliable {
                key: entry.key.clone(),
                why: format!(
                    "is a {}; `nictune apply` changes Linux hosts only",
                    crate::export::freebsd_formats(entry)
                ),
            })
        }
        (_, Scope::Mount) => "is an NFS mount option; nictune never changes a mount on a running system: `nictune export --format fstab` writes the options for /etc/fstab",
        (_, Scope::Route) => "is a route attribute; nictune does not change routes on a running system: `nictune explain route.window` shows the ip route command",
        _ => return Ok(()),
    };
    Err(DesiredError::NotAppliable {
        key: entry.key.clone(),
        why: why.to_string(),
    })
}

/// [`check_appliable`] for an item that may have no catalog entry (then it is appliable).
pub fn check_appliable_entry(entry: Option<&Entry>) -> Result<(), DesiredError> {
    entry.map_or(Ok(()), check_appliable)
}

/// Parses and checks `raw` through the catalog entry; returns the value and the catalog's
/// warnings (caveats that apply to this value).
pub fn parse(
    entry: &Entry,
    key: &Key,
    raw: &str,
) -> Result<(HostValue, Vec<String>), DesiredError> {
    let bad = |source: String| DesiredError::Catalog(source);
    let parsed = entry.parse_value(raw).map_err(|e| bad(e.to_string()))?;
    let report =
        cat::check(entry, &parsed, &cat::Context::default()).map_err(|e| bad(e.to_string()))?;
    if let Some(err) = report.errors.first() {
        return Err(bad(format!("setting {}: {}", entry.key, err.message)));
    }
    let value = convert(&parsed, key, raw)?;
    let warnings = report
        .warnings
        .iter()
        .map(|f| format!("{}: {}", entry.key, f.message))
        .collect();
    Ok((value, warnings))
}

/// Replaces each setting's caveats with those that hold given the whole request
/// (`check_many`); settings outside the catalog keep theirs.
pub fn recheck_together(settings: &mut [crate::desired::Desired]) {
    let parsed: Vec<(usize, &'static Entry, cat::CatalogValue, Option<u32>)> = settings
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let (_, entry) = resolve(&d.key.to_string()).ok()?;
            let entry = entry?;
            Some((i, entry, entry.parse_value(&d.raw).ok()?, d.instance))
        })
        .collect();
    // By instance: `napi.gro-flush-timeout@2` answers nothing about `napi.defer-hard-irqs@1`.
    let set: Vec<(&Entry, cat::CatalogValue, Option<u32>)> = parsed
        .iter()
        .map(|(_, e, v, at)| (*e, v.clone(), *at))
        .collect();
    let Ok(reports) = cat::check_many_at(&set, &cat::Context::default()) else {
        return;
    };
    for ((i, entry, ..), report) in parsed.iter().zip(reports) {
        settings[*i].warnings = report
            .warnings
            .iter()
            .map(|f| format!("{}: {}", entry.key, f.message))
            .collect();
    }
}

/// A module parameter's value as `modprobe` takes it: one number, or one per port separated
/// by commas (the catalog has checked each number).
fn module_value(v: &cat::CatalogValue, raw: &str) -> Result<HostValue, DesiredError> {
    let text = match v {
        cat::CatalogValue::Integer(n) | cat::CatalogValue::Enum { number: n, .. } => n.to_string(),
        cat::CatalogValue::Bool(b) => u8::from(*b).to_string(),
        _ => raw.split(',').map(str::trim).collect::<Vec<_>>().join(","),
    };
    Ok(HostValue::Text(text))
}

/// True when the catalog lists `name` as a Linux driver module parameter.
pub fn is_module_param(name: &str) -> bool {
    cat::catalog()
        .get(name)
        .is_some_and(|e| e.driver.is_some() && e.os != Os::Freebsd)
}

/// The catalog's value as this crate's, re-checked against the kernel interface's range.
fn convert(v: &cat::CatalogValue, key: &Key, raw: &str) -> Result<HostValue, DesiredError> {
    let bad_value = |source: ValueError| DesiredError::BadValue {
        key: key.to_string(),
        source,
    };
    let int = |n: i64| {
        let text = n.to_string();
        nictune_host::write::value::parse_value(key.value_kind(), &text).map_err(bad_value)
    };
    if let Key::ModuleParam { .. } = key {
        return module_value(v, raw);
    }
    match v {
        cat::CatalogValue::Integer(n) | cat::CatalogValue::Enum { number: n, .. } => int(*n),
        cat::CatalogValue::Bool(b) => Ok(HostValue::Bool(*b)),
        cat::CatalogValue::Cpus(set) => Ok(HostValue::Cpus(set.clone())),
        cat::CatalogValue::DimProfile(_) => Err(DesiredError::NotAppliable {
            key: key.to_string(),
            why: "is a DIM profile, which apply cannot write yet".to_string(),
        }),
        cat::CatalogValue::Triple(_) => Err(DesiredError::NotAppliable {
            key: key.to_string(),
            why: format!(
                "{raw:?} is a minimum/default/maximum triple, which apply cannot write yet; \
                 `nictune export --format sysctl.d` writes it"
            ),
        }),
        cat::CatalogValue::PerPort(_) => Err(DesiredError::NotAppliable {
            key: key.to_string(),
            why: format!("{raw:?} is a per-port list; only module parameters take those"),
        }),
    }
}
