//! 1-byte TCP request/response into a QEMU 7.2 TCG guest through an emulated Intel NIC
//! (`-device e1000-82545em` or `-device e1000e`): the model of the real-driver testbed.
//!
//! [`qemu`] holds QEMU's interrupt logic for the two devices.

pub mod qemu;
