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
pub use systemd_link::LinkMatch;
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
    /// A systemd `.link` file (systemd.link(5)), applied by udev when the device appears.
    SystemdLink,
    /// The `[ethtool]` section of a NetworkManager connection keyfile.
    Networkmanager,
    /// A udev rule run on every `add` of the device (sysfs `ATTR{}`, ethtool via `RUN+=`).
    Udev,
    /// A tuned profile: `[net]`, `[sysctl]` and `[sysfs]` sections.
    Tuned,
    /// modprobe.d `options` lines for driver module parameters, one value per port.
    Modprobe,
    /// A sysctl.d file of Linux `net.*` sysctls.
    SysctlD,
    /// FreeBSD `/boot/loader.conf` tunables.
    LoaderConf,
    /// FreeBSD `/etc/sysctl.conf` sysctls.
    FreebsdSysctlConf,
    /// FreeBSD `/etc/rc.conf` (the interface's `polling` flag).
    RcConf,
    /// A FreeBSD rc.d script binding interrupts to CPUs with `cpuset -l LIST -x IRQ`.
    Cpuset,
    /// FreeBSD kernel configuration lines (`options DEVICE_POLLING`, `options HZ=1000`).
    Kernconf,
    /// NFS mount options for the options field of an `/etc/fstab` line (both OSes).
    Fstab,
    /// A oneshot systemd service re-running `nictune apply` when the device appears, for
    /// what no native format holds.
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

    /// The formats that can serve a profile naming a network namespace: the re-apply unit
    /// (it runs `nictune apply --netns`) and those whose settings belong to the kernel or a
    /// driver as a whole, never to one namespace (module parameters, FreeBSD boot tunables
    /// and kernel options). Every other format names an interface or a `net.*` sysctl, which
    /// its reader resolves in the initial namespace: udev and systemd-udevd see only the
    /// devices of their own namespace, NetworkManager manages its own, and tuned and
    /// systemd-sysctl write the /sys and /proc/sys they run with.
    pub const NAMESPACED: [Format; 4] = [
        Format::SystemdUnit,
        Format::Modprobe,
        Format::LoaderConf,
        Format::Kernconf,
    ];

    /// The command-line name (`--format`), from [`Format::ALL`].
    pub fn name(self) -> &'static str {
        Format::ALL
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("?", |(_, n)| n)
    }

    /// The OS whose files this format writes; `None` for NFS mount options (both).
    pub fn os(self) -> Option<cat::Os> {
        match self {
            Format::LoaderConf
            | Format::FreebsdSysctlConf
            | Format::RcConf
            | Format::Cpuset
            | Format::Kernconf => Some(cat::Os::Freebsd),
            Format::Fstab => None,
            _ => Some(cat::Os::Linux),
        }
    }

    /// The program that reads this format and the oldest version of it every exported
    /// line must suit unless `--target-version` says otherwise: Debian 12's
    /// (NetworkManager 1.42, systemd and udev 252).
    pub fn consumer(self) -> Option<(&'static str, Version)> {
        match self {
            Format::Networkmanager => Some(("NetworkManager", Version(1, 42))),
            Format::SystemdLink | Format::Udev | Format::SystemdUnit => {
                Some(("systemd", Version(252, 0)))
            }
            _ => None,
        }
    }

    /// The format with command-line name `name`; `None` for an unknown name.
    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(f, _)| *f)
    }
}

/// A consumer's version, `MAJOR[.MINOR]` (systemd counts in majors only: 252, 256).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Version(pub u32, pub u32);

impl Version {
    /// Reads `MAJOR[.MINOR[.PATCH]]` as the programs print it (`NetworkManager --version`:
    /// 1.42.4); a missing minor is 0 and the patch level is dropped. `None` if a part is not a
    /// number or there are more than three.
    pub fn parse(text: &str) -> Option<Version> {
        let parts: Vec<&str> = text.trim().split('.').collect();
        let number = |i: usize| parts.get(i).map_or(Some(0), |p| p.parse::<u32>().ok());
        if parts.len() > 3 {
            return None;
        }
        number(2)?;
        Some(Version(number(0)?, number(1)?))
    }

    /// Whether this can be a version of the program whose oldest supported release is
    /// `oldest`: NetworkManager counts 1.x, systemd in whole releases (252, 256).
    pub fn fits(self, oldest: Version) -> bool {
        match oldest.0 {
            1 => self.0 == 1,
            _ => self.0 >= 100,
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            0 => write!(f, "{}", self.0),
            minor => write!(f, "{}.{minor}", self.0),
        }
    }
}

/// A value as the profile gave it, typed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum XValue {
    /// An integer, in the catalog key's unit.
    Int(i64),
    /// One of a catalog key's named choices: ethtool takes the name (`tcp-data-split on`,
    /// ethtool(8) accepts only `auto|off|on`), sysfs the number (`threaded` takes 0/1/2).
    Enum {
        /// The choice's name, as ethtool spells it.
        name: String,
        /// The number the kernel uses for it.
        number: i64,
    },
    /// A switch.
    Bool(bool),
    /// A CPU set (IRQ affinity, RPS/XPS masks), written as a list or a hex mask per format.
    Cpus(cat::CpuSet),
    /// Anything else, as text: a DIM profile, a triple, an unlisted sysctl's value.
    Text(String),
    /// A module parameter's value per port, in port order.
    PerPort(Vec<i64>),
}

