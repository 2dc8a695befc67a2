//! The settings write path: [`LinuxHost`] implements `nictune_apply::host::HostWrite` over
//! the files in [`files`] (sysfs NAPI files, RPS/XPS, sysctls, IRQ affinity) and generic
//! netlink (ethtool channels, rings, features, coalescing; netdev per-NAPI settings).
//!
//! Also here: starting the detached auto-revert watchdog ([`detach`]) and finding interfaces
//! a change could cut the user off through ([`guard`]).

pub mod detach;
pub mod files;
pub mod guard;

use files::Roots;
use nictune_apply::host::{HostError, HostErrorKind, HostWrite, Op};
use nictune_apply::setting::{Setting, Target};
use nictune_apply::value::Value;

/// Whether the process runs as root. Writes need root (or CAP_NET_ADMIN plus file access);
/// `apply` checks this before the first write instead of failing half-way.
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The live host, in the network namespace the process is in.
#[derive(Debug)]
pub struct LinuxHost {
    roots: Roots,
}

impl LinuxHost {
    /// The host behind `/sys` and `/proc`.
    pub fn live() -> LinuxHost {
        LinuxHost {
            roots: Roots::live(),
        }
    }

    /// A host whose files live under other roots (tests).
    pub fn with_roots(roots: Roots) -> LinuxHost {
        LinuxHost { roots }
    }

    fn unsupported(op: Op, setting: &Setting, why: &str) -> HostError {
        HostError::new(op, setting, HostErrorKind::Unsupported(why.to_string()))
    }
}

impl HostWrite for LinuxHost {
    fn napi_count(&mut self, iface: &str) -> Result<u32, HostError> {
        let setting = Setting::new(
            Target::Device {
                iface: iface.into(),
            },
            nictune_apply::setting::Key::IrqAffinity,
        );
        Err(LinuxHost::unsupported(
            Op::List,
            &setting,
            "per-NAPI settings need the netdev netlink family",
        ))
    }

    fn queue_counts(&mut self, iface: &str) -> Result<(u32, u32), HostError> {
        files::queue_counts(iface, &self.roots).map_err(|e| {
            let setting = Setting::new(
                Target::Device {
                    iface: iface.into(),
                },
                nictune_apply::setting::Key::Steering(nictune_apply::setting::Steering::RpsCpus),
            );
            files::io_error(Op::List, &setting, &self.roots.sys, &e)
        })
    }

    fn read(&mut self, setting: &Setting) -> Result<Value, HostError> {
        match files::file_for(setting, &self.roots) {
            Some((path, form)) => files::read(setting, &path, form),
            None => Err(LinuxHost::unsupported(Op::Read, setting, "not built yet")),
        }
    }

    fn limit(&mut self, _setting: &Setting) -> Result<Option<u64>, HostError> {
        Ok(None)
    }

    fn write(&mut self, setting: &Setting, value: &Value) -> Result<(), HostError> {
        match files::file_for(setting, &self.roots) {
            Some((path, form)) => files::write(setting, &path, form, value),
            None => Err(LinuxHost::unsupported(Op::Write, setting, "not built yet")),
        }
    }
}
