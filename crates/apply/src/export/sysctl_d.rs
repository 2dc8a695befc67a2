//! sysctl.d files (sysctl.d(5)): `key = value` lines for the Linux `net.*` sysctls.

use super::{partition, Item, Omitted};
use nictune_core::catalog::Os;

/// Path, body and omissions.
pub fn render(items: &[Item]) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| {
        let linux = i.entry.is_none_or(|e| e.os == Os::Linux);
        (i.family() == "sysctl" && linux)
            .then_some(())
            .ok_or_else(|| super::kind_reason(i, super::Format::SysctlD))
    });
    let mut out = String::from(
        "# Loaded at boot by systemd-sysctl; apply now with `sysctl --system`.\n\
         # These apply to the initial network namespace; net.core.busy_poll and busy_read are\n\
         # host-wide.\n",
    );
    for item in kept {
        out += &format!(
            "{} = {}\n",
            item.key.trim_start_matches("sysctl."),
            item.value.plain()
        );
    }
    ("/etc/sysctl.d/90-nictune.conf".into(), out, omitted)
}

#[cfg(test)]
mod tests {
    use super::super::tests::items;
    use super::super::validate::sysctl_lines;

    #[test]
    fn only_sysctls_are_written() {
        let (_, text, _) = super::render(&items());
        assert_eq!(
            sysctl_lines(&text).unwrap(),
            [("net.core.busy_poll".to_string(), "50".to_string())]
        );
    }
}
