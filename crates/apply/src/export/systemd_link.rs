//! systemd `.link` files (systemd.link(5)), applied by udev's `net_setup_link` on device add.
//!
//! Time spans carry explicit units: a bare `RxCoalesceSec=50` means 50 *seconds*
//! (ecosystem.md §2.8), so 50 µs is written `RxCoalesceSec=50us`.
//!
//! Versions: every `[Link]` key nictune writes is in systemd 252's systemd.link(5) (Debian
//! 12) except `ReceivePacketSteeringCPUMask=` ("Added in version 256" in systemd.link(5)),
//! which 252 ignores with a warning; it is written only for `--target-version 256` or newer,
//! marked with the version it needs.

use super::{partition, Item, Omitted, Version, XValue};
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

/// Path, body and omissions.
pub fn render(items: &[Item], iface: &str, version: Version) -> (String, String, Vec<Omitted>) {
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
         # for {iface} and repeats its naming policies.\n\
         # OriginalName= matches the kernel's name for the device, not one udev gave it\n\
         # (systemd.link(5): it \"cannot be used to match on names that have already been\n\
         # changed from userspace\"). If {iface} is such a name (enp3s0), match with\n\
         # MACAddress= or Path= instead (`udevadm info /sys/class/net/{iface}` shows ID_PATH).\n\
         [Match]\nOriginalName={iface}\n\n[Link]\n\
         NamePolicy=keep kernel database onboard slot path\n\
         AlternativeNamesPolicy=database onboard slot path\n\
         MACAddressPolicy=persistent\n"
    );
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

    #[test]
    fn rps_mask_is_written_for_systemd_256_with_the_version_it_needs() {
        let (_, text, _) = super::render(&items(), "eth1", Version(256, 0));
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
        let (_, text, omitted) = super::render(&items, "eth1", Version(252, 0));
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
        let (path, text, omitted) = super::render(&items(), "eth1", Version(252, 0));
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
