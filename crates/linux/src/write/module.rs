//! Driver module parameters (`e1000.InterruptThrottleRate`): what the loaded module runs
//! with, and setting one by reloading the module with it.
//!
//! Reading. Many drivers register their parameters with permission 0 (e1000 and e1000e do,
//! in `e1000_param.c` / `param.c`: `module_param_array_named(..., 0)`), so
//! `/sys/module/<m>/parameters/` does not show them. The value a module was loaded with is
//! then, in order: what nictune's last reload recorded (`/run/nictune/module-params/<m>`,
//! gone at reboot like the load itself), the kernel command line (`<m>.<p>=v`), an
//! `options <m> p=v` line in `/etc/modprobe.d/*.conf` (what modprobe passed at boot), or
//! else nothing: the driver's default, read as the empty value. The text parsing is
//! `nictune_host::modparams`, which `show` and `doctor` read the same way.
//!
//! Writing. The module is unloaded (`delete_module`) and loaded again (`finit_module`) with
//! every parameter it ran with plus the new one; the file comes from the running kernel's
//! `modules.dep`. Unloading removes every port the driver drives, so before it each port's
//! IPv4 addresses, MTU and up state are taken, and after it restored on the port that
//! reappears at the same device (the kernel may name it differently): MTU and up state
//! first, then, once the link has its carrier, the addresses. IPv6 link-local
//! addresses come back by themselves; static IPv6 addresses and routes other than the
//! connected ones are not restored — which is why `apply` refuses a port that carries the
//! default route or the SSH session.
//!
//! A reload that cannot finish must not take the driver away:
//! - the load flags are settled before the unload: a compressed module file (`.ko.xz`,
//!   `.ko.zst`, `.ko.gz`, as Fedora, Ubuntu and Debian 13 ship them) is handed to the kernel
//!   with `MODULE_INIT_COMPRESSED_FILE` when `/sys/module/compression` names its format
//!   (Linux 5.17+, `CONFIG_MODULE_DECOMPRESS`); otherwise nothing is unloaded;
//! - parameters the driver refuses: it is loaded again with the parameters it ran with, and
//!   its ports are put back all the same;
//! - the ports' state is written (`<module>.ports` beside the parameter record) before the
//!   unload and removed once they are back, so a reload cut short between unload and load (a
//!   kill, the OOM killer) is completed by the next write, the revert: a module that is not
//!   loaded is simply loaded, and ports that have not reappeared come from that file.

#![allow(unsafe_code)]

use super::files::Roots;
use nictune_host::write::setting::Setting;
use nictune_host::write::value::HostValue;
use nictune_host::write::{HostError, HostErrorKind, Op};
use std::ffi::CString;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use nictune_host::modparams::{
    cmdline_params, modprobe_params, parse_record, render_record, Params, RECORD_DIR,
};

/// How long a reloaded driver may take to bring its ports back.
const PORT_WAIT: Duration = Duration::from_secs(15);

/// The path, relative to the modules directory, of `module`'s file in `modules.dep` text.
pub fn dep_path(modules_dep: &str, module: &str) -> Option<String> {
    let want = module.replace('-', "_");
    modules_dep.lines().find_map(|l| {
        let path = l.split(':').next()?;
        let file = path.rsplit('/').next()?;
        let name = file.split(".ko").next()?.replace('-', "_");
        (name == want).then(|| path.to_string())
    })
}