impl XValue {
    /// The value as `ethtool` and sysctl spell it (`on`/`off` for switches, an enum's
    /// name).
    pub fn plain(&self) -> String {
        match self {
            XValue::Int(n) => n.to_string(),
            XValue::Enum { name, .. } => name.clone(),
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

    /// A switch as 1/0; a CPU set as the hex mask sysfs takes; an enum as its number;
    /// other values plain.
    pub fn sysfs(&self) -> String {
        match self {
            XValue::Cpus(c) => c.to_mask(),
            XValue::Enum { number, .. } => number.to_string(),
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
    /// The value, checked by the catalog when it lists the key.
    pub value: XValue,
    /// The catalog entry; `None` for keys `apply` knows outside the catalog and for
    /// unlisted FreeBSD sysctls.
    #[serde(skip)]
    pub entry: Option<&'static Entry>,
}

impl Item {
    /// `key[@n]=value`, for lists of omitted settings; a FreeBSD per-unit key shows its
    /// unit in place (`freebsd.dev.igb.7.rx_processing_limit=-1`).
    pub fn shown(&self) -> String {
        if let Some(key) = self.unit_key() {
            return format!("{key}={}", self.value.plain());
        }
        let at = self.instance.map(|n| format!("@{n}")).unwrap_or_default();
        format!("{}{at}={}", self.key, self.value.plain())
    }

    /// The key with its `N` segment replaced by the unit number, for per-unit keys
    /// (`freebsd.dev.igb.N.rx_processing_limit` with unit 7).
    fn unit_key(&self) -> Option<String> {
        let n = self.instance?;
        self.key
            .contains(".N.")
            .then(|| self.key.replacen(".N.", &format!(".{n}."), 1))
    }

    /// The OS the setting belongs to: the catalog's, FreeBSD for the `freebsd.*` sysctls
    /// the catalog does not list, Linux for the rest (what `apply` knows).
    pub fn os(&self) -> cat::Os {
        match self.entry {
            Some(e) => e.os,
            None if self.key.starts_with("freebsd.") => cat::Os::Freebsd,
            None => cat::Os::Linux,
        }
    }

    /// The device's sysfs file that sets this NAPI value for every NAPI of the device:
    /// writing `/sys/class/net/IF/gro_flush_timeout`, `napi_defer_hard_irqs` or `threaded`
    /// sets the device's value and, since Linux 6.13 (per-NAPI config), each NAPI's
    /// (net/core/net-sysfs.c, the `*_store` handlers; Documentation/networking/napi.rst,
    /// "Software IRQ coalescing"). `None` for one NAPI's value (`@N`) and keys without one.
    pub fn device_wide_sysfs(&self) -> Option<&'static str> {
        if self.instance.is_some() {
            return None;
        }
        match (self.key.as_str(), &self.value) {
            ("napi.gro-flush-timeout", XValue::Int(_)) => Some("gro_flush_timeout"),
            ("napi.defer-hard-irqs", XValue::Int(_)) => Some("napi_defer_hard_irqs"),
            ("napi.threaded", XValue::Int(_) | XValue::Bool(_) | XValue::Enum { .. }) => {
                Some("threaded")
            }
            _ => None,
        }
    }

    /// A FreeBSD sysctl the catalog does not list, passed through unchecked.
    pub fn unlisted_freebsd(&self) -> bool {
        self.entry.is_none() && self.key.starts_with("freebsd.")
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

    /// The key's first dotted segment (`coalesce`, `napi`, `freebsd`, …).
    pub fn family(&self) -> &str {
        self.key.split('.').next().unwrap_or("")
    }

    /// The `ethtool` option and its arguments from the catalog's template:
    /// `ethtool -C {dev} rx-usecs {value}` gives `("-C", "rx-usecs 50")`.
    pub fn ethtool(&self) -> Option<(&'static str, String)> {
        let template = self.template(Via::Ethtool)?;
        let rest = template.strip_prefix("ethtool ")?;
        let (option, args) = rest.split_once(" {dev} ")?;
        if args.contains('<') {
            // A module parameter whose run-time form needs arithmetic: see `rate_as_usecs`.
            return None;
        }
        Some((option, args.replace("{value}", &self.value.plain())))
    }

    /// An `InterruptThrottleRate` module parameter (interrupts/s, or a mode) as the
    /// `ethtool -C DEV rx-usecs N` that sets the same at run time, with what the conversion
    /// means: a rate R ≥ 100 is 10^6/R µs, rounded; the modes the parameter shares with
    /// rx-usecs (0 off, 1 dynamic, 3 dynamic conservative, 4 on e1000/e1000e) are the same
    /// number there: the drivers' `set_coalesce` reads rx-usecs 0–3 (0–4) as those modes
    /// (catalog `coalesce.rx-usecs`, specs for e1000/e1000e/igb: igb_ethtool.c
    /// igb_set_coalesce, e1000e/ethtool.c e1000_set_coalesce). `Err` says why there is none.
    pub fn rate_as_usecs(&self) -> Result<(String, String), String> {
        let entry = self.entry.ok_or("not a module parameter")?;
        let template = self
            .template(Via::Ethtool)
            .filter(|t| t.contains("rx-usecs <10^6/value"))
            .ok_or("no run-time ethtool form")?;
        let modes: Vec<i64> = template
            .split("mode ")
            .nth(1)
            .unwrap_or("")
            .trim_end_matches('>')
            .split('/')
            .filter_map(|m| m.parse().ok())
            .collect();
        let values: Vec<i64> = match &self.value {
            XValue::Int(n) => vec![*n],
            XValue::PerPort(v) => v.clone(),
            other => return Err(format!("{} is not a rate", other.plain())),
        };
        let Some(&rate) = values.first() else {
            return Err("no value".into());
        };
        if values.iter().any(|v| *v != rate) {
            return Err(format!(
                "the ports differ ({}) and a rule for one interface takes one value: give this \
                 port's value alone, or use --format modprobe",
                self.value.plain()
            ));
        }
        let driver = entry.driver.as_deref().unwrap_or("the driver");
        if modes.contains(&rate) {
            return Ok((
                format!("rx-usecs {rate}"),
                format!(
                    "{}: mode {rate} is rx-usecs {rate} ({driver}'s set_coalesce reads it as the same mode)",
                    self.shown()
                ),
            ));
        }
        if rate < 100 {
            return Err(format!(
                "{rate} is neither a rate (100 and up) nor one of the modes {modes:?} rx-usecs can \
                 express; use --format modprobe"
            ));
        }
        let usecs = (1_000_000 + rate / 2) / rate;
        let exact = 1_000_000 % rate == 0;
        let note = if exact {
            format!("{}: rx-usecs {usecs} = 10^6/{rate}", self.shown())
        } else {
            format!(
                "{}: rx-usecs {usecs} ≈ 10^6/{rate}; {driver} then runs at {}/s",
                self.shown(),
                1_000_000 / usecs
            )
        };
        Ok((format!("rx-usecs {usecs}"), note))
    }
}

/// A setting a format could not express.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Omitted {
    /// The setting as [`Item::shown`] spells it.
    pub setting: String,
    /// Why the format cannot hold it, and what to use instead when there is something.
    pub reason: String,
}

/// What a renderer produced.
#[derive(Debug, Clone, Serialize)]
pub struct Exported {
    /// The format rendered.
    pub format: Format,
    /// Where the file usually goes.
    pub path: String,
    /// The file's contents, omitted settings listed as comments at the top.
    pub text: String,
    /// Settings the format could not express.
    pub omitted: Vec<Omitted>,
    /// Lines written with a caveat: an unchecked FreeBSD sysctl, a module parameter written as
    /// the run-time value that stands for it (`e1000.InterruptThrottleRate=3000` as udev's
    /// `ethtool -C rx-usecs 333`, which runs at 3003/s). Each is a `# warning: ` comment above
    /// its line in the file.
    pub warnings: Vec<String>,
}

/// What a renderer needs besides the settings.
#[derive(Debug, Clone)]
pub struct ExportContext<'a> {
    /// The interface the files are for; `None` when neither `--iface` nor the profile names
    /// one (formats that need one fail with [`ExportError::NeedsIface`]).
    pub iface: Option<&'a str>,
    /// The profile file as the re-apply unit should name it.
    pub profile_path: &'a str,
    /// The nictune executable the re-apply unit runs.
    pub nictune: &'a str,
    /// `--netns` for the re-apply unit.
    pub netns: Option<&'a str>,
    /// The version of the format's reader the file must suit (`--target-version`);
    /// `None`: the oldest nictune supports, [`Format::consumer`].
    pub version: Option<Version>,
    /// How a `.link` file finds its device (`--match`); empty: by the kernel's name,
    /// `OriginalName=`. Only `systemd-link` takes any ([`ExportError::MatchUnsupported`]).
    pub link_match: &'a [LinkMatch],
}

impl ExportContext<'_> {
    /// The reader's version lines are checked against.
    pub fn version_for(&self, format: Format) -> Version {
        self.version
            .or(format.consumer().map(|(_, v)| v))
            .unwrap_or(Version(0, 0))
    }
}

/// A profile that cannot be exported in the chosen format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// `--match` was given for a format that does not take it.
    #[error("--match is for --format systemd-link; {format} files find their device by name")]
    MatchUnsupported {
        /// The format's command-line name.
        format: &'static str,
    },
    /// A `--match` condition that is not one nictune writes.
    #[error("--match {given:?}: {why}; allowed: mac=AA:BB:CC:DD:EE:FF, permanent-mac=AA:BB:CC:DD:EE:FF, path=ID_PATH (e.g. pci-0000:03:00.0), driver=NAME")]
    BadMatch {
        /// The condition as given.
        given: String,
        /// What is wrong with it.
        why: String,
    },
    /// The format writes per-interface files and no interface was given.
    #[error("--format {format} needs an interface (--iface or `iface` in the profile)")]
    NeedsIface {
        /// The format's command-line name.
        format: &'static str,
    },
    /// `--format` names no format.
    #[error("{format:?} is not a format; allowed: {}", Format::ALL.map(|(_, n)| n).join(", "))]
    UnknownFormat {
        /// The name as given.
        format: String,
    },
    /// The interface or namespace name is not a valid name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// A path the generated file would contain holds a control character.
    #[error("{what} {path:?} cannot go into a generated file: it holds a control character; allowed: a path without control characters")]
    BadPath {
        /// Which path: "profile path" or "nictune path".
        what: &'static str,
        /// The path as given.
        path: String,
    },
    /// The format can express none of the profile's settings.
    #[error("--format {format} would write no settings; left out:\n{}", .omitted.iter().map(|o| format!("  {}: {}", o.setting, o.reason)).collect::<Vec<_>>().join("\n"))]
    NothingToWrite {
        /// The format's command-line name.
        format: &'static str,
        /// Every setting, with why it was left out.
        omitted: Vec<Omitted>,
    },
    /// `--target-version` is not `MAJOR[.MINOR]`.
    #[error("--target-version {version:?} is not a version of {consumer}; allowed: MAJOR[.MINOR[.PATCH]], NetworkManager's 1.x (1.46, 1.42.4) or a systemd release (256)")]
    BadVersion {
        /// The program reading the format (`NetworkManager`, `systemd`).
        consumer: &'static str,
        /// The version as given.
        version: String,
    },
    /// `--target-version` is older than the oldest reader nictune writes for.
    #[error("--target-version {version}: nictune writes for {consumer} {oldest} or newer (Debian 12's), whose keys older releases may lack; allowed: {oldest} or newer")]
    TooOld {
        /// The program reading the format.
        consumer: &'static str,
        /// The version asked for.
        version: Version,
        /// The oldest version supported ([`Format::consumer`]).
        oldest: Version,
    },
    /// The profile names a network namespace and the format would act in another one (the
    /// initial namespace, where udev, NetworkManager, tuned and systemd-sysctl run).
    #[error("--format {format} acts in the initial network namespace, but the profile names netns {netns:?}: its settings would land on the host's interface of that name or nowhere; allowed with a netns: {}", Format::NAMESPACED.map(Format::name).join(", "))]
    OtherNamespace {
        /// The format's command-line name.
        format: &'static str,
        /// The profile's namespace.
        netns: String,
    },
    /// `--target-version` was given for a format without a versioned reader.
    #[error("--target-version: --format {format} has no versioned reader; allowed with networkmanager, systemd-link, udev, systemd-unit")]
    Unversioned {
        /// The format's command-line name.
        format: &'static str,
    },
}

