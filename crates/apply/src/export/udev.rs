//! A udev rule (udev(7)) run on every `add` of the device: sysfs attributes with `ATTR{}`
//! (device-wide NAPI values too: the device's `gro_flush_timeout` and `napi_defer_hard_irqs`
//! set every NAPI of it), ethtool settings with `RUN+=`. udev never sees link up, and one
//! NAPI's value (`napi.*@N`) has no command a base system can call, so those are listed as
//! omitted. A module parameter's `InterruptThrottleRate` becomes the `ethtool -C rx-usecs`
//! that sets the same at run time ([`Item::rate_as_usecs`]).

use super::{partition, Item, Omitted};
use nictune_core::catalog::{Os, Scope};

/// When a line must run, in the order udev runs them. udev applies `ATTR{}` while it
/// processes the rules and runs every `RUN+=` afterwards, in the order the rules added them
/// (udev(7), "RUN{type}": "executed after all rules have been processed"). So the device's
/// own files are `ATTR{}`, and everything that depends on the queues is a `RUN+=`, ordered:
/// the channel count first (it adds or removes queues), then the other ethtool settings,
/// then the all-queues steering loops, then the one-queue values, which override the loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// A sysfs file of the device itself: `ATTR{gro_flush_timeout}`.
    Attr,
    /// `ethtool -L`: the queues the later steps see.
    Channels,
    /// Any other ethtool setting.
    Ethtool,
    /// RPS/XPS for every queue.
    AllQueues,
    /// RPS/XPS for one queue, after the loop that would overwrite it.
    OneQueue,
}

/// Path, body and omissions.
pub fn render(items: &[Item], iface: &str) -> (String, String, Vec<Omitted>) {
    let (kept, mut omitted) = partition(items, |i| assignment(i).map(|_| ()));
    let mut lines: Vec<(Step, String, Option<String>, &Item)> = Vec::new();
    for item in kept {
        let (step, line) = assignment(item).expect("kept");
        // Two keys for one sysfs file (`napi.gro-flush-timeout` and
        // `sysfs.gro_flush_timeout`): the last ATTR{} would silently win, so the first is
        // written and a different second value is left out, as in the tuned profile.
        let target = line.split('=').next().unwrap_or_default().to_string();
        if step == Step::Attr {
            if let Some((_, other, _, first)) = lines
                .iter()
                .find(|(s, l, _, _)| *s == Step::Attr && l.starts_with(&target))
            {
                if *other != line {
                    omitted.push(Omitted {
                        setting: item.shown(),
                        reason: format!("the same file is already set by {}", first.shown()),
                    });
                }
                continue;
            }
        }
        let note = item.rate_as_usecs().ok().map(|(_, note)| note);
        lines.push((step, line, note, item));
    }
    // Stable: within a step the profile's order stays.
    lines.sort_by_key(|(step, ..)| *step);
    let label = format!("nictune_{}", iface.replace(['.', '-'], "_"));
    let mut out = format!(
        "# udev runs this on every add of {iface} (boot, driver reload, hotplug); to run it now:\n\
         #   udevadm trigger --action=add /sys/class/net/{iface}\n\
         # It matches {iface} by the name the interface ends up with: NAME, which\n\
         # 80-net-setup-link.rules sets from the .link files when udev renames the device\n\
         # (udev(7), \"NAME\": usable once a preceding rule set it), so this file sorts after\n\
         # it; an interface that keeps its kernel name is matched by KERNEL.\n\
         # udev sets ATTR{{}} while reading the rules and runs RUN+= after all of them, in order:\n\
         # channels, other ethtool settings, every queue's RPS/XPS, then single queues.\n\
         ACTION!=\"add\", GOTO=\"{label}_end\"\n\
         SUBSYSTEM!=\"net\", GOTO=\"{label}_end\"\n\
         NAME==\"{iface}\", GOTO=\"{label}\"\n\
         NAME==\"\", KERNEL==\"{iface}\", GOTO=\"{label}\"\n\
         GOTO=\"{label}_end\"\n\
         LABEL=\"{label}\"\n"
    );
    for (_, line, note, _) in lines {
        if let Some(note) = note {
            out += &format!("# warning: {note}\n");
        }
        out += &format!("{line}\n");
    }
    out += &format!("LABEL=\"{label}_end\"\n");
    (
        format!("/etc/udev/rules.d/81-nictune-{iface}.rules"),
        out,
        omitted,
    )
}