/// `modprobe`'s parameter string: `p1=v1 p2=v2`.
pub fn param_string(params: &Params) -> String {
    params
        .iter()
        .map(|(p, v)| format!("{p}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where module state lives (tests point these elsewhere).
#[derive(Debug, Clone)]
pub struct ModuleRoots {
    /// The sysfs mount point (`module/NAME/parameters`).
    pub sys: PathBuf,
    /// The procfs mount point (`cmdline` for `NAME.param=` boot parameters).
    pub proc: PathBuf,
    /// The modprobe configuration directory, `/etc/modprobe.d` on a live system.
    pub etc_modprobe: PathBuf,
    /// Where nictune records the parameters it loaded a module with (one file per module,
    /// RECORD_DIR on a live system).
    pub records: PathBuf,
}

impl ModuleRoots {
    /// The live module locations, with sysfs and procfs from `roots`.
    pub fn from(roots: &Roots) -> ModuleRoots {
        ModuleRoots {
            sys: roots.sys.clone(),
            proc: roots.proc.clone(),
            etc_modprobe: "/etc/modprobe.d".into(),
            records: RECORD_DIR.into(),
        }
    }

    fn record(&self, module: &str) -> PathBuf {
        self.records.join(module)
    }
}

/// The parameters `module` runs with, as far as they can be known (see the module docs).
pub fn loaded_params(roots: &ModuleRoots, module: &str) -> Params {
    let record_path = roots.record(module);
    let record = std::fs::read_to_string(&record_path).ok();
    let mut confs = Vec::new();
    if let Ok(dir) = std::fs::read_dir(&roots.etc_modprobe) {
        let mut files: Vec<PathBuf> = dir.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "conf"))
        {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            confs.push((f.display().to_string(), text));
        }
    }
    let cmdline = std::fs::read_to_string(roots.proc.join("cmdline")).unwrap_or_default();
    let record_path = record_path.display().to_string();
    let record = record.as_deref().map(|t| (record_path.as_str(), t));
    nictune_host::modparams::loaded(record, &confs, &cmdline, module)
        .into_iter()
        .map(|(p, v)| (p, v.value))
        .collect()
}

/// The current value of `module`'s parameter `param`; empty for the driver's default.
pub fn read(
    roots: &ModuleRoots,
    module: &str,
    param: &str,
    s: &Setting,
) -> Result<HostValue, HostError> {
    let dir = roots.sys.join("module").join(module);
    if !dir.exists() {
        let why = format!("module {module} is not loaded");
        return Err(HostError::new(Op::Read, s, HostErrorKind::NotFound(why)));
    }
    if let Ok(v) = std::fs::read_to_string(dir.join("parameters").join(param)) {
        return Ok(HostValue::Text(v.trim().to_string()));
    }
    let params = loaded_params(roots, module);
    Ok(HostValue::Text(
        params.get(param).cloned().unwrap_or_default(),
    ))
}

/// Reloads `module` once with each of `set` (parameter, value; a parameter whose value is
/// empty is removed) and every other parameter as it ran with; restores its ports'
/// addresses, MTU and up state. Errors name `s` (the first setting of the reload).
pub fn write(
    roots: &ModuleRoots,
    module: &str,
    set: &[(&str, &HostValue)],
    s: &Setting,
) -> Result<(), HostError> {
    let fail = |kind| HostError::new(Op::Write, s, kind);
    let was = loaded_params(roots, module);
    let mut params = was.clone();
    for (param, value) in set {
        let text = match value {
            HostValue::Text(t) => t.trim().to_string(),
            other => other.to_string(),
        };
        if text.is_empty() {
            params.remove(*param);
        } else {
            params.insert(param.to_string(), text);
        }
    }
    let file = module_file(roots, module).map_err(|e| fail(HostErrorKind::NotFound(e)))?;
    let flags =
        load_flags(roots, module, &file).map_err(|e| fail(HostErrorKind::Unsupported(e)))?;
    let ports = ports_to_restore(roots, module);
    save_pending_ports(roots, module, &ports).map_err(|e| {
        fail(HostErrorKind::Rejected(format!(
            "recording the ports before unloading {module} (nothing was unloaded): {e}"
        )))
    })?;
    // Everything the load needs is in hand before the unload: the file, open.
    let opened = std::fs::File::open(&file)
        .map_err(|e| fail(HostErrorKind::NotFound(format!("{}: {e}", file.display()))))?;
    let args = [&params, &was].map(|p| CString::new(param_string(p)));
    let [Ok(args), Ok(old)] = args else {
        return Err(fail(HostErrorKind::Rejected(
            "a parameter with a NUL byte".into(),
        )));
    };
    if let Err(e) = unload(module) {
        let _ = std::fs::remove_file(pending_ports_path(roots, module));
        return Err(fail(HostErrorKind::Rejected(e)));
    }
    let loaded = load(module, &opened, flags, &args, &old);
    let running = if loaded.is_ok() { &params } else { &was };
    let recorded = std::fs::write(roots.record(module), render_record(running));
    let restored = restore_ports(roots, &ports);
    if restored.is_ok() {
        let _ = std::fs::remove_file(pending_ports_path(roots, module));
    }
    loaded.map_err(|e| fail(HostErrorKind::Rejected(e)))?;
    recorded.map_err(|e| {
        fail(HostErrorKind::Rejected(format!(
            "recording the parameters: {e}"
        )))
    })?;
    restored.map_err(|e| fail(HostErrorKind::Rejected(e)))
}

/// How a module file is packed, from its name: the kernel's name for the compression.
fn compression(file: &Path) -> Result<Option<&'static str>, String> {
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    [
        (".ko", None),
        (".ko.xz", Some("xz")),
        (".ko.zst", Some("zstd")),
        (".ko.gz", Some("gzip")),
    ]
    .into_iter()
    .find(|(ext, _)| name.ends_with(ext))
    .map(|(_, kind)| kind)
    .ok_or_else(|| {
        format!(
            "{}: not a module file nictune can load (.ko, .ko.xz, .ko.zst or .ko.gz)",
            file.display()
        )
    })
}

