//! systemd `.link` files (systemd.link(5)), applied by udev's `net_setup_link` on device add.
//!
//! Time spans carry explicit units: a bare `RxCoalesceSec=50` means 50 *seconds*
//! (ecosystem.md §2.8), so 50 µs is written `RxCoalesceSec=50us`.
//!
//! Versions: every `[Link]` key nictune writes is in systemd 252's systemd.link(5) (Debian
//! 12) except `ReceivePacketSteeringCPUMask=` ("Added in version 256" in systemd.link(5)),
//! which 252 ignores with a warning; it is written only for `--target-version 256` or newer,
//! marked with the version it needs.

use super::{partition, ExportError, Item, Omitted, Version, XValue};
use nictune_core::catalog::{AliasKind, Unit};

/// `[Link]` keys newer than systemd 252, with the version that introduced them.
const SINCE: [(&str, Version); 1] = [("ReceivePacketSteeringCPUMask", Version(256, 0))];

/// The versions in [`SINCE`], for finding the one a setting needs.
pub(super) const NEWER: [Version; 1] = [SINCE[0].1];

/// `[Link]` keys whose value 0 systemd refuses or ignores, with what systemd.link(5) of 252
/// says they take: channel counts and ring sizes "an unsigned integer in the range
/// 1...4294967295 or \"max\"" (0 is logged as invalid and ignored), and two coalescing
/// times of which "This property cannot be zero".
const NO_ZERO: [(&str, &str); 10] = [
    ("RxChannels", "1…4294967295 or max"),
    ("TxChannels", "1…4294967295 or max"),
    ("OtherChannels", "1…4294967295 or max"),
    ("CombinedChannels", "1…4294967295 or max"),
    ("RxBufferSize", "1…4294967295 or max"),
    ("RxMiniBufferSize", "1…4294967295 or max"),
    ("RxJumboBufferSize", "1…4294967295 or max"),
    ("TxBufferSize", "1…4294967295 or max"),
    (
        "CoalescePacketRateSampleIntervalSec",
        "a time that \"cannot be zero\"",
    ),
    (
        "StatisticsBlockCoalesceSec",
        "a time that \"cannot be zero\"",
    ),
];

/// A `[Match]` condition other than the kernel's name (`--match KEY=VALUE`), for an interface
/// whose name udev gives: systemd.link(5) says `OriginalName=` "cannot be used to match on
/// names that have already been changed from userspace", and every name of the predictable
/// scheme (enp3s0, eno1, ens1f0, wlp2s0) is such a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkMatch {
    /// `MACAddress=`: the device's current hardware address.
    Mac(String),
    /// `PermanentMACAddress=` (systemd 245+): the address the device was made with, which a
    /// bond or `MACAddressPolicy=` does not change.
    PermanentMac(String),
    /// `Path=`: udev's `ID_PATH` (`udevadm info /sys/class/net/IF`), the device's place on
    /// the bus (`pci-0000:03:00.0`); shell globs allowed, as systemd allows them.
    Path(String),
    /// `Driver=`: the driver's name (`igb`); globs allowed.
    Driver(String),
}

impl LinkMatch {
    /// `mac=…`, `permanent-mac=…`, `path=…` or `driver=…`, checked so that the value is one
    /// systemd reads as such and cannot add a line to the file.
    pub fn parse(given: &str) -> Result<LinkMatch, ExportError> {
        let bad = |why: &str| ExportError::BadMatch {
            given: given.to_string(),
            why: why.to_string(),
        };
        let (key, value) = given
            .split_once('=')
            .ok_or_else(|| bad("it has no KEY=VALUE form"))?;
        let glob = |c: char| c.is_ascii_alphanumeric() || "-_.:*?[]".contains(c);
        match key {
            "mac" | "permanent-mac" => {
                let octets: Vec<&str> = value.split(':').collect();
                let hex = |o: &&str| o.len() == 2 && o.chars().all(|c| c.is_ascii_hexdigit());
                if octets.len() != 6 || !octets.iter().all(hex) {
                    return Err(bad("a hardware address is six hex pairs joined by ':'"));
                }
                let value = value.to_ascii_lowercase();
                Ok(match key {
                    "mac" => LinkMatch::Mac(value),
                    _ => LinkMatch::PermanentMac(value),
                })
            }
            "path" | "driver" if value.is_empty() || !value.chars().all(glob) => Err(bad(
                "the value is letters, digits and - _ . : with the globs * ? [ ]",
            )),
            "path" => Ok(LinkMatch::Path(value.to_string())),
            "driver" => Ok(LinkMatch::Driver(value.to_string())),
            _ => Err(bad(&format!("{key:?} is not a condition nictune writes"))),
        }
    }

