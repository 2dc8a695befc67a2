//! A tuned profile (tuned.conf(5), tuned 2.20 as in Debian 12): `[net]` for ethtool
//! settings, `[sysctl]`, and `[sysfs]` for the NAPI and steering files (device-wide NAPI
//! values as the device's `gro_flush_timeout` and `napi_defer_hard_irqs`). tuned's `[net]`
//! plugin skips virtual devices, its `coalesce=` knows only the 22 classic keys and its `ring=`
//! only `rx`, `rx-mini`, `rx-jumbo` and `tx`; one unknown key makes it reject the whole line.
//! `[net]` carries `dynamic=0`: the option defaults to true (plugin_net.py
//! `_get_config_options`), and with tuned-main.conf(5)'s `dynamic_tuning = 1` (Debian's
//! default) tuned would lower the link's advertised speed when it sees the device idle.

use super::{partition, Item, Omitted};
use nictune_core::catalog::AliasKind;

/// Whether tuned 2.20's `coalesce=` takes this item. It parses only the fields of the classic
/// `struct ethtool_coalesce` (plugin_net.py), which are the catalog entries with a legacy
/// ioctl name; the netlink-only keys (CQE mode, Tx aggregation) are refused by it.
fn classic_coalesce(item: &Item) -> bool {
    item.entry
        .is_some_and(|e| e.aliases.iter().any(|a| a.kind == AliasKind::Ioctl))
}

/// The ring sizes tuned 2.20's `ring=` takes (plugin_net.py `_get_config_options_ring`);
/// `_check_parameters` refuses a line naming any other, so none of it is applied.
const TUNED_RING_KEYS: [&str; 4] = ["rx", "rx-mini", "rx-jumbo", "tx"];

/// Where one item goes: a `[net]` option with its words, or a `[sysctl]`/`[sysfs]` line.
enum Line {
    Net(&'static str, String),
    Sysctl(String),
    Sysfs(String),
}

/// Path, body and omissions.
pub fn render(items: &[Item], iface: &str) -> (String, String, Vec<Omitted>) {
    let (kept, mut omitted) = partition(items, |i| line(i, iface).map(|_| ()));
    // tuned's reader refuses a key given twice in a section (configparser, strict): a file
    // set by two keys (`sysfs.napi_defer_hard_irqs` and `napi.defer-hard-irqs`) is written
    // once; with different values the second is left out.
    let mut lines: Vec<Line> = Vec::new();
    for item in kept {
        let new = line(item, iface).expect("kept");
        let clash = lines.iter().find_map(|l| match (l, &new) {
            (Line::Sysfs(a), Line::Sysfs(b)) | (Line::Sysctl(a), Line::Sysctl(b))
                if a.split('=').next() == b.split('=').next() =>
            {
                Some(a.clone())
            }
            _ => None,
        });
        match clash {
            None => lines.push(new),
            Some(same) if matches!(&new, Line::Sysfs(b) | Line::Sysctl(b) if *b == same) => {}
            Some(other) => omitted.push(Omitted {
                setting: item.shown(),
                reason: format!("the same file is already set by {other}"),
            }),
        }
    }
    let mut out = format!(
        "# Activate with `tuned-adm profile nictune-{iface}`; to keep your current profile's\n\
         # settings add include=<it> under [main].\n[main]\nsummary=nictune settings for {iface}\n"
    );
    let net: Vec<String> = ["coalesce", "ring", "channels", "features"]
        .iter()
        .filter_map(|opt| {
            let words: Vec<&str> = lines
                .iter()
                .filter_map(|l| match l {
                    Line::Net(o, w) if o == opt => Some(w.as_str()),
                    _ => None,
                })
                .collect();
            (!words.is_empty()).then(|| format!("{opt}={}", words.join(" ")))
        })
        .collect();
    if !net.is_empty() {
        // dynamic=0: no speed downshift after idle (see the module doc).
        out += &format!("\n[net]\ndevices={iface}\ndynamic=0\n{}\n", net.join("\n"));
    }
    section(
        &mut out,
        "sysctl",
        lines.iter().filter_map(|l| match l {
            Line::Sysctl(s) => Some(s),
            _ => None,
        }),
    );
    section(
        &mut out,
        "sysfs",
        lines.iter().filter_map(|l| match l {
            Line::Sysfs(s) => Some(s),
            _ => None,
        }),
    );
    (
        format!("/etc/tuned/nictune-{iface}/tuned.conf"),
        out,
        omitted,
    )
}

fn section<'a>(out: &mut String, name: &str, lines: impl Iterator<Item = &'a String>) {
    let lines: Vec<&String> = lines.collect();
    if !lines.is_empty() {
        *out += &format!("\n[{name}]\n");
        lines.iter().for_each(|l| *out += &format!("{l}\n"));
    }
}

