//! The QEMU command line of one guest, built as data (pure and snapshot-testable), and the
//! choice between KVM and TCG.
//!
//! A guest is a 1-vCPU PC with: the kernel and initramfs given directly (no disk, no
//! firmware boot menu), the serial console in a file, the emulated NIC on a tap created by
//! QEMU inside the testbed's namespace, a virtio-serial port for the control channel, and no
//! other devices (`-nodefaults`).

use crate::guest::Nic;
use crate::image::AGENT_PORT;
use serde::Serialize;
use std::path::PathBuf;

/// How the guest's CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    /// Hardware virtualisation through /dev/kvm.
    Kvm,
    /// QEMU's software emulation (Tiny Code Generator): every guest instruction is
    /// translated, so the guest's CPU is several times slower than the host's.
    Tcg,
}

impl Accel {
    /// QEMU's `-accel` value, `kvm` or `tcg`.
    pub fn name(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// What the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccelChoice {
    /// KVM where a usable one is found, else TCG.
    Auto,
    /// This accelerator and no other; a failing KVM boot is an error, not a fallback.
    Only(Accel),
}

/// Everything the command line depends on.
#[derive(Debug, Clone)]
pub struct QemuSpec {
    /// The QEMU binary (`qemu_program`).
    pub program: PathBuf,
    /// `-name`: the guest's name, `nictune-vm-<pid>-<n>`.
    pub name: String,
    /// `-accel`; KVM adds `-cpu max`.
    pub accel: Accel,
    /// `-m`: the guest's RAM, MiB.
    pub memory_mib: u32,
    /// `-kernel`: the guest kernel image (the guest directory's `vmlinuz`).
    pub kernel: PathBuf,
    /// `-initrd`: the initramfs `image` built.
    pub initrd: PathBuf,
    /// The file the guest's serial console (ttyS0) is written to.
    pub console: PathBuf,
    /// The Unix socket QEMU listens on for the agent's virtio-serial port.
    pub agent_socket: PathBuf,
    /// `-pidfile`: where QEMU writes its pid.
    pub pidfile: PathBuf,
    /// The emulated NIC (`-device`).
    pub nic: Nic,
    /// The host tap the NIC's netdev uses (`ifname=`).
    pub tap: String,
    /// The NIC's MAC address.
    pub mac: [u8; 6],
}

impl QemuSpec {
    /// The arguments after the program name.
    pub fn args(&self) -> Vec<String> {
        let p = |p: &PathBuf| p.display().to_string();
        let mac = self
            .mac
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":");
        let mut a: Vec<String> = [
            "-name",
            &self.name,
            "-nodefaults",
            "-no-user-config",
            "-no-reboot",
            "-display",
            "none",
            "-accel",
            self.accel.name(),
            "-smp",
            "1",
            "-m",
            &self.memory_mib.to_string(),
            "-kernel",
            &p(&self.kernel),
            "-initrd",
            &p(&self.initrd),
            "-append",
            "console=ttyS0 panic=-1 loglevel=4",
            "-serial",
            &format!("file:{}", p(&self.console)),
            "-chardev",
            &format!(
                "socket,id=agent,path={},server=on,wait=off",
                p(&self.agent_socket)
            ),
            "-device",
            "virtio-serial-pci",
            "-device",
            &format!("virtserialport,chardev=agent,name={AGENT_PORT}"),
            "-netdev",
            &format!("tap,id=n0,ifname={},script=no,downscript=no", self.tap),
            "-device",
            &format!("{},netdev=n0,mac={mac}", self.nic.qemu_device()),
            "-pidfile",
            &p(&self.pidfile),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if self.accel == Accel::Kvm {
            a.extend(["-cpu".into(), "max".into()]);
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_has_one_nic_on_the_tap_and_the_agent_port() {
        let spec = QemuSpec {
            program: "qemu-system-x86_64".into(),
            name: "nictune-vm-1-0".into(),
            accel: Accel::Tcg,
            memory_mib: 512,
            kernel: "/g/vmlinuz".into(),
            initrd: "/r/initrd".into(),
            console: "/r/console.log".into(),
            agent_socket: "/r/agent.sock".into(),
            pidfile: "/r/qemu.pid".into(),
            nic: Nic::E1000,
            tap: "ntv1x0".into(),
            mac: [0x52, 0x54, 0, 0x4e, 0x54, 1],
        };
        let a = spec.args().join(" ");
        assert!(a.contains("-accel tcg -smp 1 -m 512"), "{a}");
        assert!(a.contains("-netdev tap,id=n0,ifname=ntv1x0,script=no,downscript=no"));
        assert!(a.contains("-device e1000-82545em,netdev=n0,mac=52:54:00:4e:54:01"));
        assert!(a.contains("virtserialport,chardev=agent,name=org.nictune.agent"));
        assert!(a.contains("-nodefaults"));
        assert!(!a.contains("-cpu"));
    }
}
