//! Sysctls of one network namespace, written and read through `/proc/sys/net` by a thread
//! inside it (`sysctl -w` under `ip netns exec`, without either).
//!
//! `/proc/sys/net` shows the tables of the reading task's network namespace, so a thread
//! that joined namespace N reads and writes N's copy. Only `net.*` keys are accepted, and
//! only for a namespace other than the machine's (the one PID 1 and this process run in): in
//! any other namespace a `net.*` file is that namespace's own — the kernel registers the
//! host-wide ones (`net.core.busy_poll`, ...) in the initial namespace only and makes the
//! per-namespace tables' global entries read-only elsewhere — so a write can never change
//! the machine's setting.

use super::{failure_of, run_in, NetnsError};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Writes `value` to `key` (dotted: `net.ipv4.ping_group_range`) in namespace `name`.
pub fn write(name: &str, key: &str, value: &str) -> Result<(), NetnsError> {
    let fail = failure_of("sysctl in", name);
    let file =
        checked_path(&super::path(name), key).map_err(|e| fail("checking", about(key, e)))?;
    run_in(name, || std::fs::write(&file, value))?.map_err(|e| fail("writing", about(key, e)))
}

/// Reads `key` in namespace `name`, trimmed.
pub fn read(name: &str, key: &str) -> Result<String, NetnsError> {
    let fail = failure_of("sysctl in", name);
    let file =
        checked_path(&super::path(name), key).map_err(|e| fail("checking", about(key, e)))?;
    let text = run_in(name, || std::fs::read_to_string(&file))?
        .map_err(|e| fail("reading", about(key, e)))?;
    Ok(text.trim().to_string())
}

/// The `/proc/sys` file of `key`, once `key` is a `net.*` sysctl and the namespace whose
/// handle is `handle` is not the machine's own.
fn checked_path(handle: &Path, key: &str) -> io::Result<PathBuf> {
    let path = key_path(key)?;
    let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let target = id(handle);
    let machine = [
        id(Path::new("/proc/1/ns/net")),
        id(Path::new("/proc/self/ns/net")),
    ];
    if target.is_none() || machine.contains(&target) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the namespace is missing or is the machine's own; its sysctls are not changed",
        ));
    }
    Ok(path)
}

/// `net.ipv4.ping_group_range` → `/proc/sys/net/ipv4/ping_group_range`.
fn key_path(key: &str) -> io::Result<PathBuf> {
    let parts: Vec<&str> = key.split('.').collect();
    let valid = parts.len() >= 2
        && parts[0] == "net"
        && parts.iter().all(|p| !p.is_empty() && !p.contains('/'));
    if !valid {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{key:?} is not a net.* sysctl key"),
        ));
    }
    Ok(parts
        .iter()
        .fold(PathBuf::from("/proc/sys"), |p, part| p.join(part)))
}

/// `e`, naming the key it concerns.
fn about(key: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{key}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_proc_sys_net_files() {
        assert_eq!(
            key_path("net.ipv4.ping_group_range").unwrap(),
            PathBuf::from("/proc/sys/net/ipv4/ping_group_range")
        );
        for bad in [
            "kernel.pid_max",
            "net",
            "net..x",
            "net.ipv4/../x",
            "vm.swappiness",
        ] {
            assert!(key_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_machines_own_namespace_is_refused() {
        let key = "net.ipv4.ping_group_range";
        assert!(checked_path(Path::new("/proc/self/ns/net"), key).is_err());
        assert!(checked_path(Path::new("/proc/thread-self/ns/net"), key).is_err());
    }

    #[test]
    fn a_missing_namespace_is_refused_before_anything_is_written() {
        let e = write("nictune-no-such-ns", "net.ipv4.ping_group_range", "1 0").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("checking: net.ipv4.ping_group_range"),
            "{text}"
        );
    }
}
