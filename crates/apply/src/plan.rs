//! A plan: the requested settings resolved against the host's current values into the list of
//! changes that actually differ, in apply order, validated before anything is written.
//!
//! Resolving reads the host (current values, driver maxima, how many NAPIs and queues) but
//! never writes; the plan itself is data, printed by `--dry-run` and journaled by `apply`.

use crate::checks::{check_combinations, Note};
use crate::desired::Desired;
use nictune_host::write::setting::{Key, Napi, Object, Setting, Steering, SysfsNapi};
use nictune_host::write::value::HostValue;
use nictune_host::write::{HostError, HostErrorKind, HostWrite};
use serde::{Deserialize, Serialize};

/// One write: a setting from its current value to the requested one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// What is written: key and object (device, NAPI, queue, IRQ, namespace).
    pub setting: Setting,
    /// The value read from the host when the plan was made; undo writes it back.
    pub old: HostValue,
    /// The requested value.
    pub new: HostValue,
}

/// A setting captured before the apply so that undo can put it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preserved {
    /// The setting a change may disturb (an RPS/XPS mask of a recreated queue).
    pub setting: Setting,
    /// Its value when the plan was made.
    pub value: HostValue,
}

/// The changes to make, in apply order, and what the plan noticed on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// The writes that differ from the current values, in apply order; empty for a no-op.
    pub changes: Vec<Change>,
    /// Settings already at the requested value.
    pub unchanged: Vec<Setting>,
    /// Settings the changes may disturb as a side effect (a channel change drops the RPS/XPS
    /// masks of the recreated queues), with their values now; rollback and revert restore them.
    pub preserve: Vec<Preserved>,
    /// Caveats for the user: combinations of settings (`checks`) and the catalog's warnings
    /// for each requested value.
    pub notes: Vec<Note>,
    /// Identities already recorded for objects of this plan: those of the change a
    /// [`rebase`]d plan replaces, read when their old values were. The apply records the rest
    /// ([`crate::identity::Identities::record`]).
    #[serde(skip)]
    pub known: Option<crate::identity::Identities>,
}

impl Plan {
    /// Nothing to write: every setting is already at its requested value.
    pub fn is_noop(&self) -> bool {
        self.changes.is_empty()
    }
}

/// The valid `@N` for `count` instances, as a person reads it: "index 0", "indexes 0–3".
fn index_range(count: u32) -> String {
    match count {
        0 => "none".to_string(),
        1 => "index 0".to_string(),
        n => format!("indexes 0–{}", n - 1),
    }
}

