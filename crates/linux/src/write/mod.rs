//! The settings write path: [`LinuxWriter`] implements `nictune_host::write::HostWrite` over
//! the files in [`files`] (sysfs NAPI files, RPS/XPS, sysctls, IRQ affinity) and generic
//! netlink (ethtool channels, rings, features, coalescing; netdev per-NAPI settings).
//!
//! Also here: starting the detached auto-revert watchdog ([`detach`]), finding interfaces
//! a change could cut the user off through ([`guard`]), the writer on a thread inside
//! another network namespace ([`ns`]) and the test seam that slows every write ([`paced`]).

pub mod detach;
pub mod files;
pub mod guard;
pub mod identity;
pub mod module;
pub mod netlink;
pub mod ns;
pub mod paced;

use files::Roots;
use netlink::Netlink;
use nictune_core::names;
use nictune_core::privilege::Privilege;
use nictune_host::write::identity::{IfaceId, IrqActions};
use nictune_host::write::setting::{Key, Object, Setting, Steering};
use nictune_host::write::value::HostValue;
use nictune_host::write::{HostError, HostErrorKind, HostWrite, Op};

/// The process's privilege, from its effective user id: the one place nictune reads it. The
/// binary reads it once at start and passes it to every root check (`apply`, `tune`,
/// `serve`, the testbeds); tests that need root ask here too. Writes need root (or
/// CAP_NET_ADMIN plus file access), so the checks come before the first write.
pub fn privilege() -> Privilege {
    Privilege::of_euid(nix::unistd::geteuid().as_raw())
}

/// The live host as the apply engine sees it, in the network namespace the process is in.
#[derive(Debug)]
pub struct LinuxWriter {
    roots: Roots,
    netlink: Result<Netlink, String>,
}

impl LinuxWriter {
    /// The host behind `/sys`, `/proc` and netlink of the current namespace.
    pub fn live() -> LinuxWriter {
        LinuxWriter::with_roots(Roots::live())
    }

    /// Files under other roots (tests); netlink stays live.
    pub fn with_roots(roots: Roots) -> LinuxWriter {
        LinuxWriter {
            roots,
            netlink: Netlink::open().map_err(|e| e.to_string()),
        }
    }

    fn netlink(&self, op: Op, s: &Setting) -> Result<&Netlink, HostError> {
        self.netlink.as_ref().map_err(|e| unsupported(op, s, e))
    }

    fn ifindex(&self, iface: &str, s: &Setting) -> Result<u32, HostError> {
        let path = self.roots.sys.join("class/net").join(iface).join("ifindex");
        let text = files::read_text(s, &path)?;
        text.trim()
            .parse()
            .map_err(|_| HostError::new(Op::Read, s, HostErrorKind::Garbled(text)))
    }

    /// The NAPI instance at `index` among the device's, by id.
    fn napi(
        &self,
        iface: &str,
        index: u32,
        s: &Setting,
    ) -> Result<nictune_host::snapshot::Napi, HostError> {
        let all = self
            .netlink(Op::Read, s)?
            .napis(self.ifindex(iface, s)?, s)?;
        let count = all.len();
        all.into_iter().nth(index as usize).ok_or_else(|| {
            let why = format!("{iface} has {count} NAPI instances now");
            HostError::new(Op::Read, s, HostErrorKind::NotFound(why))
        })
    }
}

fn unsupported(op: Op, s: &Setting, why: &str) -> HostError {
    HostError::new(op, s, HostErrorKind::Unsupported(why.to_string()))
}

/// Refuses a setting whose names the command line would have refused: every name below
/// becomes part of a path under /proc, /sys or /run that root writes, and a setting may come
/// from a journal on disk rather than from the command line (a revert, the watchdog). The
/// rules are the command line's own (`nictune_core::names`); a module name is letters,
/// digits and `_`/`-`.
fn check_names(op: Op, s: &Setting) -> Result<(), HostError> {
    let bad = |why: String| Err(HostError::new(op, s, HostErrorKind::NotFound(why)));
    if let Some(iface) = s.target.iface() {
        if let Err(e) = names::check_iface(iface) {
            return bad(e.to_string());
        }
    }
    if let Object::Module { module } = &s.target {
        let ok = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        if module.is_empty() || !module.bytes().all(ok) {
            return bad(format!("{module:?} is not a module name"));
        }
    }
    if let Key::Sysctl(name) = &s.key {
        if !names::is_net_sysctl(name) {
            return bad(format!("{name:?} is not a net.* sysctl"));
        }
    }
    Ok(())
}

impl HostWrite for LinuxWriter {
    fn napi_count(&mut self, iface: &str) -> Result<u32, HostError> {
        let s = Setting::new(
            Object::Device {
                iface: iface.into(),
            },
            Key::Napi(nictune_host::write::setting::Napi::DeferHardIrqs),
        );
        let all = self
            .netlink(Op::List, &s)?
            .napis(self.ifindex(iface, &s)?, &s)?;
        Ok(u32::try_from(all.len()).unwrap_or(u32::MAX))
    }

    fn queue_counts(&mut self, iface: &str) -> Result<(u32, u32), HostError> {
        files::queue_counts(iface, &self.roots).map_err(|e| {
            let s = Setting::new(
                Object::Device {
                    iface: iface.into(),
                },
                Key::Steering(Steering::RpsCpus),
            );
            files::io_error(
                Op::List,
                &s,
                &self.roots.sys.join("class/net").join(iface),
                &e,
            )
        })
    }

