//! Settings that live in files: the device-wide sysfs NAPI files, RPS/XPS and RFS files per
//! queue, sysctls under `/proc/sys` (of the namespace the process is in) and IRQ affinity.
//!
//! Paths are built from [`Roots`], so tests run against a directory tree in a temp dir.

use nictune_core::input;
use nictune_host::write::setting::{Key, Object, Setting, Steering, SysfsNapi};
use nictune_host::write::value::{CpuSet, HostValue};
use nictune_host::write::{HostError, HostErrorKind, Op};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Where sysfs and procfs are mounted (`/sys`, `/proc` on a live system).
#[derive(Debug, Clone)]
pub struct Roots {
    /// The sysfs mount point.
    pub sys: PathBuf,
    /// The procfs mount point.
    pub proc: PathBuf,
}

impl Roots {
    /// `/sys` and `/proc`.
    pub fn live() -> Roots {
        Roots {
            sys: "/sys".into(),
            proc: "/proc".into(),
        }
    }

    /// `sys` and `proc` below `root`: a test tree.
    pub fn under(root: &Path) -> Roots {
        Roots {
            sys: root.join("sys"),
            proc: root.join("proc"),
        }
    }

    fn net(&self, iface: &str) -> PathBuf {
        self.sys.join("class/net").join(iface)
    }
}

/// How a file spells its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A decimal integer.
    Int,
    /// Hex mask in 32-bit groups (`rps_cpus`, `xps_cpus`).
    Mask,
    /// cpulist (`smp_affinity_list`).
    List,
    /// Free text (sysctls).
    Text,
}

/// The file behind a setting, if it lives in one.
pub fn file_for(setting: &Setting, roots: &Roots) -> Option<(PathBuf, Form)> {
    let file = match (&setting.target, &setting.key) {
        (Object::Device { iface }, Key::SysfsNapi(s)) => {
            (roots.net(iface).join(sysfs_file(*s)), Form::Int)
        }
        (Object::RxQueue { iface, queue }, Key::Steering(s)) => {
            let dir = roots.net(iface).join(format!("queues/rx-{queue}"));
            match s {
                Steering::RpsCpus => (dir.join("rps_cpus"), Form::Mask),
                Steering::RpsFlowCnt => (dir.join("rps_flow_cnt"), Form::Int),
                Steering::XpsCpus => return None,
            }
        }
        (Object::TxQueue { iface, queue }, Key::Steering(Steering::XpsCpus)) => (
            roots.net(iface).join(format!("queues/tx-{queue}/xps_cpus")),
            Form::Mask,
        ),
        (Object::Netns, Key::Sysctl(name)) => (
            roots.proc.join("sys").join(name.replace('.', "/")),
            Form::Text,
        ),
        (Object::Irq { irq }, Key::IrqAffinity) => (
            roots.proc.join(format!("irq/{irq}/smp_affinity_list")),
            Form::List,
        ),
        _ => return None,
    };
    Some(file)
}

fn sysfs_file(s: SysfsNapi) -> &'static str {
    match s {
        SysfsNapi::NapiDeferHardIrqs => "napi_defer_hard_irqs",
        SysfsNapi::GroFlushTimeout => "gro_flush_timeout",
        SysfsNapi::Threaded => "threaded",
    }
}

/// Parses file text in `form`.
pub fn parse(text: &str, form: Form) -> Result<HostValue, String> {
    let t = text.trim();
    match form {
        Form::Int => t
            .parse()
            .map(HostValue::Int)
            .map_err(|_| format!("{t:?} is not an integer")),
        Form::Mask => CpuSet::parse_mask(t)
            .map(HostValue::Cpus)
            .map_err(|e| e.to_string()),
        Form::List => CpuSet::parse_list(t)
            .map(HostValue::Cpus)
            .map_err(|e| e.to_string()),
        Form::Text => Ok(HostValue::text(t)),
    }
}

/// The text written for `value` in `form`.
pub fn render(value: &HostValue, form: Form) -> String {
    match (value, form) {
        (HostValue::Cpus(c), Form::Mask) => c.to_mask(),
        (HostValue::Cpus(c), Form::List) => c.to_string(),
        (v, _) => v.to_string(),
    }
}

/// Reads a setting's file.
pub fn read(setting: &Setting, path: &Path, form: Form) -> Result<HostValue, HostError> {
    let text = read_text(setting, path)?;
    parse(&text, form).map_err(|why| HostError::new(Op::Read, setting, HostErrorKind::Garbled(why)))
}

/// Reads a kernel file for `setting`, bounded by [`input::KERNEL_FILE`].
pub fn read_text(setting: &Setting, path: &Path) -> Result<String, HostError> {
    input::read_file(path, input::KERNEL_FILE).map_err(|e| match e.io() {
        Some(io) => io_error(Op::Read, setting, path, io),
        None => HostError::new(Op::Read, setting, HostErrorKind::Garbled(e.to_string())),
    })
}

