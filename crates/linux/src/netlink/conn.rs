//! One netlink conversation with the kernel, whatever the protocol: send a request with the
//! next sequence number, read datagrams until its ack, done or error, and keep the bodies of
//! its data messages. Generic netlink ([`super::genl`]) and rtnetlink (`crate::rtnetlink`)
//! build on it; failures name the operation and keep the kernel's extended-ack message.

use super::message::{self, parse_replies, KernelError, Reply};
use super::socket::RawSocket;
use super::DecodeError;
use std::cell::Cell;
use std::io;
use std::time::Duration;

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
    /// Sending or receiving on the socket failed (including the 5 s receive timeout).
    #[error("{op}: {source}")]
    Io {
        /// The operation, as the error message names it.
        op: String,
        /// The socket error.
        #[source]
        source: io::Error,
    },
    /// The kernel answered with a negative errno.
    #[error("{op}: {error}")]
    Kernel {
        /// The operation, as the error message names it.
        op: String,
        /// The errno and extended-ack text.
        error: KernelError,
    },
    /// A reply did not decode.
    #[error("{op}: {source}")]
    Decode {
        /// The operation, as the error message names it.
        op: String,
        /// What did not decode.
        #[source]
        source: DecodeError,
    },
    /// The replies exceeded MAX_REPLY_BYTES.
    #[error("{op}: the kernel's reply went past {MAX_REPLY_BYTES} bytes, the most one request may receive; allowed: a complete reply within that")]
    TooLarge {
        /// The operation, as the error message names it.
        op: String,
    },
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

    /// A decode failure of operation `op`.
    pub fn decode(op: &str, source: DecodeError) -> NlError {
        NlError::Decode {
            op: op.to_string(),
            source,
        }
    }
}

/// A bound socket of one netlink protocol with request sequencing.
#[derive(Debug)]
pub struct Conn {
    sock: RawSocket,
    seq: Cell<u32>,
}

impl Conn {
    /// Opens a socket of `protocol` (NETLINK_GENERIC, NETLINK_ROUTE) in the calling thread's
    /// network namespace; `what` names it in the error.
    pub fn open(protocol: libc::c_int, what: &str) -> Result<Conn, NlError> {
        let sock = RawSocket::open(protocol, RECV_TIMEOUT).map_err(|source| NlError::Io {
            op: format!("opening a {what} socket"),
            source,
        })?;
        Ok(Conn {
            sock,
            seq: Cell::new(1),
        })
    }

    /// Sends one request of message type `kind` and returns the bodies of the data messages
    /// answering it, once the kernel has acked it (or ended the dump).
    pub fn request(
        &self,
        kind: u16,
        flags: u16,
        payload: &[u8],
        op: &str,
    ) -> Result<Vec<Vec<u8>>, NlError> {
        let seq = self.next_seq();
        let msg = message::request(kind, flags, seq, payload);
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
    let replies = parse_replies(buf).map_err(|source| NlError::decode(op, source))?;
    let mut finished = false;
    for reply in replies {
        match reply {
            Reply::Data { seq: s, body, .. } if s == seq => out.push(body.to_vec()),
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
