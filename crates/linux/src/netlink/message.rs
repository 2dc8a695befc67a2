//! Netlink and generic-netlink message framing: building requests and splitting a receive
//! buffer into replies, acknowledgements and errors with their extended-ack text.
//!
//! `struct nlmsghdr` (16 bytes): u32 len, u16 type, u16 flags, u32 seq, u32 pid.
//! `struct genlmsghdr` (4 bytes): u8 cmd, u8 version, u16 reserved. Other protocols
//! (rtnetlink) put their own fixed header (`struct ifinfomsg`, ...) where genl has its.
//! An NLMSG_ERROR payload is an i32 errno (0 = ack) and the request's header; with
//! NETLINK_CAP_ACK the request payload is left out (NLM_F_CAPPED) and with NETLINK_EXT_ACK
//! attributes follow (NLM_F_ACK_TLVS): NLMSGERR_ATTR_MSG (1) a string,
//! NLMSGERR_ATTR_OFFS (2) the offset of the offending attribute.

use super::attr::Attrs;
use super::DecodeError;

/// The size of `struct nlmsghdr`, bytes.
pub const NLMSG_HDRLEN: usize = 16;
/// The size of `struct genlmsghdr`, bytes.
pub const GENL_HDRLEN: usize = 4;

/// Message type of an error or, with errno 0, an ack.
pub const NLMSG_ERROR: u16 = 2;
/// Message type that ends a dump (payload: an i32, nonzero when the dump failed).
pub const NLMSG_DONE: u16 = 3;

/// Set on every request.
pub const NLM_F_REQUEST: u16 = 0x1;
/// Set on each message of a multi-part reply (a dump).
pub const NLM_F_MULTI: u16 = 0x2;
/// Asks for an ack (NLMSG_ERROR with errno 0) on success.
pub const NLM_F_ACK: u16 = 0x4;
/// NLM_F_ROOT | NLM_F_MATCH: list every object instead of one.
pub const NLM_F_DUMP: u16 = 0x300;
/// On an error message: the request payload was left out.
pub const NLM_F_CAPPED: u16 = 0x100;
/// On an error message: extended-ack attributes follow.
pub const NLM_F_ACK_TLVS: u16 = 0x200;

const NLMSGERR_ATTR_MSG: u16 = 1;
const NLMSGERR_ATTR_OFFS: u16 = 2;

/// One netlink request of message type `kind` carrying `payload` (the protocol's fixed
/// header and attributes), ready to send. NLM_F_REQUEST is always set.
pub fn request(kind: u16, flags: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
    let len = NLMSG_HDRLEN + payload.len();
    let mut buf = Vec::with_capacity(len);
    buf.extend_from_slice(&(len as u32).to_ne_bytes());
    buf.extend_from_slice(&kind.to_ne_bytes());
    buf.extend_from_slice(&(flags | NLM_F_REQUEST).to_ne_bytes());
    buf.extend_from_slice(&seq.to_ne_bytes());
    buf.extend_from_slice(&0u32.to_ne_bytes());
    buf.extend_from_slice(payload);
    buf
}

/// One generic-netlink request, ready to send.
pub fn genl_request(
    family: u16,
    flags: u16,
    seq: u32,
    cmd: u8,
    version: u8,
    attrs: &[u8],
) -> Vec<u8> {
    request(family, flags, seq, &genl_payload(cmd, version, attrs))
}

/// A generic-netlink message body: `struct genlmsghdr`, then the attributes.
pub fn genl_payload(cmd: u8, version: u8, attrs: &[u8]) -> Vec<u8> {
    let mut payload = Vec::with_capacity(GENL_HDRLEN + attrs.len());
    payload.extend_from_slice(&[cmd, version, 0, 0]);
    payload.extend_from_slice(attrs);
    payload
}

/// Splits a generic-netlink message body into its command and attributes.
pub fn genl_body(body: &[u8]) -> Result<(u8, &[u8]), DecodeError> {
    if body.len() < GENL_HDRLEN {
        return Err(DecodeError::new("message shorter than the genl header"));
    }
    Ok((body[0], &body[GENL_HDRLEN..]))
}

/// What one message in a receive buffer says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply<'a> {
    /// A data message: its type (genl family id, RTM_NEWLINK, ...) and everything after the
    /// netlink header (the protocol's fixed header, then attributes).
    Data {
        /// The sequence number of the request it answers.
        seq: u32,
        /// `nlmsg_type`: the genl family id or the rtnetlink message type.
        kind: u16,
        /// The bytes after the 16-byte netlink header.
        body: &'a [u8],
    },
    /// The request succeeded (NLMSG_ERROR with errno 0).
    Ack {
        /// The sequence number of the acked request.
        seq: u32,
    },
    /// End of a dump.
    Done {
        /// The sequence number of the dump request.
        seq: u32,
    },
    /// The request failed.
    Error {
        /// The sequence number of the failed request.
        seq: u32,
        /// The errno and extended-ack text.
        error: KernelError,
    },
}

