//! Words for the catalog's enums and conditions, shared by every renderer (explain cards,
//! export comments, reports).

use super::model::{AliasKind, Condition, Os, Scope, SourceKind, Via};
use std::fmt;

impl AliasKind {
    /// Where the alias is used, in words.
    pub fn label(self) -> &'static str {
        match self {
            AliasKind::EthtoolCli => "ethtool argument",
            AliasKind::Netlink => "netlink attribute",
            AliasKind::Ioctl => "ioctl field",
            AliasKind::ModuleParam => "module parameter",
            AliasKind::Sysctl => "sysctl",
            AliasKind::Sysfs => "sysfs file",
            AliasKind::Tunable => "tunable / kernel option",
            AliasKind::SystemdLink => "systemd .link key",
            AliasKind::Networkmanager => "NetworkManager key",
            AliasKind::Short => "short name",
            AliasKind::Former => "former key",
        }
    }
}

impl Via {
    /// The mechanism, in words.
    pub fn label(self) -> &'static str {
        match self {
            Via::Ethtool => "ethtool",
            Via::EthtoolNetlink => "ethtool netlink",
            Via::NetdevNetlink => "netdev netlink",
            Via::Sysfs => "sysfs",
            Via::Sysctl => "sysctl",
            Via::SysctlConf => "sysctl.conf",
            Via::ModprobeConf => "modprobe.d",
            Via::LoaderConf => "loader.conf",
            Via::RcConf => "rc.conf",
            Via::KernelConfig => "kernel config",
            Via::Ifconfig => "ifconfig",
            Via::Cpuset => "cpuset",
            Via::SystemdLink => "systemd .link",
            Via::Networkmanager => "NetworkManager",
            Via::UdevRule => "udev rule",
            Via::Ynl => "ynl",
            Via::Fstab => "fstab",
            Via::IpRoute => "ip route",
        }
    }
}

impl SourceKind {
    /// The kind of source, in one word.
    pub fn label(self) -> &'static str {
        match self {
            SourceKind::Code => "code",
            SourceKind::Doc => "doc",
            SourceKind::Datasheet => "datasheet",
            SourceKind::Comment => "comment",
            SourceKind::Secondary => "secondary",
            SourceKind::Measured => "measured",
        }
    }
}

impl Os {
    /// Lower-case name.
    pub fn label(self) -> &'static str {
        match self {
            Os::Linux => "linux",
            Os::Freebsd => "freebsd",
        }
    }
}

impl Scope {
    /// What one value applies to, in words.
    pub fn label(self) -> &'static str {
        match self {
            Scope::Device => "per device",
            Scope::Mount => "per mount",
            Scope::Route => "per route",
            Scope::Queue => "per queue",
            Scope::Napi => "per NAPI instance",
            Scope::Irq => "per interrupt",
            Scope::Host => "whole host",
            Scope::Module => "per driver module",
            Scope::KernelBuild => "kernel build",
        }
    }
}

impl Condition {
    /// Whether the condition always holds.
    pub fn is_always(&self) -> bool {
        *self == Condition::default()
    }

    fn value_tests(&self) -> Vec<String> {
        let mut tests = Vec::new();
        if let Some(limit) = self.value_above {
            tests.push(format!("value > {limit}"));
        }
        if let Some(limit) = self.value_below {
            tests.push(format!("value < {limit}"));
        }
        tests.extend(self.value_in.iter().map(|v| format!("value = {v}")));
        if let Some(other) = self.value_not {
            tests.push(format!("value ≠ {other}"));
        }
        tests
    }
}

/// `device 82547 and (value > 75000 or value = 0)`; `always` for an empty condition.
impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_always() {
            return f.write_str("always");
        }
        let mut parts = Vec::new();
        if !self.drivers.is_empty() {
            parts.push(format!("driver {}", self.drivers.join(" or ")));
        }
        if !self.drivers_not.is_empty() {
            parts.push(format!("driver not {}", self.drivers_not.join(", ")));
        }
        if !self.devices.is_empty() {
            parts.push(format!("device {}", self.devices.join(" or ")));
        }
        if let Some(other) = &self.above_setting {
            parts.push(format!("value > {other}"));
        }
        let tests = self.value_tests();
        match tests.len() {
            0 => {}
            1 => parts.push(tests[0].clone()),
            _ if parts.is_empty() => parts.push(tests.join(" or ")),
            _ => parts.push(format!("({})", tests.join(" or "))),
        }
        f.write_str(&parts.join(" and "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_read_as_words() {
        let hang = Condition {
            value_above: Some(75000),
            value_in: vec![0],
            devices: vec!["82547".into()],
            ..Condition::default()
        };
        assert_eq!(
            hang.to_string(),
            "device 82547 and (value > 75000 or value = 0)"
        );
        assert_eq!(Condition::default().to_string(), "always");
        let nonzero = Condition {
            value_not: Some(0),
            ..Condition::default()
        };
        assert_eq!(nonzero.to_string(), "value ≠ 0");
        let unsupported = Condition {
            value_in: vec![1],
            drivers_not: vec!["em".into(), "fxp".into()],
            ..Condition::default()
        };
        assert_eq!(unsupported.to_string(), "driver not em, fxp and value = 1");
        let relation = Condition {
            above_setting: Some("freebsd.kern.polling.burst_max".into()),
            ..Condition::default()
        };
        assert_eq!(
            relation.to_string(),
            "value > freebsd.kern.polling.burst_max"
        );
    }
}
