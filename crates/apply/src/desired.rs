//! What the user asked for, checked without touching the system: `KEY=VALUE` arguments or a
//! TOML profile, parsed into [`Desired`] entries with typed values.
//!
//! Keys name a knob and optionally one object with `@N`: `napi.defer-hard-irqs@1=2` sets the
//! second NAPI instance only, `rps.cpus@0=3` receive queue 0 (a hex mask, as the file takes), `irq.affinity@45=2` IRQ 45.
//! Without `@N`, per-NAPI and per-queue keys apply to every instance of the interface.

use nictune_core::{input, names};
use nictune_host::write::setting::{kernel_feature, Channel, Key, Napi, Ring, Steering, SysfsNapi};
use nictune_host::write::value::{parse_value, HostValue, ValueError};
use serde::{Deserialize, Serialize};

/// One requested setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Desired {
    /// The knob, typed.
    pub key: Key,
    /// `Some(n)` for `@n`: one NAPI index, queue index or IRQ number.
    pub instance: Option<u32>,
    /// The requested value, parsed for the key (a CPU list, a hex mask, on/off, a number).
    pub value: HostValue,
    /// Caveats the catalog raised for this value, given the other settings of the request.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The value as typed, for re-checking it with the rest of the request.
    #[serde(skip)]
    pub raw: String,
}

/// A request the user typed that cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DesiredError {
    /// An argument without `=`.
    #[error("{arg:?} is not KEY=VALUE")]
    NotAssignment {
        /// The argument as typed.
        arg: String,
    },
    /// The key is in no family `apply` knows and not in the catalog.
    #[error("unknown setting {key:?}; {known}")]
    UnknownKey {
        /// The key as typed.
        key: String,
        /// The key families accepted ("known: …"), or the catalog's nearest keys ("did you
        /// mean …?").
        known: String,
    },
    /// The value does not parse for the key.
    #[error("setting {key}: {source}")]
    BadValue {
        /// The key as typed.
        key: String,
        /// Why the value was refused.
        source: ValueError,
    },
    /// The `@N` suffix is not a number, is missing where required (`irq.affinity`) or is
    /// given to a device-wide key.
    #[error("setting {key}: {why}")]
    BadInstance {
        /// The key as typed, with its suffix.
        key: String,
        /// What is wrong and what is allowed.
        why: String,
    },
    /// The catalog refused the key or value (its message, key included).
    #[error("{0}")]
    Catalog(String),
    /// A catalog entry `apply` cannot change at run time on Linux: a FreeBSD setting, an
    /// NFS mount option, a route attribute, or a value form it cannot write.
    #[error("setting {key} {why}")]
    NotAppliable {
        /// The catalog key.
        key: String,
        /// Why, and what to use instead (an `export` format, an `explain` page).
        why: String,
    },
    /// The profile is not valid TOML, has unknown top-level fields or a value of the wrong
    /// type.
    #[error("profile: {0}")]
    Profile(String),
    /// The same setting (key and instance) appears twice in one request.
    #[error("setting {key} is given twice")]
    Duplicate {
        /// The key, as `Key` displays it (without the `@N` suffix).
        key: String,
    },
    /// The profile's `iface` or `netns` is not a valid name.
    #[error("profile: {0}")]
    Name(names::NameError),
}

impl From<names::NameError> for DesiredError {
    fn from(e: names::NameError) -> Self {
        DesiredError::Name(e)
    }
}

/// The key families accepted, for error messages.
const KNOWN: &str = "known: channel.{rx,tx,other,combined}, ring.{rx,rx-mini,rx-jumbo,tx}, \
feature.<ethtool feature>, coalesce.<ethtool parameter>, \
sysfs.{napi_defer_hard_irqs,gro_flush_timeout,threaded}, \
napi.{defer-hard-irqs,gro-flush-timeout,irq-suspend-timeout,threaded}[@index], \
sysctl.net.<name> (only net.* sysctls: they are per network namespace), irq.affinity@<irq>, rps.cpus[@queue], rps.flow-cnt[@queue], xps.cpus[@queue], \
<driver>.<module parameter> (e1000.InterruptThrottleRate: reloads the driver)";

