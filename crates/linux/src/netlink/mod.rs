//! Netlink over a raw socket: attributes ([`attr`]), message framing ([`message`]), the
//! socket itself ([`socket`], the only `unsafe` code), one request/reply exchange with
//! extended-ack errors ([`conn`], any protocol) and generic-netlink requests with family
//! resolution and dumps ([`genl`]). rtnetlink requests live in `crate::rtnetlink`.
//!
//! Families build on this: `crate::ethtool` and `crate::netdev` each keep one folder per
//! feature with its attribute constants and its request/decode functions. A SET is one more
//! request function writing attributes with [`attr::AttrWriter`] and sent with
//! [`genl::GenlSocket::request_ack`].

pub mod attr;
pub mod conn;
pub mod genl;
pub mod message;
pub mod socket;

/// Bytes from the kernel (or a capture) that do not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed netlink data: {0}")]
pub struct DecodeError(pub String);

impl DecodeError {
    /// A decode error with the problem described in `problem`.
    pub fn new(problem: impl Into<String>) -> Self {
        DecodeError(problem.into())
    }
}
