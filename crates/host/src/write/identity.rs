//! What a device is, beyond the name or number a journal calls it by.
//!
//! Within one boot an interface name and an IRQ number can come to mean another device: a
//! channel change, a driver reload or a re-probe frees and re-requests a NIC's vectors
//! (their numbers can change, and another device can get an old one); a veth deleted and
//! made again, a VF re-created or a udev rename gives a name to a new device. A change
//! records these identities when it is made, and a revert checks them before it writes.
//!
//! - An IRQ is its action names (`/sys/kernel/irq/N/actions`, the `/proc/irq/N/<name>/`
//!   directories, the last column of `/proc/interrupts`): `eth0-TxRx-0`,
//!   `virtio0-input.0`. A NIC's vector keeps its name when it is freed and requested again
//!   under another number.
//! - An interface is its permanent address (IFLA_PERM_ADDRESS) and bus address (the sysfs
//!   name of its parent device, `0000:03:00.0`, `virtio2`) where it has them: both survive
//!   a driver reload, which changes the ifindex. A virtual device (veth, dummy, bridge) has
//!   neither, and is its ifindex: a new one made under the old name gets another.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What identified one interface when the change was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IfaceId {
    /// The interface name, as the change's settings name it.
    pub iface: String,
    /// The permanent hardware address (`aa:bb:cc:dd:ee:ff`), where the device has one.
    #[serde(default)]
    pub perm_address: Option<String>,
    /// The bus address of the device below the interface (`0000:03:00.0`, `virtio2`),
    /// where it has one.
    #[serde(default)]
    pub bus: Option<String>,
    /// The ifindex; what identifies a device with neither address (a veth).
    #[serde(default)]
    pub ifindex: Option<u32>,
}

impl IfaceId {
    /// Why the device now named `self.iface` (`now`) is not the recorded one; `None` when
    /// it is. A permanent or bus address recorded must be the same now (a driver reload
    /// keeps both and changes the ifindex); with neither recorded, the ifindex must be.
    pub fn differs(&self, now: &IfaceId) -> Option<String> {
        let pairs = [
            ("permanent address", &self.perm_address, &now.perm_address),
            ("bus address", &self.bus, &now.bus),
        ];
        let mut by_address = false;
        for (what, then, now) in pairs {
            let Some(then) = then else { continue };
            by_address = true;
            if now.as_ref() != Some(then) {
                let now = now.as_deref().unwrap_or("none");
                return Some(format!("{what} {then} then, {now} now"));
            }
        }
        match (by_address, self.ifindex, now.ifindex) {
            (false, Some(then), Some(now)) if then != now => {
                Some(format!("ifindex {then} then, {now} now"))
            }
            _ => None,
        }
    }

    /// Whether `now`, under whatever name it has, is the recorded device: every address
    /// recorded is the same, or with none recorded, the ifindex (which a rename keeps). A
    /// record with nothing to tell a device by is no device.
    pub fn same_device(&self, now: &IfaceId) -> bool {
        match (&self.perm_address, &self.bus) {
            (None, None) => self.ifindex.is_some() && self.ifindex == now.ifindex,
            _ => self.differs(now).is_none(),
        }
    }
}

/// What identified one IRQ when the change was made: the names of its actions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IrqId {
    /// The IRQ number the change's settings name.
    pub irq: u32,
    /// Its action names, as the kernel lists them (empty: no handler then).
    #[serde(default)]
    pub actions: Vec<String>,
}

/// Every IRQ of the host with its action names, by number.
pub type IrqActions = BTreeMap<u32, Vec<String>>;

/// Where the value of a recorded IRQ goes now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IrqNow {
    /// The number still carries (one of) the recorded names.
    Same,
    /// The number carries other names, or none; exactly one other IRQ carries a recorded
    /// name: the line was renumbered.
    Moved {
        /// The IRQ that carries the name now.
        irq: u32,
        /// The recorded name it carries.
        name: String,
    },
    /// No IRQ can be taken for it: why (the number is another device's and no line, or
    /// more than one, carries the recorded name).
    Gone(String),
}

/// Whether `name` can be an IRQ action name as the kernel shows one: not empty, at most
/// 128 bytes, no `/`, no control character. Recorded names come from a journal on disk
/// (read as root): one that fails this matches nothing, and none is ever used as a path.
pub fn is_action_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name != "."
        && name != ".."
        && !name.chars().any(|c| c == '/' || c.is_control())
}

