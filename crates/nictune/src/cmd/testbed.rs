//! `--testbed veth|e1000|e1000e`, shared by `bench` and `tune`: which built-in testbed to
//! build, and the real-driver one's start with the hints a user needs.

use crate::output::{ExitWith, HintExt, EXIT_NEEDS_ROOT};
use anyhow::Result;
use nictune_core::privilege::Privilege;
use nictune_vm::{BedOptions, Nic, VmBed, VmError};
use std::time::Duration;

/// The built-in testbeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TestbedArg {
    /// Two network namespaces joined by a veth pair (no device, no interrupts; NAPI mode).
    Veth,
    /// A QEMU guest running Linux's e1000 driver on an emulated Intel 82545EM.
    E1000,
    /// A QEMU guest running Linux's e1000e driver on an emulated Intel 82574L (MSI-X).
    E1000e,
}

impl TestbedArg {
    /// The emulated NIC, for the real-driver testbeds.
    pub fn nic(self) -> Option<Nic> {
        match self {
            TestbedArg::Veth => None,
            TestbedArg::E1000 => Some(Nic::E1000),
            TestbedArg::E1000e => Some(Nic::E1000e),
        }
    }
}

/// Boots a guest for `nic` that ends itself after `lifetime` at the latest (root:
/// `privilege`).
pub fn start_guest(nic: Nic, lifetime: Duration, privilege: Privilege) -> Result<VmBed> {
    VmBed::create(&options(nic, lifetime)?, privilege).map_err(guest_hint)
}

fn options(nic: Nic, lifetime: Duration) -> Result<BedOptions> {
    Ok(BedOptions::new(nic, nictune_exe()?, lifetime))
}

/// This nictune binary, which the guests run.
pub fn nictune_exe() -> Result<std::path::PathBuf> {
    std::env::current_exe().hint("the guest runs this nictune binary; its path must be readable")
}

/// A guest that could not be booted, with what to do next (exit 77 without root).
pub fn guest_hint(e: VmError) -> anyhow::Error {
    let hint = match &e {
        VmError::NotRoot => {
            let err = Err::<(), _>(e).hint("run as root (sudo)").unwrap_err();
            return ExitWith::wrap(err, EXIT_NEEDS_ROOT);
        }
        VmError::GuestMissing { .. } | VmError::QemuMissing | VmError::Modules(_) => {
            nictune_vm::guest::INSTALL_HINT
        }
        VmError::BootTimeout { .. } | VmError::QemuExited { .. } => {
            "the console lines above say how far the guest got; `--testbed veth` needs no QEMU"
        }
        _ => "guests left by a killed run are removed at the next start",
    };
    Err::<(), _>(e).hint(hint).unwrap_err()
}
