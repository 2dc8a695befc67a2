//! Builds a [`HostSnapshot`] from the raw inputs of a [`HostRead`]. Nothing here fails as a
//! whole: whatever cannot be read becomes a [`Readable`] with the reason.

use super::chain::{queue_of_action, QueueRef};
use super::{Counters, Cpu, HostSnapshot, Irq, IrqMode, Napi, Nic, Queue, QueueKind, Readable};
use crate::cpuset::CpuSet;
use crate::procfs::{self, ProcInterrupts};
use crate::read::{HostRead, NetdevInfo, ReadError};
use std::collections::BTreeMap;

/// Sysctls the doctor and `show` use.
pub const SYSCTLS: [&str; 8] = [
    "net.core.netdev_budget",
    "net.core.netdev_budget_usecs",
    "net.core.dev_weight",
    "net.core.netdev_max_backlog",
    "net.core.busy_poll",
    "net.core.busy_read",
    "net.core.rps_sock_flow_entries",
    "net.core.flow_limit_table_len",
];

const NET: &str = "/sys/class/net";

/// Reads the whole host; `only` limits the NICs (empty: all).
pub fn build(read: &dyn HostRead, only: &[String]) -> HostSnapshot {
    let counters = build_counters(read);
    let netdev = read.netdev();
    let irqs = irqs(read, counters.interrupts.value());
    let nics: Vec<Nic> = nic_names(read, only)
        .into_iter()
        .map(|name| nic(read, &name, &netdev, &irqs))
        .collect();
    // Hardware drivers only: a virtual device's "driver" is its rtnetlink kind.
    let drivers: Vec<String> = nics
        .iter()
        .filter(|n| n.device.is_some())
        .filter_map(|n| n.driver.value().cloned())
        .collect();
    HostSnapshot {
        kernel: text(read, "/proc/sys/kernel/osrelease"),
        hostname: text(read, "/proc/sys/kernel/hostname"),
        cpus: cpus(read),
        nics,
        irqs,
        sysctls: sysctls(read),
        module_options: super::modules::module_options(read, &drivers),
        modules: super::modules::loaded_modules(read, &drivers),
        irqbalance_running: match read.process_names() {
            Ok(names) => Readable::Value(names.iter().any(|n| n.trim() == "irqbalance")),
            Err(e) => e.into_readable(),
        },
        counters,
    }
}

/// Reads only the counters (for the second sample of `show --interval`).
pub fn build_counters(read: &dyn HostRead) -> Counters {
    Counters {
        stat: parsed(read, "/proc/stat", procfs::parse_stat),
        interrupts: parsed(read, "/proc/interrupts", procfs::parse_interrupts),
        softirqs: parsed(read, "/proc/softirqs", procfs::parse_softirqs),
        softnet: parsed(read, "/proc/net/softnet_stat", procfs::parse_softnet_stat),
        net_dev: parsed(read, "/proc/net/dev", procfs::parse_net_dev),
    }
}