/// Writes a setting's file in one `write(2)`, as sysfs and procfs expect; never creates it.
/// Truncating, as a shell's `>` does, is a no-op on sysfs and procfs and keeps a shorter value
/// from leaving the tail of a longer one in an ordinary file (test trees).
pub fn write(
    setting: &Setting,
    path: &Path,
    form: Form,
    value: &HostValue,
) -> Result<(), HostError> {
    let text = render(value, form);
    fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| io_error(Op::Write, setting, path, &e))
}

/// Maps an I/O error to what the user can do about it. A missing file under an existing
/// object means the kernel or device does not offer the setting.
pub fn io_error(op: Op, setting: &Setting, path: &Path, e: &io::Error) -> HostError {
    let detail = format!("{}: {e}", path.display());
    let kind = match e.raw_os_error() {
        Some(nix::libc::ENOENT) if path.parent().is_some_and(Path::exists) => {
            HostErrorKind::Unsupported(detail)
        }
        Some(nix::libc::ENOENT) => HostErrorKind::NotFound(detail),
        Some(nix::libc::EACCES | nix::libc::EPERM) => HostErrorKind::Permission(detail),
        Some(nix::libc::EOPNOTSUPP) => HostErrorKind::Unsupported(detail),
        _ => HostErrorKind::Rejected(detail),
    };
    HostError::new(op, setting, kind)
}

/// Counts `queues/rx-*` and `queues/tx-*` of a device.
pub fn queue_counts(iface: &str, roots: &Roots) -> io::Result<(u32, u32)> {
    let mut counts = (0, 0);
    for entry in fs::read_dir(roots.net(iface).join("queues"))? {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("rx-") {
            counts.0 += 1;
        } else if name.starts_with("tx-") {
            counts.1 += 1;
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, Roots) {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::under(dir.path());
        let q = roots.net("v0").join("queues");
        for d in ["rx-0", "rx-1", "tx-0"] {
            fs::create_dir_all(q.join(d)).unwrap();
        }
        // As a 2-CPU 6.18 kernel prints them.
        fs::write(q.join("rx-0/rps_cpus"), "0\n").unwrap();
        fs::write(roots.net("v0").join("gro_flush_timeout"), "0\n").unwrap();
        fs::create_dir_all(roots.proc.join("sys/net/core")).unwrap();
        fs::write(roots.proc.join("sys/net/core/somaxconn"), "4096\n").unwrap();
        (dir, roots)
    }

    #[test]
    fn files_round_trip_in_their_own_spelling() {
        let (_dir, roots) = tree();
        let rps = Setting::new(
            Object::RxQueue {
                iface: "v0".into(),
                queue: 0,
            },
            Key::Steering(Steering::RpsCpus),
        );
        let (path, form) = file_for(&rps, &roots).unwrap();
        assert_eq!(
            read(&rps, &path, form).unwrap(),
            HostValue::Cpus(CpuSet::default())
        );
        write(
            &rps,
            &path,
            form,
            &HostValue::Cpus(CpuSet::from_iter([0, 1])),
        )
        .unwrap();
        // The spelling a 2-CPU kernel prints back; longer masks keep 8-digit groups.
        assert_eq!(fs::read_to_string(&path).unwrap(), "3");
        assert_eq!(
            read(&rps, &path, form).unwrap(),
            HostValue::Cpus(CpuSet::from_iter([0, 1]))
        );
        let sysctl = Setting::new(Object::Netns, Key::Sysctl("net.core.somaxconn".into()));
        let (path, form) = file_for(&sysctl, &roots).unwrap();
        assert_eq!(read(&sysctl, &path, form).unwrap(), HostValue::text("4096"));
        assert_eq!(queue_counts("v0", &roots).unwrap(), (2, 1));
    }

    #[test]
    fn missing_files_say_unsupported_and_missing_objects_not_found() {
        let (_dir, roots) = tree();
        let flow = Setting::new(
            Object::RxQueue {
                iface: "v0".into(),
                queue: 0,
            },
            Key::Steering(Steering::RpsFlowCnt),
        );
        let (path, form) = file_for(&flow, &roots).unwrap();
        let err = read(&flow, &path, form).unwrap_err();
        assert!(matches!(err.kind, HostErrorKind::Unsupported(_)), "{err}");
        let gone = Setting::new(
            Object::Device {
                iface: "nope".into(),
            },
            Key::SysfsNapi(SysfsNapi::Threaded),
        );
        let (path, form) = file_for(&gone, &roots).unwrap();
        let err = write(&gone, &path, form, &HostValue::Int(1)).unwrap_err();
        assert!(matches!(err.kind, HostErrorKind::NotFound(_)), "{err}");
        assert!(!path.exists(), "writes never create files");
    }
}