/// The kernel's `MODULE_INIT_COMPRESSED_FILE` (include/uapi/linux/module.h, Linux 5.17).
const MODULE_INIT_COMPRESSED_FILE: libc::c_uint = 4;

/// The `finit_module` flags that load `file`, decided before anything is unloaded: a
/// compressed file only if the kernel decompresses that format itself.
fn load_flags(
    roots: &ModuleRoots,
    module: &str,
    file: &Path,
) -> Result<nix::kmod::ModuleInitFlags, String> {
    let Some(kind) = compression(file)? else {
        return Ok(nix::kmod::ModuleInitFlags::empty());
    };
    let kernel = std::fs::read_to_string(roots.sys.join("module/compression")).unwrap_or_default();
    if kernel.trim() == kind {
        return Ok(nix::kmod::ModuleInitFlags::from_bits_retain(
            MODULE_INIT_COMPRESSED_FILE,
        ));
    }
    let why = match kernel.trim() {
        "" => "no /sys/module/compression: built without CONFIG_MODULE_DECOMPRESS".to_string(),
        other => format!("it decompresses {other} only"),
    };
    Err(format!(
        "{module}'s file {} is {kind}-compressed and this kernel does not decompress {kind} \
         modules itself ({why}); nictune does not unpack module files, so {module} was not \
         unloaded. Set the parameter in modprobe.d (nictune export) and reload the driver or reboot",
        file.display()
    ))
}

/// `/lib/modules/<release>/<path from modules.dep>`.
fn module_file(roots: &ModuleRoots, module: &str) -> Result<PathBuf, String> {
    let release = std::fs::read_to_string(roots.proc.join("sys/kernel/osrelease"))
        .map_err(|e| format!("reading the kernel release: {e}"))?;
    let base = Path::new("/lib/modules").join(release.trim());
    let dep = std::fs::read_to_string(base.join("modules.dep"))
        .map_err(|e| format!("{}: {e}", base.join("modules.dep").display()))?;
    dep_path(&dep, module)
        .map(|p| base.join(p))
        .ok_or_else(|| format!("{module} is not in {}", base.join("modules.dep").display()))
}

/// Unloads `module`; one that is not loaded (a reload cut short) is fine.
fn unload(module: &str) -> Result<(), String> {
    let name = CString::new(module).map_err(|_| "module name with a NUL byte".to_string())?;
    match nix::kmod::delete_module(&name, nix::kmod::DeleteModuleFlags::O_NONBLOCK) {
        Ok(()) | Err(nix::errno::Errno::ENOENT) => Ok(()),
        Err(e) => Err(format!(
            "unloading {module} (still loaded, nothing changed): {e}"
        )),
    }
}

