//! FreeBSD: `/boot/loader.conf` tunables, `/etc/sysctl.conf` sysctls, the `polling` flag
//! in `/etc/rc.conf` and kernel configuration lines (`options DEVICE_POLLING`,
//! `options HZ=1000`), from the catalog's FreeBSD templates.

use super::{partition, Format, Item, Omitted};
use nictune_core::catalog::{Os, Via};

/// `/boot/loader.conf`: boot-time tunables (`hw.igb.rxd="2048"`).
pub fn loader_conf(items: &[Item]) -> (String, String, Vec<Omitted>) {
    let head = "# Read by the boot loader: takes effect at the next boot.\n";
    templated(items, Format::LoaderConf, "/boot/loader.conf", head)
}

/// `/etc/sysctl.conf`: run-time sysctls (`kern.polling.burst_max=150`).
pub fn sysctl_conf(items: &[Item]) -> (String, String, Vec<Omitted>) {
    let head = "# Applied at boot by rc(8); apply now with `service sysctl restart`.\n";
    templated(items, Format::FreebsdSysctlConf, "/etc/sysctl.conf", head)
}

/// The catalog's FreeBSD template for `format`; a per-unit key needs its unit.
fn line(item: &Item, format: Format) -> Result<String, String> {
    if item.unlisted_freebsd() && format == Format::FreebsdSysctlConf {
        let name = item.key.trim_start_matches("freebsd.");
        return Ok(format!(
            "# warning: {name} is not in nictune's catalog: written as given, unchecked; if \
             FreeBSD says it is read-only at run time, move it to /boot/loader.conf\n\
             {name}={}",
            item.value.plain()
        ));
    }
    let via = match format {
        Format::LoaderConf => Via::LoaderConf,
        _ => Via::SysctlConf,
    };
    // Catalog templates of other OSes share the via (a Linux sysctl's `sysctl.conf` line):
    // never write a Linux key into a FreeBSD file.
    if item.os() != Os::Freebsd {
        return Err(super::kind_reason(item, format));
    }
    let template = item
        .template(via)
        .ok_or_else(|| super::kind_reason(item, format))?;
    // FreeBSD reads these knobs as integers: a loader.conf tunable through TUNABLE_INT
    // (getenv_int → getenv_quad, sys/kern/kern_environment.c, which takes only a number and
    // leaves the default in place for `off`), a sysctl.conf line through sysctl(8), which
    // refuses `on` for an integer OID ("invalid integer"). A switch is 1/0.
    let value = template.replace("{value}", &item.value.word("1", "0"));
    match item.instance {
        Some(n) => Ok(value.replace("{n}", &n.to_string())),
        None if value.contains("{n}") => Err(format!(
            "names no unit: write it with the unit's number, e.g. {}",
            item.key
                .trim_start_matches("freebsd.")
                .replacen(".N.", ".0.", 1)
        )),
        None => Ok(value),
    }
}

fn templated(
    items: &[Item],
    format: Format,
    path: &str,
    head: &str,
) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| line(i, format).map(|_| ()));
    let mut out = head.to_string();
    for item in kept {
        out += &line(item, format).expect("kept");
        out.push('\n');
    }
    (path.to_string(), out, omitted)
}

/// `/etc/rc.conf`: `polling` appended to the interface's ifconfig line. rc.conf is sourced
/// by sh, so appending to the variable keeps the addresses set earlier in the file.
pub fn rc_conf(items: &[Item], iface: &str) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| {
        (i.key == "freebsd.ifconfig.polling")
            .then_some(())
            .ok_or_else(|| super::kind_reason(i, Format::RcConf))
    });
    let mut out = String::from(
        "# Append to /etc/rc.conf (after the existing ifconfig line); needs a kernel built\n\
         # with `options DEVICE_POLLING` (--format kernconf) and a driver that supports\n\
         # polling (`nictune check polling=on --driver DRIVER`).\n",
    );
    let var = format!("ifconfig_{}", iface.replace(['.', '-'], "_"));
    for item in kept {
        let flag = item.value.word("polling", "-polling");
        out += &format!("{var}=\"${{{var}}} {flag}\"\n");
    }
    ("/etc/rc.conf".into(), out, omitted)
}