/// Checks every name and path `target` puts into generated files: a newline or quote there
/// would add lines (an `ExecStartPre=`, a `RUN+=`) to files that run as root.
pub fn check_target(target: &ExportContext) -> Result<(), ExportError> {
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
pub fn export(
    format: Format,
    items: &[Item],
    target: &ExportContext,
) -> Result<Exported, ExportError> {
    check_target(target)?;
    if let Some(netns) = target
        .netns
        .filter(|_| !Format::NAMESPACED.contains(&format))
    {
        return Err(ExportError::OtherNamespace {
            format: format.name(),
            netns: netns.to_string(),
        });
    }
    if !target.link_match.is_empty() && format != Format::SystemdLink {
        return Err(ExportError::MatchUnsupported {
            format: format.name(),
        });
    }
    if target.version.is_some() && format.consumer().is_none() {
        return Err(ExportError::Unversioned {
            format: format.name(),
        });
    }
    let version = target.version_for(format);
    if let Some((consumer, oldest)) = format.consumer().filter(|(_, v)| version < *v) {
        return Err(ExportError::TooOld {
            consumer,
            version,
            oldest,
        });
    }
    let (path, body, omitted) = render(format, items, target, version)?;
    // Everything left out: refuse rather than write a file that changes nothing (an empty
    // .link would still replace 99-default.link for the interface).
    if omitted.len() == items.len() {
        return Err(ExportError::NothingToWrite {
            format: format.name(),
            omitted,
        });
    }
    let warnings: Vec<String> = body
        .lines()
        .filter_map(|l| l.strip_prefix("# warning: "))
        .map(String::from)
        .collect();
    let shebang = if format == Format::Cpuset {
        "#!/bin/sh\n"
    } else {
        ""
    };
    let text = format!("{shebang}{}{body}", header(format, version, &omitted));
    Ok(Exported {
        format,
        path,
        text,
        omitted,
        warnings,
    })
}

/// Path, body and omissions of `items` in `format` for a reader of `version`.
fn render(
    format: Format,
    items: &[Item],
    target: &ExportContext,
    version: Version,
) -> Result<(String, String, Vec<Omitted>), ExportError> {
    let iface = || {
        target.iface.ok_or(ExportError::NeedsIface {
            format: format.name(),
        })
    };
    Ok(match format {
        Format::SystemdLink => systemd_link::render(items, iface()?, version, target.link_match),
        Format::Networkmanager => networkmanager::render(items, iface()?, version),
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
    })
}

thread_local! {
    /// Set while [`holds`] renders a format to see whether it takes a setting: the reasons
    /// the renderers give for what they leave out are not needed then, and computing them
    /// would probe again ([`kind_reason`] probes every format).
    static PROBING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether `format` writes `item`: `Some(None)` for the reader nictune writes for by
/// default, `Some(Some(v))` when only `--target-version v` does (systemd 256's
/// `ReceivePacketSteeringCPUMask=`, NetworkManager 1.46's `channels-*`), `None` when it
/// cannot hold it. Found by rendering the item alone, so the answer is what the renderer
/// really does, not a second list that could drift from it.
fn holds(format: Format, item: &Item) -> Option<Option<Version>> {
    if format == Format::Kernconf && item.key == "freebsd.ifconfig.polling" {
        // kernconf writes the `options DEVICE_POLLING` the flag needs, not the flag.
        return None;
    }
    let target = ExportContext {
        iface: Some("eth0"),
        profile_path: "/etc/nictune/eth0.toml",
        nictune: "/usr/local/sbin/nictune",
        netns: None,
        version: None,
        link_match: &[],
    };
    let newer: &[Version] = match format {
        Format::SystemdLink => &systemd_link::NEWER,
        Format::Networkmanager => &[networkmanager::CHANNELS_SINCE],
        _ => &[],
    };
    let was = PROBING.with(|p| p.replace(true));
    let takes = |version: Version| {
        render(format, std::slice::from_ref(item), &target, version)
            .is_ok_and(|(_, _, omitted)| omitted.is_empty())
    };
    let found = if takes(target.version_for(format)) {
        Some(None)
    } else {
        newer.iter().find(|v| takes(**v)).map(|v| Some(*v))
    };
    PROBING.with(|p| p.set(was));
    found
}

/// `--format a, b or c` for the formats other than `here` that hold `item` (with the
/// `--target-version` a format needs for it). The re-apply unit (systemd-unit) is named only
/// when no native format holds the setting: it is the fallback for those. Empty when none
/// does.
fn formats_holding(item: &Item, here: Format) -> String {
    let named = |formats: Vec<(Format, Option<Version>)>| -> Vec<String> {
        formats
            .into_iter()
            .map(|(f, v)| match v {
                None => f.name().to_string(),
                Some(v) => format!("{} (--target-version {v})", f.name()),
            })
            .collect()
    };
    let all: Vec<(Format, Option<Version>)> = Format::ALL
        .iter()
        .filter(|(f, _)| *f != here)
        .filter_map(|(f, _)| holds(*f, item).map(|v| (*f, v)))
        .collect();
    let native: Vec<(Format, Option<Version>)> = all
        .iter()
        .copied()
        .filter(|(f, _)| *f != Format::SystemdUnit)
        .collect();
    let names = named(if native.is_empty() { all } else { native });
    match names.as_slice() {
        [] => String::new(),
        [one] => format!("--format {one}"),
        [rest @ .., last] => format!("--format {} or {last}", rest.join(", ")),
    }
}

/// The comment block every file starts with: where it came from and what it leaves out.
fn header(format: Format, version: Version, omitted: &[Omitted]) -> String {
    let mut out = format!(
        "# Generated by `nictune export --format {}`.\n",
        format.name()
    );
    if let Some((consumer, _)) = format.consumer() {
        let _ = writeln!(
            out,
            "# For {consumer} {version} or newer; a line a later release needs says so above it."
        );
    }
    if !omitted.is_empty() {
        out += "# Not expressible in this format (and where it can go instead):\n";
        for o in omitted {
            let _ = writeln!(out, "#   {}: {}", o.setting, o.reason);
        }
    }
    out
}

/// The export formats that hold a FreeBSD setting, from the ways the catalog sets it (for
/// `apply`'s refusal of a FreeBSD key).
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

/// What kind of setting an item is and which formats hold it instead, for omission lists:
/// the formats are found by rendering the item in each ([`formats_holding`]), so a note never
/// names a format that would leave the setting out too.
pub(crate) fn kind_reason(item: &Item, here: Format) -> String {
    if PROBING.with(std::cell::Cell::get) {
        return String::new();
    }
    let os_scope = item.entry.map(|e| (e.os, e.scope));
    let kind = match (item.family(), os_scope) {
        _ if item.unlisted_freebsd() => "FreeBSD sysctl (not in nictune's catalog)",
        (_, Some((cat::Os::Freebsd, _))) => "FreeBSD setting",
        (_, Some((_, cat::Scope::Module))) => "module parameter",
        ("napi", _) if item.instance.is_some() => "one NAPI's setting (netdev netlink only)",
        ("napi", _) if item.device_wide_sysfs().is_none() => {
            "NAPI setting without a sysfs file (netdev netlink only)"
        }
        ("napi", _) => "device-wide NAPI setting (sysfs)",
        ("sysctl", _) => "sysctl",
        ("nfs", _) => "NFS mount option",
        ("route", _) => "route attribute",
        ("irq", _) => "Linux IRQ affinity",
        ("sysfs", _) => "sysfs NAPI file",
        ("rps" | "xps", _) => "queue steering",
        _ => "device setting",
    };
    let formats = formats_holding(item, here);
    match (formats.is_empty(), item.family()) {
        (false, _) => format!("{kind}: {formats}"),
        (true, "route") => format!(
            "{kind}: no format holds it; `nictune explain {}` shows the ip route command",
            item.key
        ),
        (true, _) => format!("{kind}: no other export format holds it"),
    }
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
    /// The profile's `iface`; `None` when it names none.
    pub iface: Option<String>,
    /// The profile's `netns`; `None` for the initial namespace.
    pub netns: Option<String>,
    /// The settings, one per profile key.
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
        // Not in the catalog: the apply parser knows it (any net.* sysctl, rps.flow-cnt, ...),
        // or it is a FreeBSD sysctl nictune does not list, written through unchecked.
        let d = match crate::desired::parse_pair(key_text, raw) {
            Ok(d) => d,
            Err(e) => return unlisted_freebsd_sysctl(name, instance, raw).ok_or(e)?,
        };
        let value = match d.value {
            nictune_host::write::value::HostValue::Int(n) => {
                XValue::Int(i64::try_from(n).unwrap_or(i64::MAX))
            }
            nictune_host::write::value::HostValue::Bool(b) => XValue::Bool(b),
            nictune_host::write::value::HostValue::Cpus(c) => XValue::Cpus(c.clone()),
            nictune_host::write::value::HostValue::Text(t) => XValue::Text(t),
        };
        return Ok(Item {
            key,
            instance,
            value,
            entry: None,
        });
    };
    let instance = match (unit_of(name, entry), instance) {
        (Some(unit), None) => Some(unit),
        (Some(unit), Some(at)) if unit != at => {
            return Err(DesiredError::BadInstance {
                key: key_text.to_string(),
                why: format!("names unit {unit} and @{at}; allowed: one of them"),
            })
        }
        (_, instance) => instance,
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
        cat::CatalogValue::Integer(n) => XValue::Int(n),
        cat::CatalogValue::Enum { name, number } => XValue::Enum { name, number },
        cat::CatalogValue::Bool(b) => XValue::Bool(b),
        cat::CatalogValue::Cpus(c) => XValue::Cpus(c),
        cat::CatalogValue::PerPort(v) => {
            XValue::PerPort(v.iter().flat_map(cat::CatalogValue::integers).collect())
        }
        text @ (cat::CatalogValue::DimProfile(_) | cat::CatalogValue::Triple(_)) => {
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

/// The unit number a per-unit FreeBSD name carries where the catalog key has `N`:
/// `dev.igb.7.rx_processing_limit` for `freebsd.dev.igb.N.rx_processing_limit` is unit 7.
fn unit_of(name: &str, entry: &Entry) -> Option<u32> {
    entry
        .key
        .rsplit('.')
        .zip(name.rsplit('.'))
        .find(|(k, _)| *k == "N")
        .and_then(|(_, n)| n.parse().ok())
}

/// FreeBSD's top-level sysctl nodes (sysctl(3), "CTL_KERN" … plus `dev`, `security`,
/// `compat` of FreeBSD 13/14): a name under one of them that no Linux key matches is a
/// FreeBSD sysctl.
const FREEBSD_SYSCTL_ROOTS: [&str; 12] = [
    "kern", "vm", "vfs", "net", "debug", "hw", "machdep", "user", "p1003_1b", "dev", "security",
    "compat",
];

/// Second-level nodes of `net` that only Linux has (`Documentation/admin-guide/sysctl/net.rst`
/// of Linux 6.x: `core`, `ipv4`, `ipv6`, `netfilter`, `unix`, `bridge`, `mptcp`, `vrf`, plus
/// `nf_conntrack_max`); FreeBSD's `net` holds `inet`, `inet6`, `link`, `route`, `isr`, ...
/// A bare name under one of them is a Linux sysctl, never passed to a FreeBSD file.
const LINUX_NET_NODES: [&str; 9] = [
    "core",
    "ipv4",
    "ipv6",
    "netfilter",
    "unix",
    "bridge",
    "mptcp",
    "vrf",
    "nf_conntrack_max",
];

/// A well-formed FreeBSD sysctl the catalog does not list (`net.inet.ip.fastforwarding`,
/// `kern.maxfiles`, optionally written `freebsd.…`), kept as `freebsd.NAME` with its value
/// as given: export writes it to freebsd-sysctl.conf with a warning instead of failing.
fn unlisted_freebsd_sysctl(
    name: &str,
    instance: Option<u32>,
    raw: &str,
) -> Option<Result<Item, DesiredError>> {
    let bare = name.strip_prefix("freebsd.").unwrap_or(name);
    let segments: Vec<&str> = bare.split('.').collect();
    let well_formed = instance.is_none()
        && segments.len() >= 2
        && FREEBSD_SYSCTL_ROOTS.contains(&segments[0])
        // No `%`: FreeBSD's `%desc`, `%driver`, `%parent` … nodes are read-only device
        // descriptions, never a setting, and sysctl.conf has no other use for it.
        && segments.iter().all(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
        });
    if !well_formed {
        return None;
    }
    let explicit = name.starts_with("freebsd.");
    if !explicit && segments[0] == "net" && LINUX_NET_NODES.contains(&segments[1]) {
        return Some(Err(DesiredError::BadInstance {
            key: name.to_string(),
            why: format!(
                "is a Linux sysctl nictune does not list; allowed: write it sysctl.{name} \
                 (Linux: --format sysctl.d), or freebsd.{name} if a FreeBSD host really has it"
            ),
        }));
    }
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.,:/+".contains(c);
    if raw.is_empty() || !raw.chars().all(plain) {
        return Some(Err(DesiredError::BadInstance {
            key: name.to_string(),
            why: format!(
                "{raw:?} cannot go into sysctl.conf unchecked; allowed: a number or a word of \
                 letters, digits and -_.,:/+"
            ),
        }));
    }
    let value = raw
        .parse()
        .map_or_else(|_| XValue::Text(raw.to_string()), XValue::Int);
    Some(Ok(Item {
        key: format!("freebsd.{bare}"),
        instance: None,
        value,
        entry: None,
    }))
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

    pub fn target() -> ExportContext<'static> {
        ExportContext {
            iface: Some("eth1"),
            profile_path: "/etc/nictune/eth1.toml",
            nictune: "/usr/bin/nictune",
            netns: None,
            version: None,
            link_match: &[],
        }
    }

    #[test]
    fn every_setting_is_either_rendered_or_listed_as_omitted() {
        let items = items();
        for (format, name) in Format::ALL {
            let out = match export(format, &items, &target()) {
                Ok(out) => out,
                Err(ExportError::NothingToWrite { omitted, .. }) => {
                    assert_eq!(omitted.len(), items.len(), "{name}");
                    continue;
                }
                Err(e) => panic!("{name}: {e}"),
            };
            for o in &out.omitted {
                assert!(
                    out.text.contains(&o.setting),
                    "{name}: omission of {} not in the file",
                    o.setting
                );
            }
            assert!(out.omitted.len() < items.len(), "{name} expressed nothing");
        }
    }

    #[test]
    fn an_export_without_settings_is_refused_with_the_list() {
        let items =
            items_of("[settings]\n\"sysctl.net.core.busy_poll\" = 50\n\"coalesce.rx-usecs\" = 8\n");
        for format in [
            Format::Modprobe,
            Format::LoaderConf,
            Format::RcConf,
            Format::FreebsdSysctlConf,
            Format::Cpuset,
        ] {
            let err = export(format, &items, &target()).unwrap_err();
            let text = err.to_string();
            assert!(text.contains("would write no settings"), "{text}");
            assert!(
                text.contains("  sysctl.net.core.busy_poll=50: sysctl: --format tuned or sysctl.d"),
                "{text}"
            );
        }
        // A .link with no [Link] setting would still replace 99-default.link.
        let napi = items_of("[settings]\n\"napi.gro-flush-timeout\" = 20000\n");
        assert!(matches!(
            export(Format::SystemdLink, &napi, &target()),
            Err(ExportError::NothingToWrite { .. })
        ));
    }

    /// Issue #13: a bare Linux sysctl the catalog does not list is not taken for a FreeBSD
    /// one (it used to land in freebsd-sysctl.conf with only a warning).
    #[test]
    fn regression_an_unlisted_linux_sysctl_never_goes_to_a_freebsd_file() {
        for key in ["net.core.somaxconn", "net.ipv4.tcp_fin_timeout"] {
            let table: toml::Table = toml::from_str(&format!("\"{key}\" = 30")).unwrap();
            let e = parse_items(&table).unwrap_err().to_string();
            assert!(e.contains("is a Linux sysctl"), "{key}: {e}");
            assert!(e.contains(&format!("sysctl.{key}")), "{key}: {e}");
        }
        // Written as Linux sysctls they export to sysctl.d and never to a FreeBSD format.
        let items = items_of("[settings]\n\"sysctl.net.core.somaxconn\" = 4096\n");
        let out = export(Format::SysctlD, &items, &target()).unwrap();
        assert!(
            out.text.contains("net.core.somaxconn = 4096"),
            "{}",
            out.text
        );
        assert!(export(Format::FreebsdSysctlConf, &items, &target()).is_err());
    }

    /// Found by the profile fuzzer: `hw.%m.max_interrupt_rate` passed as an unlisted
    /// FreeBSD sysctl and was written into sysctl.conf, whose checker refused the name.
    #[test]
    fn regression_a_percent_in_an_unlisted_freebsd_sysctl_is_refused() {
        let text = "[settings]\n\"hw.%m.max_interrupt_rate\" = 8000\n";
        assert!(parse_profile(text).is_err());
        assert!(parse_profile("[settings]\n\"dev.em.0.%desc\" = 1\n").is_err());
    }

    #[test]
    fn freebsd_units_stay_and_unlisted_freebsd_sysctls_pass_with_a_warning() {
        let items = items_of(
            "[settings]\n\"dev.igb.7.rx_processing_limit\" = -1\n\"dev.igb.3.rx_processing_limit\" = 500\n\
             \"net.inet.ip.fastforwarding\" = 1\n\"freebsd.net.inet.tcp.blackhole\" = 2\n\"kern.maxfiles\" = 200000\n\
             \"sysctl.net.core.busy_poll\" = 50\n",
        );
        let out = export(Format::FreebsdSysctlConf, &items, &target()).unwrap();
        let lines: Vec<&str> = out.text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines,
            [
                "dev.igb.3.rx_processing_limit=500",
                "dev.igb.7.rx_processing_limit=-1",
                "net.inet.tcp.blackhole=2",
                "kern.maxfiles=200000",
                "net.inet.ip.fastforwarding=1",
            ]
        );
        assert_eq!(out.warnings.len(), 3, "{:?}", out.warnings);
        assert!(
            out.warnings[1].starts_with("kern.maxfiles is not in nictune's catalog"),
            "{:?}",
            out.warnings
        );
        // The Linux sysctl is never written to the FreeBSD file.
        assert_eq!(out.omitted.len(), 1);
        assert_eq!(out.omitted[0].setting, "sysctl.net.core.busy_poll=50");
        // A unit given twice, differently, is refused.
        let table: toml::Table =
            toml::from_str("\"dev.igb.7.rx_processing_limit@3\" = 1\n").unwrap();
        assert!(parse_items(&table)
            .unwrap_err()
            .to_string()
            .contains("names unit 7 and @3"));
    }

    /// One item per catalog key (a per-unit FreeBSD key as unit 0), with the first value of
    /// a few typical ones the catalog accepts for it, plus the keys `apply` knows outside the
    /// catalog and an unlisted FreeBSD sysctl.
    fn every_key() -> Vec<Item> {
        let mut items: Vec<Item> = cat::catalog()
            .entries()
            .iter()
            .map(|entry| {
                let key = entry.key.replacen(".N.", ".0.", 1);
                let choice = entry.choices.first().map(|c| c.name.clone());
                let low = entry
                    .specs
                    .iter()
                    .flat_map(|s| s.ranges.iter())
                    .map(|r| r[0].max(1).to_string())
                    .next();
                let tries = choice.into_iter().chain(low).chain(
                    [
                        "on",
                        "8",
                        "1",
                        "100",
                        "3000,3000",
                        "1,1",
                        "f",
                        "2048",
                        "4096 87380 6291456",
                    ]
                    .map(String::from),
                );
                tries
                    .filter_map(|raw| parse_item(&key, &raw).ok())
                    .next()
                    .unwrap_or_else(|| panic!("no value found for {key}"))
            })
            .collect();
        items.extend(items_of(
            "[settings]\n\"sysctl.net.core.somaxconn\" = 4096\n\"feature.rx-checksum\" = \"on\"\n\
             \"rps.flow-cnt@0\" = 4096\n\"kern.maxfiles\" = 200000\n\"rps.cpus@1\" = \"3\"\n\
             \"napi.gro-flush-timeout@1\" = 20000\n\"irq.affinity@45\" = \"2-3\"\n",
        ));
        items
    }

    /// The formats a note sends a setting to: `--format a, b or c` (with a format's
    /// `(--target-version V)` after its name).
    fn named_formats(reason: &str) -> Vec<(Format, Option<Version>)> {
        let Some(list) = reason.split("--format ").nth(1) else {
            return Vec::new();
        };
        let list = list.split(';').next().unwrap_or_default();
        list.split(", ")
            .flat_map(|part| part.split(" or "))
            .map(|part| {
                let (name, version) = match part.split_once(" (--target-version ") {
                    Some((n, v)) => (n, Version::parse(v.trim_end_matches(')'))),
                    None => (part.trim(), None),
                };
                let format = Format::parse(name)
                    .unwrap_or_else(|| panic!("{name:?} in {reason:?} is not a format"));
                (format, version)
            })
            .collect()
    }

    /// Audit: notes sent settings to formats that cannot hold them (`coalesce.cqe-mode-rx`
    /// to systemd-link, `xps.cpus` to systemd-link, `ring.hds-thresh` back to tuned). Every
    /// format named for any key must write it when given it alone.
    #[test]
    fn a_note_never_sends_a_setting_to_a_format_that_leaves_it_out() {
        let items = every_key();
        let mut checked = 0;
        for item in &items {
            for (format, name) in Format::ALL {
                let o = match export(format, std::slice::from_ref(item), &target()) {
                    Err(ExportError::NothingToWrite { omitted, .. }) => omitted[0].clone(),
                    Ok(_) => continue,
                    Err(e) => panic!("{name}: {e}"),
                };
                for (other, version) in named_formats(&o.reason) {
                    assert_ne!(other, format, "{name} sends {o:?} back to itself");
                    let t = ExportContext {
                        version,
                        link_match: &[],
                        ..target()
                    };
                    let there = export(other, std::slice::from_ref(item), &t)
                        .unwrap_or_else(|e| panic!("{name}: {o:?}: {} refuses: {e}", other.name()));
                    assert!(
                        there.omitted.is_empty(),
                        "{name}: {o:?}, but {} leaves it out: {:?}",
                        other.name(),
                        there.omitted
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > items.len(), "only {checked} notes checked");
        // The cases the audit found, by name.
        let reason = |key: &str, format: Format| {
            let item = items.iter().find(|i| i.key == key).unwrap();
            match export(format, std::slice::from_ref(item), &target()) {
                Err(ExportError::NothingToWrite { omitted, .. }) => omitted[0].reason.clone(),
                other => panic!("{key} in {}: {other:?}", format.name()),
            }
        };
        for key in ["coalesce.cqe-mode-rx", "ring.tcp-data-split"] {
            let why = reason(key, Format::SysctlD);
            assert!(
                !why.contains("systemd-link") && !why.contains("networkmanager"),
                "{key}: {why}"
            );
        }
        // NetworkManager has ethtool.feature-rx-gro-list; systemd.link(5) has no key for it.
        let why = reason("feature.rx-gro-list", Format::SysctlD);
        assert!(!why.contains("systemd-link"), "{why}");
        assert!(reason("ring.tcp-data-split", Format::SysctlD).contains("udev"));
        assert!(!reason("xps.cpus", Format::SysctlD).contains("systemd-link"));
        assert!(reason("rps.cpus", Format::SysctlD).contains("systemd-link (--target-version 256)"));
    }

    /// Audit: an enum went out as its number (`ethtool -G $name tcp-data-split 2`), which
    /// ethtool(8) refuses: it takes `auto|off|on`. sysfs files keep the number.
    #[test]
    fn enums_are_names_for_ethtool_and_numbers_for_sysfs() {
        let items = items_of(
            "[settings]\n\"ring.tcp-data-split\" = \"on\"\n\"napi.threaded\" = \"enabled\"\n",
        );
        let udev = export(Format::Udev, &items, &target()).unwrap().text;
        assert!(
            udev.contains("RUN+=\"/usr/sbin/ethtool -G $name tcp-data-split on\""),
            "{udev}"
        );
        assert!(udev.contains("ATTR{threaded}=\"1\""), "{udev}");
        let unit = export(Format::SystemdUnit, &items, &target()).unwrap();
        assert!(unit.omitted.is_empty(), "{:?}", unit.omitted);
        assert_eq!(items[0].shown(), "napi.threaded=enabled");
        assert_eq!(items[1].shown(), "ring.tcp-data-split=on");
    }

    #[test]
    fn no_format_writes_a_key_of_the_other_os() {
        let mut items = items();
        items.extend(items_of(
            "[settings]\n\"net.inet.ip.fastforwarding\" = 1\n\"dev.igb.7.rx_processing_limit\" = -1\n",
        ));
        for (format, name) in Format::ALL {
            let Some(os) = format.os() else { continue };
            let Ok(out) = export(format, &items, &target()) else {
                continue;
            };
            for item in &items {
                let written = !out.omitted.iter().any(|o| o.setting == item.shown());
                assert!(
                    !written || item.os() == os,
                    "{name} wrote {} of the other OS",
                    item.shown()
                );
            }
        }
    }

    #[test]
    fn napi_values_without_a_sysfs_file_are_sent_to_the_unit_only() {
        let items =
            items_of("[settings]\n\"napi.irq-suspend-timeout\" = 20000\n\"ring.rx\" = 512\n");
        for format in [Format::Udev, Format::Tuned, Format::SystemdLink] {
            let out = export(format, &items, &target()).unwrap();
            assert_eq!(
                out.omitted[0].reason,
                "NAPI setting without a sysfs file (netdev netlink only): --format systemd-unit"
            );
        }
    }

    /// Audit: a profile's netns was ignored by every format but systemd-unit, so a udev rule
    /// or .link file for `veth0` in namespace `lab` matched the host's `veth0`, if any.
    #[test]
    fn a_profile_in_a_namespace_exports_only_to_formats_that_can_reach_it() {
        let in_lab = ExportContext {
            netns: Some("lab"),
            ..target()
        };
        for (format, name) in Format::ALL {
            let got = export(format, &items(), &in_lab);
            if Format::NAMESPACED.contains(&format) {
                assert!(got.is_ok(), "{name}: {got:?}");
                continue;
            }
            let e = got.unwrap_err().to_string();
            assert!(
                e.contains(&format!(
                    "--format {name} acts in the initial network namespace"
                )) && e.contains("netns \"lab\"")
                    && e.contains("allowed with a netns: systemd-unit, modprobe"),
                "{e}"
            );
        }
        let unit = export(Format::SystemdUnit, &items(), &in_lab).unwrap().text;
        assert!(unit.contains(" --netns lab --force"), "{unit}");
    }

    #[test]
    fn formats_round_trip_their_names_and_need_an_interface() {
        for (f, n) in Format::ALL {
            assert_eq!(Format::parse(n), Some(f));
        }
        let t = ExportContext {
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

#[cfg(test)]
mod version_tests {
    use super::Version;

    #[test]
    fn versions_read_as_the_programs_print_them_and_must_fit_the_program() {
        assert_eq!(Version::parse("1.42.4"), Some(Version(1, 42)));
        assert_eq!(Version::parse("1.46"), Some(Version(1, 46)));
        assert_eq!(Version::parse("256"), Some(Version(256, 0)));
        assert_eq!(Version::parse("1.2.3.4"), None);
        assert_eq!(Version::parse("1.x"), None);
        let nm = Version(1, 42);
        let systemd = Version(252, 0);
        assert!(Version(1, 46).fits(nm) && !Version(256, 0).fits(nm));
        assert!(Version(256, 0).fits(systemd) && !Version(1, 46).fits(systemd));
    }
}