/// Loads `module` from `file` with `args`; if the driver refuses them, loads it again with
/// `was`, the parameters it ran with.
fn load(
    module: &str,
    file: &std::fs::File,
    flags: nix::kmod::ModuleInitFlags,
    args: &CString,
    was: &CString,
) -> Result<(), String> {
    match nix::kmod::finit_module(file, args, flags) {
        Ok(()) => Ok(()),
        Err(e) => {
            // Leave the driver loaded, as it ran, if the new parameters were refused.
            let note = match nix::kmod::finit_module(file, was, flags) {
                Ok(()) => format!("; loaded again with {was:?}"),
                Err(e) => format!("; could not load it again ({e})"),
            };
            Err(format!("loading {module} with {args:?}: {e}{note}"))
        }
    }
}

/// The interfaces (in this network namespace) of the devices `module` drives: what a
/// reload takes down.
pub fn ports_bound(module: &str) -> Vec<String> {
    let roots = ModuleRoots::from(&Roots::live());
    ports_of(&roots, module)
        .into_iter()
        .map(|p| p.name)
        .collect()
}

/// The kernel driver bound to `iface`'s device (in this network namespace), from its
/// `device/driver` link; `None` for a virtual interface or one that does not exist.
pub fn driver_of(iface: &str) -> Option<String> {
    let link = std::fs::read_link(format!("/sys/class/net/{iface}/device/driver")).ok()?;
    Some(link.file_name()?.to_str()?.to_string())
}

/// A port of the driver before the reload.
#[derive(Debug, Clone)]
struct Port {
    name: String,
    /// The canonical `/sys/.../device` path, which survives the reload.
    device: PathBuf,
    addrs: Vec<(Ipv4Addr, u8)>,
    mtu: u32,
    up: bool,
    /// Whether it had a link: only then is one waited for after the reload.
    carrier: bool,
}

impl Port {
    /// One line of the pending-ports file: name, device, MTU, up, carrier, addresses.
    fn line(&self) -> String {
        let addrs: Vec<String> = self.addrs.iter().map(|(a, p)| format!("{a}/{p}")).collect();
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}",
            self.name,
            self.device.display(),
            self.mtu,
            u8::from(self.up),
            u8::from(self.carrier),
            addrs.join(",")
        )
    }

    fn parse(line: &str) -> Option<Port> {
        let f: Vec<&str> = line.split('\t').collect();
        let [name, device, mtu, up, carrier, addrs] = f.as_slice() else {
            return None;
        };
        let addrs = addrs
            .split(',')
            .filter(|a| !a.is_empty())
            .map(|a| {
                let (ip, prefix) = a.split_once('/')?;
                let prefix: u8 = prefix.parse().ok()?;
                (prefix <= 32).then_some((ip.parse().ok()?, prefix))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Port {
            name: name.to_string(),
            device: PathBuf::from(device),
            mtu: mtu.parse().ok()?,
            up: *up == "1",
            carrier: *carrier == "1",
            addrs,
        })
    }
}

fn pending_ports_path(roots: &ModuleRoots, module: &str) -> PathBuf {
    roots.records.join(format!("{module}.ports"))
}

/// The ports a reload must put back: those bound now, and those a reload cut short left
/// behind (in the pending file, at a device with no interface now).
fn ports_to_restore(roots: &ModuleRoots, module: &str) -> Vec<Port> {
    let mut ports = ports_of(roots, module);
    let limit = nictune_core::input::KERNEL_FILE;
    let left = nictune_core::input::read_file(&pending_ports_path(roots, module), limit)
        .unwrap_or_default();
    for port in left.lines().filter_map(Port::parse) {
        if !ports.iter().any(|p| p.device == port.device)
            && interface_at(roots, &port.device).is_none()
        {
            ports.push(port);
        }
    }
    ports
}

/// The interface at `device` now, if any.
fn interface_at(roots: &ModuleRoots, device: &Path) -> Option<String> {
    std::fs::read_dir(roots.sys.join("class/net"))
        .ok()?
        .flatten()
        .find(|e| std::fs::canonicalize(e.path().join("device")).is_ok_and(|d| d == device))
        .map(|e| e.file_name().to_string_lossy().into_owned())
}

/// Writes the ports' state, durably, before the unload.
fn save_pending_ports(roots: &ModuleRoots, module: &str, ports: &[Port]) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(&roots.records)?;
    let path = pending_ports_path(roots, module);
    let tmp = path.with_extension("ports.tmp");
    let mut f = std::fs::File::create(&tmp)?;
    for p in ports {
        writeln!(f, "{}", p.line())?;
    }
    f.sync_all()?;
    std::fs::rename(&tmp, &path)
}

