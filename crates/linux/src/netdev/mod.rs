//! The `netdev` generic-netlink family (Documentation/netlink/specs/netdev.yaml): NAPI
//! instances with their per-NAPI settings (`napi/`) and the queue → NAPI map (`queue/`).
//! Constants are named as in `include/uapi/linux/netdev.h`.

pub mod napi;
pub mod queue;

use crate::netlink::genl::{Family, GenlSocket};
use nictune_host::read::NetdevInfo;

/// The family name to resolve.
pub const FAMILY_NAME: &str = "netdev";

/// Dumps every NAPI and queue of the socket's namespace.
pub fn read_all(sock: &GenlSocket, family: Family) -> NetdevInfo {
    NetdevInfo {
        napis: crate::ethtool::readable(napi::request::dump(sock, family)),
        queues: crate::ethtool::readable(queue::request::dump(sock, family)),
    }
}
