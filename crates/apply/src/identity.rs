//! The identities a change records of the interfaces and IRQs it touches, and where a
//! rollback or revert writes each journaled setting on the host as it is now
//! (`nictune_host::write::identity` says what identifies each).
//!
//! A journal names interfaces by name and IRQs by number, and within one boot both can come
//! to mean another device before the revert. So before each write of a restore:
//! - an IRQ whose number now carries other action names goes to the one IRQ that carries the
//!   recorded name now (renumbered: a channel change or a driver reload re-requested it); when
//!   none does, or more than one, the value is left out — never written to the line another
//!   device owns;
//! - an interface renamed since goes to its new name: the one interface that is the recorded
//!   device (its permanent and bus addresses, or with neither, its ifindex) under another
//!   name now;
//! - an interface whose name now belongs to another device (re-created, or renamed away and
//!   the name given to another), or is gone, and whose device has no one new name, is left
//!   out: the values the change set went with the device that had them.
//!
//! A journal from before identities were recorded has none: it is restored by name and
//! number, as it always was.

use nictune_host::write::identity::{IfaceId, IrqActions, IrqId, IrqNow};
use nictune_host::write::setting::{Object, Setting};
use nictune_host::write::{HostErrorKind, HostWrite};
use serde::{Deserialize, Serialize};

/// What identified each interface and IRQ of a change when it was made (the `begin`
/// record's `identity`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identities {
    /// Each interface the change's settings (and those it preserves) are on.
    #[serde(default)]
    pub ifaces: Vec<IfaceId>,
    /// Each IRQ the change's settings (and those it preserves) are on.
    #[serde(default)]
    pub irqs: Vec<IrqId>,
}

impl Identities {
    /// Reads the identity of every interface and IRQ `settings` are on. `known` (the change a
    /// new one replaces) wins for the objects it has: it was read when their values were.
    /// An object the host cannot identify is left out, and restored by name as before.
    pub fn record<'a>(
        settings: impl IntoIterator<Item = &'a Setting>,
        host: &mut impl HostWrite,
        known: Option<&Identities>,
    ) -> Identities {
        let mut out = Identities::default();
        let mut actions: Option<Option<IrqActions>> = None;
        for s in settings {
            match &s.target {
                Object::Irq { irq } => {
                    if out.irq(*irq).is_some() {
                        continue;
                    }
                    if let Some(id) = known.and_then(|k| k.irq(*irq)) {
                        out.irqs.push(id.clone());
                        continue;
                    }
                    let all = actions.get_or_insert_with(|| host.irq_actions().ok());
                    if let Some(names) = all.as_ref().and_then(|a| a.get(irq)) {
                        out.irqs.push(IrqId {
                            irq: *irq,
                            actions: names.clone(),
                        });
                    }
                }
                target => {
                    let Some(iface) = target.iface() else {
                        continue;
                    };
                    if out.iface(iface).is_some() {
                        continue;
                    }
                    match known.and_then(|k| k.iface(iface)) {
                        Some(id) => out.ifaces.push(id.clone()),
                        None => out.ifaces.extend(host.iface_id(iface).ok()),
                    }
                }
            }
        }
        out
    }

    /// The record of interface `name`.
    pub fn iface(&self, name: &str) -> Option<&IfaceId> {
        self.ifaces.iter().find(|i| i.iface == name)
    }

    /// The record of IRQ `irq`.
    pub fn irq(&self, irq: u32) -> Option<&IrqId> {
        self.irqs.iter().find(|i| i.irq == irq)
    }
}

/// Where a restore writes one journaled setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Where the journal says.
    Here,
    /// On another IRQ: the one that carries the recorded action name now.
    Moved(Renumbered),
    /// On the interface's new name: the recorded device, renamed since.
    Renamed(Renamed),
    /// Nowhere: the object is gone or another device's; why.
    LeftOut(String),
}

