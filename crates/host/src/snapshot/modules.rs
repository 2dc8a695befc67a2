//! Module parameters of the NIC drivers: what the loaded module exposes in
//! `/sys/module/DRV/parameters/` (many, like e1000's, are not exposed), overlaid by the
//! `options DRV key=value ...` lines of `/etc/modprobe.d/*.conf`, which the next load uses.

use crate::read::HostRead;
use std::collections::BTreeMap;

const MODPROBE_D: &str = "/etc/modprobe.d";

/// Parameters by driver for `drivers`.
pub fn module_options(
    read: &dyn HostRead,
    drivers: &[String],
) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for drv in drivers {
        let base = format!("/sys/module/{drv}/parameters");
        for name in read.dir(&base).unwrap_or_default() {
            if let Ok(v) = read.file(&format!("{base}/{name}")) {
                out.entry(drv.clone())
                    .or_default()
                    .insert(name, v.trim().to_string());
            }
        }
    }
    for file in read.dir(MODPROBE_D).unwrap_or_default() {
        if !file.ends_with(".conf") {
            continue;
        }
        let Ok(text) = read.file(&format!("{MODPROBE_D}/{file}")) else {
            continue;
        };
        for (drv, key, value) in parse_options(&text) {
            if drivers.contains(&drv) {
                out.entry(drv).or_default().insert(key, value);
            }
        }
    }
    out
}

/// `options DRV k=v k2=v2` lines as `(driver, key, value)`.
pub fn parse_options(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        if words.next() != Some("options") {
            continue;
        }
        let Some(drv) = words.next() else { continue };
        for kv in words {
            if let Some((k, v)) = kv.split_once('=') {
                out.push((drv.replace('-', "_"), k.to_string(), v.to_string()));
            }
        }
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
}
