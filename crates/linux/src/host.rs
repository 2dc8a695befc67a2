//! [`LinuxHost`]: the live system as a [`HostRead`]. Files are read below a configurable
//! root (`/` normally); netlink goes to the kernel of the calling thread's namespace.

use crate::netlink::genl::{Family, GenlSocket};
use crate::rtnetlink::link::request as rtlink;
use crate::rtnetlink::RouteSocket;
use crate::{ethtool, netdev};
use nictune_core::input;
use nictune_host::read::{EthtoolInfo, HostRead, LinkAttrs, NetdevInfo, ReadError, ReadErrorKind};
use nictune_host::snapshot::Readable;
use std::io;
use std::path::{Path, PathBuf};

/// The live host.
#[derive(Debug)]
pub struct LinuxHost {
    root: PathBuf,
    netlink: Result<Netlink, String>,
    route: Result<RouteSocket, String>,
}

#[derive(Debug)]
struct Netlink {
    sock: GenlSocket,
    ethtool: Result<Family, String>,
    netdev: Result<Family, String>,
}

impl LinuxHost {
    /// The running system: files under `/`, netlink in the current namespace.
    pub fn live() -> LinuxHost {
        LinuxHost::with_root("/")
    }

    /// Files under `root` (tests point it at a prepared tree), netlink live.
    pub fn with_root(root: impl Into<PathBuf>) -> LinuxHost {
        LinuxHost {
            root: root.into(),
            netlink: open_netlink(),
            route: RouteSocket::open().map_err(|e| e.to_string()),
        }
    }

    fn path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }
}

fn open_netlink() -> Result<Netlink, String> {
    let sock = GenlSocket::open().map_err(|e| e.to_string())?;
    let ethtool = sock.family(ethtool::FAMILY_NAME).map_err(|e| e.to_string());
    let netdev = sock.family(netdev::FAMILY_NAME).map_err(|e| e.to_string());
    Ok(Netlink {
        sock,
        ethtool,
        netdev,
    })
}

fn read_error(path: &str, err: &io::Error) -> ReadError {
    let kind = match err.kind() {
        io::ErrorKind::NotFound => ReadErrorKind::NotFound,
        io::ErrorKind::PermissionDenied => ReadErrorKind::Denied,
        _ => ReadErrorKind::Other,
    };
    ReadError::new(path, kind, err.to_string())
}

impl LinuxHost {
    /// The link speed from ethtool LINKMODES_GET, when the family answers.
    fn speed(&self, iface: &str) -> Option<u32> {
        let nl = self.netlink.as_ref().ok()?;
        let family = nl.ethtool.as_ref().ok()?;
        ethtool::linkmodes::request::speed(&nl.sock, *family, iface)
            .ok()
            .flatten()
    }
}

impl HostRead for LinuxHost {
    fn file(&self, path: &str) -> Result<String, ReadError> {
        input::read_file(&self.path(path), input::KERNEL_FILE).map_err(|e| match e.io() {
            Some(io) => read_error(path, io),
            None => ReadError::new(path, ReadErrorKind::Other, e.to_string()),
        })
    }

    fn link(&self, path: &str) -> Result<String, ReadError> {
        std::fs::read_link(self.path(path))
            .map(|t| t.to_string_lossy().into_owned())
            .map_err(|e| read_error(path, &e))
    }

    fn dir(&self, path: &str) -> Result<Vec<String>, ReadError> {
        list_dir(&self.path(path)).map_err(|e| read_error(path, &e))
    }

    fn ethtool(&self, iface: &str) -> EthtoolInfo {
        match &self.netlink {
            Err(reason) => EthtoolInfo::unreadable(reason),
            Ok(nl) => match &nl.ethtool {
                Err(reason) => EthtoolInfo::unreadable(reason),
                Ok(family) => ethtool::read_all(&nl.sock, *family, iface),
            },
        }
    }

    fn netdev(&self) -> NetdevInfo {
        let missing = |reason: &str| NetdevInfo {
            napis: Readable::Unsupported(reason.into()),
            queues: Readable::Unsupported(reason.into()),
        };
        match &self.netlink {
            Err(reason) => missing(reason),
            Ok(nl) => match &nl.netdev {
                Err(reason) => missing(reason),
                Ok(family) => netdev::read_all(&nl.sock, *family),
            },
        }
    }

    fn link_attrs(&self, iface: &str) -> Readable<LinkAttrs> {
        let sock = match &self.route {
            Ok(sock) => sock,
            Err(reason) => return Readable::Unreadable(reason.clone()),
        };
        match rtlink::get(sock, iface) {
            Ok(link) => Readable::Value(LinkAttrs {
                mtu_bytes: link.mtu,
                operstate: link.operstate(),
                qdisc: link.qdisc(),
                txqlen: link.txqlen(),
                kind: link.kind().map(str::to_string),
                speed_mbps: self.speed(iface),
            }),
            Err(e) => Readable::Unreadable(e.to_string()),
        }
    }

    fn process_names(&self) -> Result<Vec<String>, ReadError> {
        let pids = self.dir("/proc")?;
        Ok(pids
            .iter()
            .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
            .filter_map(|p| self.file(&format!("/proc/{p}/comm")).ok())
            .map(|c| c.trim().to_string())
            .collect())
    }
}

/// Entry names of a directory, sorted.
pub fn list_dir(path: &Path) -> io::Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}
