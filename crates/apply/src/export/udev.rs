//! A udev rule (udev(7)) run on every `add` of the device: sysfs attributes with `ATTR{}`,
//! ethtool settings with `RUN+=`. udev never sees link up, and per-NAPI settings have no
//! command a base system can call, so those are listed as omitted.

use super::{partition, Item, Omitted};

/// Path, body and omissions.
pub fn render(items: &[Item], iface: &str) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| assignment(i).map(|_| ()));
    let mut out = format!(
        "# udev runs this on every add of {iface} (boot, driver reload, hotplug); to run it now:\n\
         #   udevadm trigger --action=add /sys/class/net/{iface}\n"
    );
    let head = format!("ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"{iface}\"");
    for item in kept {
        out += &format!("{head}, {}\n", assignment(item).expect("kept"));
    }
    (
        format!("/etc/udev/rules.d/70-nictune-{iface}.rules"),
        out,
        omitted,
    )
}

/// The rule's assignment for one item, or why there is none. In udev values `$name` is the
/// device and `$$` a literal dollar.
fn assignment(item: &Item) -> Result<String, String> {
    let v = item.value.sysfs();
    match (item.family(), item.key.as_str(), item.instance) {
        ("sysfs", key, None) => Ok(format!(
            "ATTR{{{}}}=\"{v}\"",
            key.trim_start_matches("sysfs.")
        )),
        (_, "rps.cpus", Some(q)) => Ok(format!("ATTR{{queues/rx-{q}/rps_cpus}}=\"{v}\"")),
        (_, "xps.cpus", Some(q)) => Ok(format!("ATTR{{queues/tx-{q}/xps_cpus}}=\"{v}\"")),
        (_, "rps.cpus", None) => Ok(every_queue("rx", "rps_cpus", &v)),
        (_, "xps.cpus", None) => Ok(every_queue("tx", "xps_cpus", &v)),
        ("napi", ..) => Err(super::kind_reason(item)),
        ("sysctl", ..) => Err(super::kind_reason(item)),
        ("irq", ..) => {
            Err("IRQ numbers change and link up (which udev never sees) resets affinity: --format systemd-unit".into())
        }
        (_, _, Some(_)) => Err("no per-instance form".into()),
        _ => item
            .ethtool()
            .map(|(option, args)| format!("RUN+=\"/usr/sbin/ethtool {option} $name {args}\""))
            .ok_or_else(|| super::kind_reason(item)),
    }
}

fn every_queue(dir: &str, file: &str, mask: &str) -> String {
    format!(
        "RUN+=\"/bin/sh -c 'for f in /sys/class/net/$name/queues/{dir}-*/{file}; do echo {mask} > $$f; done'\""
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::items;
    use super::super::validate::udev_rules;

    #[test]
    fn attributes_and_ethtool_runs_parse_as_rules() {
        let (_, text, omitted) = super::render(&items(), "eth1");
        let rules = udev_rules(&text).unwrap();
        let all: Vec<String> = rules
            .iter()
            .flatten()
            .map(|(k, op, v)| format!("{k}{op}{v}"))
            .collect();
        assert!(
            all.contains(&"ATTR{napi_defer_hard_irqs}=2".to_string()),
            "{all:?}"
        );
        assert!(all.contains(&"ATTR{queues/rx-1/rps_cpus}=3".to_string()));
        assert!(all.contains(&"RUN+=/usr/sbin/ethtool -C $name rx-usecs 50".to_string()));
        assert!(
            all.contains(&"RUN+=/usr/sbin/ethtool -K $name gro on".to_string()),
            "{all:?}"
        );
        assert!(omitted
            .iter()
            .any(|o| o.setting == "napi.gro-flush-timeout=20000"));
    }
}