/// An IRQ's value written to the line that carries its recorded name now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Renumbered {
    /// The IRQ it was written to.
    pub irq: u32,
    /// The recorded action name that IRQ carries.
    pub name: String,
}

/// An interface's value written under the name its device has now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Renamed {
    /// The name the journal has.
    pub from: String,
    /// The name the device has now.
    pub to: String,
}

impl Place {
    /// The setting to write: `s` itself, or on the IRQ it moved to; `None` when left out.
    pub fn setting(&self, s: &Setting) -> Option<Setting> {
        match self {
            Place::Here => Some(s.clone()),
            Place::Moved(r) => Some(Setting::new(Object::Irq { irq: r.irq }, s.key.clone())),
            Place::Renamed(r) => Some(Setting::new(s.target.on_iface(&r.to), s.key.clone())),
            Place::LeftOut(_) => None,
        }
    }
}

/// Where `s` goes on the host as it is now, against the identities `ids` recorded (none: an
/// older journal, written by name and number as before). Asked right before each write, as
/// a restore of a channel count or a module reload earlier in the same restore renumbers
/// IRQs.
pub fn locate(ids: Option<&Identities>, s: &Setting, host: &mut impl HostWrite) -> Place {
    let Some(ids) = ids else {
        return Place::Here;
    };
    match &s.target {
        Object::Irq { irq } => {
            let Some(then) = ids.irq(*irq) else {
                return Place::Here;
            };
            // Unreadable now: write by number, as without a record.
            let Ok(now) = host.irq_actions() else {
                return Place::Here;
            };
            match then.locate(&now) {
                IrqNow::Same => Place::Here,
                IrqNow::Moved { irq, name } => Place::Moved(Renumbered { irq, name }),
                IrqNow::Gone(why) => Place::LeftOut(why),
            }
        }
        target => {
            let Some(then) = target.iface().and_then(|i| ids.iface(i)) else {
                return Place::Here;
            };
            let why = match host.iface_id(&then.iface) {
                Ok(now) => match then.differs(&now) {
                    None => return Place::Here,
                    Some(how) => format!("{} is now another device ({how})", then.iface),
                },
                Err(e) if matches!(e.kind, HostErrorKind::NotFound(_)) => {
                    format!("interface {} is gone", then.iface)
                }
                Err(_) => return Place::Here,
            };
            renamed(then, host, &why)
        }
    }
}

/// The name the device recorded as `iface` has now, where it was renamed: the one interface
/// under another name that is that device. `None` when no identity was recorded for it, or
/// no interface or several are that device.
pub fn new_name(
    ids: Option<&Identities>,
    iface: &str,
    host: &mut impl HostWrite,
) -> Option<String> {
    let then = ids?.iface(iface)?;
    match &same_device_elsewhere(then, host)[..] {
        [now] => Some(now.iface.clone()),
        _ => None,
    }
}

/// Every interface under a name other than the recorded one that is the recorded device.
fn same_device_elsewhere(then: &IfaceId, host: &mut impl HostWrite) -> Vec<IfaceId> {
    match host.iface_ids() {
        Ok(all) => all
            .into_iter()
            .filter(|now| now.iface != then.iface && then.same_device(now))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The recorded interface `then`, whose name no longer leads to it (`why`): on its new name
/// when exactly one interface is that device now, else left out.
fn renamed(then: &IfaceId, host: &mut impl HostWrite, why: &str) -> Place {
    let found = same_device_elsewhere(then, host);
    match &found[..] {
        [now] => Place::Renamed(Renamed {
            from: then.iface.clone(),
            to: now.iface.clone(),
        }),
        [] => Place::LeftOut(format!(
            "{why}, and no interface is the device it was: what this change set went with \
             the device it set it on"
        )),
        several => Place::LeftOut(format!(
            "{why}, and {} interfaces ({}) match the device it was: none is written",
            several.len(),
            several
                .iter()
                .map(|i| i.iface.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}
