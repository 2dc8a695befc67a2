//! Which interfaces carry the default route or this SSH session: changing them can cut the
//! user off, so `apply`, `serve --allow-changes` and `tune --iface` refuse without `--force`.
//!
//! The parsers take the text of `/proc/net/route` and `/proc/net/ipv6_route`; the SSH
//! interface is found by matching the server address of `$SSH_CONNECTION` to an interface.
//! [`risky_now`] reads them on this host; [`check_iface`] and [`check_change`] decide against
//! that set.

use nictune_host::write::setting::Key;
use std::collections::BTreeSet;
use std::net::IpAddr;

/// An interface a change must not touch without `--force`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{iface} carries the default route or this SSH session; a bad change could cut you off")]
pub struct RiskyIface {
    /// The interface.
    pub iface: String,
}

/// A change that touches a risky interface: the one it changes, or a port that reloading a
/// module (for a module parameter) takes down.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RiskyChange {
    /// The interface the change is for.
    #[error(transparent)]
    Iface(#[from] RiskyIface),
    /// A port of the module a module parameter reloads.
    #[error("reloading {module} takes {} down", .source.iface)]
    Reload {
        /// The module reloaded.
        module: String,
        /// The port it takes down.
        source: RiskyIface,
    },
}

/// Interfaces a change could cut the user off through on this host now: its default routes
/// (`/proc/net/route`, `/proc/net/ipv6_route`) and this SSH session's (`$SSH_CONNECTION`).
pub fn risky_now() -> BTreeSet<String> {
    let route4 = std::fs::read_to_string("/proc/net/route").unwrap_or_default();
    let route6 = std::fs::read_to_string("/proc/net/ipv6_route").unwrap_or_default();
    let ssh = std::env::var("SSH_CONNECTION")
        .ok()
        .or_else(ssh_connection_of_ancestors);
    risky_ifaces(&route4, &route6, ssh.as_deref())
}

/// `$SSH_CONNECTION` from the nearest ancestor process that has it: `sudo` drops it from
/// the environment by default (its `env_reset`), but the login shell it was typed in still
/// carries it (`/proc/PID/environ`, readable by root).
fn ssh_connection_of_ancestors() -> Option<String> {
    let mut pid = std::os::unix::process::parent_id();
    // A process tree is rarely deeper than a few levels; the bound only stops a loop.
    for _ in 0..64 {
        if pid <= 1 {
            return None;
        }
        let environ = read_bounded(&format!("/proc/{pid}/environ"))?;
        if let Some(v) = env_value(&environ, "SSH_CONNECTION") {
            return Some(v);
        }
        let status = read_bounded(&format!("/proc/{pid}/status"))?;
        pid = parent_in_status(&String::from_utf8_lossy(&status))?;
    }
    None
}

fn read_bounded(path: &str) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    // An environment beyond 1 MiB is cut: what matters is a short variable.
    std::fs::File::open(path)
        .ok()?
        .take(1 << 20)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

/// The value of `name` in a NUL-separated `environ` block.
fn env_value(environ: &[u8], name: &str) -> Option<String> {
    environ.split(|b| *b == 0).find_map(|entry| {
        let rest = entry.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
        Some(String::from_utf8_lossy(rest).into_owned())
    })
}

/// The `PPid:` of a `/proc/PID/status` text.
fn parent_in_status(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))?
        .trim()
        .parse()
        .ok()
}

/// Refuses `iface` when it is one of `risky`, unless `force`.
pub fn check_iface(risky: &BTreeSet<String>, iface: &str, force: bool) -> Result<(), RiskyIface> {
    match force || !risky.contains(iface) {
        true => Ok(()),
        false => Err(RiskyIface {
            iface: iface.to_string(),
        }),
    }
}

/// Refuses a change of `iface` setting `keys` when it touches one of `risky`: the interface
/// itself, or, for a module parameter, a port `ports_of(module)` names (the reload takes
/// every one down). Nothing is refused with `force`.
pub fn check_change<'a>(
    risky: &BTreeSet<String>,
    iface: Option<&str>,
    keys: impl IntoIterator<Item = &'a Key>,
    ports_of: impl Fn(&str) -> Vec<String>,
    force: bool,
) -> Result<(), RiskyChange> {
    if let Some(iface) = iface {
        check_iface(risky, iface, force)?;
    }
    for key in keys {
        if let Key::ModuleParam { module, .. } = key {
            for port in ports_of(module) {
                check_iface(risky, &port, force).map_err(|source| RiskyChange::Reload {
                    module: module.clone(),
                    source,
                })?;
            }
        }
    }
    Ok(())
}

/// Interfaces with an IPv4 default route, from `/proc/net/route` text.
pub fn default_route_v4(text: &str) -> BTreeSet<String> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            // Iface Destination Gateway Flags RefCnt Use Metric Mask ...
            (f.len() > 7 && f[1] == "00000000" && f[7] == "00000000").then(|| f[0].to_string())
        })
        .collect()
}

