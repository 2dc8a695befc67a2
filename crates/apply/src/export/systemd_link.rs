//! systemd `.link` files (systemd.link(5)), applied by udev's `net_setup_link` on device add.
//!
//! Time spans carry explicit units: a bare `RxCoalesceSec=50` means 50 *seconds*
//! (ecosystem.md §2.8), so 50 µs is written `RxCoalesceSec=50us`.

use super::{partition, Item, Omitted, XValue};
use nictune_core::catalog::{AliasKind, Unit};

/// Path, body and omissions.
pub fn render(items: &[Item], iface: &str) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| link_line(i).map(|_| ()));
    let mut out = format!(
        "# udev applies this when {iface} appears; to apply it now run\n\
         #   udevadm trigger --action=add /sys/class/net/{iface}\n\
         # Only the first matching .link file is used, so this one replaces 99-default.link\n\
         # for {iface} and repeats its naming policies.\n\
         [Match]\nOriginalName={iface}\n\n[Link]\n\
         NamePolicy=keep kernel database onboard slot path\n\
         AlternativeNamesPolicy=database onboard slot path\n\
         MACAddressPolicy=persistent\n"
    );
    for item in kept {
        out += &link_line(item).expect("kept items render");
        out.push('\n');
    }
    (
        format!("/etc/systemd/network/10-nictune-{iface}.link"),
        out,
        omitted,
    )
}

/// `Key=value` for one item, or why it has no `.link` form.
fn link_line(item: &Item) -> Result<String, String> {
    if item.instance.is_some() {
        return Err("per-queue or per-instance values have no .link key".into());
    }
    let Some(key) = item.alias(AliasKind::SystemdLink) else {
        return Err(super::kind_reason(item));
    };
    if key.starts_with("IRQAffinity") {
        return Err("IRQAffinity= needs systemd 260 or newer (merged January 2026)".into());
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
    use super::super::tests::{ini_lookup, items};

    #[test]
    fn coalesce_times_carry_units_and_switches_are_words() {
        let (path, text, omitted) = super::render(&items(), "eth1");
        assert_eq!(path, "/etc/systemd/network/10-nictune-eth1.link");
        let ini = ini_lookup(&text);
        let get = |k: &str| ini("Link", k);
        assert_eq!(get("RxCoalesceSec").as_deref(), Some("50us"));
        assert_eq!(get("UseAdaptiveRxCoalesce").as_deref(), Some("no"));
        assert_eq!(get("RxMaxCoalescedFrames").as_deref(), Some("32"));
        assert_eq!(get("CombinedChannels").as_deref(), Some("4"));
        assert_eq!(get("RxBufferSize").as_deref(), Some("1024"));
        assert_eq!(get("GenericReceiveOffload").as_deref(), Some("yes"));
        assert_eq!(get("ReceivePacketSteeringCPUMask").as_deref(), Some("0-3"));
        let names: Vec<&str> = omitted.iter().map(|o| o.setting.as_str()).collect();
        assert!(names.contains(&"napi.defer-hard-irqs=2"));
        assert!(names.contains(&"rps.cpus@1=0-1"), "{names:?}");
        assert!(names.contains(&"irq.affinity@45=2-3"));
    }
}
