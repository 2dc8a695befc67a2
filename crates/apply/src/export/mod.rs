//! `nictune export`: a profile rendered as native configuration. One file per format; each
//! renderer returns the text plus every setting it could not express and why, so nothing is
//! dropped silently (the list also goes at the top of the file as comments).
//!
//! Names come from the settings catalog: its `systemd-link` and `networkmanager` aliases,
//! its `ethtool` command templates, and its FreeBSD `loader.conf`/`sysctl.conf` templates.
//! Validators for the formats live in [`validate`].

mod cpuset;
mod freebsd;
mod fstab;
mod modprobe;
mod networkmanager;
mod sysctl_d;
mod systemd_link;
mod systemd_unit;
mod tuned;
mod udev;
pub mod validate;

use crate::desired::DesiredError;
use nictune_core::catalog::{self as cat, AliasKind, Entry, Via};
use nictune_core::names::{self, NameError};
use serde::Serialize;
use std::fmt::Write as _;

/// The formats `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    SystemdLink,
    Networkmanager,
    Udev,
    Tuned,
    Modprobe,
    SysctlD,
    LoaderConf,
    FreebsdSysctlConf,
    RcConf,
    Cpuset,
    Kernconf,
    Fstab,
    SystemdUnit,
}

impl Format {
    /// Every format with its command-line name.
    pub const ALL: [(Format, &'static str); 13] = [
        (Format::SystemdLink, "systemd-link"),
        (Format::Networkmanager, "networkmanager"),
        (Format::Udev, "udev"),
        (Format::Tuned, "tuned"),
        (Format::Modprobe, "modprobe"),
        (Format::SysctlD, "sysctl.d"),
        (Format::LoaderConf, "loader.conf"),
        (Format::FreebsdSysctlConf, "freebsd-sysctl.conf"),
        (Format::RcConf, "rc.conf"),
        (Format::Cpuset, "cpuset"),
        (Format::Kernconf, "kernconf"),
        (Format::Fstab, "fstab"),
        (Format::SystemdUnit, "systemd-unit"),
    ];

    pub fn name(self) -> &'static str {
        Format::ALL
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("?", |(_, n)| n)
    }

    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(f, _)| *f)
    }
}

/// A value as the profile gave it, typed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum XValue {
    Int(i64),
    Bool(bool),
    Cpus(cat::CpuSet),
    Text(String),
    PerPort(Vec<i64>),
}

impl XValue {
    /// The value as `ethtool`, sysctl and sysfs spell it (`on`/`off` for switches).
    pub fn plain(&self) -> String {
        match self {
            XValue::Int(n) => n.to_string(),
            XValue::Bool(b) => (if *b { "on" } else { "off" }).to_string(),
            XValue::Cpus(c) => c.to_list(),
            XValue::Text(t) => t.clone(),
            XValue::PerPort(v) => v.iter().map(i64::to_string).collect::<Vec<_>>().join(","),
        }
    }

    /// A switch as `yes`/`no`-style words of the caller's choice; other values plain.
    pub fn word(&self, on: &str, off: &str) -> String {
        match self {
            XValue::Bool(true) => on.to_string(),
            XValue::Bool(false) => off.to_string(),
            other => other.plain(),
        }
    }

    /// A switch as 1/0; a CPU set as the hex mask sysfs takes; other values plain.
    pub fn sysfs(&self) -> String {
        match self {
            XValue::Cpus(c) => c.to_mask(),
            other => other.word("1", "0"),
        }
    }
}

/// One setting of the profile.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    /// Canonical key (catalog key when the catalog lists it).
    pub key: String,
    /// `@N`: queue, NAPI index, IRQ or port number.
    pub instance: Option<u32>,
    pub value: XValue,
    #[serde(skip)]
    pub entry: Option<&'static Entry>,
}

impl Item {
    /// `key[@n]=value`, for lists of omitted settings.
    pub fn shown(&self) -> String {
        let at = self.instance.map(|n| format!("@{n}")).unwrap_or_default();
        format!("{}{at}={}", self.key, self.value.plain())
    }

