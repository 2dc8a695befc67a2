//! Module parameters of the NIC drivers. Two views: `module_options`, what the loaded module
//! exposes in `/sys/module/DRV/parameters/` (many, like e1000's, are not exposed) overlaid by
//! the `options DRV key=value ...` lines of `/etc/modprobe.d/*.conf`, which the next load
//! uses; and `loaded_modules`, what the module runs with now, as far as it can be known
//! ([`crate::modparams`]).

use crate::modparams::{self, Param, MODPROBE_D, RECORD_DIR};
use crate::read::HostRead;
use serde::Serialize;
use std::collections::BTreeMap;

/// A loaded NIC driver module: what it runs with, and the devices it drives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadedModule {
    /// Parameters with their value and where it was learnt: those sysfs shows as the module
    /// reports them, the others from nictune's reload record, else modprobe.d and the kernel
    /// command line. A parameter not listed runs with the driver's default.
    pub params: BTreeMap<String, Param>,
    /// PCI devices bound to the driver (`/sys/bus/pci/drivers/DRV/`), in address order: the
    /// order the driver probed them at boot, which per-port array parameters
    /// (`InterruptThrottleRate=a,b`) follow.
    pub devices: Vec<String>,
}

impl LoadedModule {
    /// The value of per-port parameter `name` for `device` (its bus address): its entry of
    /// the comma list (the first when the device is not among [`Self::devices`]), with where
    /// it was learnt; `None` when the list has no entry for it (the driver's default applies).
    pub fn port_value(&self, name: &str, device: &str) -> Option<(String, &str)> {
        let p = self.params.get(name)?;
        let index = self.devices.iter().position(|d| d == device).unwrap_or(0);
        let one = p.value.split(',').nth(index)?.trim();
        (!one.is_empty()).then(|| (one.to_string(), p.from.as_str()))
    }
}

/// `(path, text)` of every `/etc/modprobe.d/*.conf`, in modprobe's (name) order.
fn modprobe_files(read: &dyn HostRead) -> Vec<(String, String)> {
    read.dir(MODPROBE_D)
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f.ends_with(".conf"))
        .filter_map(|f| {
            let path = format!("{MODPROBE_D}/{f}");
            Some((path.clone(), read.file(&path).ok()?))
        })
        .collect()
}

/// The readable `/sys/module/DRV/parameters/*` of `drv`, as `(name, path, value)`.
fn sysfs_params(read: &dyn HostRead, drv: &str) -> Vec<(String, String, String)> {
    let base = format!("/sys/module/{drv}/parameters");
    read.dir(&base)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|name| {
            let path = format!("{base}/{name}");
            let value = read.file(&path).ok()?.trim().to_string();
            Some((name, path, value))
        })
        .collect()
}

/// Parameters by driver for `drivers`: sysfs overlaid by modprobe.d (the next load).
pub fn module_options(
    read: &dyn HostRead,
    drivers: &[String],
) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for drv in drivers {
        for (name, _, value) in sysfs_params(read, drv) {
            out.entry(drv.clone()).or_default().insert(name, value);
        }
    }
    for (_, text) in modprobe_files(read) {
        for drv in drivers {
            let params = modparams::modprobe_params(&text, drv);
            if !params.is_empty() {
                out.entry(drv.clone()).or_default().extend(params);
            }
        }
    }
    out
}

/// What each of `drivers` that is a loaded module (`/sys/module/DRV` exists) runs with.
pub fn loaded_modules(read: &dyn HostRead, drivers: &[String]) -> BTreeMap<String, LoadedModule> {
    let confs = modprobe_files(read);
    let cmdline = read.file(modparams::CMDLINE).unwrap_or_default();
    let mut out = BTreeMap::new();
    for drv in drivers {
        if read.dir(&format!("/sys/module/{drv}")).is_err() {
            continue;
        }
        let record_path = format!("{RECORD_DIR}/{drv}");
        let record = read.file(&record_path).ok();
        let record = record.as_deref().map(|t| (record_path.as_str(), t));
        let mut params = modparams::loaded(record, &confs, &cmdline, drv);
        for (name, from, value) in sysfs_params(read, drv) {
            params.insert(name, Param { value, from });
        }
        let mut devices: Vec<String> = read
            .dir(&format!("/sys/bus/pci/drivers/{drv}"))
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e.contains(':') && e.contains('.'))
            .collect();
        devices.sort();
        out.insert(drv.clone(), LoadedModule { params, devices });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::FakeHost;

    #[test]
    fn modprobe_options_overlay_sysfs_parameters() {
        let host = FakeHost::new()
            .with_file("/sys/module/e1000/parameters/debug", "-1\n")
            .with_file("/etc/modprobe.d/nic.conf", "# tuning\noptions e1000 InterruptThrottleRate=80000,3 RxIntDelay=0\noptions igb max_vfs=2\n");
        let opts = module_options(&host, &["e1000".to_string()]);
        let e1000 = &opts["e1000"];
        assert_eq!(e1000["InterruptThrottleRate"], "80000,3");
        assert_eq!(e1000["debug"], "-1");
        assert!(!opts.contains_key("igb"), "only drivers of the NICs");
    }

    #[test]
    fn a_loaded_module_runs_with_the_reload_record_and_ports_take_their_list_entry() {
        let host = FakeHost::new()
            .with_file("/sys/module/e1000e/parameters/copybreak", "256\n")
            .with_file("/sys/bus/pci/drivers/e1000e/0000:00:04.0/x", "")
            .with_file("/sys/bus/pci/drivers/e1000e/0000:00:03.0/x", "")
            .with_file("/sys/bus/pci/drivers/e1000e/new_id", "")
            .with_file(
                "/etc/modprobe.d/nic.conf",
                "options e1000e InterruptThrottleRate=8000\n",
            )
            .with_file("/proc/cmdline", "ro quiet\n");
        let drivers = ["e1000e".to_string(), "virtio_net".to_string()];
        let m = &loaded_modules(&host, &drivers);
        assert_eq!(m.len(), 1, "virtio_net is not a loaded module here");
        let e1000e = &m["e1000e"];
        assert_eq!(e1000e.devices, ["0000:00:03.0", "0000:00:04.0"]);
        let itr = |dev| e1000e.port_value("InterruptThrottleRate", dev);
        assert_eq!(
            itr("0000:00:03.0"),
            Some(("8000".into(), "/etc/modprobe.d/nic.conf"))
        );
        assert_eq!(
            itr("0000:00:04.0"),
            None,
            "one entry: the second port has the default"
        );
        assert_eq!(
            e1000e.params["copybreak"].from,
            "/sys/module/e1000e/parameters/copybreak"
        );
        let recorded = host.with_file(
            "/run/nictune/module-params/e1000e",
            "InterruptThrottleRate=500,3\n",
        );
        let e1000e = &loaded_modules(&recorded, &drivers)["e1000e"];
        let itr = |dev| e1000e.port_value("InterruptThrottleRate", dev);
        assert_eq!(
            itr("0000:00:03.0"),
            Some(("500".into(), "/run/nictune/module-params/e1000e"))
        );
        assert_eq!(itr("0000:00:04.0").unwrap().0, "3");
    }
}
