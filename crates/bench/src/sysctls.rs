//! The host-wide sysctls that change what a bench measures, recorded with every result:
//! busy polling makes sockets spin instead of sleeping for an interrupt, and the NAPI/GRO
//! budgets change how many packets one softirq takes. Someone else's `busy_poll = 50` turns
//! an interrupt-driven latency into a polled one, so a result carries the values in force
//! and warns where they are not the kernel's defaults.

use std::collections::BTreeMap;
use std::path::Path;

/// Each key with the kernel's default, where the default does not depend on the build
/// (`netdev_budget_usecs` is 2 jiffies, so it depends on `CONFIG_HZ`: recorded, not judged).
/// Defaults from Linux 6.x: `net/core/dev.c` (`netdev_budget` 300, `netdev_budget_usecs`
/// 2 * USEC_PER_SEC / HZ, `netdev_max_backlog` 1000, `gro_normal_batch` 8), `include/net/busy_poll.h` and `net/core/sock.c` (`busy_poll`,
/// `busy_read` 0), `include/linux/netdevice.h` (`dev_weight` = NAPI_POLL_WEIGHT 64).
pub const KEYS: [(&str, Option<&str>); 7] = [
    ("net.core.busy_poll", Some("0")),
    ("net.core.busy_read", Some("0")),
    ("net.core.netdev_budget", Some("300")),
    ("net.core.netdev_budget_usecs", None),
    ("net.core.dev_weight", Some("64")),
    ("net.core.gro_normal_batch", Some("8")),
    ("net.core.netdev_max_backlog", Some("1000")),
];

/// One host's values, by key, as numbers.
pub type Values = BTreeMap<String, i64>;

/// The values under `proc_sys` (normally `/proc/sys`) of every key that exists there and
/// holds a number.
pub fn read(proc_sys: &Path) -> Values {
    KEYS.iter()
        .filter_map(|(key, _)| {
            let file = proc_sys.join(key.replace('.', "/"));
            let value = std::fs::read_to_string(file).ok()?.trim().parse().ok()?;
            Some((key.to_string(), value))
        })
        .collect()
}

/// This host's values and, where they could not be read, why.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// The values read; empty when none could be.
    pub values: Values,
    /// Why the values are missing, for the result's warnings.
    pub note: Option<String>,
}

/// The values in force on this host. Every key is host-wide (registered for the initial
/// network namespace only, `net/core/sysctl_net_core.c`), so a process in another namespace
/// (`ip netns exec`, the testbed's) does not see them under its `/proc/sys`: it reads them
/// on a thread that joined the host's namespace, which needs root.
pub fn read_host() -> Reading {
    let proc_sys = Path::new("/proc/sys");
    let here = read(proc_sys);
    if !here.is_empty() {
        return Reading {
            values: here,
            note: None,
        };
    }
    match nictune_linux::netns::run_in_init(|| read(proc_sys)) {
        Ok(values) if !values.is_empty() => Reading { values, note: None },
        Ok(_) => Reading {
            values: Values::new(),
            note: Some(
                "the host-wide net.core sysctls (busy_poll, busy_read, netdev_budget, ...) \
                 could not be read, not even in the host's network namespace: the results do \
                 not record whether sockets busy-polled"
                    .into(),
            ),
        },
        Err(e) => Reading {
            values: Values::new(),
            note: Some(format!(
                "the host-wide net.core sysctls (busy_poll, busy_read, netdev_budget, ...) \
                 are not visible in this network namespace and reading them in the host's \
                 failed ({e}): the results do not record whether sockets busy-polled; run as \
                 root to record them"
            )),
        },
    }
}

/// Whose values a warning is about: the measuring host's ([`warnings`]' `host`).
pub const THIS_HOST: &str = "this host";
/// Whose values a warning is about: the far end's `nictune serve`.
pub const THE_PEER: &str = "the peer";

/// One warning per value that differs from the kernel's default; `host` says whose values
/// they are ([`THIS_HOST`], [`THE_PEER`]).
pub fn warnings(values: &Values, host: &str) -> Vec<String> {
    KEYS.iter()
        .filter_map(|(key, default)| {
            let value = values.get(*key)?;
            let default: i64 = (*default)?.parse().ok()?;
            (*value != default).then(|| {
                format!(
                    "{key} = {value} on {host} (kernel default {default}): results compare \
                     only with runs under the same value{}",
                    if key.contains("busy_") {
                        "; sockets busy-poll instead of waiting for interrupts"
                    } else {
                        ""
                    }
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_force_are_read_and_non_defaults_named() {
        let dir = tempfile::tempdir().unwrap();
        let core = dir.path().join("net/core");
        std::fs::create_dir_all(&core).unwrap();
        for (file, value) in [
            ("busy_poll", "50\n"),
            ("busy_read", "0\n"),
            ("netdev_budget", "300\n"),
            ("netdev_budget_usecs", "8000\n"),
            ("netdev_max_backlog", "5000\n"),
        ] {
            std::fs::write(core.join(file), value).unwrap();
        }
        std::fs::write(core.join("gro_normal_batch"), "eight\n").unwrap();
        let v = read(dir.path());
        assert_eq!(
            v.len(),
            5,
            "absent and non-numeric keys are left out: {v:?}"
        );
        assert_eq!(v["net.core.busy_poll"], 50);
        let w = warnings(&v, "this host");
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("net.core.busy_poll = 50 on this host"),
            "{}",
            w[0]
        );
        assert!(w[0].contains("busy-poll instead"), "{}", w[0]);
        assert!(w[1].contains("netdev_max_backlog = 5000"), "{}", w[1]);
        assert!(w[1].contains("default 1000"), "{}", w[1]);
    }

    #[test]
    fn this_hosts_values_are_readable() {
        let r = read_host();
        assert!(r.values["net.core.netdev_budget"] > 0, "{r:?}");
        assert_eq!(r.note, None);
    }
}