/// The value that unsets a module parameter (`e1000.TxIntDelay=default`): the driver is
/// reloaded without it, so it runs with its own default.
pub const MODULE_DEFAULT: &str = "default";

/// Parses one `KEY=VALUE` argument.
pub fn parse_assignment(arg: &str) -> Result<Desired, DesiredError> {
    let (key, value) = arg
        .split_once('=')
        .ok_or_else(|| DesiredError::NotAssignment {
            arg: arg.to_string(),
        })?;
    parse_pair(key.trim(), value)
}

/// Parses a key and its value text. Names resolve through the catalog (aliases such as
/// `gro` or `rx-usecs` work) and values are checked against its ranges.
pub fn parse_pair(key_text: &str, value_text: &str) -> Result<Desired, DesiredError> {
    let value = value_text;
    let (name, instance) = split_instance(key_text)?;
    let (canonical, entry) = crate::catalog::resolve(name)?;
    if let Some(entry) = entry {
        crate::catalog::check_appliable(entry)?;
    }
    let key = parse_key(&canonical).map_err(|e| with_suggestions(e, name))?;
    let instance = check_instance(&key, instance, key_text)?;
    if matches!(key, Key::ModuleParam { .. }) && value.trim() == MODULE_DEFAULT {
        // Not given at the next load: the driver's own default.
        return Ok(Desired {
            key,
            instance,
            value: HostValue::Text(String::new()),
            warnings: Vec::new(),
            raw: value_text.to_string(),
        });
    }
    let (value, warnings) = match entry {
        Some(entry) => crate::catalog::parse(entry, &key, value)?,
        None => {
            let v =
                parse_value(key.value_kind(), value).map_err(|source| DesiredError::BadValue {
                    key: key_text.to_string(),
                    source,
                })?;
            (v, Vec::new())
        }
    };
    Ok(Desired {
        key,
        instance,
        value,
        warnings,
        raw: value_text.to_string(),
    })
}

/// An unknown key names the catalog's nearest keys when there are any.
fn with_suggestions(e: DesiredError, name: &str) -> DesiredError {
    let near = crate::catalog::suggest(name);
    match e {
        DesiredError::UnknownKey { key, .. } if !near.is_empty() => DesiredError::UnknownKey {
            key,
            known: format!("did you mean {}?", near.join(", ")),
        },
        other => other,
    }
}

/// Reads `KEY@N` as [`parse_pair`] does — a key apply knows, an index where the setting has
/// instances, none where it is device-wide — and returns the name without `@N`.
pub fn check_key_text(key_text: &str) -> Result<&str, DesiredError> {
    let (name, instance) = split_instance(key_text)?;
    let (canonical, _) = crate::catalog::resolve(name)?;
    let key = parse_key(&canonical).map_err(|e| with_suggestions(e, name))?;
    check_instance(&key, instance, key_text)?;
    Ok(name)
}

/// `KEY@N` split: the name and `N`, read as a number of any size so that a number too
/// large for its kind of index is told apart from text that is none.
fn split_instance(text: &str) -> Result<(&str, Option<Index<'_>>), DesiredError> {
    let Some((name, n)) = text.split_once('@') else {
        return Ok((text, None));
    };
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return Err(DesiredError::BadInstance {
            key: text.to_string(),
            why: format!("{n:?} after @ is not an index; allowed: a number such as @0"),
        });
    }
    // All digits: only too many of them fail to parse, and then any limit is exceeded.
    Ok((name, Some(Index(n, n.parse().unwrap_or(u64::MAX)))))
}

/// The `N` of `KEY@N` as typed and its value.
#[derive(Clone, Copy)]
struct Index<'a>(&'a str, u64);

/// Largest IRQ number (`unsigned int` in the kernel).
const MAX_IRQ: u64 = u32::MAX as u64;

