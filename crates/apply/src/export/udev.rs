//! A udev rule (udev(7)) run on every `add` of the device: sysfs attributes with `ATTR{}`
//! (device-wide NAPI values too: the device's `gro_flush_timeout` and `napi_defer_hard_irqs`
//! set every NAPI of it), ethtool settings with `RUN+=`. udev never sees link up, and one
//! NAPI's value (`napi.*@N`) has no command a base system can call, so those are listed as
//! omitted. A module parameter's `InterruptThrottleRate` becomes the `ethtool -C rx-usecs`
//! that sets the same at run time ([`Item::rate_as_usecs`]).

use super::{partition, Item, Omitted};
use nictune_core::catalog::{Os, Scope};

/// Path, body and omissions.
pub fn render(items: &[Item], iface: &str) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| assignment(i).map(|_| ()));
    let mut out = format!(
        "# udev runs this on every add of {iface} (boot, driver reload, hotplug); to run it now:\n\
         #   udevadm trigger --action=add /sys/class/net/{iface}\n"
    );
    let head = format!("ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"{iface}\"");
    for item in kept {
        if let Ok((_, note)) = item.rate_as_usecs() {
            out += &format!("# {note}\n");
        }
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
        ("napi", ..) => item
            .device_wide_sysfs()
            .map(|file| format!("ATTR{{{file}}}=\"{v}\""))
            .ok_or_else(|| super::kind_reason(item, super::Format::Udev)),
        _ if item
            .entry
            .is_some_and(|e| e.scope == Scope::Module && e.os == Os::Linux) =>
        {
            item
            .rate_as_usecs()
            .map(|(args, _)| format!("RUN+=\"/usr/sbin/ethtool -C $name {args}\""))
                .map_err(|why| format!("{why}; {}", super::kind_reason(item, super::Format::Udev)))
        }
        ("sysctl", ..) => Err(super::kind_reason(item, super::Format::Udev)),
        ("irq", ..) => {
            Err("IRQ numbers change and link up (which udev never sees) resets affinity: --format systemd-unit".into())
        }
        (_, _, Some(_)) => Err("no per-instance form".into()),
        _ => item
            .ethtool()
            .map(|(option, args)| format!("RUN+=\"/usr/sbin/ethtool {option} $name {args}\""))
            .ok_or_else(|| super::kind_reason(item, super::Format::Udev)),
    }
}

fn every_queue(dir: &str, file: &str, mask: &str) -> String {
    format!(
        "RUN+=\"/bin/sh -c 'for f in /sys/class/net/$name/queues/{dir}-*/{file}; do echo {mask} > $$f; done'\""
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{items, items_of};
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
        assert!(
            all.contains(&"ATTR{gro_flush_timeout}=20000".to_string()),
            "device-wide NAPI values go to the device's sysfs files: {all:?}"
        );
        assert!(!omitted.iter().any(|o| o.setting.starts_with("napi.")));
    }

    #[test]
    fn a_throttle_rate_becomes_the_rx_usecs_that_sets_it_and_modes_stay_modes() {
        let rule = |profile: &str| {
            let (_, text, omitted) = super::render(&items_of(profile), "eth1");
            (text, omitted)
        };
        let (text, omitted) = rule("[settings]\n\"igb.InterruptThrottleRate\" = 8000\n");
        assert!(omitted.is_empty(), "{omitted:?}");
        assert!(!text.contains('<'), "no placeholder: {text}");
        assert!(text.contains("# igb.InterruptThrottleRate=8000: rx-usecs 125 = 10^6/8000\n"));
        assert!(
            text.contains("RUN+=\"/usr/sbin/ethtool -C $name rx-usecs 125\""),
            "{text}"
        );
        let (text, _) = rule("[settings]\n\"igb.InterruptThrottleRate\" = 3\n");
        assert!(text.contains("ethtool -C $name rx-usecs 3\""), "{text}");
        let (text, _) = rule("[settings]\n\"e1000.InterruptThrottleRate\" = \"3000,3000\"\n");
        assert!(
            text.contains("rx-usecs 333 ≈ 10^6/3000; e1000 then runs at 3003/s"),
            "{text}"
        );
        let (_, omitted) = rule("[settings]\n\"e1000.InterruptThrottleRate\" = \"3000,8000\"\n");
        assert!(
            omitted[0].reason.contains("the ports differ (3000,8000)"),
            "{omitted:?}"
        );
    }

    #[test]
    fn one_napis_value_is_left_to_the_unit() {
        let (_, text, omitted) = super::render(
            &items_of("[settings]\n\"napi.gro-flush-timeout@1\" = 20000\n\"ring.rx\" = 512\n"),
            "eth1",
        );
        assert!(!text.contains("gro_flush_timeout"), "{text}");
        assert!(
            omitted[0].reason.contains("--format systemd-unit"),
            "{omitted:?}"
        );
    }
}