/// The interfaces whose device is bound to `module`.
fn ports_of(roots: &ModuleRoots, module: &str) -> Vec<Port> {
    let net = roots.sys.join("class/net");
    let Ok(dir) = std::fs::read_dir(&net) else {
        return Vec::new();
    };
    let mut ports = Vec::new();
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let driver = std::fs::read_link(e.path().join("device/driver")).ok();
        let bound = driver.is_some_and(|d| d.file_name().is_some_and(|f| f == module));
        let Ok(device) = std::fs::canonicalize(e.path().join("device")) else {
            continue;
        };
        if bound {
            let read = |f: &str| std::fs::read_to_string(e.path().join(f)).unwrap_or_default();
            let flags = u32::from_str_radix(read("flags").trim().trim_start_matches("0x"), 16);
            ports.push(Port {
                addrs: ipv4_addrs(&name),
                mtu: read("mtu").trim().parse().unwrap_or(0),
                up: flags.is_ok_and(|f| f & libc::IFF_UP as u32 != 0),
                carrier: read("carrier").trim() == "1",
                name,
                device,
            });
        }
    }
    ports
}

fn ipv4_addrs(iface: &str) -> Vec<(Ipv4Addr, u8)> {
    let Ok(all) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    all.filter(|a| a.interface_name == iface || a.interface_name.starts_with(&format!("{iface}:")))
        .filter_map(|a| {
            let ip = a.address?.as_sockaddr_in()?.ip();
            let mask = a.netmask.and_then(|m| m.as_sockaddr_in().map(|m| m.ip()));
            Some((ip, mask.map_or(32, |m| u32::from(m).count_ones() as u8)))
        })
        .collect()
}

/// Waits for each port to reappear at its device, then restores it; a port that fails does
/// not stop the others, and the error names every one that did.
fn restore_ports(roots: &ModuleRoots, ports: &[Port]) -> Result<(), String> {
    let failed: Vec<String> = ports
        .iter()
        .filter_map(|p| restore_port(roots, p).err())
        .collect();
    match failed.is_empty() {
        true => Ok(()),
        false => Err(failed.join("; ")),
    }
}

fn restore_port(roots: &ModuleRoots, port: &Port) -> Result<(), String> {
    let name = wait_for_device(roots, &port.device).ok_or_else(|| {
        format!(
            "{} did not come back within {} s",
            port.name,
            PORT_WAIT.as_secs()
        )
    })?;
    ifconfig::bring_up(&name, port).map_err(|e| format!("restoring {name}: {e}"))?;
    // The addresses once the link is up: a neighbour entry created before it (by traffic
    // sent to the restored route) would spend its first ARP probes on a link without
    // carrier and wait a whole retransmit interval (1 s) for the next. A port that had no
    // link before gets its addresses without waiting.
    let linked = !(port.up && port.carrier) || wait_for_carrier(roots, &name);
    ifconfig::addresses(&name, port).map_err(|e| format!("restoring {name}: {e}"))?;
    match linked {
        true => Ok(()),
        false => Err(format!(
            "{name} is back but its link did not come up within {} s",
            PORT_WAIT.as_secs()
        )),
    }
}