    /// The catalog alias of this kind (`RxCoalesceSec`, `ethtool.coalesce-rx-usecs`).
    pub fn alias(&self, kind: AliasKind) -> Option<&'static str> {
        self.entry?
            .aliases
            .iter()
            .find(|a| a.kind == kind)
            .map(|a| a.name.as_str())
    }

    /// The catalog's template for setting this through `via` on the item's OS.
    pub fn template(&self, via: Via) -> Option<&'static str> {
        self.entry?
            .set
            .iter()
            .find(|m| m.via == via)
            .map(|m| m.template.as_str())
    }

    pub fn family(&self) -> &str {
        self.key.split('.').next().unwrap_or("")
    }

    /// The `ethtool` option and its arguments from the catalog's template:
    /// `ethtool -C {dev} rx-usecs {value}` gives `("-C", "rx-usecs 50")`.
    pub fn ethtool(&self) -> Option<(&'static str, String)> {
        let template = self.template(Via::Ethtool)?;
        let rest = template.strip_prefix("ethtool ")?;
        let (option, args) = rest.split_once(" {dev} ")?;
        Some((option, args.replace("{value}", &self.value.plain())))
    }
}

/// A setting a format could not express.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Omitted {
    pub setting: String,
    pub reason: String,
}

/// What a renderer produced.
#[derive(Debug, Clone, Serialize)]
pub struct Exported {
    pub format: Format,
    /// Where the file usually goes.
    pub path: String,
    pub text: String,
    pub omitted: Vec<Omitted>,
}

/// What a renderer needs besides the settings.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    pub iface: Option<&'a str>,
    /// The profile file as the re-apply unit should name it.
    pub profile_path: &'a str,
    /// The nictune executable the re-apply unit runs.
    pub nictune: &'a str,
    /// `--netns` for the re-apply unit.
    pub netns: Option<&'a str>,
}

