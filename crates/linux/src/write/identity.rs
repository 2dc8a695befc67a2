//! What identifies an interface and an IRQ on the live host
//! (`nictune_host::write::identity`): an interface's permanent address (RTM_GETLINK's
//! IFLA_PERM_ADDRESS), bus address (IFLA_PARENT_DEV_NAME, else the name of the sysfs
//! `device` link) and ifindex; every IRQ's action names (`/sys/kernel/irq/N/actions`, else
//! the `/proc/irq/N/<name>/` directories); and an interface's IRQs (its PCI function's
//! `msi_irqs`, else its INTx line).
//!
//! Only the interface name, checked as the command line's are, and IRQ numbers read from
//! `/proc/irq` become parts of paths: action names recorded in a journal are compared with
//! what the kernel lists, never looked up as files.

use super::files::Roots;
use crate::rtnetlink::link::request::{self as link, Link};
use crate::rtnetlink::RouteSocket;
use nictune_core::input;
use nictune_host::write::identity::{IfaceId, IrqActions};
use nictune_host::write::{HostError, HostErrorKind, Op};
use std::fs;
use std::path::Path;

fn error(what: &str, kind: HostErrorKind) -> HostError {
    HostError {
        op: Op::Read,
        setting: what.to_string(),
        kind,
    }
}

/// What identifies the device named `iface` in this network namespace. Not found when there
/// is none (or the name is not one the command line would take).
pub fn iface_id(iface: &str, roots: &Roots) -> Result<IfaceId, HostError> {
    let what = format!("{iface} identity");
    if let Err(e) = nictune_core::names::check_iface(iface) {
        return Err(error(&what, HostErrorKind::NotFound(e.to_string())));
    }
    let dir = roots.sys.join("class/net").join(iface);
    let index = read_small(&dir.join("ifindex")).ok_or_else(|| {
        error(
            &what,
            HostErrorKind::NotFound(format!("no interface {iface}")),
        )
    })?;
    let ifindex = index.trim().parse().ok();
    let link = RouteSocket::open()
        .and_then(|sock| link::get(&sock, iface))
        .ok();
    let device_link = || {
        let target = fs::read_link(dir.join("device")).ok()?;
        Some(target.file_name()?.to_string_lossy().into_owned())
    };
    Ok(IfaceId {
        iface: iface.to_string(),
        perm_address: link.as_ref().and_then(Link::perm_address),
        bus: link
            .as_ref()
            .and_then(Link::parent_device)
            .or_else(device_link),
        ifindex,
    })
}

/// What identifies every interface of this network namespace (those `/sys/class/net` lists
/// under a name the command line would take).
pub fn iface_ids(roots: &Roots) -> Result<Vec<IfaceId>, HostError> {
    let entries = listing(&roots.sys.join("class/net"), "interfaces")?;
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| nictune_core::names::check_iface(n).is_ok())
        .collect();
    names.sort();
    // One gone between the listing and its read is no longer there to find.
    Ok(names
        .iter()
        .filter_map(|n| iface_id(n, roots).ok())
        .collect())
}

/// The entries of directory `dir`, which lists `what`; unsupported where it cannot be read.
fn listing(dir: &Path, what: &str) -> Result<fs::ReadDir, HostError> {
    fs::read_dir(dir).map_err(|e| {
        error(
            what,
            HostErrorKind::Unsupported(format!("{}: {e}", dir.display())),
        )
    })
}

fn read_small(path: &Path) -> Option<String> {
    input::read_file(path, input::KERNEL_FILE).ok()
}

/// Every IRQ under `/proc/irq` with its action names.
pub fn irq_actions(roots: &Roots) -> Result<IrqActions, HostError> {
    let entries = listing(&roots.proc.join("irq"), "irq")?;
    let mut out = IrqActions::new();
    for entry in entries.flatten() {
        let Some(irq) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        out.insert(irq, actions(irq, roots));
    }
    Ok(out)
}