fn parsed<T, E: std::fmt::Display>(
    read: &dyn HostRead,
    path: &str,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> Readable<T> {
    readable(read.file(path)).and_then(|text| parse(&text))
}

fn readable<T>(r: Result<T, ReadError>) -> Readable<T> {
    match r {
        Ok(v) => Readable::Value(v),
        Err(e) => e.into_readable(),
    }
}

fn text(read: &dyn HostRead, path: &str) -> Readable<String> {
    readable(read.file(path)).map(|t| t.trim().to_string())
}

fn number(read: &dyn HostRead, path: &str) -> Readable<u64> {
    text(read, path).and_then(|t| {
        t.parse::<u64>()
            .map_err(|_| format!("{path}: {t:?} is not a number"))
    })
}

fn nic_names(read: &dyn HostRead, only: &[String]) -> Vec<String> {
    let all = read.dir(NET).unwrap_or_default();
    if only.is_empty() {
        return all.into_iter().filter(|n| n != "bonding_masters").collect();
    }
    only.iter().filter(|n| all.contains(n)).cloned().collect()
}

fn nic(read: &dyn HostRead, name: &str, netdev: &NetdevInfo, irqs: &[Irq]) -> Nic {
    let base = format!("{NET}/{name}");
    let ifindex = text(read, &format!("{base}/ifindex"))
        .value()
        .and_then(|t| t.parse().ok());
    // /sys/class/net/IF is itself a link into /sys/devices; `device` is relative to that.
    let real = resolve_link(read, &base, NET).unwrap_or_else(|| base.clone());
    let device = resolve_link(read, &format!("{base}/device"), &real);
    let ethtool = read.ethtool(name);
    let napis = netdev.napis.as_ref().map(|all| {
        all.iter()
            .filter(|n| Some(n.ifindex) == ifindex)
            .cloned()
            .collect::<Vec<Napi>>()
    });
    let (device_irqs, irq_mode) = device
        .as_deref()
        .map(|d| device_irqs(read, d))
        .unwrap_or_default();
    let pci_id = device.as_deref().and_then(|d| {
        let id = |f: &str| text(read, &format!("{d}/{f}")).value().cloned();
        Some((id("vendor")?, id("device")?))
    });
    let link = read.link_attrs(name);
    let link = link.value();
    let sysfs_u32 = |file: &str| {
        text(read, &format!("{base}/{file}"))
            .value()
            .and_then(|t| t.parse::<u32>().ok())
    };
    let kind = link.and_then(|l| l.kind.clone());
    let mut nic = Nic {
        mtu_bytes: link.and_then(|l| l.mtu_bytes).or_else(|| sysfs_u32("mtu")),
        // ethtool LINKMODES_GET; else sysfs `speed`, which reads -1 (or fails with EINVAL)
        // when the interface is down or the driver does not say (net/core/net-sysfs.c
        // speed_show).
        speed_mbps: link
            .and_then(|l| l.speed_mbps)
            .or_else(|| sysfs_u32("speed").filter(|s| *s != u32::MAX)),
        operstate: link
            .and_then(|l| l.operstate.clone())
            .or_else(|| text(read, &format!("{base}/operstate")).value().cloned()),
        qdisc: link.and_then(|l| l.qdisc.clone()),
        txqlen: link
            .and_then(|l| l.txqlen)
            .or_else(|| sysfs_u32("tx_queue_len")),
        device: device
            .as_deref()
            .and_then(|d| d.rsplit('/').next())
            .map(str::to_string),
        pci_id,
        name: name.to_string(),
        ifindex,
        driver: driver(read, &base, device.is_some(), kind),
        coalesce: ethtool.coalesce,
        rings: ethtool.rings,
        channels: ethtool.channels,
        features: ethtool.features,
        napi_defer_hard_irqs: number(read, &format!("{base}/napi_defer_hard_irqs")),
        gro_flush_timeout_ns: number(read, &format!("{base}/gro_flush_timeout")),
        threaded: number(read, &format!("{base}/threaded")),
        napis,
        queues: queues(read, &base),
        device_irqs,
        irq_mode,
    };
    link_queues(&mut nic, netdev, irqs, device.as_deref());
    nic
}

/// The device's driver; for a virtual device (no `device` link) its rtnetlink kind.
fn driver(
    read: &dyn HostRead,
    base: &str,
    has_device: bool,
    kind: Option<String>,
) -> Readable<String> {
    if !has_device {
        // The loopback device has no rtnetlink kind: it is told by its hardware type,
        // ARPHRD_LOOPBACK (772, include/uapi/linux/if_arp.h) in sysfs `type`.
        let loopback = number(read, &format!("{base}/type")).value() == Some(&772);
        return match kind {
            Some(kind) => Readable::Value(kind),
            None if loopback => Readable::Value("loopback".into()),
            None => Readable::Unsupported("virtual interface (no device)".into()),
        };
    }
    readable(read.link(&format!("{base}/device/driver")))
        .map(|target| target.rsplit('/').next().unwrap_or(&target).to_string())
}

/// The absolute, lexically normalised target of the link at `path`, whose directory is
/// really `dir` (they differ when `path` is reached through another link).
fn resolve_link(read: &dyn HostRead, path: &str, dir: &str) -> Option<String> {
    let target = read.link(path).ok()?;
    let joined = if target.starts_with('/') {
        target
    } else {
        format!("{dir}/{target}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// The device's MSI/MSI-X IRQs (virtio net devices hang below the PCI function that owns
/// them), else its legacy INTx line; with the mode when known. A device using MSI-X still
/// lists its INTx pin's IRQ in `device/irq`, so `msi_irqs` comes first.
fn device_irqs(read: &dyn HostRead, device: &str) -> (Vec<u32>, Option<IrqMode>) {
    let parent = device.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
    let msi = [device, parent].into_iter().find_map(|d| {
        let dir = format!("{d}/msi_irqs");
        let listing = read.dir(&dir).ok().filter(|l| !l.is_empty())?;
        Some((dir, listing))
    });
    if let Some((dir, listing)) = msi {
        let mut irqs: Vec<u32> = listing.iter().filter_map(|n| n.parse().ok()).collect();
        irqs.sort_unstable();
        let mode =
            irqs.first().and_then(
                |n| match text(read, &format!("{dir}/{n}")).value()?.as_str() {
                    "msix" => Some(IrqMode::Msix),
                    "msi" => Some(IrqMode::Msi),
                    _ => None,
                },
            );
        return (irqs, mode);
    }
    let line = number(read, &format!("{device}/irq"))
        .value()
        .and_then(|&n| u32::try_from(n).ok())
        .filter(|&n| n > 0);
    match line {
        Some(n) => (vec![n], Some(IrqMode::Intx)),
        None => (Vec::new(), None),
    }
}

fn queues(read: &dyn HostRead, base: &str) -> Vec<Queue> {
    let mut out: Vec<Queue> = read
        .dir(&format!("{base}/queues"))
        .unwrap_or_default()
        .iter()
        .filter_map(|entry| {
            let (kind, index) = entry.split_once('-')?;
            let (kind, file) = match kind {
                "rx" => (QueueKind::Rx, "rps_cpus"),
                "tx" => (QueueKind::Tx, "xps_cpus"),
                _ => return None,
            };
            let path = format!("{base}/queues/{entry}/{file}");
            Some(Queue {
                kind,
                index: index.parse().ok()?,
                napi_id: None,
                irq: None,
                irq_from: None,
                steering_cpus: text(read, &path).and_then(|m| CpuSet::parse_mask(&m)),
            })
        })
        .collect();
    out.sort_by_key(|q| (q.kind, q.index));
    out
}

/// Fills each queue's NAPI and IRQ: from netdev netlink first, else from IRQ action names.
fn link_queues(nic: &mut Nic, netdev: &NetdevInfo, irqs: &[Irq], device: Option<&str>) {
    let napis = nic.napis.value().map_or(&[][..], Vec::as_slice);
    let nl_queues = netdev.queues.value().map_or(&[][..], Vec::as_slice);
    for q in &mut nic.queues {
        let found = nl_queues
            .iter()
            .find(|n| Some(n.ifindex) == nic.ifindex && n.kind == q.kind && n.id == q.index);
        q.napi_id = found.and_then(|n| n.napi_id);
        let napi_irq = q
            .napi_id
            .and_then(|id| napis.iter().find(|n| n.id == id))
            .and_then(|n| n.irq);
        if let Some(irq) = napi_irq {
            q.irq = Some(irq);
            q.irq_from = Some("netdev");
        }
    }
    let device_name = device.and_then(|d| d.rsplit('/').next()).unwrap_or("");
    for irq in irqs {
        let mine = nic.device_irqs.is_empty() || nic.device_irqs.contains(&irq.irq);
        if !mine {
            continue;
        }
        for action in &irq.actions {
            match queue_of_action(action, &nic.name, device_name) {
                Some(QueueRef::One(kind, i)) => set_irq(&mut nic.queues, kind, i, irq.irq),
                Some(QueueRef::Both(i)) => {
                    set_irq(&mut nic.queues, QueueKind::Rx, i, irq.irq);
                    set_irq(&mut nic.queues, QueueKind::Tx, i, irq.irq);
                }
                None => {}
            }
        }
    }
    // One IRQ for the whole device (a legacy INTx line, or a single MSI vector named after
    // the interface, as e1000's `eth0`): it serves every queue.
    if let [only] = nic.device_irqs[..] {
        for q in nic.queues.iter_mut().filter(|q| q.irq.is_none()) {
            q.irq = Some(only);
            q.irq_from = Some("only-irq");
        }
    }
}

fn set_irq(queues: &mut [Queue], kind: QueueKind, index: u32, irq: u32) {
    if let Some(q) = queues
        .iter_mut()
        .find(|q| q.kind == kind && q.index == index && q.irq.is_none())
    {
        q.irq = Some(irq);
        q.irq_from = Some("irq-name");
    }
}

fn irqs(read: &dyn HostRead, interrupts: Option<&ProcInterrupts>) -> Vec<Irq> {
    let Some(interrupts) = interrupts else {
        return Vec::new();
    };
    interrupts
        .lines
        .iter()
        .filter_map(|line| {
            let n = line.irq()?;
            let list = |file: &str| {
                text(read, &format!("/proc/irq/{n}/{file}")).and_then(|t| CpuSet::parse_list(&t))
            };
            // /sys/kernel/irq/N/actions is the kernel's own list; /proc/interrupts the fallback.
            let actions = text(read, &format!("/sys/kernel/irq/{n}/actions"))
                .value()
                .filter(|a| !a.is_empty())
                .map(|a| a.split(',').map(|s| s.trim().to_string()).collect())
                .unwrap_or_else(|| line.actions.clone());
            Some(Irq {
                irq: n,
                actions,
                chip: line.chip.clone(),
                affinity: list("smp_affinity_list"),
                effective: list("effective_affinity_list"),
                per_cpu: interrupts
                    .cpus
                    .iter()
                    .copied()
                    .zip(line.per_cpu.iter().copied())
                    .collect(),
            })
        })
        .collect()
}

fn cpus(read: &dyn HostRead) -> Vec<Cpu> {
    const BASE: &str = "/sys/devices/system/cpu";
    let mut ids: Vec<u32> = read
        .dir(BASE)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| e.strip_prefix("cpu")?.parse().ok())
        .collect();
    ids.sort_unstable();
    ids.into_iter()
        .map(|id| {
            let topo = |f: &str| format!("{BASE}/cpu{id}/topology/{f}");
            let num = |f: &str| text(read, &topo(f)).value().and_then(|t| t.parse().ok());
            let siblings = text(read, &topo("thread_siblings_list"))
                .and_then(|t| CpuSet::parse_list(&t))
                .value()
                .cloned()
                .unwrap_or_else(|| [id].into_iter().collect());
            Cpu {
                id,
                core_id: num("core_id"),
                package_id: num("physical_package_id"),
                thread_siblings: siblings,
            }
        })
        .collect()
}

/// Every key of [`SYSCTLS`]: each holds one integer.
fn sysctls(read: &dyn HostRead) -> BTreeMap<String, Readable<i64>> {
    SYSCTLS
        .iter()
        .map(|name| {
            let path = format!("/proc/sys/{}", name.replace('.', "/"));
            let value = text(read, &path).and_then(|t| {
                t.parse::<i64>()
                    .map_err(|_| format!("{path}: {t:?} is not a number"))
            });
            (name.to_string(), value)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::FakeHost;

    /// An Intel port at PCI 0000:00:03.0 named eth0, its interrupts as `/proc/interrupts`
    /// lines, its `msi_irqs` entries (`(irq, "msix")`), and its INTx line `device/irq`.
    fn port(interrupts: &str, msi: &[(u32, &str)], intx: &str) -> HostSnapshot {
        let dev = "/sys/devices/pci0000:00/0000:00:03.0";
        let mut host = FakeHost::new()
            .with_link(
                "/sys/class/net/eth0",
                "../../devices/pci0000:00/0000:00:03.0/net/eth0",
            )
            .with_link("/sys/class/net/eth0/device", "../../../0000:00:03.0")
            .with_file("/sys/class/net/eth0/queues/rx-0/rps_cpus", "0\n")
            .with_file("/sys/class/net/eth0/queues/tx-0/xps_cpus", "0\n")
            .with_file(&format!("{dev}/irq"), intx)
            .with_file("/proc/interrupts", &format!("  CPU0\n{interrupts}"));
        for (irq, kind) in msi {
            host = host.with_file(&format!("{dev}/msi_irqs/{irq}"), kind);
        }
        build(&host, &["eth0".to_string()])
    }

    fn queue_irqs(nic: &Nic) -> Vec<(String, Option<u32>, Option<&'static str>)> {
        let q = |q: &Queue| (format!("{}-{}", q.kind, q.index), q.irq, q.irq_from);
        nic.queues.iter().map(q).collect()
    }

    #[test]
    fn a_legacy_intx_line_serves_every_queue() {
        let snap = port(" 11: 4711 IO-APIC 11-fasteoi eth0\n", &[], "11\n");
        let nic = &snap.nics[0];
        assert_eq!(
            (&nic.device_irqs[..], nic.irq_mode),
            (&[11][..], Some(IrqMode::Intx))
        );
        assert_eq!(
            queue_irqs(nic),
            [
                ("rx-0".into(), Some(11), Some("only-irq")),
                ("tx-0".into(), Some(11), Some("only-irq"))
            ]
        );
        assert_eq!(snap.irq(11).unwrap().actions, ["eth0"]);
    }

    #[test]
    fn msix_vectors_win_over_the_unused_intx_pin_and_go_by_name() {
        let lines = " 26: 1 PCI-MSI 49152-edge eth0-rx-0\n 27: 2 PCI-MSI 49153-edge eth0-tx-0\n 28: 3 PCI-MSI 49154-edge eth0\n";
        let msix = [(26, "msix\n"), (27, "msix\n"), (28, "msix\n")];
        let snap = port(lines, &msix, "11\n");
        let nic = &snap.nics[0];
        assert_eq!(
            (&nic.device_irqs[..], nic.irq_mode),
            (&[26, 27, 28][..], Some(IrqMode::Msix))
        );
        assert_eq!(
            queue_irqs(nic),
            [
                ("rx-0".into(), Some(26), Some("irq-name")),
                ("tx-0".into(), Some(27), Some("irq-name"))
            ]
        );
        let text = crate::view::render_show(&snap, None);
        assert!(text.contains("  irqs      msix 26 27 28\n"), "{text}");
        assert!(
            text.contains("  irq 28     eth0 "),
            "the other vector: {text}"
        );
    }

    #[test]
    fn no_line_means_no_irq() {
        let nic = &port("", &[], "0\n").nics[0];
        assert!(nic.device_irqs.is_empty() && nic.irq_mode.is_none());
        assert!(nic.queues.iter().all(|q| q.irq.is_none()));
    }

    /// Issue #13: `lo` shows as the loopback driver, not "n/a".
    #[test]
    fn the_loopback_device_is_named_by_its_hardware_type() {
        let host = FakeHost::new()
            .with_file("/sys/class/net/lo/type", "772\n")
            .with_file("/sys/class/net/dummy0/type", "1\n");
        let lo = driver(&host, "/sys/class/net/lo", false, None);
        assert_eq!(lo.value().map(String::as_str), Some("loopback"));
        let other = driver(&host, "/sys/class/net/dummy0", false, None);
        assert!(other.value().is_none(), "{other:?}");
        let veth = driver(&host, "/sys/class/net/dummy0", false, Some("veth".into()));
        assert_eq!(veth.value().map(String::as_str), Some("veth"));
    }
}