/// The index a key takes: a queue or NAPI index below [`input::MAX_QUEUES`] for per-queue
/// and per-NAPI keys, an IRQ number for `irq.affinity`, none for a device-wide key.
fn check_instance(
    key: &Key,
    instance: Option<Index>,
    text: &str,
) -> Result<Option<u32>, DesiredError> {
    let per_instance = matches!(key, Key::Napi(_) | Key::Steering(_) | Key::IrqAffinity);
    let why = match (per_instance, instance, key) {
        (_, None, Key::IrqAffinity) => "needs an IRQ number, e.g. irq.affinity@45=0-3".to_string(),
        (false, Some(_), _) => {
            "is set device-wide or namespace-wide; drop the @ suffix".to_string()
        }
        (_, None, _) => return Ok(None),
        (_, Some(Index(typed, n)), Key::IrqAffinity) if n > MAX_IRQ => format!(
            "IRQ number {typed} is too large; allowed: 0–{MAX_IRQ}, as /proc/interrupts lists them"
        ),
        (_, Some(Index(typed, n)), _) if n >= input::MAX_QUEUES && *key != Key::IrqAffinity => {
            let what = match key {
                Key::Napi(_) => "NAPI index",
                _ => "queue index",
            };
            format!(
                "{what} {typed} is too large; allowed: 0–{} (queue numbers are below {})",
                input::MAX_QUEUES - 1,
                input::MAX_QUEUES
            )
        }
        // Within u32: checked against MAX_IRQ or MAX_QUEUES above.
        (_, Some(Index(_, n)), _) => return Ok(Some(n as u32)),
    };
    Err(DesiredError::BadInstance {
        key: text.to_string(),
        why,
    })
}

/// Parses a canonical key name (without `@N`).
pub fn parse_key(name: &str) -> Result<Key, DesiredError> {
    let unknown = || DesiredError::UnknownKey {
        key: name.to_string(),
        known: KNOWN.to_string(),
    };
    let (family, rest) = name.split_once('.').ok_or_else(unknown)?;
    let key = match family {
        // `channels.*`: the spelling before the families were all singular (issue #13).
        "channel" | "channels" => Key::Channels(channel(rest).ok_or_else(unknown)?),
        "ring" => Key::Ring(ring(rest).ok_or_else(unknown)?),
        "feature" if is_name(rest) => Key::Feature(kernel_feature(rest).to_string()),
        // Coalescing parameters are exactly the catalog's (the netlink attribute list).
        "coalesce" if nictune_core::catalog::catalog().get(name).is_some() => {
            Key::Coalesce(rest.to_string())
        }
        "sysfs" => Key::SysfsNapi(sysfs_napi(rest).ok_or_else(unknown)?),
        "napi" => Key::Napi(napi(rest).ok_or_else(unknown)?),
        "sysctl" if nictune_core::names::is_net_sysctl(rest) => Key::Sysctl(rest.to_string()),
        "irq" if rest == "affinity" => Key::IrqAffinity,
        "rps" | "xps" => Key::Steering(steering(name).ok_or_else(unknown)?),
        _ if crate::catalog::is_module_param(name) => Key::ModuleParam {
            module: family.to_string(),
            param: rest.to_string(),
        },
        _ => return Err(unknown()),
    };
    Ok(key)
}

fn channel(s: &str) -> Option<Channel> {
    Some(match s {
        "rx" => Channel::Rx,
        "tx" => Channel::Tx,
        "other" => Channel::Other,
        "combined" => Channel::Combined,
        _ => return None,
    })
}

fn ring(s: &str) -> Option<Ring> {
    Some(match s {
        "rx" => Ring::Rx,
        "rx-mini" => Ring::RxMini,
        "rx-jumbo" => Ring::RxJumbo,
        "tx" => Ring::Tx,
        _ => return None,
    })
}

fn sysfs_napi(s: &str) -> Option<SysfsNapi> {
    Some(match s {
        "napi_defer_hard_irqs" => SysfsNapi::NapiDeferHardIrqs,
        "gro_flush_timeout" => SysfsNapi::GroFlushTimeout,
        "threaded" => SysfsNapi::Threaded,
        _ => return None,
    })
}

fn napi(s: &str) -> Option<Napi> {
    Some(match s {
        "defer-hard-irqs" => Napi::DeferHardIrqs,
        "gro-flush-timeout" => Napi::GroFlushTimeout,
        "irq-suspend-timeout" => Napi::IrqSuspendTimeout,
        "threaded" => Napi::Threaded,
        _ => return None,
    })
}

