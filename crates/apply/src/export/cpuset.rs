//! A FreeBSD rc.d script binding interrupts to CPUs with `cpuset -l LIST -x IRQ` (cpuset(1))
//! at every boot. Queue bindings (`freebsd.irq.queue-cpus@Q` of the profile's interface)
//! look the IRQ up by the interrupt's name in `vmstat -i` each time the script runs — IRQ
//! numbers are handed out as drivers attach and can differ after a reboot (vmstat(8),
//! cpuset(1)). Linux `irq.affinity@N` is refused: a Linux IRQ number means nothing here.
//! The names tried for queue Q of IF are the ones drivers register: `IF:que Q` (em/igb/ix
//! before iflib), `IF:rxqQ` (iflib, FreeBSD 12 and later) and `IF:rx Q`.

use super::{partition, Item, Omitted};

/// The rc.d service name for `iface`: letters, digits and `_` only, as rc.subr variables
/// need.
fn service(iface: Option<&str>) -> String {
    match iface {
        Some(i) => format!("nictune_cpuset_{}", i.replace(['.', '-'], "_")),
        None => "nictune_cpuset".into(),
    }
}

/// One queue interrupt to bind: the queue and its CPUs.
struct Bind {
    queue: u32,
    cpus: String,
}

/// Path, body and omissions. The export adds the `#!/bin/sh` line above the header.
pub fn render(items: &[Item], iface: Option<&str>) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| match (i.key.as_str(), i.instance) {
        // A Linux IRQ number means nothing on FreeBSD: never `cpuset -x` it.
        ("irq.affinity", _) => Err(
            "Linux IRQ affinity: --format systemd-unit; on FreeBSD bind queue interrupts with \
             freebsd.irq.queue-cpus@Q"
                .into(),
        ),
        ("freebsd.irq.queue-cpus", Some(_)) if iface.is_some() => Ok(()),
        ("freebsd.irq.queue-cpus", Some(_)) => {
            Err("needs the interface: --iface IF or iface in the profile".into())
        }
        ("freebsd.irq.queue-cpus", None) => {
            Err("needs a queue number (freebsd.irq.queue-cpus@Q)".into())
        }
        _ => Err(super::kind_reason(i, super::Format::Cpuset)),
    });
    let binds: Vec<Bind> = kept
        .into_iter()
        .map(|item| Bind {
            queue: item.instance.expect("kept items have @Q"),
            cpus: item.value.plain(),
        })
        .collect();
    let name = service(iface);
    let mut out = format!(
        "# rc.d script: binds interrupts to CPUs at every boot; queue interrupts are found by\n\
         # their name in `vmstat -i`, since IRQ numbers can change between boots.\n\
         # Install: install -m 555 THIS-FILE /usr/local/etc/rc.d/{name}\n\
         #          sysrc {name}_enable=YES && service {name} start\n\
         #\n\
         # PROVIDE: {name}\n\
         # REQUIRE: netif\n\
         # KEYWORD: nojail\n\
         \n\
         . /etc/rc.subr\n\
         \n\
         name=\"{name}\"\n\
         rcvar=\"{name}_enable\"\n\
         start_cmd=\"{name}_start\"\n\
         stop_cmd=\":\"\n\
         \n\
         # {name}_irq NAME: the IRQ number vmstat -i shows for the interrupt called NAME.\n\
         {name}_irq()\n\
         {{\n\
         \tvmstat -i | awk -v want=\"$1\" '\n\
         \t\t$1 ~ /^irq[0-9]+:$/ {{\n\
         \t\t\tn = $2\n\
         \t\t\tfor (i = 3; i <= NF - 2; i++) n = n \" \" $i\n\
         \t\t\tif (n == want) {{ print substr($1, 4, length($1) - 4); exit }}\n\
         \t\t}}'\n\
         }}\n\
         \n\
         # {name}_bind CPUS NAME...: binds the first interrupt found of NAME... to CPUS.\n\
         {name}_bind()\n\
         {{\n\
         \tcpus=$1\n\
         \tshift\n\
         \tfor n in \"$@\"; do\n\
         \t\tirq=$({name}_irq \"$n\")\n\
         \t\tif [ -n \"$irq\" ]; then\n\
         \t\t\tcpuset -l \"$cpus\" -x \"$irq\" && echo \"{name}: $n (irq $irq) on CPUs $cpus\" && return 0\n\
         \t\t\treturn 1\n\
         \t\tfi\n\
         \tdone\n\
         \techo \"{name}: no interrupt named '$1' in vmstat -i; not bound\" >&2\n\
         \treturn 1\n\
         }}\n\
         \n\
         {name}_start()\n\
         {{\n\
         \tfailed=0\n"
    );
    for Bind { queue, cpus } in &binds {
        let dev = iface.expect("queue items need the interface");
        out += &format!(
            "\t{name}_bind {cpus} \"{dev}:que {queue}\" \"{dev}:rxq{queue}\" \"{dev}:rx {queue}\" || failed=1\n"
        );
    }
    out += &format!(
        "\treturn $failed\n\
         }}\n\
         \n\
         load_rc_config $name\n\
         : ${{{name}_enable:=\"NO\"}}\n\
         run_rc_command \"$1\"\n"
    );
    (format!("/usr/local/etc/rc.d/{name}"), out, omitted)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{items, items_of};
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;
    use std::process::Command;

    const QUEUES: &str = r#"
