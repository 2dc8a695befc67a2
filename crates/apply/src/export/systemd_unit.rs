//! A oneshot systemd service that re-applies the profile with `nictune apply` whenever the
//! device appears: the persistence path for what no native format holds (one NAPI's values,
//! IRQ affinity). It names the installed binary and profile (`/usr/local/sbin/nictune`,
//! `/etc/nictune/IF.toml`), never a build tree or the path the profile was exported from.

use super::{partition, ExportContext, Item, Omitted};

/// Path, body and omissions: everything `nictune apply` can set at run time is covered;
/// FreeBSD settings are not (`apply` refuses them), nor are module parameters: `apply`
/// sets one by reloading the driver, which re-triggers this unit; they persist in
/// modprobe.d.
pub fn render(
    items: &[Item],
    target: &ExportContext,
    iface: &str,
) -> (String, String, Vec<Omitted>) {
    let (_, omitted) = partition(items, |i| {
        if i.entry
            .is_some_and(|e| crate::catalog::is_module_param(&e.key))
        {
            return Err(format!(
                "{}; applied from this unit it would reload the driver each time the device \
                 appears, so persist it with `--format modprobe` and keep it out of this profile",
                super::kind_reason(i, super::Format::SystemdUnit)
            ));
        }
        let linux = i.os() == nictune_core::catalog::Os::Linux;
        match crate::catalog::check_appliable_entry(i.entry) {
            Ok(()) if linux => Ok(()),
            _ => Err(format!(
                "{}; `nictune apply` refuses it, so keep it out of this profile",
                super::kind_reason(i, super::Format::SystemdUnit)
            )),
        }
    });
    let device = format!("sys-subsystem-net-devices-{}.device", escape(iface));
    let netns = target
        .netns
        .map(|n| format!(" --netns {}", exec_arg(n)))
        .unwrap_or_default();
    let out = format!(
        "# Re-applies the profile when {iface} appears (boot, driver reload, hotplug).\n\
         # Link up/down is not a device event: re-run `systemctl restart nictune-{iface}` from\n\
         # a NetworkManager dispatcher or networkd-dispatcher hook if the driver resets\n\
         # settings on link up.\n\
         # It runs the installed nictune ({exe}) with the installed\n\
         # profile ({profile});\n\
         # `nictune export --format systemd-unit --install` puts both and this unit in place.\n\
         # --force: the profile was chosen for this device when it was installed, so it is\n\
         # applied at boot even to the interface that will carry the default route.\n\
         # Then: systemctl daemon-reload && systemctl enable --now nictune-{iface}.service\n\
         [Unit]\n\
         Description=nictune: re-apply {described} to {iface}\n\
         BindsTo={device}\n\
         After={device} network-pre.target\n\
         Before=network.target\n\
         \n\
         [Service]\n\
         Type=oneshot\n\
         RemainAfterExit=yes\n\
         ExecStart={exe} apply --profile {profile} --iface {iface}{netns} --force\n\
         \n\
         [Install]\n\
         WantedBy={device}\n",
        described = target.profile_path.replace('%', "%%"),
        profile = exec_arg(target.profile_path),
        exe = exec_arg(target.nictune),
    );
    (
        format!("/etc/systemd/system/nictune-{iface}.service"),
        out,
        omitted,
    )
}

/// One `ExecStart=` argument (systemd.service(5), "Command lines"): `%` and `$` doubled so
/// systemd expands no specifier or variable; quoted, with `\\` and `"` escaped, unless it is
/// plain. The caller has refused control characters.
fn exec_arg(arg: &str) -> String {
    let literal = arg.replace('%', "%%").replace('$', "$$");
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@,=%$".contains(c);
    if !literal.is_empty() && literal.chars().all(plain) {
        return literal;
    }
    format!("\"{}\"", literal.replace('\\', "\\\\").replace('"', "\\\""))
}

/// systemd's unit-name escaping of one path component (systemd.unit(5), "String Escaping"):
/// ASCII letters, digits, `_` and (not leading) `.` stay; everything else becomes `\xNN`.
fn escape(name: &str) -> String {
    name.bytes()
        .enumerate()
        .map(|(i, b)| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            b'.' if i > 0 => ".".into(),
            _ => format!("\\x{b:02x}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ini_lookup, items, target};

    #[test]
    fn unit_binds_to_the_device_and_runs_apply() {
        let (path, text, omitted) = super::render(&items(), &target(), "eth1");
        assert_eq!(path, "/etc/systemd/system/nictune-eth1.service");
        let names: Vec<&str> = omitted.iter().map(|o| o.setting.as_str()).collect();
        assert_eq!(
            names.len(),
            5,
            "the module parameter, three FreeBSD settings and the NFS mount option: {names:?}"
        );
        let get = ini_lookup(&text);
        assert_eq!(
            get("Service", "ExecStart").as_deref(),
            Some("/usr/bin/nictune apply --profile /etc/nictune/eth1.toml --iface eth1 --force")
        );
        assert_eq!(
            get("Install", "WantedBy").as_deref(),
            Some("sys-subsystem-net-devices-eth1.device")
        );
    }

    #[test]
    fn paths_with_spaces_quotes_and_specifiers_stay_one_literal_argument() {
        assert_eq!(
            super::exec_arg("/etc/nictune/eth1.toml"),
            "/etc/nictune/eth1.toml"
        );
        assert_eq!(super::exec_arg("/a b/p.toml"), "\"/a b/p.toml\"");
        assert_eq!(super::exec_arg("/p%i$X.toml"), "/p%%i$$X.toml");
        assert_eq!(super::exec_arg("/a\"b\\c"), "\"/a\\\"b\\\\c\"");
    }

    #[test]
    fn device_names_are_escaped_like_systemd_escape() {
        assert_eq!(super::escape("enp3s0-1"), "enp3s0\\x2d1");
        assert_eq!(super::escape("eth0.100"), "eth0.100");
    }
}