/// Interfaces with an IPv6 default route, from `/proc/net/ipv6_route` text.
pub fn default_route_v6(text: &str) -> BTreeSet<String> {
    let zero = "0".repeat(32);
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            // dest prefixlen src srcprefixlen nexthop metric refcnt use flags iface
            let default = f.len() == 10 && f[0] == zero && f[1] == "00" && f[9] != "lo";
            default.then(|| f[9].to_string())
        })
        .collect()
}

/// The server address of an `$SSH_CONNECTION` value (`client port server port`).
pub fn ssh_server_addr(ssh_connection: &str) -> Option<IpAddr> {
    ssh_connection.split_whitespace().nth(2)?.parse().ok()
}

/// The interface holding `addr` in the current network namespace.
pub fn iface_with_addr(addr: IpAddr) -> Option<String> {
    let addrs = nix::ifaddrs::getifaddrs().ok()?;
    addrs.into_iter().find_map(|a| {
        let sa = a.address?;
        let ip: Option<IpAddr> = match (sa.as_sockaddr_in(), sa.as_sockaddr_in6()) {
            (Some(v4), _) => Some(IpAddr::V4(v4.ip())),
            (_, Some(v6)) => Some(IpAddr::V6(v6.ip())),
            _ => None,
        };
        (ip == Some(addr)).then_some(a.interface_name)
    })
}

/// Interfaces a change could cut the user off through: default routes and the SSH one.
pub fn risky_ifaces(
    route_v4: &str,
    route_v6: &str,
    ssh_connection: Option<&str>,
) -> BTreeSet<String> {
    let mut out = default_route_v4(route_v4);
    out.extend(default_route_v6(route_v6));
    out.extend(
        ssh_connection
            .and_then(ssh_server_addr)
            .and_then(iface_with_addr),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// /proc/net/route of a Debian 12 container (kernel 6.18.44), trimmed to two routes.
    const ROUTE: &str = "\
Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t010011AC\t0003\t0\t0\t0\t00000000\t0\t0\t0
eth0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0
";

    /// /proc/net/ipv6_route lines in the kernel's layout: a default via eth1 and lo's
    /// catch-all unreachable route, which is not a way out.
    const ROUTE6: &str = "\
00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 eth1
00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
";

    #[test]
    fn default_routes_are_found_per_family() {
        assert_eq!(
            default_route_v4(ROUTE).into_iter().collect::<Vec<_>>(),
            ["eth0"]
        );
        assert_eq!(
            default_route_v6(ROUTE6).into_iter().collect::<Vec<_>>(),
            ["eth1"]
        );
    }

    #[test]
    fn an_ancestors_environment_gives_the_ssh_connection_sudo_dropped() {
        let environ =
            b"HOME=/root\0SSH_CONNECTIONX=no\0SSH_CONNECTION=198.18.0.9 51514 198.18.0.1 22\0";
        assert_eq!(
            env_value(environ, "SSH_CONNECTION").as_deref(),
            Some("198.18.0.9 51514 198.18.0.1 22")
        );
        assert_eq!(env_value(b"HOME=/root\0", "SSH_CONNECTION"), None);
        let status = "Name:\tbash\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\nPPid:\t4100\n";
        assert_eq!(parent_in_status(status), Some(4100));
        assert_eq!(parent_in_status("Name:\tx\n"), None);
    }

    #[test]
    fn ssh_connection_names_the_server_address() {
        let addr = ssh_server_addr("198.18.0.9 51514 198.18.0.1 22").unwrap();
        assert_eq!(addr, "198.18.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(ssh_server_addr("garbage"), None);
        assert_eq!(
            iface_with_addr("127.0.0.1".parse().unwrap()).as_deref(),
            Some("lo")
        );
    }

    #[test]
    fn a_change_is_refused_for_its_interface_or_a_port_its_reload_takes_down() {
        let risky: BTreeSet<String> = ["eth0".to_string()].into();
        let ports = |m: &str| match m {
            "e1000e" => vec!["eth1".to_string(), "eth0".to_string()],
            _ => Vec::new(),
        };
        let itr = Key::ModuleParam {
            module: "e1000e".into(),
            param: "InterruptThrottleRate".into(),
        };
        let err = check_change(&risky, Some("eth0"), [], ports, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "eth0 carries the default route or this SSH session; a bad change could cut you off"
        );
        let err = check_change(&risky, Some("eth1"), [&itr], ports, false).unwrap_err();
        assert_eq!(err.to_string(), "reloading e1000e takes eth0 down");
        let cause = std::error::Error::source(&err).unwrap().to_string();
        assert!(
            cause.starts_with("eth0 carries the default route"),
            "{cause}"
        );
        assert!(check_change(&risky, Some("eth0"), [&itr], ports, true).is_ok());
        assert!(check_change(&risky, Some("eth1"), [], ports, false).is_ok());
    }
}
