//! The guest's initramfs, built in memory at each start: busybox, the kernel modules the
//! testbed loads (with a `modules.dep` so `modprobe` works), this nictune binary cut to its
//! loadable segments together with the shared libraries it links, and `/init`.
//!
//! `/init` mounts the pseudo file systems, loads the virtio console (the control channel)
//! and the NIC driver with the driver's own defaults, addresses the NIC, arms the guest's
//! own power-off at the end of its lifetime (so a guest whose host side died still ends),
//! and runs `nictune vm-agent` on the control port for the host to drive.

use crate::cpio::Archive;
use crate::elf;
use crate::error::{Result, VmError};
use crate::guest::{GuestDir, Nic};
use crate::modules::ModuleTree;
use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The virtio-serial port name the agent listens on.
pub const AGENT_PORT: &str = "org.nictune.agent";
/// Where nictune sits in the guest.
pub const GUEST_NICTUNE: &str = "/bin/nictune";
/// The line `/init` prints on the console when the agent is about to start.
pub const READY_LINE: &str = "nictune-guest: ready";

/// Modules loaded before the NIC driver: the virtio PCI transport and console.
const CONTROL_MODULES: [&str; 2] = ["virtio_pci", "virtio_console"];
/// Where shared libraries are looked up (Debian's multiarch layout first).
const LIBRARY_DIRS: [&str; 6] = [
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

/// Everything that varies between guests.
#[derive(Debug, Clone)]
pub struct ImageSpec<'a> {
    /// The guest directory: kernel release, busybox, modules.
    pub guest: &'a GuestDir,
    /// The nictune executable to run in the guest.
    pub nictune: &'a Path,
    /// The emulated NIC; its driver's modules go into the image and are loaded by `/init`.
    pub nic: Nic,
    /// The guest's address on its NIC, with the prefix length.
    pub address: (Ipv4Addr, u8),
    /// The guest powers itself off after this long.
    pub lifetime: Duration,
}

/// Builds the initramfs bytes (uncompressed newc cpio).
pub fn build(spec: &ImageSpec<'_>) -> Result<Vec<u8>> {
    let mut b = Builder::default();
    for d in [
        "/bin", "/sbin", "/proc", "/sys", "/dev", "/run", "/tmp", "/etc", "/root",
    ] {
        b.dir(d);
    }
    b.file("/bin/busybox", 0o755, &read(&spec.guest.busybox())?);
    b.file("/etc/hostname", 0o644, b"nictune-guest\n");
    let modules = add_modules(&mut b, spec)?;
    add_nictune(&mut b, spec.nictune)?;
    b.file("/init", 0o755, init_script(spec, &modules).as_bytes());
    Ok(b.archive.finish())
}

/// An archive that creates each parent directory once.
#[derive(Default)]
struct Builder {
    archive: Archive,
    dirs: BTreeSet<String>,
}

impl Builder {
    fn dir(&mut self, path: &str) {
        let mut at = String::new();
        for part in path.split('/').filter(|p| !p.is_empty()) {
            at.push('/');
            at.push_str(part);
            if self.dirs.insert(at.clone()) {
                self.archive.dir(&at);
            }
        }
    }

    fn file(&mut self, path: &str, mode: u32, data: &[u8]) {
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent);
        }
        self.archive.file(path, mode, data);
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| VmError::io("reading", path, e))
}

/// Adds the modules `/init` loads and returns their paths in the guest, in load order.
fn add_modules(b: &mut Builder, spec: &ImageSpec<'_>) -> Result<Vec<String>> {
    let tree = ModuleTree::scan(&spec.guest.modules())?;
    let mut wanted: Vec<&str> = CONTROL_MODULES.to_vec();
    wanted.push(spec.nic.driver());
    let order = tree.load_order(&wanted)?;
    let base = format!("/lib/modules/{}", spec.guest.kernel_release);
    let mut paths = Vec::new();
    for name in &order {
        let m = tree.get(name).expect("load_order returns known modules");
        let data = read(&spec.guest.modules().join(&m.path))?;
        let path = format!("{base}/{}", m.path.display());
        b.file(&path, 0o644, &data);
        paths.push(path);
    }
    b.file(
        &format!("{base}/modules.dep"),
        0o644,
        tree.modules_dep(&order).as_bytes(),
    );
    let builtin = spec.guest.modules().join("modules.builtin");
    if builtin.exists() {
        b.file(&format!("{base}/modules.builtin"), 0o644, &read(&builtin)?);
    }
    Ok(paths)
}

