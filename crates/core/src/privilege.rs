//! The process's privilege as a value: read once where the process starts (the binary's
//! `main`, through `nictune_linux::write::privilege`, the one place the effective uid is
//! read) and passed to whatever needs root, so no library asks the system on its own and a
//! test can hand in either answer.

/// What this process may do: its effective user id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Privilege {
    euid: u32,
}

impl Privilege {
    /// The privilege of a process running with effective uid `euid`.
    pub const fn of_euid(euid: u32) -> Privilege {
        Privilege { euid }
    }

    /// Root (effective uid 0): namespaces, netlink changes, writes to /sys and /proc.
    pub const fn is_root(self) -> bool {
        self.euid == 0
    }

    /// The effective uid, for messages ("running as uid 1000").
    pub const fn euid(self) -> u32 {
        self.euid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_uid_0_is_root() {
        assert!(Privilege::of_euid(0).is_root());
        assert!(!Privilege::of_euid(1000).is_root());
        assert_eq!(Privilege::of_euid(65534).euid(), 65534);
    }
}
