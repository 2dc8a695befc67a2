//! The one rule for interface and network-namespace names, used wherever a name enters:
//! profiles, `--iface`/`--netns` flags, interface arguments, `export`, `apply`, `tune`.
//!
//! A name ends up in sysfs paths (`/sys/class/net/NAME/...`), `/run/netns/NAME`, and in
//! generated files that run as root (systemd units, udev rules, shell fragments). The kernel's
//! `dev_valid_name` allows almost any byte; these rules allow the subset that is safe in all of
//! those places:
//!
//! * interface: 1–15 bytes (`IFNAMSIZ` − 1) of ASCII letters, digits, `_`, `-` and `.`; not
//!   starting with `-` (it would read as an option); not `.` or `..`;
//! * namespace: the same characters, 1–64 bytes, not starting with `-`, not `.` or `..`.
//!
//! So no `/`, whitespace, quotes, `%`, `$`, `\`, control or non-ASCII characters.

/// Longest interface name, bytes (`IFNAMSIZ` − 1).
pub const MAX_IFACE_LEN: usize = 15;
/// Longest network-namespace name accepted, bytes.
pub const MAX_NETNS_LEN: usize = 64;

/// What the interface-name rule allows, for error messages and documentation.
pub const IFACE_RULE: &str =
    "1-15 ASCII letters, digits, '_', '-', '.'; not starting with '-'; not '.' or '..'";
/// What the namespace-name rule allows, for error messages and documentation.
pub const NETNS_RULE: &str =
    "1-64 ASCII letters, digits, '_', '-', '.'; not starting with '-'; not '.' or '..'";

/// A name that breaks the interface or namespace rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} name {name:?} is not allowed ({problem}); allowed: {allowed}")]
pub struct NameError {
    /// `interface` or `network namespace`.
    pub kind: &'static str,
    /// The name as given.
    pub name: String,
    /// What is wrong with it.
    pub problem: String,
    /// The rule.
    pub allowed: &'static str,
}

/// Checks an interface name against the rule in this module.
pub fn check_iface(name: &str) -> Result<(), NameError> {
    check(name, MAX_IFACE_LEN).map_err(|problem| NameError {
        kind: "interface",
        name: name.to_string(),
        problem,
        allowed: IFACE_RULE,
    })
}

/// Whether `name` is a sysctl nictune may write: `net.` then ASCII letters, digits, `_`, `-`
/// and single dots, not ending in a dot. Only `net.*`: nictune writes them inside the target
/// network namespace, and anything else would change the whole machine; the name becomes a
/// path under /proc/sys, so no `/` and no empty component.
pub fn is_net_sysctl(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    name.starts_with("net.") && name.chars().all(ok) && !name.contains("..") && !name.ends_with('.')
}

/// Checks a network-namespace name against the rule in this module.
pub fn check_netns(name: &str) -> Result<(), NameError> {
    check(name, MAX_NETNS_LEN).map_err(|problem| NameError {
        kind: "network namespace",
        name: name.to_string(),
        problem,
        allowed: NETNS_RULE,
    })
}

/// The shared rule: `Err` says what is wrong.
fn check(name: &str, max_len: usize) -> Result<(), String> {
    if name.is_empty() {
        return Err("empty".into());
    }
    if let Some(c) = name.chars().find(|c| !allowed(*c)) {
        return Err(format!("contains {c:?}"));
    }
    if name.len() > max_len {
        return Err(format!("{} bytes, more than {max_len}", name.len()));
    }
    if name == "." || name == ".." {
        return Err("a directory name".into());
    }
    if name.starts_with('-') {
        return Err("starts with '-'".into());
    }
    Ok(())
}

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_interface_names_pass() {
        for name in [
            "eth0",
            "enp3s0f1np1",
            "eth0.100",
            "br-lan",
            "vxlan_sys_4789",
            "igb0",
            "nictune-tb-1-c",
            "a23456789012345",
        ] {
            assert_eq!(check_iface(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn path_and_injection_spellings_are_refused() {
        for name in [
            "",
            ".",
            "..",
            "va/",
            "./va",
            "../net/va",
            "../../../tmp/x",
            "eth0\nExecStartPre=/bin/sh",
            "eth0\", RUN+=\"/bin/sh",
            "eth 0",
            "eth0\t",
            "-C",
            "a234567890123456",
            "eth0$x",
            "eth%i",
            "eth0;reboot",
            "eth0'",
            "é",
            "eth0\0",
        ] {
            let err = check_iface(name).unwrap_err();
            let text = err.to_string();
            assert!(text.contains("interface name"), "{text}");
            assert!(text.contains("allowed: 1-15"), "{text}");
        }
    }

    #[test]
    fn namespace_names_follow_the_same_characters_with_a_longer_limit() {
        assert_eq!(check_netns("nictune-tb-123-0-c"), Ok(()));
        assert_eq!(check_netns(&"n".repeat(64)), Ok(()));
        for name in ["a b", "a/b", "..", "", "-n", &"n".repeat(65), "x\ny"] {
            let err = check_netns(name).unwrap_err();
            assert!(err.to_string().contains("network namespace name"), "{err}");
        }
    }

    #[test]
    fn the_error_says_what_is_wrong() {
        let err = check_iface("va/").unwrap_err();
        assert_eq!(err.problem, "contains '/'");
        let err = check_iface("a234567890123456").unwrap_err();
        assert_eq!(err.problem, "16 bytes, more than 15");
    }
}