    fn read(&mut self, s: &Setting) -> Result<HostValue, HostError> {
        check_names(Op::Read, s)?;
        if let (Object::Module { module }, Key::ModuleParam { param, .. }) = (&s.target, &s.key) {
            return module::read(&module::ModuleRoots::from(&self.roots), module, param, s);
        }
        if let Some((path, form)) = files::file_for(s, &self.roots) {
            return files::read(s, &path, form);
        }
        let value = match (&s.target, &s.key) {
            (Object::Napi { iface, index }, Key::Napi(k)) => {
                netlink::napi_value(&self.napi(iface, *index, s)?, *k)
            }
            (Object::Device { iface }, _) => self.netlink(Op::Read, s)?.read_device(iface, s)?,
            _ => None,
        };
        value.ok_or_else(|| unsupported(Op::Read, s, "the driver does not report it"))
    }

    fn limit(&mut self, s: &Setting) -> Result<Option<u64>, HostError> {
        match (&s.target, &s.key) {
            (Object::Device { iface }, Key::Channels(_) | Key::Ring(_)) => {
                self.netlink(Op::Read, s)?.limit(iface, s)
            }
            _ => Ok(None),
        }
    }

    fn write(&mut self, s: &Setting, value: &HostValue) -> Result<(), HostError> {
        check_names(Op::Write, s)?;
        if let (Object::Module { module }, Key::ModuleParam { param, .. }) = (&s.target, &s.key) {
            let roots = module::ModuleRoots::from(&self.roots);
            return module::write(&roots, module, &[(param, value)], s);
        }
        if let Some((path, form)) = files::file_for(s, &self.roots) {
            return files::write(s, &path, form, value);
        }
        match (&s.target, &s.key) {
            (Object::Napi { iface, index }, Key::Napi(k)) => {
                let id = self.napi(iface, *index, s)?.id;
                self.netlink(Op::Write, s)?.write_napi(id, *k, s, value)
            }
            (Object::Device { iface }, _) => {
                self.netlink(Op::Write, s)?.write_device(iface, s, value)
            }
            _ => Err(unsupported(Op::Write, s, "no way to write this setting")),
        }
    }

    /// Parameters of one module go in one reload; anything else one by one.
    fn write_all(&mut self, items: &[(&Setting, &HostValue)]) -> Result<(), HostError> {
        for (s, _) in items {
            check_names(Op::Write, s)?;
        }
        let Some(module) = nictune_host::write::one_reload(items) else {
            return items.iter().try_for_each(|(s, v)| self.write(s, v));
        };
        let params: Vec<(&str, &HostValue)> = items
            .iter()
            .filter_map(|(s, v)| match &s.key {
                Key::ModuleParam { param, .. } => Some((param.as_str(), *v)),
                _ => None,
            })
            .collect();
        let roots = module::ModuleRoots::from(&self.roots);
        module::write(&roots, module, &params, items[0].0)
    }

    fn iface_id(&mut self, iface: &str) -> Result<IfaceId, HostError> {
        identity::iface_id(iface, &self.roots)
    }

    fn iface_ids(&mut self) -> Result<Vec<IfaceId>, HostError> {
        identity::iface_ids(&self.roots)
    }

    fn irq_actions(&mut self) -> Result<IrqActions, HostError> {
        identity::irq_actions(&self.roots)
    }

    fn irqs_of(&mut self, iface: &str) -> Result<Vec<u32>, HostError> {
        identity::irqs_of(iface, &self.roots)
    }
}

#[cfg(test)]
mod name_tests {
    use super::*;

    /// A journal is a file: a revert must not follow names in it out of /proc and /sys.
    #[test]
    fn names_that_would_leave_proc_and_sys_are_refused_before_any_access() {
        let mut w = LinuxWriter::live();
        let sysctl = |name: &str| Setting::new(Object::Netns, Key::Sysctl(name.into()));
        let dev = |iface: &str| {
            Setting::new(
                Object::Device {
                    iface: iface.into(),
                },
                Key::Coalesce("rx-usecs".into()),
            )
        };
        let module = |m: &str| {
            Setting::new(
                Object::Module { module: m.into() },
                Key::ModuleParam {
                    module: m.into(),
                    param: "InterruptThrottleRate".into(),
                },
            )
        };
        let v = HostValue::Text("x".into());
        for s in [
            sysctl("/root/.ssh/authorized_keys"),
            sysctl("net/../../etc/passwd"),
            sysctl("net..core"),
            sysctl("kernel.panic"),
            dev("../../etc"),
            dev(".."),
            dev("eth0/x"),
            dev("a-name-too-long-0"),
            module("../e1000"),
            module(""),
        ] {
            let e = w.write(&s, &v).unwrap_err();
            assert!(matches!(e.kind, HostErrorKind::NotFound(_)), "{s}: {e}");
            assert!(w.read(&s).is_err(), "{s}");
            assert!(w.write_all(&[(&s, &v)]).is_err(), "{s}");
        }
        assert!(check_names(Op::Write, &sysctl("net.core.busy_poll")).is_ok());
        assert!(check_names(Op::Write, &dev("enp3s0f1.100")).is_ok());
        assert!(check_names(Op::Write, &module("e1000e")).is_ok());
    }
}
