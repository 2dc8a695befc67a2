//! NetworkManager connection keyfiles: the `[ethtool]` section (nm-settings-keyfile(5)),
//! whose keys are the `ethtool.*` properties without the prefix, in raw ethtool units.

use super::{partition, Item, Omitted};
use nictune_core::catalog::AliasKind;

/// Path, body and omissions.
pub fn render(items: &[Item], iface: &str) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| property(i).map(|_| ()));
    let props: Vec<(String, String)> = kept
        .iter()
        .map(|i| (property(i).expect("kept"), i.value.word("true", "false")))
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
        .ok_or(super::kind_reason(item))?;
    Ok(alias.trim_start_matches("ethtool.").to_string())
}

#[cfg(test)]
mod tests {
    use super::super::tests::items;
    use super::super::validate::ini;

    #[test]
    fn ethtool_section_holds_raw_units() {
        let (_, text, omitted) = super::render(&items(), "eth1");
        let parsed = ini(&text).unwrap();
        let get = |k: &str| {
            parsed
                .iter()
                .find(|(s, key, _)| s == "ethtool" && key == k)
                .map(|(_, _, v)| v.clone())
        };
        assert_eq!(get("coalesce-rx-usecs").as_deref(), Some("50"));
        assert_eq!(get("coalesce-adaptive-rx").as_deref(), Some("false"));
        assert_eq!(get("ring-rx").as_deref(), Some("1024"));
        assert_eq!(get("channels-combined").as_deref(), Some("4"));
        assert!(omitted
            .iter()
            .any(|o| o.setting == "sysctl.net.core.busy_poll=50"));
        assert!(text.contains("nmcli connection modify <name> ethtool.channels-combined 4"));
    }
}