impl IrqId {
    /// Where this IRQ's value goes on a host whose IRQs are `now`.
    pub fn locate(&self, now: &IrqActions) -> IrqNow {
        let names: Vec<&str> = self
            .actions
            .iter()
            .map(String::as_str)
            .filter(|n| is_action_name(n))
            .collect();
        let current = now.get(&self.irq).map_or(&[][..], Vec::as_slice);
        let carries = |actions: &[String]| actions.iter().any(|a| names.contains(&a.as_str()));
        if names.is_empty() {
            // Nothing to follow: the line had no handler (or only names that cannot be
            // one). Still handlerless is the same line; a handler now is someone else's.
            return match current.first() {
                None if now.contains_key(&self.irq) => IrqNow::Same,
                None => IrqNow::Gone(format!("irq {} is gone", self.irq)),
                Some(owner) => IrqNow::Gone(format!(
                    "irq {} had no handler when the change was made and now serves {owner}",
                    self.irq
                )),
            };
        }
        if carries(current) {
            return IrqNow::Same;
        }
        let holders: Vec<(u32, &str)> = now
            .iter()
            .filter_map(|(irq, actions)| {
                let name = actions.iter().find(|a| names.contains(&a.as_str()))?;
                Some((*irq, name.as_str()))
            })
            .collect();
        let was = names.join(", ");
        let owner = match current.first() {
            Some(o) => format!("now serves {o}"),
            None if now.contains_key(&self.irq) => "has no handler now".to_string(),
            None => "is gone".to_string(),
        };
        match holders[..] {
            [(irq, name)] => IrqNow::Moved {
                irq,
                name: name.to_string(),
            },
            [] => IrqNow::Gone(format!(
                "irq {} ({was} then) {owner}, and no IRQ carries {was} now",
                self.irq
            )),
            _ => IrqNow::Gone(format!(
                "irq {} ({was} then) {owner}, and {} IRQs carry {was} now",
                self.irq,
                holders.len()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actions(pairs: &[(u32, &[&str])]) -> IrqActions {
        pairs
            .iter()
            .map(|(n, a)| (*n, a.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    fn id(irq: u32, names: &[&str]) -> IrqId {
        IrqId {
            irq,
            actions: names.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn an_irq_is_followed_by_its_name_and_never_written_where_another_owner_is() {
        let now = actions(&[(45, &["nvme0q1"]), (51, &["eth1-TxRx-0"]), (52, &[])]);
        assert_eq!(id(51, &["eth1-TxRx-0"]).locate(&now), IrqNow::Same);
        assert_eq!(
            id(45, &["eth1-TxRx-0"]).locate(&now),
            IrqNow::Moved {
                irq: 51,
                name: "eth1-TxRx-0".into()
            }
        );
        let IrqNow::Gone(why) = id(45, &["eth1-TxRx-3"]).locate(&now) else {
            panic!()
        };
        assert!(why.contains("now serves nvme0q1"), "{why}");
        assert!(why.contains("no IRQ carries eth1-TxRx-3"), "{why}");
        let twice = actions(&[(45, &["x"]), (60, &["q"]), (61, &["q"])]);
        assert!(matches!(id(45, &["q"]).locate(&twice), IrqNow::Gone(w) if w.contains("2 IRQs")));
        assert_eq!(id(52, &[]).locate(&now), IrqNow::Same);
        assert!(matches!(id(45, &[]).locate(&now), IrqNow::Gone(_)));
    }

    #[test]
    fn a_recorded_name_that_cannot_be_an_action_matches_nothing() {
        let now = actions(&[(45, &["../../etc"]), (46, &["a/b"])]);
        for bad in ["../../etc", "a/b", "", "x\u{1b}[2J"] {
            assert!(!is_action_name(bad), "{bad:?}");
            assert!(!matches!(id(7, &[bad]).locate(&now), IrqNow::Moved { .. }));
        }
        assert!(is_action_name("virtio0-input.0"));
        assert!(is_action_name("eth0-TxRx-0"));
    }

    #[test]
    fn a_device_under_another_name_is_found_by_what_identifies_it() {
        let id =
            |name: &str, perm: Option<&str>, bus: Option<&str>, ifindex: Option<u32>| IfaceId {
                iface: name.into(),
                perm_address: perm.map(Into::into),
                bus: bus.map(Into::into),
                ifindex,
            };
        let nic = id(
            "eth1",
            Some("52:54:00:12:34:56"),
            Some("0000:00:03.0"),
            Some(3),
        );
        assert!(nic.same_device(&id(
            "lan0",
            Some("52:54:00:12:34:56"),
            Some("0000:00:03.0"),
            Some(9)
        )));
        assert!(!nic.same_device(&id(
            "lan0",
            Some("52:54:00:aa:bb:cc"),
            Some("0000:00:03.0"),
            Some(3)
        )));
        assert!(
            !nic.same_device(&id("lan0", None, None, Some(3))),
            "no address now"
        );
        let veth = id("veth0", None, None, Some(7));
        assert!(veth.same_device(&id("up0", None, None, Some(7))));
        assert!(
            !veth.same_device(&id("veth0", None, None, Some(8))),
            "made again"
        );
        assert!(!veth.same_device(&id("up0", None, None, None)));
        let nothing = id("x0", None, None, None);
        assert!(!nothing.same_device(&id("x0", None, None, None)));
    }

    #[test]
    fn an_interface_is_its_addresses_where_it_has_them_else_its_ifindex() {
        let nic = |perm: Option<&str>, bus: Option<&str>, ifindex| IfaceId {
            iface: "eth1".into(),
            perm_address: perm.map(Into::into),
            bus: bus.map(Into::into),
            ifindex: Some(ifindex),
        };
        let then = nic(Some("52:54:00:12:34:56"), Some("0000:00:03.0"), 3);
        assert_eq!(
            then.differs(&nic(Some("52:54:00:12:34:56"), Some("0000:00:03.0"), 9)),
            None,
            "a driver reload changes the ifindex only"
        );
        let other = then.differs(&nic(Some("52:54:00:aa:bb:cc"), Some("0000:00:03.0"), 3));
        assert!(other.unwrap().contains("permanent address"));
        let veth = nic(None, None, 7);
        assert_eq!(veth.differs(&nic(None, None, 7)), None);
        assert_eq!(
            veth.differs(&nic(None, None, 8)).unwrap(),
            "ifindex 7 then, 8 now"
        );
    }
}