/// The rule's assignment for one item and when it runs, or why there is none. In udev
/// values `$name` is the device and `$$` a literal dollar.
fn assignment(item: &Item) -> Result<(Step, String), String> {
    let v = item.value.sysfs();
    match (item.family(), item.key.as_str(), item.instance) {
        ("sysfs", key, None) => Ok((
            Step::Attr,
            format!("ATTR{{{}}}=\"{v}\"", key.trim_start_matches("sysfs.")),
        )),
        (_, "rps.cpus", Some(q)) => Ok((Step::OneQueue, one_queue("rx", q, "rps_cpus", &v))),
        (_, "xps.cpus", Some(q)) => Ok((Step::OneQueue, one_queue("tx", q, "xps_cpus", &v))),
        (_, "rps.cpus", None) => Ok((Step::AllQueues, every_queue("rx", "rps_cpus", &v))),
        (_, "xps.cpus", None) => Ok((Step::AllQueues, every_queue("tx", "xps_cpus", &v))),
        ("napi", ..) => item
            .device_wide_sysfs()
            .map(|file| (Step::Attr, format!("ATTR{{{file}}}=\"{v}\"")))
            .ok_or_else(|| super::kind_reason(item, super::Format::Udev)),
        _ if item
            .entry
            .is_some_and(|e| e.scope == Scope::Module && e.os == Os::Linux) =>
        {
            item.rate_as_usecs()
                .map(|(args, _)| {
                    (
                        Step::Ethtool,
                        format!("RUN+=\"/usr/sbin/ethtool -C $name {args}\""),
                    )
                })
                .map_err(|why| format!("{why}; {}", super::kind_reason(item, super::Format::Udev)))
        }
        ("sysctl", ..) => Err(super::kind_reason(item, super::Format::Udev)),
        ("irq", ..) => {
            Err("IRQ numbers change and link up (which udev never sees) resets affinity: --format systemd-unit".into())
        }
        (_, _, Some(_)) => Err("no per-instance form".into()),
        _ => item
            .ethtool()
            .map(|(option, args)| {
                let step = if option == "-L" {
                    Step::Channels
                } else {
                    Step::Ethtool
                };
                (step, format!("RUN+=\"/usr/sbin/ethtool {option} $name {args}\""))
            })
            .ok_or_else(|| super::kind_reason(item, super::Format::Udev)),
    }
}

