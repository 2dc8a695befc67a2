//! The seam between the snapshot builder and a host: [`HostRead`] gives raw inputs (file
//! text, link targets, directory listings, decoded netlink replies, process names).
//! `nictune-linux` implements it on the live system; [`FakeHost`] holds the same inputs in
//! memory — for tests, and as what `capture` writes and `--root` reads back. [`Recorder`]
//! wraps any host and keeps a copy of everything read, which is how a capture is made.

mod fake;
mod recorder;

pub use fake::FakeHost;
pub use recorder::Recorder;

use crate::snapshot::{Channels, Coalesce, Features, Napi, NetdevQueue, Readable, Rings};
use serde::{Deserialize, Serialize};

/// Why a path could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct ReadError {
    /// The path (or, for netlink, the request) that failed.
    pub path: String,
    /// The broad cause.
    pub kind: ReadErrorKind,
    /// The error as the OS or decoder told it.
    pub reason: String,
}

/// The broad cause, which decides between "unsupported" and "unreadable".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadErrorKind {
    /// The file does not exist (older kernel, driver without the feature).
    NotFound,
    /// Permission denied.
    Denied,
    /// Anything else.
    Other,
}

impl ReadError {
    /// An error for `path` with its cause and message.
    pub fn new(path: &str, kind: ReadErrorKind, reason: impl Into<String>) -> Self {
        ReadError {
            path: path.to_string(),
            kind,
            reason: reason.into(),
        }
    }

    /// As a [`Readable`] without a value.
    pub fn into_readable<T>(self) -> Readable<T> {
        match self.kind {
            ReadErrorKind::NotFound => Readable::Unsupported(self.to_string()),
            _ => Readable::Unreadable(self.to_string()),
        }
    }
}

/// Everything the ethtool family told about one interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EthtoolInfo {
    /// ethtool COALESCE_GET.
    pub coalesce: Readable<Coalesce>,
    /// ethtool RINGS_GET.
    pub rings: Readable<Rings>,
    /// ethtool CHANNELS_GET.
    pub channels: Readable<Channels>,
    /// ethtool FEATURES_GET.
    pub features: Readable<Features>,
}

impl EthtoolInfo {
    /// All four unreadable for the same reason.
    pub fn unreadable(reason: &str) -> Self {
        EthtoolInfo {
            coalesce: Readable::Unreadable(reason.into()),
            rings: Readable::Unreadable(reason.into()),
            channels: Readable::Unreadable(reason.into()),
            features: Readable::Unreadable(reason.into()),
        }
    }
}

/// Everything the netdev family told (all interfaces of the namespace).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetdevInfo {
    /// netdev `napi-get` dump: every NAPI instance of the namespace.
    pub napis: Readable<Vec<Napi>>,
    /// netdev `queue-get` dump: every queue of the namespace with its NAPI.
    pub queues: Readable<Vec<NetdevQueue>>,
}

/// What rtnetlink (RTM_GETLINK, `ip -d link show IF`) told about one interface; each field
/// `None` when the reply lacked the attribute. Attributes from include/uapi/linux/if_link.h.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkAttrs {
    /// IFLA_MTU, bytes.
    pub mtu_bytes: Option<u32>,
    /// IFLA_OPERSTATE as RFC 2863 names it (`up`, `down`, `lowerlayerdown`, ...).
    pub operstate: Option<String>,
    /// IFLA_QDISC: the root queueing discipline (`noqueue`, `fq_codel`, `mq`, ...).
    pub qdisc: Option<String>,
    /// IFLA_TXQLEN, packets.
    pub txqlen: Option<u32>,
    /// IFLA_INFO_KIND inside IFLA_LINKINFO: what a virtual device is (`veth`, `bridge`,
    /// `dummy`, ...); `None` for hardware devices.
    pub kind: Option<String>,
    /// The link speed from ethtool's LINKMODES_GET, Mb/s (`None`: unknown, or not asked).
    #[serde(default)]
    pub speed_mbps: Option<u32>,
}

/// Raw inputs of one host. Paths are absolute as on the host (`/proc/interrupts`).
pub trait HostRead {
    /// The text of a file.
    fn file(&self, path: &str) -> Result<String, ReadError>;
    /// The target of a symbolic link, as stored in the link.
    fn link(&self, path: &str) -> Result<String, ReadError>;
    /// The entry names of a directory, sorted.
    fn dir(&self, path: &str) -> Result<Vec<String>, ReadError>;
    /// The ethtool family's view of `iface`.
    fn ethtool(&self, iface: &str) -> EthtoolInfo;
    /// The netdev family's NAPI and queue dumps.
    fn netdev(&self) -> NetdevInfo;
    /// rtnetlink's view of `iface`.
    fn link_attrs(&self, iface: &str) -> Readable<LinkAttrs>;
    /// Names (`comm`) of running processes, to spot irqbalance and friends.
    fn process_names(&self) -> Result<Vec<String>, ReadError>;
}

impl std::fmt::Debug for dyn HostRead + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostRead")
    }
}
