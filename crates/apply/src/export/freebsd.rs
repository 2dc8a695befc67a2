//! FreeBSD: `/boot/loader.conf` tunables, `/etc/sysctl.conf` sysctls and the `polling` flag
//! in `/etc/rc.conf`, from the catalog's FreeBSD templates.

use super::{partition, Item, Omitted};
use nictune_core::catalog::Via;

/// `/boot/loader.conf`: boot-time tunables (`hw.igb.rxd="2048"`).
pub fn loader_conf(items: &[Item]) -> (String, String, Vec<Omitted>) {
    let head = "# Read by the boot loader: takes effect at the next boot.\n";
    templated(items, Via::LoaderConf, "/boot/loader.conf", head)
}

/// `/etc/sysctl.conf`: run-time sysctls (`kern.polling.burst_max=150`).
pub fn sysctl_conf(items: &[Item]) -> (String, String, Vec<Omitted>) {
    let head = "# Applied at boot by rc(8); apply now with `service sysctl restart`.\n";
    templated(items, Via::SysctlConf, "/etc/sysctl.conf", head)
}

fn templated(items: &[Item], via: Via, path: &str, head: &str) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| {
        i.template(via)
            .map(|_| ())
            .ok_or_else(|| super::kind_reason(i).to_string())
    });
    let mut out = head.to_string();
    for item in kept {
        let unit = item.instance.unwrap_or(0).to_string();
        let line = item
            .template(via)
            .expect("kept")
            .replace("{value}", &item.value.plain())
            .replace("{n}", &unit);
        out += &format!("{line}\n");
    }
    (path.to_string(), out, omitted)
}

/// `/etc/rc.conf`: `polling` appended to the interface's ifconfig line. rc.conf is sourced
/// by sh, so appending to the variable keeps the addresses set earlier in the file.
pub fn rc_conf(items: &[Item], iface: &str) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| {
        (i.key == "freebsd.ifconfig.polling")
            .then_some(())
            .ok_or_else(|| super::kind_reason(i).to_string())
    });
    let mut out = String::from(
        "# Append to /etc/rc.conf (after the existing ifconfig line); needs a kernel built\n\
         # with `options DEVICE_POLLING` and a driver that supports polling.\n",
    );
    let var = format!("ifconfig_{}", iface.replace(['.', '-'], "_"));
    for item in kept {
        let flag = item.value.word("polling", "-polling");
        out += &format!("{var}=\"${{{var}}} {flag}\"\n");
    }
    ("/etc/rc.conf".into(), out, omitted)
}

#[cfg(test)]
mod tests {
    use super::super::tests::items;

    #[test]
    fn loader_sysctl_and_rc_lines_follow_the_catalog_templates() {
        let (_, loader, _) = super::loader_conf(&items());
        assert!(
            loader.lines().any(|l| l == "hw.igb.rxd=\"2048\""),
            "{loader}"
        );
        let (_, sysctl, _) = super::sysctl_conf(&items());
        assert!(
            sysctl.lines().any(|l| l == "kern.polling.burst_max=150"),
            "{sysctl}"
        );
        let (_, rc, omitted) = super::rc_conf(&items(), "em0");
        assert!(
            rc.lines()
                .any(|l| l == "ifconfig_em0=\"${ifconfig_em0} polling\""),
            "{rc}"
        );
        assert!(omitted.iter().any(|o| o.setting == "coalesce.rx-usecs=50"));
    }
}
