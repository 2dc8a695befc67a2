//! An in-memory host: the backend of the unit and integration tests (`apply --dry-run` reads
//! the live host through the Linux writer, not this).
//!
//! It models the behaviours the engine must survive: unsupported settings (absent keys),
//! driver maxima, values the driver rounds, a channel change wiping the RPS masks of the
//! device (as recreating queues does on Linux), a write that fails once at a chosen point,
//! either before or after it took effect, and a device that refuses every write from a point on;
//! and the identities a revert checks: IRQs renumbered (a channel change re-requesting an
//! interface's vectors under new numbers) or given to another device, and interfaces
//! re-created under the same name or renamed.

use nictune_host::write::identity::{IfaceId, IrqActions};
use nictune_host::write::setting::{Key, Object, Setting, Steering};
use nictune_host::write::value::{CpuSet, HostValue};
use nictune_host::write::{HostError, HostErrorKind, HostWrite, Op};
use std::collections::BTreeMap;

/// How an injected failure behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailMode {
    /// The write is refused and nothing changes.
    Refused,
    /// The value changes and then the call reports an error (a half-done write).
    AfterChange,
}

/// A fake host writer (`HostWrite` in memory). Settings absent from `values` are unsupported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FakeWriter {
    /// Every supported setting with its current value; writes change it, reads return it.
    pub values: BTreeMap<Setting, HostValue>,
    /// Driver maxima returned by `limit`; settings absent here report none.
    pub limits: BTreeMap<Setting, u64>,
    /// The driver rounds writes of this setting down to a multiple of the given step.
    pub granularity: BTreeMap<Setting, u64>,
    /// NAPI instances per interface name (`napi_count`); an absent interface has none.
    pub napis: BTreeMap<String, u32>,
    /// A kernel without per-NAPI netlink (before Linux 6.9): listing NAPI instances is
    /// unsupported.
    pub no_napi_netlink: bool,
    /// Receive and transmit queue counts per interface name (`queue_counts`); an absent
    /// interface has none.
    pub queues: BTreeMap<String, (u32, u32)>,
    /// Fail the write with this index (counting from 0 over all writes), once.
    pub fail_at: Option<(usize, FailMode)>,
    /// Refuse every write from this index on (a device that stopped answering), until reset.
    pub refuse_from: Option<usize>,
    /// Writes performed so far, including failed ones; the parameters of one module written
    /// together count once.
    pub writes: usize,
    /// Of those, writes of module parameters: each is one reload of the module, whether it
    /// sets one parameter or several.
    pub reloads: usize,
    /// Every IRQ with its action names (`irq_actions`).
    pub irqs: IrqActions,
    /// The IRQs of each interface's device (`irqs_of`).
    pub device_irqs: BTreeMap<String, Vec<u32>>,
    /// What identifies each interface (`iface_id`); an interface absent here is not found.
    pub ifaces: BTreeMap<String, IfaceId>,
    /// A channel change of an interface re-requests its IRQs this many numbers higher, with
    /// [`FakeWriter::irq_default`] as their affinity (as a driver's new vectors get the
    /// default one); `None`: the numbers stay.
    pub channel_renumber: Option<u32>,
    /// The affinity of a newly requested IRQ.
    pub irq_default: Option<HostValue>,
}

impl FakeWriter {
    /// Adds a supported setting with its current value.
    pub fn with(mut self, setting: Setting, value: HostValue) -> FakeWriter {
        self.values.insert(setting, value);
        self
    }

    /// Moves IRQ `from`'s handlers to `to` (freed and requested again under another number):
    /// `to` gets the default affinity; `from` is left without a handler (its affinity stays,
    /// as a line's does).
    pub fn move_irq(&mut self, from: u32, to: u32) {
        let names = self.irqs.remove(&from).unwrap_or_default();
        self.irqs.insert(from, Vec::new());
        self.irqs.insert(to, names);
        let affinity = |irq| Setting::new(Object::Irq { irq }, Key::IrqAffinity);
        let default = self
            .irq_default
            .clone()
            .unwrap_or(HostValue::Cpus(CpuSet::default()));
        self.values.insert(affinity(to), default);
        for irqs in self.device_irqs.values_mut() {
            for irq in irqs.iter_mut().filter(|i| **i == from) {
                *irq = to;
            }
        }
    }

    /// Renames interface `from` to `to` (`ip link set name`, a udev rule): the device keeps
    /// what identifies it and every setting, under its new name.
    pub fn rename_iface(&mut self, from: &str, to: &str) {
        let moved = |s: &Setting| match s.target.iface() {
            Some(i) if i == from => Setting::new(s.target.on_iface(to), s.key.clone()),
            _ => s.clone(),
        };
        fn rekey<V>(map: &mut BTreeMap<Setting, V>, moved: impl Fn(&Setting) -> Setting) {
            *map = std::mem::take(map)
                .into_iter()
                .map(|(s, v)| (moved(&s), v))
                .collect();
        }
        fn rename<V>(map: &mut BTreeMap<String, V>, from: &str, to: &str) {
            if let Some(v) = map.remove(from) {
                map.insert(to.to_string(), v);
            }
        }
        rekey(&mut self.values, moved);
        rekey(&mut self.limits, moved);
        rekey(&mut self.granularity, moved);
        rename(&mut self.ifaces, from, to);
        if let Some(id) = self.ifaces.get_mut(to) {
            id.iface = to.to_string();
        }
        rename(&mut self.napis, from, to);
        rename(&mut self.queues, from, to);
        rename(&mut self.device_irqs, from, to);
    }