fn steering(s: &str) -> Option<Steering> {
    Some(match s {
        "rps.cpus" => Steering::RpsCpus,
        "rps.flow-cnt" => Steering::RpsFlowCnt,
        "xps.cpus" => Steering::XpsCpus,
        _ => return None,
    })
}

/// Feature names as the kernel spells them: lower case, digits, dashes.
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Parses a TOML profile: a `[settings]` table of keys to values (strings or numbers), and
/// optionally `iface` and `netns` strings.
///
/// ```toml
/// iface = "eth1"
/// [settings]
/// "napi.gro-flush-timeout" = 20000
/// "coalesce.rx-usecs" = 50
/// "rps.cpus@0" = "3"
/// ```
pub fn parse_profile(text: &str) -> Result<Profile, DesiredError> {
    let (iface, netns, table) = profile_parts(text)?;
    let settings = table
        .iter()
        .map(|(key, value)| parse_pair(key, &toml_text(key, value)?))
        .collect::<Result<_, _>>()?;
    Ok(Profile {
        iface,
        netns,
        settings,
    })
}

/// A profile value as the text a user would type after `=`.
pub(crate) fn toml_text(key: &str, value: &toml::Value) -> Result<String, DesiredError> {
    match value {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(n) => Ok(n.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => Err(DesiredError::Profile(format!(
            "{key}: {other} is not a string, integer or boolean"
        ))),
    }
}

/// A profile's interface, namespace and raw settings table.
pub fn profile_parts(
    text: &str,
) -> Result<(Option<String>, Option<String>, toml::Table), DesiredError> {
    let raw: RawProfile = toml::from_str(text).map_err(|e| DesiredError::Profile(e.to_string()))?;
    if let Some(iface) = &raw.iface {
        names::check_iface(iface)?;
    }
    if let Some(netns) = &raw.netns {
        names::check_netns(netns)?;
    }
    Ok((raw.iface, raw.netns, raw.settings))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    iface: Option<String>,
    netns: Option<String>,
    #[serde(default)]
    settings: toml::Table,
}

/// A parsed profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Profile {
    /// The interface the profile is for; `None` when it names none (then `--iface` must).
    pub iface: Option<String>,
    /// The network namespace to apply in; `None` for the initial one.
    pub netns: Option<String>,
    /// The `[settings]` table, parsed and checked.
    pub settings: Vec<Desired>,
}

/// Parses every `KEY=VALUE` argument of one request and checks the
/// catalog's caveats against the request as a whole (a caveat another setting answers, such as
/// defer-hard-irqs without gro-flush-timeout when both are given, is dropped).
pub fn parse_request(args: &[String]) -> Result<Vec<Desired>, DesiredError> {
    let mut settings: Vec<Desired> = args
        .iter()
        .map(|a| parse_assignment(a))
        .collect::<Result<_, _>>()?;
    crate::catalog::recheck_together(&mut settings);
    Ok(settings)
}