/// The action names of IRQ `irq`: the kernel's list in `/sys/kernel/irq/N/actions`
/// (comma-separated), else the subdirectories of `/proc/irq/N` (one per named action).
fn actions(irq: u32, roots: &Roots) -> Vec<String> {
    let listed = roots.sys.join(format!("kernel/irq/{irq}/actions"));
    if let Some(text) = read_small(&listed) {
        return text
            .trim()
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect();
    }
    let mut names: Vec<String> = fs::read_dir(roots.proc.join(format!("irq/{irq}")))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The IRQs of `iface`'s device: the MSI/MSI-X vectors of its PCI function (a virtio
/// device's are its parent's), else its INTx line; none for a virtual device.
pub fn irqs_of(iface: &str, roots: &Roots) -> Result<Vec<u32>, HostError> {
    if let Err(e) = nictune_core::names::check_iface(iface) {
        let what = format!("{iface} irqs");
        return Err(error(&what, HostErrorKind::NotFound(e.to_string())));
    }
    let device = roots.sys.join("class/net").join(iface).join("device");
    for dir in [device.join("msi_irqs"), device.join("../msi_irqs")] {
        let mut irqs: Vec<u32> = fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect();
        if !irqs.is_empty() {
            irqs.sort_unstable();
            return Ok(irqs);
        }
    }
    let line = read_small(&device.join("irq")).and_then(|t| t.trim().parse::<u32>().ok());
    Ok(line.filter(|n| *n > 0).into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_host::write::identity::{IrqId, IrqNow};

    fn tree() -> (tempfile::TempDir, Roots) {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::under(dir.path());
        (dir, roots)
    }

    #[test]
    fn irq_actions_come_from_the_kernels_list_else_proc_irq_directories() {
        let (_dir, roots) = tree();
        fs::create_dir_all(roots.sys.join("kernel/irq/51")).unwrap();
        fs::write(
            roots.sys.join("kernel/irq/51/actions"),
            "eth1-TxRx-0,eth1-TxRx-0b\n",
        )
        .unwrap();
        fs::create_dir_all(roots.proc.join("irq/51")).unwrap();
        fs::create_dir_all(roots.proc.join("irq/45/nvme0q1")).unwrap();
        fs::write(roots.proc.join("irq/45/smp_affinity_list"), "0-3\n").unwrap();
        fs::create_dir_all(roots.proc.join("irq/default_smp_affinity_x")).unwrap();
        let all = irq_actions(&roots).unwrap();
        assert_eq!(all[&51], ["eth1-TxRx-0", "eth1-TxRx-0b"]);
        assert_eq!(all[&45], ["nvme0q1"]);
        assert_eq!(all.len(), 2);
    }

    /// A journal is a file read as root: recorded action names are compared, never opened.
    #[test]
    fn a_hostile_recorded_name_never_becomes_a_path() {
        let (dir, roots) = tree();
        fs::create_dir_all(roots.proc.join("irq/45/nvme0q1")).unwrap();
        let secret = dir.path().join("secret");
        fs::create_dir_all(&secret).unwrap();
        let all = irq_actions(&roots).unwrap();
        for name in ["../../secret", "/etc", "..", "45/nvme0q1", "nvme0q1/../.."] {
            let id = IrqId {
                irq: 45,
                actions: vec![name.into()],
            };
            assert!(
                !matches!(id.locate(&all), IrqNow::Same | IrqNow::Moved { .. }),
                "{name}"
            );
        }
        for bad in ["../../etc", "a/b", ".."] {
            let e = iface_id(bad, &roots).unwrap_err();
            assert!(matches!(e.kind, HostErrorKind::NotFound(_)), "{bad}: {e}");
            assert!(irqs_of(bad, &roots).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_interfaces_irqs_are_its_functions_msi_vectors_else_its_line() {
        let (_dir, roots) = tree();
        let pci = roots.sys.join("devices/pci0000:00/0000:00:03.0");
        fs::create_dir_all(pci.join("msi_irqs/26")).unwrap();
        fs::create_dir_all(pci.join("msi_irqs/25")).unwrap();
        fs::create_dir_all(pci.join("virtio0")).unwrap();
        fs::create_dir_all(roots.sys.join("class/net/eth0")).unwrap();
        std::os::unix::fs::symlink(pci.join("virtio0"), roots.sys.join("class/net/eth0/device"))
            .unwrap();
        fs::write(roots.sys.join("class/net/eth0/ifindex"), "2\n").unwrap();
        assert_eq!(
            irqs_of("eth0", &roots).unwrap(),
            [25, 26],
            "virtio: the parent's"
        );
        let legacy = roots.sys.join("devices/pci0000:00/0000:00:04.0");
        fs::create_dir_all(&legacy).unwrap();
        fs::write(legacy.join("irq"), "11\n").unwrap();
        fs::create_dir_all(roots.sys.join("class/net/eth1")).unwrap();
        std::os::unix::fs::symlink(&legacy, roots.sys.join("class/net/eth1/device")).unwrap();
        assert_eq!(irqs_of("eth1", &roots).unwrap(), [11]);
        assert_eq!(irqs_of("v0", &roots).unwrap(), Vec::<u32>::new());
        let id = iface_id("eth0", &roots).unwrap();
        assert_eq!(id.ifindex, Some(2));
        assert!(iface_id("v9", &roots).is_err_and(|e| matches!(e.kind, HostErrorKind::NotFound(_))));
    }
}
