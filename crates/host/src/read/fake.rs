//! An in-memory host: the inputs a capture holds, or a test's hand-made machine.

use super::{EthtoolInfo, HostRead, LinkAttrs, NetdevInfo, ReadError, ReadErrorKind};
use crate::snapshot::Readable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Raw inputs held in memory. Paths not present read as "not found".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeHost {
    /// File texts by absolute path.
    pub files: BTreeMap<String, String>,
    /// Link targets by absolute path.
    pub links: BTreeMap<String, String>,
    /// Directory listings by absolute path.
    pub dirs: BTreeMap<String, Vec<String>>,
    /// Reads that failed on the original host, by path, with the reason.
    pub errors: BTreeMap<String, ReadError>,
    /// ethtool replies by interface name; an interface not listed reads as unreadable ("not
    /// captured").
    pub ethtool: BTreeMap<String, EthtoolInfo>,
    /// The netdev family's NAPI and queue dumps; unsupported by default.
    pub netdev: NetdevInfo,
    /// Names (`comm`) of running processes, what `process_names` returns.
    pub processes: Vec<String>,
    /// rtnetlink link attributes by interface (absent in captures made before they were
    /// recorded).
    #[serde(default)]
    pub link_attrs: BTreeMap<String, Readable<LinkAttrs>>,
}

impl Default for FakeHost {
    fn default() -> Self {
        FakeHost {
            files: BTreeMap::new(),
            links: BTreeMap::new(),
            dirs: BTreeMap::new(),
            errors: BTreeMap::new(),
            ethtool: BTreeMap::new(),
            netdev: NetdevInfo {
                napis: Readable::Unsupported("no netdev data".into()),
                queues: Readable::Unsupported("no netdev data".into()),
            },
            processes: Vec::new(),
            link_attrs: BTreeMap::new(),
        }
    }
}

impl FakeHost {
    /// An empty host: no files, links, directories or processes; netdev unsupported, ethtool
    /// not captured for any interface.
    pub fn new() -> Self {
        FakeHost::default()
    }

    /// Adds a file, and its name to its parent's listing.
    pub fn with_file(mut self, path: &str, text: &str) -> Self {
        self.files.insert(path.to_string(), text.to_string());
        self.list_in_parent(path);
        self
    }

    /// Adds a symbolic link, and its name to its parent's listing.
    pub fn with_link(mut self, path: &str, target: &str) -> Self {
        self.links.insert(path.to_string(), target.to_string());
        self.list_in_parent(path);
        self
    }

    fn list_in_parent(&mut self, path: &str) {
        let Some((parent, name)) = path.rsplit_once('/') else {
            return;
        };
        let parent = if parent.is_empty() { "/" } else { parent };
        let entries = self.dirs.entry(parent.to_string()).or_default();
        if !entries.iter().any(|e| e == name) {
            entries.push(name.to_string());
            entries.sort();
        }
        if parent != "/" {
            self.list_in_parent(parent);
        }
    }

    fn missing(&self, path: &str) -> ReadError {
        self.errors
            .get(path)
            .cloned()
            .unwrap_or_else(|| ReadError::new(path, ReadErrorKind::NotFound, "not found"))
    }
}

impl HostRead for FakeHost {
    fn file(&self, path: &str) -> Result<String, ReadError> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| self.missing(path))
    }

    fn link(&self, path: &str) -> Result<String, ReadError> {
        self.links
            .get(path)
            .cloned()
            .ok_or_else(|| self.missing(path))
    }

    fn dir(&self, path: &str) -> Result<Vec<String>, ReadError> {
        self.dirs
            .get(path)
            .cloned()
            .ok_or_else(|| self.missing(path))
    }

    fn ethtool(&self, iface: &str) -> EthtoolInfo {
        self.ethtool
            .get(iface)
            .cloned()
            .unwrap_or_else(|| EthtoolInfo::unreadable("not captured"))
    }

    fn netdev(&self) -> NetdevInfo {
        self.netdev.clone()
    }

    fn link_attrs(&self, iface: &str) -> Readable<LinkAttrs> {
        self.link_attrs
            .get(iface)
            .cloned()
            .unwrap_or_else(|| Readable::Unsupported("no rtnetlink data".into()))
    }

    fn process_names(&self) -> Result<Vec<String>, ReadError> {
        Ok(self.processes.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_appear_in_their_parents_listings() {
        let host = FakeHost::new()
            .with_file("/sys/class/net/eth0/ifindex", "2\n")
            .with_link("/sys/class/net/eth0/device", "../../../virtio2");
        assert_eq!(host.dir("/sys/class/net").unwrap(), ["eth0"]);
        assert_eq!(
            host.dir("/sys/class/net/eth0").unwrap(),
            ["device", "ifindex"]
        );
        assert_eq!(host.file("/sys/class/net/eth0/ifindex").unwrap(), "2\n");
        let err = host.file("/nope").unwrap_err();
        assert_eq!(err.kind, ReadErrorKind::NotFound);
    }
}