/// Refuses the same key (and instance) twice: which one wins would be a guess.
pub fn check_unique(settings: &[Desired]) -> Result<(), DesiredError> {
    let mut seen = std::collections::BTreeSet::new();
    for d in settings {
        if !seen.insert((&d.key, d.instance)) {
            return Err(DesiredError::Duplicate {
                key: d.key.to_string(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_parse_into_typed_values() {
        let d = parse_assignment("napi.gro-flush-timeout=20000").unwrap();
        assert_eq!(d.key, Key::Napi(Napi::GroFlushTimeout));
        assert_eq!((d.instance, d.value), (None, HostValue::Int(20000)));
        let d = parse_assignment("rps.cpus@1=0x3").unwrap();
        assert_eq!(
            (d.key.to_string(), d.instance),
            ("rps.cpus".to_string(), Some(1))
        );
        assert_eq!(d.value.to_string(), "cpus 0-1");
        let d = parse_assignment("feature.gro=off").unwrap();
        assert_eq!(
            (d.key.clone(), d.value),
            (Key::Feature("rx-gro".into()), HostValue::Bool(false))
        );
    }

    #[test]
    fn every_key_family_round_trips_through_its_display_name() {
        for name in [
            "channel.combined",
            "ring.rx-jumbo",
            "feature.gro",
            "feature.rx-gro-hw",
            "coalesce.adaptive-rx",
            "sysfs.napi_defer_hard_irqs",
            "napi.irq-suspend-timeout",
            "sysctl.net.core.somaxconn",
            "irq.affinity",
            "rps.flow-cnt",
            "xps.cpus",
        ] {
            assert_eq!(parse_key(name).unwrap().to_string(), name);
        }
    }

    #[test]
    fn mount_options_routes_and_buffer_triples_are_refused_with_where_they_go() {
        let err = parse_pair("nfs.rsize", "2048").unwrap_err().to_string();
        assert!(
            err.contains("NFS mount option") && err.contains("--format fstab"),
            "{err}"
        );
        let err = parse_pair("window", "4096").unwrap_err().to_string();
        assert!(err.contains("route attribute"), "{err}");
        let err = parse_pair("net.ipv4.tcp_rmem", "4096 87380 6291456")
            .unwrap_err()
            .to_string();
        assert!(err.contains("triple") && err.contains("sysctl.d"), "{err}");
        let err = parse_pair("polling", "on").unwrap_err().to_string();
        assert!(
            err.contains("FreeBSD setting: --format rc.conf") && !err.contains("loader.conf"),
            "{err}"
        );
        let d = parse_pair("net.core.rmem_max", "4194304").unwrap();
        assert_eq!(d.key.to_string(), "sysctl.net.core.rmem_max");
    }

    #[test]
    fn mistakes_are_named() {
        let err = parse_assignment("napi.gro-flush-timeout").unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"napi.gro-flush-timeout\" is not KEY=VALUE"
        );
        let err = parse_assignment("napi.defer-hard-irqs=-1")
            .unwrap_err()
            .to_string();
        let range =
            "setting napi.defer-hard-irqs: -1 is out of range for kernel: allowed 0–2147483647";
        assert_eq!(err, range);
        let err = parse_assignment("coalesce.rx-usec=5")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("unknown setting \"coalesce.rx-usec\"; did you mean coalesce.rx-usecs"),
            "{err}"
        );
        let d = parse_assignment("e1000e.InterruptThrottleRate=3000").unwrap();
        assert_eq!(
            d.key,
            Key::ModuleParam {
                module: "e1000e".into(),
                param: "InterruptThrottleRate".into()
            },
            "a driver module parameter is appliable (by a reload)"
        );
        assert_eq!(d.value, HostValue::Text("3000".into()));
        let unset = parse_assignment("e1000.TxIntDelay=default").unwrap();
        assert_eq!(
            unset.value,
            HostValue::Text(String::new()),
            "the driver's default"
        );
        let per_port = parse_assignment("e1000.TxIntDelay=0, 8").unwrap();
        assert_eq!(per_port.value, HostValue::Text("0,8".into()));
        let err = parse_assignment("e1000.InterruptThrottleRate=50")
            .unwrap_err()
            .to_string();
        assert!(err.contains("100"), "the catalog's range is checked: {err}");
        let d = parse_assignment("gro=off").unwrap();
        assert_eq!(
            d.key,
            Key::Feature("rx-gro".into()),
            "catalog aliases resolve"
        );
        let err = parse_assignment("sysctl.kernel.panic=1")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("unknown setting \"sysctl.kernel.panic\"; known: channel."),
            "{err}"
        );
        assert!(
            err.contains("sysctl.net.<name> (only net.* sysctls"),
            "only net.* sysctls, and the message says so: {err}"
        );
        assert!(parse_assignment("irq.affinity=1").is_err(), "irq needs @N");
        assert!(
            parse_assignment("coalesce.rx-usecs@1=5").is_err(),
            "device-wide key"
        );
    }

    #[test]
    fn profiles_read_settings_and_refuse_unknown_fields() {
        let p = parse_profile(
            "iface = \"v0\"\n[settings]\n\"napi.defer-hard-irqs\" = 2\n\"feature.gro\" = true\n",
        )
        .unwrap();
        assert_eq!(p.iface.as_deref(), Some("v0"));
        assert_eq!(p.settings.len(), 2);
        assert!(parse_profile("ifase = \"v0\"\n").is_err());
    }

    #[test]
    fn key_texts_are_read_as_apply_reads_them() {
        assert_eq!(check_key_text("xps.cpus@0").unwrap(), "xps.cpus");
        assert_eq!(check_key_text("irq.affinity@45").unwrap(), "irq.affinity");
        assert!(
            check_key_text("coalesce.rx-usecs@0").is_err(),
            "device-wide"
        );
        assert!(check_key_text("rps.cpus@x").is_err(), "not an index");
        assert!(check_key_text("irq.affinity").is_err(), "needs an IRQ");
    }

    /// README "Input limits": queue numbers are below 4096, an index too large for its kind
    /// is named as such (not "not a number"), for `check` and `apply` alike.
    #[test]
    fn indexes_past_their_limit_are_refused_naming_it() {
        assert_eq!(check_key_text("rps.cpus@4095").unwrap(), "rps.cpus");
        assert_eq!(
            parse_assignment("napi.defer-hard-irqs@4095=2")
                .unwrap()
                .instance,
            Some(4095)
        );
        let queue =
            "queue index 99999999 is too large; allowed: 0–4095 (queue numbers are below 4096)";
        let cases = [
            ("rps.cpus@99999999", queue.to_string()),
            (
                "xps.cpus@18446744073709551615",
                queue.replace("99999999", "18446744073709551615"),
            ),
            (
                "napi.defer-hard-irqs@4096",
                "NAPI index 4096 is too large; allowed: 0–4095 (queue numbers are below 4096)"
                    .to_string(),
            ),
            (
                "irq.affinity@4294967296",
                "IRQ number 4294967296 is too large; allowed: 0–4294967295, as /proc/interrupts \
                 lists them"
                    .to_string(),
            ),
            (
                "rps.cpus@1e3",
                "\"1e3\" after @ is not an index; allowed: a number such as @0".to_string(),
            ),
        ];
        for (key, why) in cases {
            let err = check_key_text(key).unwrap_err().to_string();
            assert_eq!(err, format!("setting {key}: {why}"));
            let err = parse_assignment(&format!("{key}=1"))
                .unwrap_err()
                .to_string();
            assert_eq!(err, format!("setting {key}: {why}"));
        }
        assert_eq!(
            parse_assignment("irq.affinity@4294967295=1")
                .unwrap()
                .instance,
            Some(u32::MAX)
        );
    }

    #[test]
    fn caveats_answered_by_another_setting_of_the_request_are_dropped() {
        let alone = parse_request(&["napi.defer-hard-irqs=2".into()]).unwrap();
        assert!(
            !alone[0].warnings.is_empty(),
            "defer without a timer is flagged"
        );
        let both = [
            "napi.defer-hard-irqs=2".into(),
            "napi.gro-flush-timeout=20000".into(),
        ];
        let both = parse_request(&both).unwrap();
        assert!(both.iter().all(|d| d.warnings.is_empty()), "{both:?}");
    }

    /// The timer answers the defer caveat only on the same NAPI, or on every NAPI.
    #[test]
    fn caveats_are_answered_only_on_the_same_instance() {
        let apart = [
            "napi.defer-hard-irqs@1=2".into(),
            "napi.gro-flush-timeout@2=20000".into(),
        ];
        let apart = parse_request(&apart).unwrap();
        assert!(!apart[0].warnings.is_empty(), "{apart:?}");
        for timer in [
            "napi.gro-flush-timeout@1=20000",
            "napi.gro-flush-timeout=20000",
        ] {
            let same = parse_request(&["napi.defer-hard-irqs@1=2".into(), timer.into()]).unwrap();
            assert!(
                same.iter().all(|d| d.warnings.is_empty()),
                "{timer}: {same:?}"
            );
        }
        let one = [
            "napi.defer-hard-irqs=2".into(),
            "napi.gro-flush-timeout@1=20000".into(),
        ];
        let one = parse_request(&one).unwrap();
        assert!(
            !one[0].warnings.is_empty(),
            "the other NAPIs have no timer: {one:?}"
        );
    }

    #[test]
    fn duplicates_are_refused() {
        let a = parse_assignment("napi.threaded=1").unwrap();
        let b = parse_assignment("napi.threaded@0=0").unwrap();
        assert!(check_unique(&[a.clone(), b]).is_ok());
        assert!(check_unique(&[a.clone(), a]).is_err());
    }
}