/// Why a request cannot become a plan. Nothing has been written when this is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A per-interface key was requested without `--iface` (or a profile `iface`).
    #[error("setting {key} needs an interface (--iface, or `iface` in the profile)")]
    NeedsIface {
        /// The key, as `Key` displays it.
        key: String,
    },
    /// A per-NAPI or per-queue key without `@N` on an interface that has none of them.
    #[error("{iface} has no {what}, so {key} has nothing to set")]
    NoInstances {
        /// The interface.
        iface: String,
        /// "NAPI instances", "receive queues" or "transmit queues".
        what: &'static str,
        /// The key.
        key: String,
    },
    /// `@N` is past the interface's last NAPI instance or queue.
    #[error("{key}@{index}: {iface} has {count} {what} ({})", index_range(*.count))]
    NoSuchInstance {
        /// The key, without the suffix.
        key: String,
        /// The index asked for.
        index: u32,
        /// The interface.
        iface: String,
        /// How many the interface has, read from the host.
        count: u32,
        /// "NAPI instances", "receive queues" or "transmit queues".
        what: &'static str,
    },
    /// An integer value above the maximum the host reports for the setting (`HostWrite::limit`,
    /// e.g. the driver's ring size maximum).
    #[error("{setting}: {value} is above the driver's maximum {max}")]
    AboveLimit {
        /// The setting, as displayed.
        setting: String,
        /// The requested value.
        value: u64,
        /// The host's maximum.
        max: u64,
    },
    /// A channel change and a per-queue or per-NAPI change on the same interface in one
    /// plan (or an `irq.affinity@N` of one of its IRQs): the channel change would renumber or
    /// remove what the other addresses.
    #[error("{iface}: a channel change recreates queues, NAPI instances and IRQ vectors, so {key} cannot be planned in the same change")]
    ChannelsWithPerQueue {
        /// The interface.
        iface: String,
        /// The per-queue or per-NAPI key.
        key: String,
    },
    /// Reading the host failed (current value, limit, instance counts).
    #[error(transparent)]
    Host(#[from] HostError),
    /// The interface name is not valid.
    #[error(transparent)]
    Name(#[from] nictune_core::names::NameError),
}

/// Resolves `desired` on `iface` against the host's current state.
pub fn resolve(
    desired: &[Desired],
    iface: Option<&str>,
    host: &mut impl HostWrite,
) -> Result<Plan, PlanError> {
    if let Some(name) = iface {
        nictune_core::names::check_iface(name)?;
    }
    let mut plan = Plan::default();
    let mut notes = Vec::new();
    for d in desired {
        let settings = read_each(d, targets(d, iface, host)?, host)?;
        if let (
            Key::Napi(_),
            Some(Setting {
                key: wide @ Key::SysfsNapi(_),
                ..
            }),
        ) = (&d.key, settings.first().map(|(s, _)| s))
        {
            notes.push(Note {
                settings: vec![d.key.to_string()],
                message: format!(
                    "{}: this kernel has no per-NAPI settings (netdev netlink, Linux ≥ 6.13), so \
                     the device-wide {wide} is set, which every NAPI instance of the device uses",
                    d.key
                ),
            });
        }
        for (setting, old) in settings {
            check_limit(&setting, &d.value, host)?;
            if old == d.value {
                plan.unchanged.push(setting);
            } else {
                plan.changes.push(Change {
                    setting,
                    old,
                    new: d.value.clone(),
                });
            }
        }
    }
    plan.changes
        .sort_by(|a, b| order(&a.setting).cmp(&order(&b.setting)));
    refuse_stale_instances(&plan.changes)?;
    refuse_irqs_of_recreated(&plan.changes, host)?;
    plan.notes = check_combinations(desired);
    plan.notes.append(&mut notes);
    plan.notes.extend(desired.iter().flat_map(|d| {
        d.warnings.iter().map(|w| Note {
            settings: vec![d.key.to_string()],
            message: w.clone(),
        })
    }));
    plan.preserve = collateral(&plan.changes, host)?;
    Ok(plan)
}

/// Per-NAPI and per-queue changes are resolved against today's queues; a channel change on
/// the same interface would renumber or remove them before they are written.
fn refuse_stale_instances(changes: &[Change]) -> Result<(), PlanError> {
    for c in changes {
        let (Key::Channels(_), Object::Device { iface }) = (&c.setting.key, &c.setting.target)
        else {
            continue;
        };
        let stale = changes.iter().find(|o| match &o.setting.target {
            Object::Napi { iface: i, .. }
            | Object::RxQueue { iface: i, .. }
            | Object::TxQueue { iface: i, .. } => i == iface,
            _ => false,
        });
        if let Some(o) = stale {
            return Err(PlanError::ChannelsWithPerQueue {
                iface: iface.clone(),
                key: o.setting.key.to_string(),
            });
        }
    }
    Ok(())
}

/// The steering masks of every queue of each interface whose channel count changes, and
/// the affinity of each of its IRQs that has a handler (named: the journal records the name,
/// and a restore finds the line by it when the channel change re-requested it under another
/// number), including those the plan changes itself (a rollback that stops at the channel
/// step must still put back what the channel change reset).
fn collateral(changes: &[Change], host: &mut impl HostWrite) -> Result<Vec<Preserved>, PlanError> {
    let mut out = Vec::new();
    for iface in channel_ifaces(changes) {
        let mut settings = queue_settings(iface, host)?;
        settings.extend(named_irqs(iface, host).into_iter().map(affinity));
        for setting in settings {
            if let Ok(value) = host.read(&setting) {
                out.push(Preserved { setting, value });
            }
        }
    }
    Ok(out)
}

/// The interfaces whose channel counts `changes` change.
fn channel_ifaces(changes: &[Change]) -> Vec<&str> {
    let mut ifaces: Vec<&str> = changes
        .iter()
        .filter_map(|c| match (&c.setting.key, &c.setting.target) {
            (Key::Channels(_), Object::Device { iface }) => Some(iface.as_str()),
            _ => None,
        })
        .collect();
    ifaces.dedup();
    ifaces
}

/// The IRQs of `iface`'s device that have a handler now; none where the host cannot say.
fn named_irqs(iface: &str, host: &mut impl HostWrite) -> Vec<u32> {
    let Ok(irqs) = host.irqs_of(iface) else {
        return Vec::new();
    };
    let actions = host.irq_actions().unwrap_or_default();
    irqs.into_iter()
        .filter(|irq| actions.get(irq).is_some_and(|a| !a.is_empty()))
        .collect()
}

fn affinity(irq: u32) -> Setting {
    Setting::new(Object::Irq { irq }, Key::IrqAffinity)
}

/// An `irq.affinity@N` of an IRQ of an interface whose channel count the same plan changes:
/// the channel change re-requests the interface's vectors (their numbers can change, and
/// another device can get this one) before the affinity would be written.
fn refuse_irqs_of_recreated(
    changes: &[Change],
    host: &mut impl HostWrite,
) -> Result<(), PlanError> {
    for iface in channel_ifaces(changes) {
        let irqs = host.irqs_of(iface).unwrap_or_default();
        let stale = changes
            .iter()
            .find(|c| matches!(c.setting.target, Object::Irq { irq } if irqs.contains(&irq)));
        if let Some(c) = stale {
            let Object::Irq { irq } = c.setting.target else {
                continue;
            };
            return Err(PlanError::ChannelsWithPerQueue {
                iface: iface.to_string(),
                key: format!("{}@{irq}", c.setting.key),
            });
        }
    }
    Ok(())
}

fn queue_settings(iface: &str, host: &mut impl HostWrite) -> Result<Vec<Setting>, PlanError> {
    let (rx, tx) = host.queue_counts(iface)?;
    let i = || iface.to_string();
    let rx_keys = [Steering::RpsCpus, Steering::RpsFlowCnt];
    let rx_settings = (0..rx).flat_map(|queue| {
        rx_keys.map(|k| Setting::new(Object::RxQueue { iface: i(), queue }, Key::Steering(k)))
    });
    let tx_settings = (0..tx).map(|queue| {
        Setting::new(
            Object::TxQueue { iface: i(), queue },
            Key::Steering(Steering::XpsCpus),
        )
    });
    Ok(rx_settings.chain(tx_settings).collect())
}

/// `plan` (resolved against the host as it is now, with the change `open` in place) made to
/// replace `open` in one transaction, without putting `open`'s values back first: every
/// setting `open` may have changed keeps its value from before `open` as the one to restore,
/// so undoing the result restores the host as it was before both.
///
/// The settings `open` may have changed are its started steps and the settings it preserved
/// (a replacement before it carried its predecessors' this way; a channel change, the steering
/// masks it disturbs), each with its value from before `open`. Then:
/// - a change of such a setting gets that value as its old one;
/// - such a setting `plan` leaves as it is (its request already in place) is preserved with
///   that value: a revert checks it and writes it back, nothing writes it now;
/// - such a setting `plan` does not name is written back to that value, in stage order with
///   the rest;
/// - a setting `plan` preserves keeps that value where there is one.
pub fn rebase(plan: &Plan, open: &crate::journal::Summary) -> Plan {
    let mut before: Vec<Preserved> = Vec::new();
    let started = open
        .steps_to_restore()
        .into_iter()
        .map(|i| &open.changes[i]);
    let started = started.map(|c| Preserved {
        setting: c.setting.clone(),
        value: c.old.clone(),
    });
    for p in started.chain(open.preserve.iter().cloned()) {
        if !before.iter().any(|b| b.setting == p.setting) {
            before.push(p);
        }
    }
    let was = |s: &Setting| before.iter().find(|b| &b.setting == s).map(|b| &b.value);
    let mut out = plan.clone();
    for c in &mut out.changes {
        if let Some(v) = was(&c.setting) {
            c.old = v.clone();
        }
    }
    let mut preserve: Vec<Preserved> = Vec::new();
    for b in &before {
        if out.changes.iter().any(|c| c.setting == b.setting) {
            continue;
        }
        if plan.unchanged.contains(&b.setting) {
            preserve.push(b.clone());
        } else {
            out.changes.push(Change {
                setting: b.setting.clone(),
                old: b.value.clone(),
                new: b.value.clone(),
            });
        }
    }
    for p in &plan.preserve {
        let taken = |s: &Setting| {
            out.changes.iter().any(|c| &c.setting == s) || preserve.iter().any(|q| &q.setting == s)
        };
        if !taken(&p.setting) {
            preserve.push(Preserved {
                setting: p.setting.clone(),
                value: was(&p.setting).unwrap_or(&p.value).clone(),
            });
        }
    }
    out.preserve = preserve;
    out.known = open.identity.clone();
    out.changes
        .sort_by(|a, b| order(&a.setting).cmp(&order(&b.setting)));
    out
}

fn order(s: &Setting) -> (nictune_host::write::setting::Stage, &Object, &Key) {
    (s.key.stage(), &s.target, &s.key)
}

/// The objects one request expands to.
fn targets(
    d: &Desired,
    iface: Option<&str>,
    host: &mut impl HostWrite,
) -> Result<Vec<Setting>, PlanError> {
    let key = d.key.clone();
    let one = |target| Ok(vec![Setting::new(target, key.clone())]);
    match (&d.key, d.instance) {
        (Key::Sysctl(_), _) => return one(Object::Netns),
        (Key::ModuleParam { module, .. }, _) => {
            return one(Object::Module {
                module: module.clone(),
            })
        }
        (Key::IrqAffinity, Some(irq)) => return one(Object::Irq { irq }),
        _ => {}
    }
    let iface = iface
        .ok_or_else(|| PlanError::NeedsIface {
            key: d.key.to_string(),
        })?
        .to_string();
    let (count, what) = match &d.key {
        Key::Napi(k) => match host.napi_count(&iface) {
            Ok(count) => (count, "NAPI instances"),
            Err(e) => return device_wide_napi(*k, d.instance, iface, e),
        },
        Key::Steering(Steering::XpsCpus) => (host.queue_counts(&iface)?.1, "transmit queues"),
        Key::Steering(_) => (host.queue_counts(&iface)?.0, "receive queues"),
        _ => return one(Object::Device { iface }),
    };
    let indexes = instances(d, &iface, count, what)?;
    Ok(indexes
        .into_iter()
        .map(|i| Setting::new(instance_target(&d.key, &iface, i), key.clone()))
        .collect())
}

/// Each setting with its current value. Per-NAPI instances the kernel lists (napi-get, 6.9)
/// but without this setting (6.13) read as unsupported: the request for all of them then
/// goes to the device-wide file ([`device_wide_napi`]).
fn read_each(
    d: &Desired,
    settings: Vec<Setting>,
    host: &mut impl HostWrite,
) -> Result<Vec<(Setting, HostValue)>, PlanError> {
    let mut out = Vec::with_capacity(settings.len());
    for setting in settings {
        match (host.read(&setting), &d.key, &setting.target, d.instance) {
            (Err(e), Key::Napi(k), Object::Napi { iface, .. }, None)
                if out.is_empty() && matches!(e.kind, HostErrorKind::Unsupported(_)) =>
            {
                let wide = device_wide_napi(*k, None, iface.clone(), e)?;
                return read_each(d, wide, host);
            }
            (value, ..) => out.push((setting, value?)),
        }
    }
    Ok(out)
}

/// A per-NAPI key on a kernel without per-NAPI settings (the netdev netlink family's NAPI
/// operations: `napi-get` from Linux 6.9, the per-NAPI `defer-hard-irqs`,
/// `gro-flush-timeout` and `napi-set` from 6.13, Documentation/netlink/specs/netdev.yaml):
/// every NAPI instance of the device then runs with the device's own sysfs value
/// (`/sys/class/net/IF/napi_defer_hard_irqs`, `gro_flush_timeout`, `threaded`,
/// Documentation/networking/napi.rst), so the request for all of them is that file. One
/// instance alone (`@N`) and keys with no device-wide file (`irq-suspend-timeout`) cannot be
/// set there: the error (`unsupported`, from listing the instances or reading the first)
/// stands.
fn device_wide_napi(
    k: Napi,
    instance: Option<u32>,
    iface: String,
    unsupported: HostError,
) -> Result<Vec<Setting>, PlanError> {
    let sysfs = match k {
        Napi::DeferHardIrqs => SysfsNapi::NapiDeferHardIrqs,
        Napi::GroFlushTimeout => SysfsNapi::GroFlushTimeout,
        Napi::Threaded => SysfsNapi::Threaded,
        Napi::IrqSuspendTimeout => return Err(unsupported.into()),
    };
    if instance.is_some() || !matches!(unsupported.kind, HostErrorKind::Unsupported(_)) {
        return Err(unsupported.into());
    }
    Ok(vec![Setting::new(
        Object::Device { iface },
        Key::SysfsNapi(sysfs),
    )])
}

fn instances(
    d: &Desired,
    iface: &str,
    count: u32,
    what: &'static str,
) -> Result<Vec<u32>, PlanError> {
    let key = d.key.to_string();
    match d.instance {
        Some(index) if index >= count => Err(PlanError::NoSuchInstance {
            key,
            index,
            iface: iface.to_string(),
            count,
            what,
        }),
        Some(index) => Ok(vec![index]),
        None if count == 0 => Err(PlanError::NoInstances {
            iface: iface.to_string(),
            what,
            key,
        }),
        None => Ok((0..count).collect()),
    }
}

fn instance_target(key: &Key, iface: &str, index: u32) -> Object {
    let iface = iface.to_string();
    match key {
        Key::Napi(_) => Object::Napi { iface, index },
        Key::Steering(Steering::XpsCpus) => Object::TxQueue {
            iface,
            queue: index,
        },
        _ => Object::RxQueue {
            iface,
            queue: index,
        },
    }
}

fn check_limit(
    setting: &Setting,
    value: &HostValue,
    host: &mut impl HostWrite,
) -> Result<(), PlanError> {
    let (Some(max), Some(value)) = (host.limit(setting)?, value.as_int()) else {
        return Ok(());
    };
    if value > max {
        return Err(PlanError::AboveLimit {
            setting: setting.to_string(),
            value,
            max,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_ranges_read_as_a_person_would() {
        assert_eq!(index_range(1), "index 0");
        assert_eq!(index_range(4), "indexes 0–3");
        assert_eq!(index_range(0), "none");
    }
    use crate::desired::parse_assignment;
    use crate::fake::FakeWriter;
    use nictune_host::write::setting::{Channel, Napi};

    fn host() -> FakeWriter {
        let dev = || Object::Device { iface: "v0".into() };
        let napi = |index| Object::Napi {
            iface: "v0".into(),
            index,
        };
        let mut h = FakeWriter::default()
            .with(
                Setting::new(dev(), Key::Channels(Channel::Rx)),
                HostValue::Int(2),
            )
            .with(
                Setting::new(napi(0), Key::Napi(Napi::DeferHardIrqs)),
                HostValue::Int(0),
            )
            .with(
                Setting::new(napi(1), Key::Napi(Napi::DeferHardIrqs)),
                HostValue::Int(2),
            );
        h.napis.insert("v0".into(), 2);
        h.limits
            .insert(Setting::new(dev(), Key::Channels(Channel::Rx)), 4);
        h
    }

    fn plan(args: &[&str]) -> Result<Plan, PlanError> {
        let desired: Vec<_> = args.iter().map(|a| parse_assignment(a).unwrap()).collect();
        resolve(&desired, Some("v0"), &mut host())
    }

    #[test]
    fn without_per_napi_netlink_the_devices_sysfs_value_is_the_setting() {
        let wide = Setting::new(
            Object::Device { iface: "v0".into() },
            Key::SysfsNapi(SysfsNapi::NapiDeferHardIrqs),
        );
        let mut h = host().with(wide.clone(), HostValue::Int(0));
        h.no_napi_netlink = true;
        let resolve_on = |args: &[&str], h: &mut FakeWriter| {
            let desired: Vec<_> = args.iter().map(|a| parse_assignment(a).unwrap()).collect();
            resolve(&desired, Some("v0"), h)
        };
        let p = resolve_on(&["napi.defer-hard-irqs=2"], &mut h).unwrap();
        assert_eq!(p.changes.len(), 1);
        assert_eq!(p.changes[0].setting, wide);
        assert_eq!(p.changes[0].new, HostValue::Int(2));
        assert!(
            p.notes
                .iter()
                .any(|n| n.message.contains("no per-NAPI settings")
                    && n.message.contains("sysfs.napi_defer_hard_irqs")),
            "{:?}",
            p.notes
        );
        // Listed instances that do not report the setting (6.9–6.12): the same.
        let mut h69 = host().with(wide.clone(), HostValue::Int(0));
        h69.values
            .retain(|s, _| !matches!(s.target, Object::Napi { .. }));
        let p = resolve_on(&["napi.defer-hard-irqs=2"], &mut h69).unwrap();
        assert_eq!(p.changes[0].setting, wide);
        // One instance alone, or a key with no device-wide file: the listing's error stands.
        for one in [
            "napi.defer-hard-irqs@1=2",
            "napi.irq-suspend-timeout=20000000",
        ] {
            let err = resolve_on(&[one], &mut h).unwrap_err();
            assert!(
                matches!(&err, PlanError::Host(e) if matches!(e.kind, HostErrorKind::Unsupported(_))),
                "{one}: {err}"
            );
        }
    }

    #[test]
    fn only_differences_become_changes() {
        let p = plan(&["napi.defer-hard-irqs=2"]).unwrap();
        let shown: Vec<String> = p.changes.iter().map(|c| c.setting.to_string()).collect();
        assert_eq!(shown, ["v0 napi[0] napi.defer-hard-irqs"]);
        assert_eq!(p.unchanged.len(), 1, "napi[1] already has 2");
        assert_eq!(plan(&["channels.rx=3"]).unwrap().changes.len(), 1);
        assert!(plan(&["channels.rx=2"]).unwrap().is_noop());
    }

    #[test]
    fn channel_changes_do_not_mix_with_per_queue_settings() {
        let err = plan(&["channels.rx=3", "napi.defer-hard-irqs=2"]).unwrap_err();
        assert!(
            matches!(err, PlanError::ChannelsWithPerQueue { .. }),
            "{err}"
        );
        assert!(
            plan(&["channels.rx=2", "napi.defer-hard-irqs=2"]).is_ok(),
            "no channel change"
        );
    }

    #[test]
    fn limits_unsupported_settings_and_instances_are_refused() {
        let err = plan(&["channels.rx=5"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "v0 channel.rx: 5 is above the driver's maximum 4"
        );
        let err = plan(&["coalesce.rx-usecs=5"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "reading v0 coalesce.rx-usecs: not supported here (fake host)"
        );
        let err = plan(&["napi.defer-hard-irqs@2=1"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "napi.defer-hard-irqs@2: v0 has 2 NAPI instances (indexes 0–1)"
        );
        let err = plan(&["rps.cpus=0"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "v0 has no receive queues, so rps.cpus has nothing to set"
        );
    }
}