fn line(item: &Item, iface: &str) -> Result<Line, String> {
    let net = format!("/sys/class/net/{iface}");
    let v = item.value.sysfs();
    match (item.family(), item.key.as_str(), item.instance) {
        ("sysctl", key, None) => Ok(Line::Sysctl(format!(
            "{}={}",
            key.trim_start_matches("sysctl."),
            item.value.plain()
        ))),
        ("sysfs", key, None) => Ok(Line::Sysfs(format!(
            "{net}/{}={v}",
            key.trim_start_matches("sysfs.")
        ))),
        (_, "rps.cpus", q) => Ok(Line::Sysfs(format!(
            "{net}/queues/rx-{}/rps_cpus={v}",
            queue(q)
        ))),
        (_, "xps.cpus", q) => Ok(Line::Sysfs(format!(
            "{net}/queues/tx-{}/xps_cpus={v}",
            queue(q)
        ))),
        ("napi", ..) => item
            .device_wide_sysfs()
            .map(|file| Line::Sysfs(format!("{net}/{file}={v}")))
            .ok_or_else(|| super::kind_reason(item, super::Format::Tuned)),
        ("irq", ..) => Err("the [irq] plugin is upstream-only (not in tuned 2.20)".into()),
        (_, _, Some(_)) => Err("no per-instance form".into()),
        _ => net_option(item),
    }
}

/// tuned's [sysfs] plugin expands globs, so "every queue" is `rx-*`.
fn queue(q: Option<u32>) -> String {
    q.map_or_else(|| "*".into(), |q| q.to_string())
}

fn net_option(item: &Item) -> Result<Line, String> {
    let (option, words) = item
        .ethtool()
        .ok_or(super::kind_reason(item, super::Format::Tuned))?;
    let opt = match option {
        "-C" if classic_coalesce(item) => "coalesce",
        "-C" => {
            return Err(format!(
                "tuned 2.20 coalesce= knows only the 22 classic ethtool -C keys; {}",
                super::kind_reason(item, super::Format::Tuned)
            ))
        }
        "-G" if TUNED_RING_KEYS.contains(&words.split(' ').next().unwrap_or_default()) => "ring",
        "-G" => {
            return Err(format!(
                "tuned 2.20 ring= knows only rx, rx-mini, rx-jumbo and tx (and drops the whole \
                 line for any other key); {}",
                super::kind_reason(item, super::Format::Tuned)
            ))
        }
        "-L" => "channels",
        "-K" => "features",
        _ => return Err(format!("tuned has no option for ethtool {option}")),
    };
    Ok(Line::Net(opt, words))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ini_lookup, items, items_of};

    #[test]
    fn net_sysctl_and_sysfs_sections_parse() {
        let (_, text, omitted) = super::render(&items(), "eth1");
        let get = ini_lookup(&text);
        assert_eq!(
            get("net", "coalesce").as_deref(),
            Some("adaptive-rx off rx-frames 32 rx-usecs 50")
        );
        assert_eq!(get("net", "channels").as_deref(), Some("combined 4"));
        assert_eq!(
            get("net", "dynamic").as_deref(),
            Some("0"),
            "no speed downshift"
        );
        assert_eq!(get("net", "features").as_deref(), Some("gro on"));
        assert_eq!(get("sysctl", "net.core.busy_poll").as_deref(), Some("50"));
        assert_eq!(
            get("sysfs", "/sys/class/net/eth1/queues/rx-*/rps_cpus").as_deref(),
            Some("f")
        );
        assert!(omitted.iter().any(|o| o.setting == "irq.affinity@45=2-3"));
        assert_eq!(
            get("sysfs", "/sys/class/net/eth1/gro_flush_timeout").as_deref(),
            Some("20000")
        );
    }

    /// Audit: tuned 2.20 refused the whole `ring=` line (rx too) for hds-thresh and friends.
    #[test]
    fn ring_keys_tuned_does_not_know_are_left_out_and_rx_stays() {
        let items = items_of(
            "[settings]\n\"ring.rx\" = 1024\n\"ring.tx\" = 512\n\"ring.hds-thresh\" = 256\n\
             \"ring.rx-buf-len\" = 2048\n\"ring.tcp-data-split\" = \"on\"\n\"ring.tx-push\" = \"on\"\n",
        );
        let (_, text, omitted) = super::render(&items, "eth1");
        assert_eq!(
            ini_lookup(&text)("net", "ring").as_deref(),
            Some("rx 1024 tx 512")
        );
        let left: Vec<&str> = omitted.iter().map(|o| o.setting.as_str()).collect();
        assert_eq!(
            left,
            [
                "ring.hds-thresh=256",
                "ring.rx-buf-len=2048",
                "ring.tcp-data-split=on",
                "ring.tx-push=on"
            ]
        );
        for o in &omitted {
            assert!(o.reason.contains("ring= knows only rx"), "{o:?}");
            assert!(o.reason.contains("--format udev"), "{o:?}");
        }
    }

    #[test]
    fn netlink_only_coalesce_keys_are_left_out() {
        let items = items_of(
            "[settings]\n\"coalesce.rx-usecs\" = 50\n\"coalesce.tx-aggr-max-frames\" = 8\n",
        );
        let (_, text, omitted) = super::render(&items, "eth1");
        assert!(text.contains("coalesce=rx-usecs 50\n"), "{text}");
        let [left_out] = omitted.as_slice() else {
            panic!("{omitted:?}")
        };
        assert!(left_out.setting.starts_with("coalesce.tx-aggr-max-frames"));
        assert!(
            left_out.reason.contains("22 classic"),
            "{}",
            left_out.reason
        );
    }
}
