//! Generic-netlink requests: family resolution through the controller, single requests
//! answered by an ack, dumps ended by NLMSG_DONE, and errors carrying the kernel's
//! extended-ack message and the operation that failed.

use super::attr::{AttrWriter, Attrs};
use super::message::{self, parse_replies, KernelError, Reply, NLM_F_ACK, NLM_F_DUMP};
use super::socket::RawSocket;
use super::DecodeError;
use std::cell::Cell;
use std::io;
use std::time::Duration;

/// The controller family's fixed id (GENL_ID_CTRL).
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const CTRL_ATTR_VERSION: u16 = 3;

/// How long to wait for the kernel before giving up on a reply.
const RECV_TIMEOUT: Duration = Duration::from_secs(5);
/// Receive buffer: large enough for one dump datagram (the kernel fills up to ~32 KiB).
const RECV_BUFFER: usize = 64 * 1024;
/// Most bytes one request may receive in all its datagrams (a dump of every NAPI instance of
/// a large machine is a few MiB).
pub const MAX_REPLY_BYTES: usize = 64 << 20;

/// A failed netlink operation, naming it.
#[derive(Debug, thiserror::Error)]
pub enum NlError {
    #[error("{op}: {source}")]
    Io {
        op: String,
        #[source]
        source: io::Error,
    },
    #[error("{op}: {error}")]
    Kernel { op: String, error: KernelError },
    #[error("{op}: {source}")]
    Decode {
        op: String,
        #[source]
        source: DecodeError,
    },
    #[error("{op}: the kernel's reply went past {MAX_REPLY_BYTES} bytes, the most one request may receive; allowed: a complete reply within that")]
    TooLarge { op: String },
}

impl NlError {
    /// The kernel's errno, when the kernel refused.
    pub fn errno(&self) -> Option<i32> {
        match self {
            NlError::Kernel { error, .. } => Some(error.errno),
            NlError::Io { source, .. } => source.raw_os_error(),
            NlError::Decode { .. } | NlError::TooLarge { .. } => None,
        }
    }

    /// True when the device or kernel does not support the operation (EOPNOTSUPP), or the
    /// family does not exist (ENOENT from the controller).
    pub fn is_unsupported(&self) -> bool {
        matches!(self.errno(), Some(libc::EOPNOTSUPP) | Some(libc::ENOENT))
    }
}

/// A resolved generic-netlink family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    pub id: u16,
    pub version: u8,
}

/// A generic-netlink socket with request sequencing.
#[derive(Debug)]
pub struct GenlSocket {
    sock: RawSocket,
    seq: Cell<u32>,
}

impl GenlSocket {
    /// Opens a socket in the calling thread's network namespace.
    pub fn open() -> Result<GenlSocket, NlError> {
        let sock =
            RawSocket::open(libc::NETLINK_GENERIC, RECV_TIMEOUT).map_err(|source| NlError::Io {
                op: "opening a generic netlink socket".into(),
                source,
            })?;
        Ok(GenlSocket {
            sock,
            seq: Cell::new(1),
        })
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
        let seq = self.next_seq();
        let msg = message::genl_request(family.id, flags, seq, cmd, family.version, attrs);
        let io = |source| NlError::Io {
            op: op.to_string(),
            source,
        };
        self.sock.send(&msg).map_err(io)?;
        let mut out = Vec::new();
        let mut buf = vec![0u8; RECV_BUFFER];
        let mut received = 0;
        loop {
            let n = self.sock.recv(&mut buf).map_err(io)?;
            received += n;
            if received > MAX_REPLY_BYTES {
                return Err(NlError::TooLarge { op: op.to_string() });
            }
            if collect(&buf[..n], seq, &mut out, op)? {
                return Ok(out);
            }
        }
    }

    fn next_seq(&self) -> u32 {
        let seq = self.seq.get();
        self.seq.set(seq.wrapping_add(1));
        seq
    }
}

/// Adds one datagram's data messages to `out`; true once the request is finished.
fn collect(buf: &[u8], seq: u32, out: &mut Vec<Vec<u8>>, op: &str) -> Result<bool, NlError> {
    let replies = parse_replies(buf).map_err(|source| NlError::Decode {
        op: op.to_string(),
        source,
    })?;
    let mut finished = false;
    for reply in replies {
        match reply {
            Reply::Data { seq: s, attrs, .. } if s == seq => out.push(attrs.to_vec()),
            Reply::Ack { seq: s } | Reply::Done { seq: s } if s == seq => finished = true,
            Reply::Error { seq: s, error } if s == seq => {
                return Err(NlError::Kernel {
                    op: op.to_string(),
                    error,
                })
            }
            // Stale replies of an earlier, timed-out request: skip.
            _ => {}
        }
    }
    Ok(finished)
}