/// A negative errno from the kernel, with the extended-ack explanation when one was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelError {
    /// Positive errno (EOPNOTSUPP = 95, EPERM = 1, ENODEV = 19, ...).
    pub errno: i32,
    /// NLMSGERR_ATTR_MSG: the kernel's sentence about what was wrong.
    pub message: Option<String>,
    /// NLMSGERR_ATTR_OFFS: byte offset of the attribute it refers to.
    pub offset: Option<u32>,
}

impl std::fmt::Display for KernelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let os = std::io::Error::from_raw_os_error(self.errno);
        match &self.message {
            Some(msg) => write!(f, "{os}: {msg}"),
            None => write!(f, "{os}"),
        }
    }
}

/// Splits a receive buffer into its messages.
pub fn parse_replies(buf: &[u8]) -> Result<Vec<Reply<'_>>, DecodeError> {
    let mut out = Vec::new();
    let mut rest = buf;
    while rest.len() >= NLMSG_HDRLEN {
        let len = u32::from_ne_bytes(rest[0..4].try_into().expect("4 bytes")) as usize;
        if len < NLMSG_HDRLEN || len > rest.len() {
            return Err(DecodeError::new(format!(
                "message length {len} does not fit the {} bytes received",
                rest.len()
            )));
        }
        out.push(parse_one(&rest[..len])?);
        rest = &rest[super::attr::align(len).min(rest.len())..];
    }
    Ok(out)
}

fn parse_one(msg: &[u8]) -> Result<Reply<'_>, DecodeError> {
    let kind = u16::from_ne_bytes([msg[4], msg[5]]);
    let flags = u16::from_ne_bytes([msg[6], msg[7]]);
    let seq = u32::from_ne_bytes(msg[8..12].try_into().expect("4 bytes"));
    let body = &msg[NLMSG_HDRLEN..];
    match kind {
        NLMSG_DONE => match errno_of(body) {
            Some(errno) if errno != 0 => Ok(Reply::Error {
                seq,
                error: kernel_error(errno, flags, body.get(4..).unwrap_or(&[])),
            }),
            _ => Ok(Reply::Done { seq }),
        },
        NLMSG_ERROR => {
            let errno = errno_of(body).ok_or_else(|| DecodeError::new("short NLMSG_ERROR"))?;
            if errno == 0 {
                return Ok(Reply::Ack { seq });
            }
            let request_len = if flags & NLM_F_CAPPED != 0 {
                NLMSG_HDRLEN
            } else {
                body.get(4..8)
                    .map(|b| u32::from_ne_bytes(b.try_into().expect("4 bytes")) as usize)
                    .unwrap_or(NLMSG_HDRLEN)
            };
            let tlvs = body
                .get(4 + super::attr::align(request_len)..)
                .unwrap_or(&[]);
            Ok(Reply::Error {
                seq,
                error: kernel_error(errno, flags, tlvs),
            })
        }
        _ => Ok(Reply::Data { seq, kind, body }),
    }
}

fn errno_of(body: &[u8]) -> Option<i32> {
    body.get(0..4)
        // Saturating: a corrupt i32::MIN must not overflow the negation.
        .map(|b| i32::from_ne_bytes(b.try_into().expect("4 bytes")).saturating_neg())
}

