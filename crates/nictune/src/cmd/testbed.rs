//! `--testbed veth|e1000|e1000e`, shared by `bench` and `tune`: which built-in testbed to
//! build, and the real-driver one's start with the hints a user needs.

use crate::output::{ExitWith, HintExt, EXIT_NEEDS_ROOT};
use anyhow::Result;
use nictune_bench::TestbedInfo;
use nictune_core::privilege::Privilege;
use nictune_vm::pair::VmPair;
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

/// Boots two guests running `nic`'s driver on one bridge (a tune of both ends).
pub fn start_pair(nic: Nic, lifetime: Duration, privilege: Privilege) -> Result<VmPair> {
    VmPair::create(&options(nic, lifetime)?, privilege).map_err(guest_hint)
}

fn options(nic: Nic, lifetime: Duration) -> Result<BedOptions> {
    let exe = std::env::current_exe()
        .hint("the guest runs this nictune binary; its path must be readable")?;
    Ok(BedOptions::new(nic, exe, lifetime))
}

fn guest_hint(e: VmError) -> anyhow::Error {
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

/// What a result says about the guest it ran against.
pub fn info(bed: &VmBed) -> TestbedInfo {
    let boot = bed.boot_info();
    TestbedInfo {
        kind: bed.nic().name().into(),
        nic_model: bed.nic().model().into(),
        qemu_device: bed.nic().qemu_device().into(),
        guest_kernel: boot.map(|b| b.kernel_release.clone()).unwrap_or_default(),
        accel: boot.map_or("?", |b| b.accel.name()).into(),
        accel_note: boot.and_then(|b| b.accel_note.clone()),
        boot_seconds: boot.map_or(0.0, |b| b.boot_seconds),
        qemu_cpu_cores: None,
        qemu_rss_mib: bed.qemu_usage().map(|u| u.rss_mib),
    }
}

/// What the emulated testbed can and cannot show, for every result measured on it.
pub fn caveat(info: &TestbedInfo) -> String {
    format!(
        "real-driver testbed: Linux {} `{}` driver on QEMU's emulated {} ({}): the driver, its \
         parameters, its ethtool semantics and its interrupts are real; the hardware timing is \
         QEMU's (no two interrupts closer than 128 µs) and the guest CPU is {}, so rates are \
         the emulator's, not a real NIC's",
        info.guest_kernel,
        info.kind,
        info.nic_model,
        info.qemu_device,
        if info.accel == "tcg" {
            "emulated (TCG, several times slower than the host)"
        } else {
            "virtualised (KVM)"
        }
    )
}
