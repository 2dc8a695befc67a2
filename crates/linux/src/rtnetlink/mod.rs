//! rtnetlink (NETLINK_ROUTE): the requests `ip link` and `ip addr` send, for building test
//! networks in namespaces without iproute2. One folder per message group, as for the
//! generic-netlink families: `attr.rs` (the `RTM_*` / `IFLA_*` / `IFA_*` numbers, named as
//! in `include/uapi/linux/rtnetlink.h`, `if_link.h`, `veth.h`, `if_addr.h`) and
//! `request.rs` (the fixed header struct, request encoders, reply decoders that keep unknown
//! attributes, and the functions that send them).
//!
//! - [`link`]: create a veth pair with each end named and placed in a namespace, look a
//!   link up by name, set it up, delete it.
//! - [`addr`]: add an IPv4 address to a link.
//!
//! A [`RouteSocket`] talks to the network namespace of the thread that opened it: open it
//! inside [`crate::netns::run_in`] to change a namespace's links.

pub mod addr;
pub mod link;

use crate::netlink::conn::{Conn, NlError};
use crate::netlink::message::NLM_F_ACK;

/// NLM_F_EXCL: fail if the object exists (include/uapi/linux/netlink.h).
pub const NLM_F_EXCL: u16 = 0x200;
/// NLM_F_CREATE: create the object if it does not exist.
pub const NLM_F_CREATE: u16 = 0x400;

/// A NETLINK_ROUTE socket in the opening thread's network namespace.
#[derive(Debug)]
pub struct RouteSocket {
    conn: Conn,
}

impl RouteSocket {
    /// Opens a socket in the calling thread's network namespace.
    pub fn open() -> Result<RouteSocket, NlError> {
        let conn = Conn::open(libc::NETLINK_ROUTE, "rtnetlink")?;
        Ok(RouteSocket { conn })
    }

    /// A change of message type `kind` (`payload`: fixed header and attributes), with
    /// `flags` added to NLM_F_ACK; succeeds on the kernel's ack.
    pub fn request_ack(
        &self,
        kind: u16,
        flags: u16,
        payload: &[u8],
        op: &str,
    ) -> Result<(), NlError> {
        self.conn
            .request(kind, flags | NLM_F_ACK, payload, op)
            .map(|_| ())
    }

    /// A query answered by data messages and an ack: their bodies (fixed header, then
    /// attributes).
    pub fn request_do(&self, kind: u16, payload: &[u8], op: &str) -> Result<Vec<Vec<u8>>, NlError> {
        self.conn.request(kind, NLM_F_ACK, payload, op)
    }
}