fn one_queue(dir: &str, q: u32, file: &str, mask: &str) -> String {
    format!("RUN+=\"/bin/sh -c 'echo {mask} > /sys/class/net/$name/queues/{dir}-{q}/{file}'\"")
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
        assert!(all.contains(
            &"RUN+=/bin/sh -c 'echo 3 > /sys/class/net/$name/queues/rx-1/rps_cpus'".to_string()
        ));
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

    /// Audit: the all-queues loop (a RUN, run after every rule) overwrote `rps.cpus@1`, set
    /// earlier by ATTR{}; queue files were written before `ethtool -L` made the queues; two
    /// keys for gro_flush_timeout gave two ATTR{} lines of which the last silently won.
    #[test]
    fn channels_run_before_the_queue_loops_and_one_queue_values_run_last() {
        let (_, text, omitted) = super::render(
            &items_of(
                "[settings]\n\"rps.cpus@1\" = \"3\"\n\"rps.cpus\" = \"f\"\n\"xps.cpus@0\" = \"1\"\n\
                 \"channels.combined\" = 4\n\"coalesce.rx-usecs\" = 50\n\
                 \"napi.gro-flush-timeout\" = 20000\n\"sysfs.gro_flush_timeout\" = 5000\n",
            ),
            "eth1",
        );
        let rules = udev_rules(&text).unwrap();
        let assignments: Vec<String> = rules
            .iter()
            .map(|rule| {
                let (k, op, v) = rule.last().unwrap();
                format!("{k}{op}{v}")
            })
            .filter(|a| a.starts_with("ATTR") || a.starts_with("RUN"))
            .collect();
        assert_eq!(
            assignments,
            [
                "ATTR{gro_flush_timeout}=20000",
                "RUN+=/usr/sbin/ethtool -L $name combined 4",
                "RUN+=/usr/sbin/ethtool -C $name rx-usecs 50",
                "RUN+=/bin/sh -c 'for f in /sys/class/net/$name/queues/rx-*/rps_cpus; do echo f > $$f; done'",
                "RUN+=/bin/sh -c 'echo 3 > /sys/class/net/$name/queues/rx-1/rps_cpus'",
                "RUN+=/bin/sh -c 'echo 1 > /sys/class/net/$name/queues/tx-0/xps_cpus'",
            ]
        );
        let [dup] = omitted.as_slice() else {
            panic!("{omitted:?}")
        };
        assert_eq!(dup.setting, "sysfs.gro_flush_timeout=5000");
        assert_eq!(
            dup.reason,
            "the same file is already set by napi.gro-flush-timeout=20000"
        );
        // The same value twice is one line and nothing left out.
        let (_, text, omitted) = super::render(
            &items_of(
                "[settings]\n\"napi.defer-hard-irqs\" = 2\n\"sysfs.napi_defer_hard_irqs\" = 2\n",
            ),
            "eth1",
        );
        assert!(omitted.is_empty(), "{omitted:?}");
        assert_eq!(text.matches("ATTR{napi_defer_hard_irqs}=\"2\"").count(), 1);
    }

    /// Audit: `KERNEL=="enp3s0"` in a 70- file misses an interface udev renames to enp3s0
    /// on hotplug or driver reload (its kernel name is eth0 then). The rule sorts after
    /// 80-net-setup-link.rules and matches NAME, or KERNEL when nothing renamed it.
    #[test]
    fn the_rule_matches_the_final_name_after_net_setup_link() {
        let (path, text, _) = super::render(&items_of("[settings]\n\"ring.rx\" = 512\n"), "enp3s0");
        assert_eq!(path, "/etc/udev/rules.d/81-nictune-enp3s0.rules");
        assert!("81-nictune-enp3s0.rules" > "80-net-setup-link.rules");
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines,
            [
                "ACTION!=\"add\", GOTO=\"nictune_enp3s0_end\"",
                "SUBSYSTEM!=\"net\", GOTO=\"nictune_enp3s0_end\"",
                "NAME==\"enp3s0\", GOTO=\"nictune_enp3s0\"",
                "NAME==\"\", KERNEL==\"enp3s0\", GOTO=\"nictune_enp3s0\"",
                "GOTO=\"nictune_enp3s0_end\"",
                "LABEL=\"nictune_enp3s0\"",
                "RUN+=\"/usr/sbin/ethtool -G $name rx 512\"",
                "LABEL=\"nictune_enp3s0_end\"",
            ]
        );
        udev_rules(&text).unwrap();
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
        assert!(
            text.contains("# warning: igb.InterruptThrottleRate=8000: rx-usecs 125 = 10^6/8000\n")
        );
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
        // The conversion is a warning of the export, not only a comment (audit: `warnings`
        // stayed empty).
        let out = super::super::export(
            super::super::Format::Udev,
            &items_of("[settings]\n\"e1000.InterruptThrottleRate\" = \"3000,3000\"\n"),
            &super::super::tests::target(),
        )
        .unwrap();
        assert_eq!(
            out.warnings,
            ["e1000.InterruptThrottleRate=3000,3000: rx-usecs 333 ≈ 10^6/3000; e1000 then runs at 3003/s"]
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
