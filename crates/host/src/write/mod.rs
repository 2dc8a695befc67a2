//! The seam between the engine and a machine: read one setting, write one setting, and the
//! few facts a plan needs to expand `napi.*` and `rps.*` keys over a device's objects.
//!
//! The Linux adapter implements it over netlink, sysfs and procfs inside the target network
//! namespace (`apply --dry-run` reads through it too, writing nothing);
//! `nictune_apply::fake::FakeWriter` implements it in memory for tests.
//!
//! - [`setting`]: which knob on which object.
//! - [`value`]: what a knob holds, and how users type it.
//! - [`identity`]: what an interface or IRQ is beyond its name or number, checked before a
//!   revert writes to it.

pub mod identity;
pub mod setting;
pub mod value;

use identity::{IfaceId, IrqActions};
use serde::Serialize;
use setting::Setting;
use value::HostValue;

/// Why a read or a write of one setting failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{op} {setting}: {kind}")]
pub struct HostError {
    /// Whether reading, writing or listing failed.
    pub op: Op,
    /// The setting, as `<object> <key>`.
    pub setting: String,
    /// Why, in terms of what the user can do about it.
    pub kind: HostErrorKind,
}

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// Reading the current value.
    Read,
    /// Writing a new value.
    Write,
    /// Listing a device's NAPI instances or queues.
    List,
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Op::Read => "reading",
            Op::Write => "writing",
            Op::List => "listing",
        })
    }
}

/// What went wrong, in the terms that decide what the user can do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "kind", content = "detail", rename_all = "kebab-case")]
pub enum HostErrorKind {
    /// The device, driver or kernel does not offer this setting (absent from the netlink
    /// reply, EOPNOTSUPP, or no such file).
    #[error("not supported here ({0})")]
    Unsupported(String),
    /// The object does not exist (no such interface, queue, NAPI, IRQ or sysctl).
    #[error("not found ({0})")]
    NotFound(String),
    /// Needs root or CAP_NET_ADMIN in the target namespace.
    #[error("permission denied ({0})")]
    Permission(String),
    /// The kernel refused the value (EINVAL, EIO, ENOSPC, an extack message).
    #[error("refused by the kernel ({0})")]
    Rejected(String),
    /// The value read back could not be understood.
    #[error("unreadable value ({0})")]
    Garbled(String),
}

impl HostError {
    /// An error of `op` on `setting`, naming the setting as `<object> <key>`.
    pub fn new(op: Op, setting: &Setting, kind: HostErrorKind) -> HostError {
        HostError {
            op,
            setting: setting.to_string(),
            kind,
        }
    }
}

/// Reads and writes single settings on one host (one network namespace).
pub trait HostWrite {
    /// How many NAPI instances `iface` has (per-NAPI keys expand over them).
    fn napi_count(&mut self, iface: &str) -> Result<u32, HostError>;
    /// How many receive and transmit queues `iface` has (`rps.*`/`xps.*` expand over them).
    fn queue_counts(&mut self, iface: &str) -> Result<(u32, u32), HostError>;
    /// The current value. `Unsupported` when the device does not offer the setting.
    fn read(&mut self, setting: &Setting) -> Result<HostValue, HostError>;
    /// The driver's maximum for this setting when it reports one (channel and ring maxima).
    fn limit(&mut self, setting: &Setting) -> Result<Option<u64>, HostError>;
    /// Writes one value. The engine reads it back afterwards.
    fn write(&mut self, setting: &Setting, value: &HostValue) -> Result<(), HostError>;
    /// Writes settings that one operation sets together ([`Setting::written_with`]: the
    /// parameters of one driver module, set by a single reload instead of one each). The
    /// default writes them one by one, in order; on an error some may have been written.
    fn write_all(&mut self, items: &[(&Setting, &HostValue)]) -> Result<(), HostError> {
        items.iter().try_for_each(|(s, v)| self.write(s, v))
    }
    /// What identifies the device named `iface` now ([`identity`]). The default: unsupported,
    /// so nothing is recorded and a revert writes by name, as before identities existed.
    fn iface_id(&mut self, iface: &str) -> Result<IfaceId, HostError> {
        Err(no_identities(iface))
    }
    /// What identifies every interface there is now, in the namespace the writer works in
    /// ([`identity`]): where a revert finds a renamed device. The default: unsupported.
    fn iface_ids(&mut self) -> Result<Vec<IfaceId>, HostError> {
        Err(no_identities("interfaces"))
    }
    /// Every IRQ of the host with its action names ([`identity`]). The default: unsupported.
    fn irq_actions(&mut self) -> Result<IrqActions, HostError> {
        Err(no_identities("irq"))
    }
    /// The IRQs of `iface`'s device (its vectors), whose affinity a channel change resets.
    /// The default: none known.
    fn irqs_of(&mut self, iface: &str) -> Result<Vec<u32>, HostError> {
        let _ = iface;
        Ok(Vec::new())
    }
}

fn no_identities(what: &str) -> HostError {
    HostError {
        op: Op::Read,
        setting: what.to_string(),
        kind: HostErrorKind::Unsupported("this host does not tell device identities".into()),
    }
}

/// The module whose reload writes all of `items` at once: `Some` when there are two or more
/// and all are parameters of that one module ([`Setting::written_with`]).
pub fn one_reload<'a>(items: &[(&'a Setting, &HostValue)]) -> Option<&'a str> {
    let ((first, _), rest) = items.split_first()?;
    let all = !rest.is_empty() && rest.iter().all(|(s, _)| s.written_with(first));
    all.then(|| first.module()).flatten()
}