/// A profile that cannot be exported in the chosen format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    #[error("--format {format} needs an interface (--iface or `iface` in the profile)")]
    NeedsIface { format: &'static str },
    #[error("{format:?} is not a format; allowed: {}", Format::ALL.map(|(_, n)| n).join(", "))]
    UnknownFormat { format: String },
    #[error(transparent)]
    Name(#[from] NameError),
    #[error("{what} {path:?} cannot go into a generated file: it holds a control character; allowed: a path without control characters")]
    BadPath { what: &'static str, path: String },
}

/// Checks every name and path `target` puts into generated files: a newline or quote there
/// would add lines (an `ExecStartPre=`, a `RUN+=`) to files that run as root.
pub fn check_target(target: &Target) -> Result<(), ExportError> {
    if let Some(iface) = target.iface {
        names::check_iface(iface)?;
    }
    if let Some(netns) = target.netns {
        names::check_netns(netns)?;
    }
    for (what, path) in [
        ("profile path", target.profile_path),
        ("nictune path", target.nictune),
    ] {
        if path.chars().any(char::is_control) {
            return Err(ExportError::BadPath {
                what,
                path: path.to_string(),
            });
        }
    }
    Ok(())
}

/// Renders `items` in `format`.
pub fn export(format: Format, items: &[Item], target: &Target) -> Result<Exported, ExportError> {
    check_target(target)?;
    let iface = || {
        target.iface.ok_or(ExportError::NeedsIface {
            format: format.name(),
        })
    };
    let (path, body, omitted) = match format {
        Format::SystemdLink => systemd_link::render(items, iface()?),
        Format::Networkmanager => networkmanager::render(items, iface()?),
        Format::Udev => udev::render(items, iface()?),
        Format::Tuned => tuned::render(items, iface()?),
        Format::Modprobe => modprobe::render(items),
        Format::SysctlD => sysctl_d::render(items),
        Format::LoaderConf => freebsd::loader_conf(items),
        Format::FreebsdSysctlConf => freebsd::sysctl_conf(items),
        Format::RcConf => freebsd::rc_conf(items, iface()?),
        Format::Cpuset => cpuset::render(items, target.iface),
        Format::Kernconf => freebsd::kernconf(items),
        Format::Fstab => fstab::render(items),
        Format::SystemdUnit => systemd_unit::render(items, target, iface()?),
    };
    let shebang = if format == Format::Cpuset {
        "#!/bin/sh\n"
    } else {
        ""
    };
    let text = format!("{shebang}{}{body}", header(format, &omitted));
    Ok(Exported {
        format,
        path,
        text,
        omitted,
    })
}

/// The comment block every file starts with: where it came from and what it leaves out.
fn header(format: Format, omitted: &[Omitted]) -> String {
    let mut out = format!(
        "# Generated by `nictune export --format {}`.\n",
        format.name()
    );
    if !omitted.is_empty() {
        out += "# Not expressible in this format (and where it can go instead):\n";
        for o in omitted {
            let _ = writeln!(out, "#   {}: {}", o.setting, o.reason);
        }
    }
    out
}

/// The export formats that hold a FreeBSD setting, from the ways the catalog sets it.
pub(crate) fn freebsd_formats(entry: &Entry) -> String {
    let mut formats: Vec<&str> = Vec::new();
    for m in &entry.set {
        let format = match m.via {
            Via::LoaderConf => "loader.conf",
            Via::SysctlConf => "freebsd-sysctl.conf",
            Via::RcConf => "rc.conf",
            Via::KernelConfig => "kernconf",
            Via::Cpuset => "cpuset",
            _ => continue,
        };
        if !formats.contains(&format) {
            formats.push(format);
        }
    }
    match formats.as_slice() {
        [] => "FreeBSD setting: no export format holds it".into(),
        [one] => format!("FreeBSD setting: --format {one}"),
        [rest @ .., last] => format!("FreeBSD setting: --format {} or {last}", rest.join(", ")),
    }
}

/// What kind of setting an item is and which formats hold it instead, for omission lists.
pub(crate) fn kind_reason(item: &Item) -> String {
    let os_scope = item.entry.map(|e| (e.os, e.scope));
    let reason = match (item.family(), os_scope) {
        (_, Some((cat::Os::Freebsd, _))) => {
            return freebsd_formats(item.entry.expect("FreeBSD items come from the catalog"))
        }
        (_, Some((_, cat::Scope::Module))) => "module parameter: --format modprobe",
        ("napi", _) => "per-NAPI setting (netdev netlink only): --format systemd-unit",
        ("sysctl", _) => "sysctl: --format sysctl.d or tuned",
        ("nfs", _) => "NFS mount option: --format fstab",
        ("route", _) => {
            "route attribute: no format holds it; `nictune explain route.window` shows the ip route command"
        }
        ("irq", _) => "IRQ affinity: --format systemd-unit (Linux) or cpuset (FreeBSD)",
        ("sysfs", _) => "sysfs NAPI file: --format udev, tuned or systemd-unit",
        ("rps" | "xps", _) => "queue steering: --format udev, tuned, systemd-link or systemd-unit",
        _ => "device setting: --format systemd-link, networkmanager, udev, tuned or systemd-unit",
    };
    reason.to_string()
}

/// Splits items into those `keep` accepts and omissions with the reason it gives.
pub(crate) fn partition(
    items: &[Item],
    keep: impl Fn(&Item) -> Result<(), String>,
) -> (Vec<&Item>, Vec<Omitted>) {
    let mut kept = Vec::new();
    let mut omitted = Vec::new();
    for item in items {
        match keep(item) {
            Ok(()) => kept.push(item),
            Err(reason) => omitted.push(Omitted {
                setting: item.shown(),
                reason,
            }),
        }
    }
    (kept, omitted)
}

/// A profile read for export.
#[derive(Debug, Clone)]
pub struct ExportProfile {
    pub iface: Option<String>,
    pub netns: Option<String>,
    pub items: Vec<Item>,
}

/// Parses a TOML profile (the same file `apply --profile` takes) for export.
pub fn parse_profile(text: &str) -> Result<ExportProfile, DesiredError> {
    let (iface, netns, settings) = crate::desired::profile_parts(text)?;
    Ok(ExportProfile {
        iface,
        netns,
        items: parse_items(&settings)?,
    })
}

/// Parses a profile's settings for export: every catalog key (Linux, FreeBSD, module parameters) plus
/// the keys `apply` knows outside the catalog; values checked by the catalog.
pub fn parse_items(settings: &toml::Table) -> Result<Vec<Item>, DesiredError> {
    settings
        .iter()
        .map(|(key, value)| parse_item(key, &crate::desired::toml_text(key, value)?))
        .collect()
}

fn parse_item(key_text: &str, raw: &str) -> Result<Item, DesiredError> {
    let (name, instance) = match key_text.split_once('@') {
        Some((n, i)) => (
            n,
            Some(i.parse().map_err(|_| DesiredError::BadInstance {
                key: key_text.to_string(),
                why: format!("{i:?} after @ is not a number"),
            })?),
        ),
        None => (key_text, None),
    };
    let (key, entry) = crate::catalog::resolve(name)?;
    let Some(entry) = entry else {
        // Not in the catalog: the apply parser knows it (any net.* sysctl, rps.flow-cnt, ...).
        let d = crate::desired::parse_pair(key_text, raw)?;
        let value = match d.value {
            crate::value::Value::Int(n) => XValue::Int(i64::try_from(n).unwrap_or(i64::MAX)),
            crate::value::Value::Bool(b) => XValue::Bool(b),
            crate::value::Value::Cpus(c) => XValue::Cpus(c.clone()),
            crate::value::Value::Text(t) => XValue::Text(t),
        };
        return Ok(Item {
            key,
            instance,
            value,
            entry: None,
        });
    };
    let parsed = entry
        .parse_value(raw)
        .map_err(|e| DesiredError::Catalog(e.to_string()))?;
    let report = cat::check(entry, &parsed, &cat::Context::default())
        .map_err(|e| DesiredError::Catalog(e.to_string()))?;
    if let Some(err) = report.errors.first() {
        return Err(DesiredError::Catalog(format!(
            "setting {key}: {}",
            err.message
        )));
    }
    let value = match parsed {
        cat::Value::Integer(n) | cat::Value::Enum { number: n, .. } => XValue::Int(n),
        cat::Value::Bool(b) => XValue::Bool(b),
        cat::Value::Cpus(c) => XValue::Cpus(c),
        cat::Value::PerPort(v) => {
            XValue::PerPort(v.iter().flat_map(cat::Value::integers).collect())
        }
        text @ (cat::Value::DimProfile(_) | cat::Value::Triple(_)) => {
            XValue::Text(text.to_string())
        }
    };
    Ok(Item {
        key,
        instance,
        value,
        entry: Some(entry),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A profile touching every family: what each format can and cannot say.
    pub const PROFILE: &str = r#"
iface = "eth1"
[settings]
"channels.combined" = 4
"ring.rx" = 1024
"coalesce.rx-usecs" = 50
"coalesce.adaptive-rx" = "off"
"coalesce.rx-frames" = 32
"feature.gro" = "on"
"rps.cpus" = "f"
"rps.cpus@1" = "3"
"napi.defer-hard-irqs" = 2
"napi.gro-flush-timeout" = 20000
"sysfs.napi_defer_hard_irqs" = 2
"sysctl.net.core.busy_poll" = 50
"irq.affinity@45" = "2-3"
"e1000e.InterruptThrottleRate" = "3000,3000"
"freebsd.hw.igb.rxd" = 2048
"freebsd.kern.polling.burst_max" = 150
"freebsd.ifconfig.polling" = "on"
"nfs.rsize" = 2048
"#;

    pub fn items() -> Vec<Item> {
        items_of(PROFILE)
    }

    /// The items of a profile's `[settings]` table.
    pub fn items_of(profile: &str) -> Vec<Item> {
        let table: toml::Table = toml::from_str(profile).unwrap();
        parse_items(table["settings"].as_table().unwrap()).unwrap()
    }

    /// Looks up `[section] key` in an INI text, which must parse as the format's reader does.
    pub fn ini_lookup(text: &str) -> impl Fn(&str, &str) -> Option<String> {
        let parsed = super::validate::ini(text).unwrap();
        move |section, key| {
            parsed
                .iter()
                .find(|(s, k, _)| s == section && k == key)
                .map(|(_, _, v)| v.clone())
        }
    }

    pub fn target() -> Target<'static> {
        Target {
            iface: Some("eth1"),
            profile_path: "/etc/nictune/eth1.toml",
            nictune: "/usr/bin/nictune",
            netns: None,
        }
    }

    #[test]
    fn every_setting_is_either_rendered_or_listed_as_omitted() {
        let items = items();
        for (format, name) in Format::ALL {
            let out = export(format, &items, &target()).unwrap();
            for o in &out.omitted {
                assert!(
                    out.text.contains(&o.setting),
                    "{name}: omission of {} not in the file",
                    o.setting
                );
            }
            let rendered = items.len() - out.omitted.len();
            assert!(
                format == Format::SystemdUnit || rendered > 0,
                "{name} expressed nothing"
            );
        }
    }

    #[test]
    fn formats_round_trip_their_names_and_need_an_interface() {
        for (f, n) in Format::ALL {
            assert_eq!(Format::parse(n), Some(f));
        }
        let t = Target {
            iface: None,
            ..target()
        };
        let err = export(Format::SystemdLink, &items(), &t).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--format systemd-link needs an interface (--iface or `iface` in the profile)"
        );
    }
}