    /// The settings only, for comparing hosts before and after.
    pub fn state(&self) -> &BTreeMap<Setting, HostValue> {
        &self.values
    }

    fn unsupported(op: Op, setting: &Setting) -> HostError {
        HostError::new(op, setting, HostErrorKind::Unsupported("fake host".into()))
    }

    fn take_failure(&mut self) -> Option<FailMode> {
        let index = self.writes;
        self.writes += 1;
        if self.refuse_from.is_some_and(|from| index >= from) {
            return Some(FailMode::Refused);
        }
        match self.fail_at {
            Some((at, mode)) if at == index => {
                self.fail_at = None;
                Some(mode)
            }
            _ => None,
        }
    }

    fn effective(&self, setting: &Setting, value: &HostValue) -> HostValue {
        match (self.granularity.get(setting), value) {
            (Some(step), HostValue::Int(n)) if *step > 0 => HostValue::Int(n - n % step),
            _ => value.clone(),
        }
    }

    /// Recreating queues drops their steering masks, as a channel change does on Linux.
    fn reset_queues(&mut self, iface: &str) {
        for (setting, value) in self.values.iter_mut() {
            let on_iface = matches!(&setting.target,
                Object::RxQueue { iface: i, .. } | Object::TxQueue { iface: i, .. } if i == iface);
            if on_iface && setting.key == Key::Steering(Steering::RpsCpus) {
                *value = HostValue::Cpus(CpuSet::default());
            }
        }
    }
}

impl HostWrite for FakeWriter {
    fn napi_count(&mut self, iface: &str) -> Result<u32, HostError> {
        if self.no_napi_netlink {
            let s = Setting::new(
                Object::Device {
                    iface: iface.into(),
                },
                Key::Napi(nictune_host::write::setting::Napi::DeferHardIrqs),
            );
            return Err(FakeWriter::unsupported(Op::List, &s));
        }
        Ok(self.napis.get(iface).copied().unwrap_or(0))
    }

    fn queue_counts(&mut self, iface: &str) -> Result<(u32, u32), HostError> {
        Ok(self.queues.get(iface).copied().unwrap_or((0, 0)))
    }

    fn read(&mut self, setting: &Setting) -> Result<HostValue, HostError> {
        self.values
            .get(setting)
            .cloned()
            .ok_or_else(|| FakeWriter::unsupported(Op::Read, setting))
    }

    fn limit(&mut self, setting: &Setting) -> Result<Option<u64>, HostError> {
        Ok(self.limits.get(setting).copied())
    }

    fn write(&mut self, setting: &Setting, value: &HostValue) -> Result<(), HostError> {
        if !self.values.contains_key(setting) {
            return Err(FakeWriter::unsupported(Op::Write, setting));
        }
        if setting.module().is_some() {
            self.reloads += 1;
        }
        let failure = self.take_failure();
        if failure == Some(FailMode::Refused) {
            return Err(injected(setting));
        }
        let effective = self.effective(setting, value);
        self.values.insert(setting.clone(), effective);
        if let (Key::Channels(_), Object::Device { iface }) = (&setting.key, &setting.target) {
            self.reset_queues(&iface.clone());
            if let Some(by) = self.channel_renumber {
                let irqs = self.device_irqs.get(iface).cloned().unwrap_or_default();
                for irq in irqs.into_iter().rev() {
                    self.move_irq(irq, irq + by);
                }
            }
        }
        match failure {
            Some(_) => Err(injected(setting)),
            None => Ok(()),
        }
    }

    fn iface_id(&mut self, iface: &str) -> Result<IfaceId, HostError> {
        self.ifaces.get(iface).cloned().ok_or_else(|| {
            let s = Setting::new(
                Object::Device {
                    iface: iface.into(),
                },
                Key::Channels(nictune_host::write::setting::Channel::Combined),
            );
            HostError::new(
                Op::Read,
                &s,
                HostErrorKind::NotFound("no such interface".into()),
            )
        })
    }

    fn iface_ids(&mut self) -> Result<Vec<IfaceId>, HostError> {
        Ok(self.ifaces.values().cloned().collect())
    }

    fn irq_actions(&mut self) -> Result<IrqActions, HostError> {
        Ok(self.irqs.clone())
    }

    fn irqs_of(&mut self, iface: &str) -> Result<Vec<u32>, HostError> {
        Ok(self.device_irqs.get(iface).cloned().unwrap_or_default())
    }

    /// Parameters of one module are one write (one reload, as on Linux): one index for
    /// `fail_at`, all changed or none (refused), or all changed and then an error.
    fn write_all(&mut self, items: &[(&Setting, &HostValue)]) -> Result<(), HostError> {
        if nictune_host::write::one_reload(items).is_none() {
            return items.iter().try_for_each(|(s, v)| self.write(s, v));
        }
        if let Some((s, _)) = items.iter().find(|(s, _)| !self.values.contains_key(*s)) {
            return Err(FakeWriter::unsupported(Op::Write, s));
        }
        self.reloads += 1;
        let failure = self.take_failure();
        if failure == Some(FailMode::Refused) {
            return Err(injected(items[0].0));
        }
        for (s, v) in items {
            let effective = self.effective(s, v);
            self.values.insert((*s).clone(), effective);
        }
        match failure {
            Some(_) => Err(injected(items[0].0)),
            None => Ok(()),
        }
    }
}

fn injected(setting: &Setting) -> HostError {
    HostError::new(
        Op::Write,
        setting,
        HostErrorKind::Rejected("injected failure".into()),
    )
}