    /// The `[Match]` line.
    fn line(&self) -> String {
        match self {
            LinkMatch::Mac(v) => format!("MACAddress={v}"),
            LinkMatch::PermanentMac(v) => format!("PermanentMACAddress={v}"),
            LinkMatch::Path(v) => format!("Path={v}"),
            LinkMatch::Driver(v) => format!("Driver={v}"),
        }
    }
}

/// Whether `iface` has the shape of a name udev's predictable naming gives (systemd.net-naming-
/// scheme(7): a type prefix `en`, `wl`, `ww`, `ib` or `sl`, then `o` onboard index, `s` slot,
/// `p` bus, `P` domain, `x` MAC, `v` VIO slot, `b` ccw, `a` ACPI, `c` ccw bus id, `u` USB or
/// `i` for the device, followed by its number): such a name is never the kernel's.
pub fn looks_udev_named(iface: &str) -> bool {
    let mut chars = iface.chars();
    let prefix: String = chars.by_ref().take(2).collect();
    let (Some(kind), Some(first)) = (chars.next(), chars.next()) else {
        return false;
    };
    ["en", "wl", "ww", "ib", "sl"].contains(&prefix.as_str())
        && "ospPxvbacui".contains(kind)
        && first.is_ascii_hexdigit()
}

/// Path, body and omissions. `matches`: the `[Match]` conditions; none: `OriginalName=`.
pub fn render(
    items: &[Item],
    iface: &str,
    version: Version,
    matches: &[LinkMatch],
) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| {
        let line = link_line(i)?;
        match since(&line) {
            Some(needs) if version < needs => Err(format!(
                "{} needs systemd {needs} or newer (the target is {version}, which ignores it): \
                 --target-version {needs} if the host has it, or --format udev or tuned",
                line.split('=').next().unwrap_or_default()
            )),
            _ => Ok(()),
        }
    });
    let mut out = format!(
        "# udev applies this when {iface} appears; to apply it now run\n\
         #   udevadm trigger --action=add /sys/class/net/{iface}\n\
         # Only the first matching .link file is used, so this one replaces 99-default.link\n\
         # for {iface} and repeats its naming policies.\n"
    );
    if matches.is_empty() {
        out += &format!(
            "# OriginalName= matches the kernel's name for the device, not one udev gave it\n\
             # (systemd.link(5): it \"cannot be used to match on names that have already been\n\
             # changed from userspace\"). If {iface} is such a name (enp3s0), match with\n\
             # MACAddress= or Path= instead (`udevadm info /sys/class/net/{iface}` shows ID_PATH).\n"
        );
        if looks_udev_named(iface) {
            out += &format!(
                "# warning: {iface} looks like a name udev gave (the predictable scheme), which \
                 OriginalName= never matches: export with --match path=ID_PATH or --match \
                 mac=ADDRESS (`udevadm info /sys/class/net/{iface}`)\n"
            );
        }
        out += &format!("[Match]\nOriginalName={iface}\n");
    } else {
        out += &format!(
            "# The device is found by the conditions below (--match), all of which must hold;\n\
             # {iface} names the file only.\n[Match]\n"
        );
        for m in matches {
            out += &m.line();
            out.push('\n');
        }
    }
    out += "\n[Link]\n\
            NamePolicy=keep kernel database onboard slot path\n\
            AlternativeNamesPolicy=database onboard slot path\n\
            MACAddressPolicy=persistent\n";
    for item in kept {
        let line = link_line(item).expect("kept items render");
        if let Some(needs) = since(&line) {
            out += &format!("# needs systemd >= {needs}\n");
        }
        out += &line;
        out.push('\n');
    }
    (
        format!("/etc/systemd/network/10-nictune-{iface}.link"),
        out,
        omitted,
    )
}