/// Waits until `name` has a carrier again (a reloaded NIC renegotiates its link: ≈2–3 s
/// on QEMU's e1000), so the change is done when the port carries traffic again.
fn wait_for_carrier(roots: &ModuleRoots, name: &str) -> bool {
    let file = roots.sys.join("class/net").join(name).join("carrier");
    let end = Instant::now() + PORT_WAIT;
    while Instant::now() < end {
        if std::fs::read_to_string(&file).is_ok_and(|c| c.trim() == "1") {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn wait_for_device(roots: &ModuleRoots, device: &Path) -> Option<String> {
    let end = Instant::now() + PORT_WAIT;
    while Instant::now() < end {
        if let Some(name) = interface_at(roots, device) {
            return Some(name);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// The classic interface ioctls (SIOCSIFMTU, SIOCSIFADDR, SIOCSIFNETMASK, SIOCSIFFLAGS) on
/// an `AF_INET` datagram socket: enough to put back IPv4 addresses, MTU and up state.
mod ifconfig {
    use super::Port;
    use std::io;
    use std::net::Ipv4Addr;

    /// The port's MTU and, if it was up, its up flag.
    pub(super) fn bring_up(name: &str, port: &Port) -> io::Result<()> {
        let sock = Socket::new()?;
        if port.mtu > 0 {
            let mut req = Req::new(name)?;
            req.0.ifr_ifru.ifru_mtu = port.mtu as i32;
            sock.ioctl(libc::SIOCSIFMTU, &mut req)?;
        }
        if port.up {
            let mut req = Req::new(name)?;
            sock.ioctl(libc::SIOCGIFFLAGS, &mut req)?;
            // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
            let flags = unsafe { req.0.ifr_ifru.ifru_flags };
            req.0.ifr_ifru.ifru_flags = flags | libc::IFF_UP as libc::c_short;
            sock.ioctl(libc::SIOCSIFFLAGS, &mut req)?;
        }
        Ok(())
    }

    /// The port's IPv4 addresses.
    pub(super) fn addresses(name: &str, port: &Port) -> io::Result<()> {
        let sock = Socket::new()?;
        for (i, (addr, prefix)) in port.addrs.iter().enumerate() {
            // The first address is the interface's own; more go on aliases `name:N`.
            let label = if i == 0 {
                name.to_string()
            } else {
                format!("{name}:{i}")
            };
            let mut req = Req::new(&label)?;
            req.set_addr(*addr);
            sock.ioctl(libc::SIOCSIFADDR, &mut req)?;
            let mask = Ipv4Addr::from(u32::MAX.checked_shl(32 - u32::from(*prefix)).unwrap_or(0));
            let mut req = Req::new(&label)?;
            req.set_addr(mask);
            sock.ioctl(libc::SIOCSIFNETMASK, &mut req)?;
        }
        Ok(())
    }

    struct Socket(libc::c_int);

    impl Socket {
        fn new() -> io::Result<Socket> {
            // SAFETY: plain socket(2); the result is checked.
            let fd =
                unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(Socket(fd))
        }

        fn ioctl(&self, request: libc::c_ulong, req: &mut Req) -> io::Result<()> {
            // SAFETY: req is a properly initialised ifreq that lives across the call.
            let r = unsafe { libc::ioctl(self.0, request as _, &mut req.0 as *mut libc::ifreq) };
            if r < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        }
    }

    impl Drop for Socket {
        fn drop(&mut self) {
            // SAFETY: the descriptor is ours and closed once.
            unsafe { libc::close(self.0) };
        }
    }

    struct Req(libc::ifreq);

    impl Req {
        fn new(name: &str) -> io::Result<Req> {
            if name.len() >= libc::IFNAMSIZ || name.contains('\0') {
                return Err(io::Error::other(format!("bad interface name {name:?}")));
            }
            // SAFETY: ifreq is plain old data; all-zero is a valid value.
            let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
            for (dst, src) in req.ifr_name.iter_mut().zip(name.bytes()) {
                *dst = src as libc::c_char;
            }
            Ok(Req(req))
        }

        fn set_addr(&mut self, addr: Ipv4Addr) {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: 0,
                sin_addr: libc::in_addr {
                    s_addr: u32::from(addr).to_be(),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in the sockaddr member of the union (both 16 bytes).
            unsafe {
                std::ptr::write(
                    &mut self.0.ifr_ifru.ifru_addr as *mut libc::sockaddr as *mut libc::sockaddr_in,
                    sin,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_make_the_modprobe_string() {
        let p = Params::from([
            ("TxIntDelay".into(), "0".into()),
            ("InterruptThrottleRate".into(), "500,500".into()),
        ]);
        assert_eq!(
            param_string(&p),
            "InterruptThrottleRate=500,500 TxIntDelay=0"
        );
    }

    fn roots_in(dir: &Path) -> ModuleRoots {
        ModuleRoots {
            sys: dir.join("sys"),
            proc: dir.join("proc"),
            etc_modprobe: dir.join("modprobe.d"),
            records: dir.join("records"),
        }
    }

    #[test]
    fn a_compressed_module_loads_only_if_the_kernel_unpacks_its_format() {
        let dir = tempfile::tempdir().unwrap();
        let roots = roots_in(dir.path());
        let plain = Path::new("/lib/modules/6.1/e1000.ko");
        let xz = Path::new("/lib/modules/6.1/e1000.ko.xz");
        let zst = Path::new("/lib/modules/6.1/e1000.ko.zst");
        assert_eq!(
            load_flags(&roots, "e1000", plain).unwrap(),
            nix::kmod::ModuleInitFlags::empty()
        );
        // No /sys/module/compression: a kernel without CONFIG_MODULE_DECOMPRESS.
        let e = load_flags(&roots, "e1000", xz).unwrap_err();
        assert!(
            e.contains("xz-compressed") && e.contains("CONFIG_MODULE_DECOMPRESS"),
            "{e}"
        );
        assert!(e.contains("was not unloaded"), "{e}");
        std::fs::create_dir_all(roots.sys.join("module")).unwrap();
        std::fs::write(roots.sys.join("module/compression"), "zstd\n").unwrap();
        assert_eq!(
            load_flags(&roots, "e1000", zst).unwrap().bits(),
            MODULE_INIT_COMPRESSED_FILE
        );
        let e = load_flags(&roots, "e1000", xz).unwrap_err();
        assert!(e.contains("it decompresses zstd only"), "{e}");
        let e = load_flags(&roots, "e1000", Path::new("/x/e1000.o")).unwrap_err();
        assert!(e.contains(".ko.zst"), "{e}");
    }

    #[test]
    fn the_pending_ports_survive_a_reload_cut_short() {
        let dir = tempfile::tempdir().unwrap();
        let roots = roots_in(dir.path());
        std::fs::create_dir_all(roots.sys.join("class/net")).unwrap();
        let gone = Port {
            name: "eth1".into(),
            device: dir.path().join("pci0000:00/0000:00:03.0"),
            addrs: vec![
                ("198.18.0.1".parse().unwrap(), 24),
                ("198.18.1.1".parse().unwrap(), 32),
            ],
            mtu: 9000,
            up: true,
            carrier: false,
        };
        save_pending_ports(&roots, "e1000", std::slice::from_ref(&gone)).unwrap();
        // The unload happened and the load did not: no interface at that device, so the
        // next reload (the revert) puts the port back from the file.
        let left = ports_to_restore(&roots, "e1000");
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].line(), gone.line());
        assert_eq!(left[0].addrs, gone.addrs);
        // Garbage lines are skipped, not trusted.
        let path = pending_ports_path(&roots, "e1000");
        std::fs::write(
            &path,
            format!(
                "{}\nx\ty\n{}\t/a\t1\t1\t1\t1.2.3.4/99\n",
                gone.line(),
                "eth2"
            ),
        )
        .unwrap();
        assert_eq!(ports_to_restore(&roots, "e1000").len(), 1);
        // An interface at that device again: its state now is what counts, not the file's.
        let dev = &gone.device;
        std::fs::create_dir_all(dev).unwrap();
        std::fs::create_dir_all(roots.sys.join("class/net/eth1")).unwrap();
        std::os::unix::fs::symlink(dev, roots.sys.join("class/net/eth1/device")).unwrap();
        assert!(ports_to_restore(&roots, "e1000").is_empty());
    }

    #[test]
    fn modules_dep_finds_the_file_by_module_name() {
        let dep = "kernel/drivers/net/ethernet/intel/e1000e/e1000e.ko: kernel/drivers/ptp/ptp.ko\n\
                   kernel/drivers/net/ethernet/intel/e1000/e1000.ko.xz:\n";
        assert_eq!(
            dep_path(dep, "e1000").as_deref(),
            Some("kernel/drivers/net/ethernet/intel/e1000/e1000.ko.xz")
        );
        assert_eq!(
            dep_path(dep, "e1000e").as_deref(),
            Some("kernel/drivers/net/ethernet/intel/e1000e/e1000e.ko")
        );
        assert_eq!(dep_path(dep, "igb"), None);
    }
}
