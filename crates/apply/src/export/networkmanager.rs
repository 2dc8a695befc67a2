//! NetworkManager connection keyfiles: the `[ethtool]` section (nm-settings-keyfile(5)),
//! whose keys are the `ethtool.*` properties without the prefix, in raw ethtool units.
//!
//! Types and versions as NetworkManager's own reader takes them (nm-settings-nmcli(5) of
//! 1.42 and 1.46): every `coalesce-*` is a uint32, so the adaptive switches are 1/0 (1.42
//! drops `false`); `feature-*` are booleans; `channels-*` exist from 1.46 on and are dropped
//! by older readers, so they are written only for `--target-version 1.46` or newer.

use super::{partition, Item, Omitted, Version};
use nictune_core::catalog::AliasKind;

/// The first NetworkManager with the `ethtool.channels-*` properties.
pub(super) const CHANNELS_SINCE: Version = Version(1, 46);

/// Path, body and omissions.
pub fn render(items: &[Item], iface: &str, version: Version) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| {
        let p = property(i)?;
        if p.starts_with("channels-") && version < CHANNELS_SINCE {
            return Err(format!(
                "ethtool.{p} needs NetworkManager {CHANNELS_SINCE} or newer (the target is {version}; \
                 older readers drop it): --target-version {CHANNELS_SINCE} if the host has it, or \
                 --format systemd-link, udev or tuned"
            ));
        }
        Ok(())
    });
    let props: Vec<(String, String)> = kept
        .iter()
        .map(|i| {
            let p = property(i).expect("kept");
            let v = if p.starts_with("coalesce-") {
                i.value.word("1", "0")
            } else {
                i.value.word("true", "false")
            };
            (p, v)
        })
        .collect();
    let nmcli: Vec<String> = props
        .iter()
        .map(|(p, v)| format!("ethtool.{p} {v}"))
        .collect();
    let mut out = format!(
        "# Merge the [ethtool] section into the connection profile of {iface}\n\
         # (/etc/NetworkManager/system-connections/<name>.nmconnection), then run\n\
         #   nmcli connection reload && nmcli connection up <name>\n\
         # or set the same with:\n\
         #   nmcli connection modify <name> {}\n\
         [ethtool]\n",
        nmcli.join(" ")
    );
    for (p, v) in props {
        if p.starts_with("channels-") {
            out += &format!("# needs NetworkManager >= {CHANNELS_SINCE}\n");
        }
        out += &format!("{p}={v}\n");
    }
    (
        format!("/etc/NetworkManager/system-connections/{iface}.nmconnection"),
        out,
        omitted,
    )
}

/// The keyfile key (`coalesce-rx-usecs`), or why there is none.
fn property(item: &Item) -> Result<String, String> {
    if item.instance.is_some() {
        return Err("NetworkManager has no per-queue or per-instance settings".into());
    }
    let alias = item
        .alias(AliasKind::Networkmanager)
        .ok_or(super::kind_reason(item, super::Format::Networkmanager))?;
    Ok(alias.trim_start_matches("ethtool.").to_string())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ini_lookup, items};
    use super::super::Version;

    #[test]
    fn ethtool_section_holds_raw_units_and_integer_switches() {
        let (_, text, omitted) = super::render(&items(), "eth1", Version(1, 42));
        let ini = ini_lookup(&text);
        let get = |k: &str| ini("ethtool", k);
        assert_eq!(get("coalesce-rx-usecs").as_deref(), Some("50"));
        assert_eq!(get("coalesce-adaptive-rx").as_deref(), Some("0"));
        assert_eq!(get("feature-gro").as_deref(), Some("true"));
        assert_eq!(get("ring-rx").as_deref(), Some("1024"));
        assert_eq!(get("channels-combined"), None);
        let channels = omitted
            .iter()
            .find(|o| o.setting == "channel.combined=4")
            .expect("channels left out for NetworkManager 1.42");
        assert!(
            channels.reason.contains("needs NetworkManager 1.46"),
            "{channels:?}"
        );
        assert!(omitted
            .iter()
            .any(|o| o.setting == "sysctl.net.core.busy_poll=50"));
    }

    #[test]
    fn channels_are_written_for_networkmanager_1_46_with_the_version_they_need() {
        let (_, text, _) = super::render(&items(), "eth1", Version(1, 46));
        assert_eq!(
            ini_lookup(&text)("ethtool", "channels-combined").as_deref(),
            Some("4")
        );
        assert!(
            text.contains("# needs NetworkManager >= 1.46\nchannels-combined=4\n"),
            "{text}"
        );
        assert!(text.contains("nmcli connection modify <name> ethtool.channels-combined 4"));
    }
}