/// A kernel configuration file (config(5)) that includes GENERIC and adds the profile's
/// build options; `freebsd.ifconfig.polling=on` brings `options DEVICE_POLLING`, without
/// which the flag has no effect (polling(4)).
pub fn kernconf(items: &[Item]) -> (String, String, Vec<Omitted>) {
    let polling_on = items
        .iter()
        .any(|i| i.key == "freebsd.ifconfig.polling" && i.value == super::XValue::Bool(true));
    let device_polling_given = items
        .iter()
        .any(|i| i.key == "freebsd.options.DEVICE_POLLING");
    let (kept, omitted) = partition(items, |i| {
        let polling = i.key == "freebsd.ifconfig.polling";
        (i.os() == Os::Freebsd && (i.template(Via::KernelConfig).is_some() || polling))
            .then_some(())
            .ok_or_else(|| super::kind_reason(i, Format::Kernconf))
    });
    let mut out = String::from(
        "# A kernel configuration (config(5)): GENERIC plus the options below. Build and\n\
         # install it (FreeBSD Handbook, \"Configuring the FreeBSD Kernel\"), as root:\n\
         #   cp THIS-FILE /usr/src/sys/$(uname -m)/conf/NICTUNE\n\
         #   cd /usr/src && make buildkernel KERNCONF=NICTUNE && make installkernel KERNCONF=NICTUNE\n\
         #   shutdown -r now\n\
         # Kernel options cannot be set in loader.conf or by sysctl; only a rebuilt kernel\n\
         # changes them (HZ alone can also be set as kern.hz in /boot/loader.conf).\n\
         include GENERIC\n\
         ident NICTUNE\n",
    );
    for item in kept {
        if item.key == "freebsd.ifconfig.polling" {
            if polling_on && !device_polling_given {
                out += "# freebsd.ifconfig.polling=on needs it (polling(4)):\n";
                out += "options DEVICE_POLLING\n";
            }
            continue;
        }
        let template = item.template(Via::KernelConfig).expect("kept");
        let line = match (&item.value, template.strip_prefix("options ")) {
            // A switch off: the option is taken out of what GENERIC includes.
            (super::XValue::Bool(false), Some(option)) => format!("nooptions {option}"),
            _ => template.replace("{value}", &item.value.plain()),
        };
        out += &format!("{line}\n");
    }
    ("/usr/src/sys/amd64/conf/NICTUNE".into(), out, omitted)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{items, items_of};

    #[test]
    fn kernconf_holds_the_build_options_and_polling_brings_device_polling() {
        let (path, text, omitted) = super::kernconf(&items_of(
            "[settings]\n\"freebsd.kern.hz\" = 1000\n\"freebsd.ifconfig.polling\" = \"on\"\n\"freebsd.kern.polling.burst_max\" = 300\n",
        ));
        assert!(path.ends_with("/conf/NICTUNE"));
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines,
            [
                "include GENERIC",
                "ident NICTUNE",
                "options DEVICE_POLLING",
                "options HZ=1000"
            ]
        );
        assert!(text.contains("make buildkernel KERNCONF=NICTUNE"));
        assert_eq!(omitted.len(), 1);
        assert_eq!(omitted[0].setting, "freebsd.kern.polling.burst_max=300");
        assert_eq!(
            omitted[0].reason,
            "FreeBSD setting: --format freebsd-sysctl.conf"
        );
        let (_, text, _) = super::kernconf(&items_of(
            "[settings]\n\"freebsd.options.DEVICE_POLLING\" = \"off\"\n",
        ));
        assert!(
            text.lines().any(|l| l == "nooptions DEVICE_POLLING"),
            "{text}"
        );
    }

    /// Audit: `hw.igb.enable_aim="off"` left AIM on (getenv_quad takes no word) and
    /// `kern.polling.idle_poll=on` is refused by sysctl(8): FreeBSD switches are 1/0.
    #[test]
    fn freebsd_switches_are_written_as_integers() {
        let items = items_of(
            "[settings]\n\"freebsd.hw.igb.enable_aim\" = \"off\"\n\"freebsd.kern.polling.idle_poll\" = \"on\"\n",
        );
        let (_, loader, _) = super::loader_conf(&items);
        let lines: Vec<&str> = loader.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines, ["hw.igb.enable_aim=\"0\""]);
        let (_, sysctl, _) = super::sysctl_conf(&items);
        let lines: Vec<&str> = sysctl.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines, ["kern.polling.idle_poll=1"]);
        // The rc.conf flag stays a word: ifconfig(8) takes `polling`/`-polling`.
        let (_, rc, _) = super::rc_conf(
            &items_of("[settings]\n\"freebsd.ifconfig.polling\" = \"off\"\n"),
            "em0",
        );
        assert!(rc.contains("${ifconfig_em0} -polling\""), "{rc}");
    }

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
