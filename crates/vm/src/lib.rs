//! The real-driver testbed: Linux's own Intel NIC drivers (`e1000`, `e1000e`) running on
//! QEMU's emulated Intel NICs in a guest, linked to the host through a tap inside a network
//! namespace of the testbed's own, and driven from the host over a control channel.
//!
//! Where it sits: `nictune bench|tune --testbed e1000|e1000e` create a [`VmBed`]; the guest
//! runs `nictune serve` for the benchmark's far side and `nictune apply|revert|show` for its
//! settings, so the driver, its module parameters, its ethtool semantics, its interrupts and
//! the moderation mechanism are the real ones — only the hardware is QEMU's model of it
//! (QEMU's interrupt moderation, its timing floor, and an emulated CPU).
//!
//! - [`guest`]: the NIC models, the guest directory `scripts/install-guest` fills, QEMU.
//! - [`image`]: the initramfs (busybox, modules, nictune and its libraries, `/init`), with
//!   [`elf`], [`modules`] and [`cpio`] under it. Pure except for reading files.
//! - [`qemu`]: the command line as data; KVM or TCG.
//! - [`agent`]: the control channel (JSON lines over virtio-serial), both ends.
//! - [`bed`]: a running guest as one value; dropping it removes everything.
//!
//! System calls: `bed` (setns and prctl between fork and exec, kill of a recorded
//! QEMU) and `agent` (waitpid, kill in the guest).

#![warn(missing_docs)]

pub mod agent;
pub mod bed;
pub mod cpio;
pub mod elf;
pub mod error;
pub mod far;
pub mod guest;
mod hostnet;
pub mod image;
pub mod modules;
pub mod pair;
pub mod qemu;
pub mod tune;

pub use bed::{BedOptions, BootInfo, HostLink, QemuUsage, VmBed};
pub use error::{Result, VmError};
pub use guest::{GuestDir, Nic};
pub use qemu::{Accel, AccelChoice};