[settings]
"freebsd.irq.queue-cpus@0" = "12"
"freebsd.irq.queue-cpus@1" = "13"
"#;

    #[test]
    fn queue_bindings_go_by_name_and_linux_irqs_are_refused() {
        let (path, text, omitted) = super::render(&items_of(QUEUES), Some("igb7"));
        assert_eq!(path, "/usr/local/etc/rc.d/nictune_cpuset_igb7");
        assert!(omitted.is_empty(), "{omitted:?}");
        assert!(text.contains(
            "nictune_cpuset_igb7_bind 12 \"igb7:que 0\" \"igb7:rxq0\" \"igb7:rx 0\" || failed=1\n"
        ));
        let (_, _, omitted) = super::render(&items_of(QUEUES), None);
        assert_eq!(omitted.len(), 2, "queue bindings need the interface");
        let (_, text, omitted) = super::render(&items(), None);
        assert!(
            !text.contains("-x 45"),
            "a Linux IRQ is never bound: {text}"
        );
        let irq = omitted
            .iter()
            .find(|o| o.setting == "irq.affinity@45=2-3")
            .unwrap();
        assert!(irq.reason.starts_with("Linux IRQ affinity"), "{irq:?}");
    }

    fn write_exec(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The script under sh and dash, with rc.subr, vmstat and cpuset as stubs: this boot's
    /// vmstat -i numbers the queues 300 and 301 (not the 291 of the captured boot), and
    /// the script binds those.
    #[test]
    fn the_script_binds_by_name_under_sh_and_dash_with_stub_commands() {
        let exported = super::super::export(
            super::super::Format::Cpuset,
            &items_of(QUEUES),
            &super::super::ExportContext {
                iface: Some("igb7"),
                ..super::super::tests::target()
            },
        )
        .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let log = dir.join("cpuset.log");
        write_exec(
            &dir.join("vmstat"),
            "#!/bin/sh\n[ \"$1\" = -i ] || exit 64\n\
             echo 'interrupt                          total       rate'\n\
             echo 'irq299: igb6:que 3                   100         10'\n\
             echo 'irq300: igb7:que 0                   200         20'\n\
             echo 'irq301: igb7:que 1                   300         30'\n\
             echo 'cpu0:timer                          4000       1000'\n",
        );
        write_exec(
            &dir.join("cpuset"),
            &format!("#!/bin/sh\necho \"$*\" >> {}\n", log.display()),
        );
        std::fs::write(
            dir.join("rc.subr"),
            "load_rc_config() { :; }\n\
             run_rc_command() { [ \"$1\" = start ] && $start_cmd; }\n",
        )
        .unwrap();
        let script = exported
            .text
            .replace(". /etc/rc.subr", &format!(". {}/rc.subr", dir.display()));
        assert_ne!(script, exported.text, "the script sources /etc/rc.subr");
        let path = dir.join("nictune_cpuset_igb7");
        write_exec(&path, &script);
        let env_path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap());
        for shell in ["sh", "dash"] {
            if Command::new(shell).arg("-c").arg("true").status().is_err() {
                continue;
            }
            let check = Command::new(shell).arg("-n").arg(&path).output().unwrap();
            assert!(check.status.success(), "{shell} -n");
            let _ = std::fs::remove_file(&log);
            let run = Command::new(shell)
                .arg(&path)
                .arg("start")
                .env("PATH", &env_path)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&run.stderr);
            assert!(run.status.success(), "{shell}: {stderr}");
            let calls = std::fs::read_to_string(&log).unwrap();
            assert_eq!(calls, "-l 12 -x 300\n-l 13 -x 301\n", "{shell}");
            let stdout = String::from_utf8_lossy(&run.stdout);
            assert!(
                stdout.contains("igb7:que 1 (irq 301) on CPUs 13"),
                "{stdout}"
            );
        }
        // A queue this boot does not have: reported, the rest still bound, exit status 1.
        let missing = script.replace(
            "\"igb7:que 1\" \"igb7:rxq1\" \"igb7:rx 1\"",
            "\"igb7:que 9\"",
        );
        write_exec(&path, &missing);
        let _ = std::fs::remove_file(&log);
        let run = Command::new("sh")
            .arg(&path)
            .arg("start")
            .env("PATH", &env_path)
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&run.stderr)
            .contains("no interrupt named 'igb7:que 9' in vmstat -i"));
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "-l 12 -x 300\n");
    }
}