fn kernel_error(errno: i32, flags: u16, tlvs: &[u8]) -> KernelError {
    let attrs = Attrs::new(if flags & NLM_F_ACK_TLVS != 0 {
        tlvs
    } else {
        &[]
    });
    KernelError {
        errno,
        message: attrs.find(NLMSGERR_ATTR_MSG).and_then(|a| a.string().ok()),
        offset: attrs.find(NLMSGERR_ATTR_OFFS).and_then(|a| a.u32().ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_code_of_i32_min_does_not_overflow() {
        let mut msg = genl_request(0x20, 0, 7, 1, 1, &[]);
        msg[4..6].copy_from_slice(&NLMSG_ERROR.to_ne_bytes());
        msg[NLMSG_HDRLEN..NLMSG_HDRLEN + 4].copy_from_slice(&i32::MIN.to_ne_bytes());
        let replies = parse_replies(&msg).unwrap();
        assert!(matches!(&replies[0], Reply::Error { seq: 7, error } if error.errno == i32::MAX));
    }

    #[test]
    fn request_header_is_laid_out_as_the_kernel_expects() {
        let msg = genl_request(21, NLM_F_ACK, 7, 19, 1, &[8, 0, 2, 0, b'l', b'o', 0, 0]);
        assert_eq!(msg.len(), 28);
        assert_eq!(u32::from_ne_bytes(msg[0..4].try_into().unwrap()), 28);
        assert_eq!(u16::from_ne_bytes([msg[4], msg[5]]), 21);
        assert_eq!(
            u16::from_ne_bytes([msg[6], msg[7]]),
            NLM_F_REQUEST | NLM_F_ACK
        );
        assert_eq!(&msg[16..20], &[19, 1, 0, 0]);
    }

    /// An NLMSG_ERROR laid out by hand from the uapi definitions (x86-64, little-endian):
    /// errno -95, the capped request header, then NLMSGERR_ATTR_MSG. The captured replies
    /// of a live kernel are tested in `ethtool` and `netdev`.
    #[test]
    fn capped_error_with_extack_message() {
        #[rustfmt::skip]
        let bytes: Vec<u8> = [
            // nlmsghdr: len 48, type NLMSG_ERROR, flags CAPPED|ACK_TLVS, seq 3, pid
            &[48, 0, 0, 0, 2, 0, 0x00, 0x03, 3, 0, 0, 0, 0x10, 0x20, 0, 0][..],
            // errno -95 (EOPNOTSUPP)
            &[0xa1, 0xff, 0xff, 0xff],
            // the request's nlmsghdr: len 36, type 21 (ethtool), flags REQUEST|ACK, seq 3
            &[36, 0, 0, 0, 21, 0, 5, 0, 3, 0, 0, 0, 0, 0, 0, 0],
            // NLMSGERR_ATTR_MSG "no coal" + NUL, padded to 12 bytes
            &[12, 0, 1, 0, b'n', b'o', b' ', b'c', b'o', b'a', b'l', 0],
        ]
        .concat();
        let replies = parse_replies(&bytes).unwrap();
        let Reply::Error { seq, error } = &replies[0] else {
            panic!("{replies:?}")
        };
        assert_eq!((*seq, error.errno), (3, 95));
        assert_eq!(error.message.as_deref(), Some("no coal"));
        assert!(error.to_string().contains("no coal"));
    }

    #[test]
    fn ack_done_and_data() {
        let mut bytes = genl_request(20, 0, 9, 11, 1, &[]);
        bytes.extend_from_slice(&[20, 0, 0, 0, 3, 0, 2, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        bytes.extend_from_slice(&[36, 0, 0, 0, 2, 0, 0, 1, 9, 0, 0, 0, 0, 0, 0, 0]);
        bytes.extend_from_slice(&[0, 0, 0, 0]);
        bytes.extend_from_slice(&[16, 0, 0, 0, 20, 0, 5, 0, 9, 0, 0, 0, 0, 0, 0, 0]);
        let replies = parse_replies(&bytes).unwrap();
        let Reply::Data {
            seq: 9,
            kind: 20,
            body,
        } = replies[0]
        else {
            panic!("{replies:?}")
        };
        assert_eq!(genl_body(body).unwrap(), (11, &[][..]));
        assert_eq!(replies[1], Reply::Done { seq: 9 });
        assert_eq!(replies[2], Reply::Ack { seq: 9 });
    }

    /// An rtnetlink request: the same nlmsghdr, then `struct ifinfomsg` where genl has its
    /// header (RTM_GETLINK 18, flags REQUEST|ACK, seq 5).
    #[test]
    fn a_plain_request_is_the_header_then_the_payload() {
        let ifinfomsg = [0u8; 16];
        let msg = request(18, NLM_F_ACK, 5, &ifinfomsg);
        #[rustfmt::skip]
        let header: &[u8] = &[
            32, 0, 0, 0, // nlmsg_len 32
            18, 0,       // RTM_GETLINK
            5, 0,        // NLM_F_REQUEST | NLM_F_ACK
            5, 0, 0, 0,  // seq 5
            0, 0, 0, 0,  // pid 0: the kernel
        ];
        assert_eq!(&msg[..16], header);
        assert_eq!(&msg[16..], &ifinfomsg);
        assert!(genl_body(&[1, 2]).is_err(), "shorter than genlmsghdr");
    }

    #[test]
    fn a_length_past_the_buffer_is_an_error() {
        let bytes = [200u8, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert!(parse_replies(&bytes).is_err());
    }
}