/// The systemd version a `Key=value` line needs when it is newer than 252.
fn since(line: &str) -> Option<Version> {
    let key = line.split('=').next()?;
    SINCE.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// `Key=value` for one item, or why it has no `.link` form.
fn link_line(item: &Item) -> Result<String, String> {
    if item.instance.is_some() {
        return Err("per-queue or per-instance values have no .link key".into());
    }
    let Some(key) = item.alias(AliasKind::SystemdLink) else {
        return Err(super::kind_reason(item, super::Format::SystemdLink));
    };
    if key.starts_with("IRQAffinity") {
        return Err("IRQAffinity= needs systemd 260 or newer (merged January 2026)".into());
    }
    if let Some((_, takes)) = NO_ZERO
        .iter()
        .find(|(k, _)| *k == key && item.value == XValue::Int(0))
    {
        return Err(format!(
            "{key}= takes {takes} in systemd.link(5), so systemd would refuse 0; {}",
            super::kind_reason(item, super::Format::SystemdLink)
        ));
    }
    let value = match &item.value {
        XValue::Int(n) if key.ends_with("Sec") => format!("{n}{}", span_unit(item)),
        other => other.word("yes", "no"),
    };
    Ok(format!("{key}={value}"))
}

/// systemd's suffix for the item's unit (`us` for µs); seconds are spelled out too.
fn span_unit(item: &Item) -> &'static str {
    match item.entry.map(|e| e.unit) {
        Some(Unit::Nsecs) => "ns",
        Some(Unit::Secs) => "s",
        _ => "us",
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ini_lookup, items, items_of};
    use super::super::Version;
    use super::{looks_udev_named, LinkMatch};

    /// `--match`: the conditions replace `OriginalName=`, all of them in `[Match]`.
    #[test]
    fn match_conditions_replace_the_kernel_name() {
        let matches = [
            "mac=02:AB:00:00:00:01",
            "path=pci-0000:03:00.*",
            "driver=igb",
        ]
        .map(|m| LinkMatch::parse(m).unwrap());
        let (path, text, _) = super::render(&items(), "enp3s0", Version(252, 0), &matches);
        assert_eq!(path, "/etc/systemd/network/10-nictune-enp3s0.link");
        let ini = ini_lookup(&text);
        assert_eq!(ini("Match", "OriginalName"), None, "{text}");
        assert_eq!(
            ini("Match", "MACAddress").as_deref(),
            Some("02:ab:00:00:00:01")
        );
        assert_eq!(ini("Match", "Path").as_deref(), Some("pci-0000:03:00.*"));
        assert_eq!(ini("Match", "Driver").as_deref(), Some("igb"));
        assert!(!text.contains("# warning:"), "{text}");
        let permanent = [LinkMatch::parse("permanent-mac=00:1b:21:0a:0b:0c").unwrap()];
        let (_, text, _) = super::render(&items(), "eth1", Version(252, 0), &permanent);
        let ini = ini_lookup(&text);
        let got = ini("Match", "PermanentMACAddress");
        assert_eq!(got.as_deref(), Some("00:1b:21:0a:0b:0c"));
    }

    /// Values that are not conditions, or would add a line to the file, are refused with
    /// what is allowed.
    #[test]
    fn bad_match_conditions_are_refused_naming_the_allowed_forms() {
        for bad in [
            "mac",
            "mac=02:ab:00:00:00",
            "mac=02:ab:00:00:00:0g",
            "mac=02:ab:00:00:00:01:02",
            "path=",
            "path=pci-0000:03:00.0\nDriver=x",
            "path=a b",
            "driver=igb;rm",
            "name=eth0",
            "OriginalName=eth0",
        ] {
            let e = LinkMatch::parse(bad).unwrap_err().to_string();
            assert!(e.contains("allowed: mac="), "{bad}: {e}");
        }
    }

    /// Without `--match`, a name of the predictable scheme draws a warning, since
    /// `OriginalName=` cannot match it; a kernel name does not.
    #[test]
    fn a_udev_given_name_matched_by_original_name_is_warned_about() {
        for udev in [
            "enp3s0",
            "eno1",
            "ens1f0",
            "enx0016b1d2e3f4",
            "wlp2s0",
            "enP1p2s0",
            "ibp1s0",
        ] {
            assert!(looks_udev_named(udev), "{udev}");
            let (_, text, _) = super::render(&items(), udev, Version(252, 0), &[]);
            assert!(
                text.contains(&format!("# warning: {udev} looks like a name udev gave")),
                "{text}"
            );
        }
        for kernel in [
            "eth0", "eth1", "wlan0", "ens", "en0", "lo", "veth0", "bond0",
        ] {
            assert!(!looks_udev_named(kernel), "{kernel}");
        }
    }

    #[test]
    fn rps_mask_is_written_for_systemd_256_with_the_version_it_needs() {
        let (_, text, _) = super::render(&items(), "eth1", Version(256, 0), &[]);
        assert!(
            text.contains("# needs systemd >= 256\nReceivePacketSteeringCPUMask=0-3\n"),
            "{text}"
        );
    }

    /// Audit: `TxChannels=0`, `RxMiniBufferSize=0`, `StatisticsBlockCoalesceSec=0us` and
    /// `CoalescePacketRateSampleIntervalSec=0s` were written; systemd refuses them.
    #[test]
    fn zeros_systemd_refuses_are_left_out_with_where_they_go() {
        let items = items_of(
            "[settings]\n\"channel.tx\" = 0\n\"channel.rx\" = 0\n\"channel.combined\" = 4\n\
             \"ring.rx-mini\" = 0\n\"coalesce.stats-block-usecs\" = 0\n\
             \"coalesce.rate-sample-interval\" = 0\n\"coalesce.rx-usecs\" = 0\n",
        );
        let (_, text, omitted) = super::render(&items, "eth1", Version(252, 0), &[]);
        let ini = ini_lookup(&text);
        assert_eq!(ini("Link", "CombinedChannels").as_deref(), Some("4"));
        // rx-usecs 0 is a real setting (no delay), and systemd takes it.
        assert_eq!(ini("Link", "RxCoalesceSec").as_deref(), Some("0us"));
        for key in [
            "TxChannels",
            "RxChannels",
            "RxMiniBufferSize",
            "StatisticsBlockCoalesceSec",
            "CoalescePacketRateSampleIntervalSec",
        ] {
            assert_eq!(ini("Link", key), None, "{key}:\n{text}");
            let o = omitted
                .iter()
                .find(|o| o.reason.starts_with(&format!("{key}= takes ")))
                .unwrap_or_else(|| panic!("{key} not listed: {omitted:?}"));
            assert!(o.reason.contains("udev"), "{o:?}");
        }
        assert_eq!(omitted.len(), 5, "{omitted:?}");
    }

    #[test]
    fn coalesce_times_carry_units_and_switches_are_words() {
        let (path, text, omitted) = super::render(&items(), "eth1", Version(252, 0), &[]);
        assert_eq!(path, "/etc/systemd/network/10-nictune-eth1.link");
        assert!(
            text.contains("names that have already been\n# changed from userspace")
                && text.contains("MACAddress= or Path= instead"),
            "{text}"
        );
        let ini = ini_lookup(&text);
        let get = |k: &str| ini("Link", k);
        assert_eq!(get("RxCoalesceSec").as_deref(), Some("50us"));
        assert_eq!(get("UseAdaptiveRxCoalesce").as_deref(), Some("no"));
        assert_eq!(get("RxMaxCoalescedFrames").as_deref(), Some("32"));
        assert_eq!(get("CombinedChannels").as_deref(), Some("4"));
        assert_eq!(get("RxBufferSize").as_deref(), Some("1024"));
        assert_eq!(get("GenericReceiveOffload").as_deref(), Some("yes"));
        assert_eq!(
            get("ReceivePacketSteeringCPUMask"),
            None,
            "systemd 252 ignores it"
        );
        let names: Vec<&str> = omitted.iter().map(|o| o.setting.as_str()).collect();
        assert!(names.contains(&"rps.cpus=0-3"), "{names:?}");
        assert!(names.contains(&"napi.defer-hard-irqs=2"));
        assert!(names.contains(&"rps.cpus@1=0-1"), "{names:?}");
        assert!(names.contains(&"irq.affinity@45=2-3"));
    }
}