/// nictune, cut to what the loader maps, and every library it links (recursively).
fn add_nictune(b: &mut Builder, exe: &Path) -> Result<()> {
    let bytes = read(exe)?;
    let image = elf::loadable_image(&bytes)
        .map_err(|e| VmError::Image(format!("{}: {e}", exe.display())))?;
    b.file(GUEST_NICTUNE, 0o755, &image);
    for (guest_path, host_path) in libraries(&bytes, exe)? {
        let lib = read(&host_path)?;
        let lib = elf::loadable_image(&lib).unwrap_or(lib);
        b.file(&guest_path, 0o755, &lib);
    }
    Ok(())
}

/// (path in the guest, file on the host) for the interpreter and every `DT_NEEDED` library,
/// followed transitively.
fn libraries(exe_bytes: &[u8], exe: &Path) -> Result<Vec<(String, PathBuf)>> {
    let what = |e: elf::ElfError| VmError::Image(format!("{}: {e}", exe.display()));
    let first = elf::needed(exe_bytes).map_err(what)?;
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    if let Some(interp) = &first.interpreter {
        out.push((interp.clone(), real_file(Path::new(interp))?));
        seen.insert(soname(interp));
    }
    let mut queue = first.libraries;
    while let Some(name) = queue.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let found = LIBRARY_DIRS
            .iter()
            .map(|d| Path::new(d).join(&name))
            .find(|p| p.exists())
            .ok_or_else(|| {
                VmError::Image(format!("library {name} not found in {LIBRARY_DIRS:?}"))
            })?;
        let real = real_file(&found)?;
        let more = elf::needed(&read(&real)?)
            .map_err(|e| VmError::Image(format!("{}: {e}", real.display())))?;
        queue.extend(more.libraries);
        out.push((found.display().to_string(), real));
    }
    Ok(out)
}

fn soname(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

fn real_file(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path).map_err(|e| VmError::io("resolving", path, e))
}

/// The guest's `/init` (busybox sh); `modules` are loaded in this order, the NIC driver
/// (the last) with its defaults.
pub fn init_script(spec: &ImageSpec<'_>, modules: &[String]) -> String {
    let kver = &spec.guest.kernel_release;
    let (ip, prefix) = spec.address;
    let lifetime = spec.lifetime.as_secs().max(1);
    let driver = spec.nic.driver();
    format!(
        r#"#!/bin/busybox sh
# nictune real-driver testbed guest: generated by nictune at start, runs as PID 1.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
hostname nictune-guest
# Bounded: the guest ends itself after its lifetime even if its host side is gone.
(sleep {lifetime}; echo "nictune-guest: lifetime of {lifetime} s over, powering off" > /dev/console; poweroff -f) &
for m in {modules}; do insmod $m 2>/dev/console || echo "nictune-guest: insmod $m failed" > /dev/console; done
ip link set lo up
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
ip addr add {ip}/{prefix} dev eth0
ip link set eth0 up
# Ready only once the link is: the driver's watchdog reports carrier seconds after "up".
i=0
while [ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" != 1 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done
echo "{ready} kernel {kver} nic {driver}" > /dev/console
while true; do
  {nictune} vm-agent --port {port} 2>/dev/console
  echo "nictune-guest: agent exited ($?), restarting" > /dev/console
  sleep 1
done
"#,
        modules = modules.join(" "),
        ready = READY_LINE,
        nictune = GUEST_NICTUNE,
        port = AGENT_PORT,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_init_script_loads_the_driver_addresses_the_nic_and_bounds_the_guest() {
        let guest = GuestDir {
            root: "/nonexistent".into(),
            kernel_release: "6.1.0-56-amd64".into(),
            kernel_package: String::new(),
        };
        let spec = ImageSpec {
            guest: &guest,
            nictune: Path::new("/bin/true"),
            nic: Nic::E1000e,
            address: (Ipv4Addr::new(198, 18, 1, 2), 30),
            lifetime: Duration::from_secs(600),
        };
        let s = init_script(
            &spec,
            &[
                "/lib/modules/k/virtio.ko".into(),
                "/lib/modules/k/e1000e.ko".into(),
            ],
        );
        assert!(s.starts_with("#!/bin/busybox sh\n"));
        assert!(
            s.contains("for m in /lib/modules/k/virtio.ko /lib/modules/k/e1000e.ko; do insmod $m")
        );
        assert!(s.contains("ip addr add 198.18.1.2/30 dev eth0"));
        assert!(s.contains("(sleep 600;"));
        assert!(s.contains("/bin/nictune vm-agent --port org.nictune.agent"));
    }

    #[test]
    fn parents_are_created_once_and_before_their_children() {
        let mut b = Builder::default();
        b.file("/lib/modules/x/a.ko", 0o644, b"a");
        b.file("/lib/modules/x/b.ko", 0o644, b"b");
        let dirs: Vec<&String> = b.dirs.iter().collect();
        assert_eq!(dirs, ["/lib", "/lib/modules", "/lib/modules/x"]);
    }
}
