//! modprobe.d options lines (modprobe.d(5)) for driver module parameters such as e1000e's
//! `InterruptThrottleRate`, one value per port.

use super::{partition, Item, Omitted};
use nictune_core::catalog::{Os, Scope};
use std::collections::BTreeMap;

/// Path, body and omissions.
pub fn render(items: &[Item]) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| driver(i).map(|_| ()));
    let mut by_driver: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for item in kept {
        let param = item
            .key
            .split_once('.')
            .map_or(item.key.as_str(), |(_, p)| p);
        by_driver
            .entry(driver(item).expect("kept"))
            .or_default()
            .push(format!("{param}={}", item.value.plain()));
    }
    let mut out = String::from(
        "# WARNING: module options take effect only when the driver loads. Reloading it\n\
         # (modprobe -r <driver> && modprobe <driver>) takes every port of that driver down.\n\
         # If the driver loads from the initramfs, rebuild it (update-initramfs -u).\n\
         # Runtime `ethtool -C` changes win over these until the next reload.\n",
    );
    // A file per driver (or set of drivers): exporting e1000e and then igb installs two files
    // side by side instead of the second replacing the first.
    let path = format!(
        "/etc/modprobe.d/nictune-{}.conf",
        by_driver.keys().copied().collect::<Vec<_>>().join("-")
    );
    for (drv, params) in by_driver {
        out += &format!("options {drv} {}\n", params.join(" "));
    }
    (path, out, omitted)
}

fn driver(item: &Item) -> Result<&'static str, String> {
    match item.entry {
        Some(e) if e.scope == Scope::Module && e.os == Os::Linux => {
            e.driver.as_deref().ok_or_else(|| "no driver named".into())
        }
        _ => Err(super::kind_reason(item, super::Format::Modprobe)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::items;
    use super::super::validate::modprobe;

    #[test]
    fn per_port_values_stay_positional() {
        let (path, text, omitted) = super::render(&items());
        assert_eq!(path, "/etc/modprobe.d/nictune-e1000e.conf");
        let lines = modprobe(&text).unwrap();
        assert_eq!(
            lines,
            [(
                "e1000e".to_string(),
                vec!["InterruptThrottleRate=3000,3000".to_string()]
            )]
        );
        assert!(text.contains("WARNING: module options take effect only when the driver loads"));
        assert_eq!(omitted.len(), super::super::tests::items().len() - 1);
    }
}
