//! What a guest is made of: the emulated NIC, the guest directory `scripts/install-guest`
//! fills (kernel, modules, busybox), and the QEMU program.

use crate::error::{Result, VmError};
use std::path::{Path, PathBuf};

/// Where `scripts/install-guest` puts the guest kernel, modules and busybox by default.
pub const DEFAULT_GUEST_DIR: &str = "/var/cache/nictune/guest";
/// Overrides [`DEFAULT_GUEST_DIR`].
pub const GUEST_DIR_ENV: &str = "NICTUNE_GUEST_DIR";
/// Overrides the QEMU program (default: `qemu-system-x86_64` on `PATH`).
pub const QEMU_ENV: &str = "NICTUNE_QEMU";
/// The command that sets everything up, for hints.
pub const INSTALL_HINT: &str = "run `sudo scripts/install-guest` from the nictune source tree \
     (installs qemu-system-x86 and busybox-static, and unpacks Debian's linux-image-amd64 \
     kernel into /var/cache/nictune/guest without installing it)";

/// The emulated Intel NIC a guest gets, and the Linux driver that runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Nic {
    /// Intel 82545EM (PCI-X gigabit, legacy INTx), driver `e1000`. QEMU's plain `e1000`
    /// device is an 82540EM, for which the driver refuses ethtool coalescing; the 82545EM
    /// accepts it.
    E1000,
    /// Intel 82574L (PCIe, MSI-X: one vector each for RX, TX and "other"), driver `e1000e`.
    E1000e,
}

impl Nic {
    /// Every NIC the testbed offers.
    pub const ALL: [Nic; 2] = [Nic::E1000, Nic::E1000e];

    /// The testbed's name, as given to `--testbed`.
    pub fn name(self) -> &'static str {
        match self {
            Nic::E1000 => "e1000",
            Nic::E1000e => "e1000e",
        }
    }

    /// The Linux driver module.
    pub fn driver(self) -> &'static str {
        self.name()
    }

    /// QEMU's `-device` model.
    pub fn qemu_device(self) -> &'static str {
        match self {
            Nic::E1000 => "e1000-82545em",
            Nic::E1000e => "e1000e",
        }
    }

    /// The controller, for people.
    pub fn model(self) -> &'static str {
        match self {
            Nic::E1000 => "Intel 82545EM",
            Nic::E1000e => "Intel 82574L",
        }
    }

    /// The NIC named `s` as `--testbed` spells it (`e1000`, `e1000e`); `None` for any other name.
    pub fn parse(s: &str) -> Option<Nic> {
        Nic::ALL.into_iter().find(|n| n.name() == s)
    }
}

/// A complete guest directory.
#[derive(Debug, Clone)]
pub struct GuestDir {
    /// The directory, `$NICTUNE_GUEST_DIR` or DEFAULT_GUEST_DIR.
    pub root: PathBuf,
    /// `uname -r` of the guest kernel (`6.1.0-56-amd64`).
    pub kernel_release: String,
    /// The Debian package it came from.
    pub kernel_package: String,
}

impl GuestDir {
    /// `$NICTUNE_GUEST_DIR`, else [`DEFAULT_GUEST_DIR`], checked complete.
    pub fn locate() -> Result<GuestDir> {
        let root = std::env::var_os(GUEST_DIR_ENV)
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_GUEST_DIR));
        GuestDir::open(&root)
    }

    /// Checks that `root` holds what a guest needs.
    pub fn open(root: &Path) -> Result<GuestDir> {
        for part in [
            "complete",
            "vmlinuz",
            "busybox",
            "modules",
            "kernel-release",
        ] {
            if !root.join(part).exists() {
                return Err(VmError::GuestMissing {
                    dir: root.into(),
                    what: part,
                });
            }
        }
        let read = |name: &str| {
            std::fs::read_to_string(root.join(name))
                .map(|s| s.trim().to_string())
                .map_err(|e| VmError::io("reading", root.join(name), e))
        };
        Ok(GuestDir {
            root: root.into(),
            kernel_release: read("kernel-release")?,
            kernel_package: read("kernel-package").unwrap_or_default(),
        })
    }

    /// The guest kernel image, `vmlinuz`.
    pub fn kernel(&self) -> PathBuf {
        self.root.join("vmlinuz")
    }

    /// The static busybox that is the initramfs's userland.
    pub fn busybox(&self) -> PathBuf {
        self.root.join("busybox")
    }

    /// The guest kernel's module tree (`modules/`), where `modules::ModuleTree` looks drivers
    /// and their dependencies up.
    pub fn modules(&self) -> PathBuf {
        self.root.join("modules")
    }
}

/// The QEMU program: `$NICTUNE_QEMU`, else `qemu-system-x86_64` on `PATH`.
pub fn qemu_program() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os(QEMU_ENV) {
        return Ok(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("qemu-system-x86_64"))
        .find(|p| p.is_file())
        .ok_or(VmError::QemuMissing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nic_names_round_trip() {
        for nic in Nic::ALL {
            assert_eq!(Nic::parse(nic.name()), Some(nic));
        }
        assert_eq!(Nic::parse("igb"), None);
    }

    #[test]
    fn an_incomplete_guest_dir_names_the_missing_part() {
        let dir = std::env::temp_dir().join(format!("nictune-vm-guestdir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("complete"), "").unwrap();
        let err = GuestDir::open(&dir).unwrap_err();
        assert!(
            matches!(
                err,
                VmError::GuestMissing {
                    what: "vmlinuz",
                    ..
                }
            ),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
