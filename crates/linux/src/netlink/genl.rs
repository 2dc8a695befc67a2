//! Generic-netlink requests: family resolution through the controller, single requests
//! answered by an ack, dumps ended by NLMSG_DONE, and errors carrying the kernel's
//! extended-ack message and the operation that failed (the exchange itself is
//! [`super::conn::Conn`]'s).

use super::attr::{AttrWriter, Attrs};
use super::conn::Conn;
use super::message::{self, NLM_F_ACK, NLM_F_DUMP};
use super::DecodeError;

pub use super::conn::NlError;

/// The controller family's fixed id (GENL_ID_CTRL).
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const CTRL_ATTR_VERSION: u16 = 3;

/// A resolved generic-netlink family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// The id the controller assigned; goes in `nlmsg_type` of every request to the family.
    pub id: u16,
    /// The family's version (CTRL_ATTR_VERSION, 1 when absent); goes in the genl header.
    pub version: u8,
}

/// A generic-netlink socket with request sequencing.
#[derive(Debug)]
pub struct GenlSocket {
    conn: Conn,
}

impl GenlSocket {
    /// Opens a socket in the calling thread's network namespace.
    pub fn open() -> Result<GenlSocket, NlError> {
        let conn = Conn::open(libc::NETLINK_GENERIC, "generic netlink")?;
        Ok(GenlSocket { conn })
    }

    /// Looks up a family by name (`"ethtool"`, `"netdev"`).
    pub fn family(&self, name: &str) -> Result<Family, NlError> {
        let mut attrs = AttrWriter::new();
        attrs.string(CTRL_ATTR_FAMILY_NAME, name);
        let ctrl = Family {
            id: GENL_ID_CTRL,
            version: 1,
        };
        let op = format!("resolving generic netlink family {name:?}");
        let replies = self.request(ctrl, CTRL_CMD_GETFAMILY, &attrs.finish(), NLM_F_ACK, &op)?;
        let decode = |source| NlError::Decode {
            op: op.clone(),
            source,
        };
        let first = replies
            .first()
            .ok_or_else(|| decode(DecodeError::new("no reply")))?;
        let attrs = Attrs::new(first);
        let id = attrs
            .find(CTRL_ATTR_FAMILY_ID)
            .ok_or_else(|| decode(DecodeError::new("no family id")))?
            .u16()
            .map_err(decode)?;
        let version = attrs
            .find(CTRL_ATTR_VERSION)
            .and_then(|a| a.u32().ok())
            .unwrap_or(1) as u8;
        Ok(Family { id, version })
    }

    /// A request answered by zero or more data messages and an ack; returns the attributes
    /// of each data message.
    pub fn request_do(
        &self,
        family: Family,
        cmd: u8,
        attrs: &[u8],
        op: &str,
    ) -> Result<Vec<Vec<u8>>, NlError> {
        self.request(family, cmd, attrs, NLM_F_ACK, op)
    }

    /// A dump: every object the kernel lists, one attribute run each.
    pub fn request_dump(
        &self,
        family: Family,
        cmd: u8,
        attrs: &[u8],
        op: &str,
    ) -> Result<Vec<Vec<u8>>, NlError> {
        self.request(family, cmd, attrs, NLM_F_DUMP | NLM_F_ACK, op)
    }

    /// A change (SET): succeeds on the kernel's ack, fails with its extack message.
    pub fn request_ack(
        &self,
        family: Family,
        cmd: u8,
        attrs: &[u8],
        op: &str,
    ) -> Result<(), NlError> {
        self.request(family, cmd, attrs, NLM_F_ACK, op).map(|_| ())
    }

    fn request(
        &self,
        family: Family,
        cmd: u8,
        attrs: &[u8],
        flags: u16,
        op: &str,
    ) -> Result<Vec<Vec<u8>>, NlError> {
        let payload = message::genl_payload(cmd, family.version, attrs);
        let bodies = self.conn.request(family.id, flags, &payload, op)?;
        bodies
            .iter()
            .map(|body| message::genl_body(body).map(|(_, attrs)| attrs.to_vec()))
            .collect::<Result<_, _>>()
            .map_err(|source| NlError::decode(op, source))
    }
}
