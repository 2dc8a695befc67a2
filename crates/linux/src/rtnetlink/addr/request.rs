//! Address requests: `struct ifaddrmsg`, the [`Address`] a message describes (encoded for
//! requests, decoded with unknown attributes kept), and `ip addr add A/P dev NAME`.
//!
//! For an address without a peer, IFA_LOCAL and IFA_ADDRESS carry the same address, as
//! iproute2 sends it (the kernel takes either for the other when one is missing).

use super::attr::*;
use crate::netlink::attr::{AttrWriter, Attrs};
use crate::netlink::conn::NlError;
use crate::netlink::DecodeError;
use crate::rtnetlink::{RouteSocket, NLM_F_CREATE, NLM_F_EXCL};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `struct ifaddrmsg` (8 bytes): u8 family, u8 prefixlen, u8 flags, u8 scope, u32 index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IfAddrMsg {
    /// AF_INET or AF_INET6.
    pub family: u8,
    /// The prefix length, bits (24 for a /24).
    pub prefix_len: u8,
    /// IFA_F_* flags (0 in requests nictune sends).
    pub flags: u8,
    /// RT_SCOPE_* (RT_SCOPE_UNIVERSE for a global address).
    pub scope: u8,
    /// The interface's ifindex.
    pub index: u32,
}

impl IfAddrMsg {
    /// The encoded size, bytes.
    pub const LEN: usize = 8;

    /// The 8 bytes as sent, integers in host byte order.
    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut b = [
            self.family,
            self.prefix_len,
            self.flags,
            self.scope,
            0,
            0,
            0,
            0,
        ];
        b[4..].copy_from_slice(&self.index.to_ne_bytes());
        b
    }

    /// The header and the attributes after it.
    pub fn decode(body: &[u8]) -> Result<(IfAddrMsg, &[u8]), DecodeError> {
        let Some(b) = body.get(..Self::LEN) else {
            return Err(DecodeError::new(
                "address message shorter than struct ifaddrmsg",
            ));
        };
        let header = IfAddrMsg {
            family: b[0],
            prefix_len: b[1],
            flags: b[2],
            scope: b[3],
            index: u32::from_ne_bytes(b[4..8].try_into().expect("4 bytes")),
        };
        Ok((header, &body[Self::LEN..]))
    }
}

/// An address as an RTM_*ADDR message describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Address {
    /// The fixed header: family, prefix length, scope, interface.
    pub header: IfAddrMsg,
    /// IFA_LOCAL: the address of the interface.
    pub local: Option<IpAddr>,
    /// IFA_ADDRESS: the same, or the peer of a point-to-point link.
    pub address: Option<IpAddr>,
    /// IFA_LABEL.
    pub label: Option<String>,
    /// Attributes not named above, in order.
    pub other: Vec<(u16, Vec<u8>)>,
}

/// The [`Address`] of `ip addr add ADDR/PREFIX_LEN dev <ifindex>`.
pub fn ipv4(ifindex: u32, addr: Ipv4Addr, prefix_len: u8) -> Address {
    Address {
        header: IfAddrMsg {
            family: libc::AF_INET as u8,
            prefix_len,
            flags: 0,
            scope: RT_SCOPE_UNIVERSE,
            index: ifindex,
        },
        local: Some(IpAddr::V4(addr)),
        address: Some(IpAddr::V4(addr)),
        ..Address::default()
    }
}

/// The message body for `a`: its header, then its attributes.
pub fn encode(a: &Address) -> Vec<u8> {
    let mut out = a.header.encode().to_vec();
    let mut w = AttrWriter::new();
    for (kind, ip) in [(IFA_ADDRESS, a.address), (IFA_LOCAL, a.local)] {
        if let Some(ip) = ip {
            w.bytes(kind, &ip_bytes(ip));
        }
    }
    if let Some(label) = &a.label {
        w.string(IFA_LABEL, label);
    }
    for (kind, data) in &a.other {
        w.bytes(*kind, data);
    }
    out.extend_from_slice(&w.finish());
    out
}

/// Decodes an address message body.
pub fn decode(body: &[u8]) -> Result<Address, DecodeError> {
    let (header, attrs) = IfAddrMsg::decode(body)?;
    let mut a = Address {
        header,
        ..Address::default()
    };
    for attr in Attrs::new(attrs) {
        let attr = attr?;
        match attr.kind {
            IFA_ADDRESS => a.address = Some(ip_of(attr.payload)?),
            IFA_LOCAL => a.local = Some(ip_of(attr.payload)?),
            IFA_LABEL => a.label = Some(attr.string()?),
            kind => a.other.push((kind, attr.payload.to_vec())),
        }
    }
    Ok(a)
}

fn ip_bytes(ip: IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets().to_vec(),
    }
}

fn ip_of(payload: &[u8]) -> Result<IpAddr, DecodeError> {
    if let Ok(v4) = <[u8; 4]>::try_from(payload) {
        return Ok(IpAddr::V4(Ipv4Addr::from(v4)));
    }
    <[u8; 16]>::try_from(payload)
        .map(|v6| IpAddr::V6(Ipv6Addr::from(v6)))
        .map_err(|_| DecodeError::new(format!("{}-byte address", payload.len())))
}

/// Adds `addr/prefix_len` to link `iface` (`ip addr add ADDR/PREFIX_LEN dev IFACE`); fails
/// if the link already has it.
pub fn add_ipv4(
    sock: &RouteSocket,
    iface: &str,
    addr: Ipv4Addr,
    prefix_len: u8,
) -> Result<(), NlError> {
    let index = crate::rtnetlink::link::request::index_of(sock, iface)?;
    let op = format!("adding {addr}/{prefix_len} to {iface}");
    let body = encode(&ipv4(index, addr, prefix_len));
    sock.request_ack(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &body, &op)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RTM_NEWADDR body for `ip addr add 198.18.0.1/30 dev <ifindex 7>` (x86-64).
    #[rustfmt::skip]
    const ADD_198_18_0_1: &[u8] = &[
        2,                      // ifa_family AF_INET
        30,                     // ifa_prefixlen
        0,                      // ifa_flags
        0,                      // ifa_scope RT_SCOPE_UNIVERSE
        7, 0, 0, 0,             // ifa_index 7
        8, 0, 1, 0, 198, 18, 0, 1, // IFA_ADDRESS 198.18.0.1
        8, 0, 2, 0, 198, 18, 0, 1, // IFA_LOCAL 198.18.0.1
    ];

    #[test]
    fn an_ipv4_address_carries_local_and_address() {
        let a = ipv4(7, Ipv4Addr::new(198, 18, 0, 1), 30);
        assert_eq!(encode(&a), ADD_198_18_0_1);
        assert_eq!(decode(ADD_198_18_0_1).unwrap(), a);
    }

    /// A reply-style message: a label, an IPv6 address, and IFA_CACHEINFO (6), which this
    /// decoder does not name and keeps.
    #[test]
    fn unknown_attributes_and_ipv6_are_kept() {
        #[rustfmt::skip]
        let bytes: Vec<u8> = [
            &[10, 64, 0x80, 0, 2, 0, 0, 0][..],   // AF_INET6, /64, IFA_F_PERMANENT, index 2
            &[20, 0, 1, 0],                       // IFA_ADDRESS, 16 bytes:
            &[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], // fe80::1
            &[7, 0, 3, 0, b'l', b'o', 0, 0],      // IFA_LABEL "lo"
            &[8, 0, 6, 0, 1, 2, 3, 4],            // IFA_CACHEINFO (kept as bytes)
        ]
        .concat();
        let a = decode(&bytes).unwrap();
        assert_eq!(a.address, Some("fe80::1".parse().unwrap()));
        assert_eq!(a.label.as_deref(), Some("lo"));
        assert_eq!(a.other, vec![(6, vec![1, 2, 3, 4])]);
        assert_eq!(encode(&a), bytes);
    }

    #[test]
    fn a_short_body_or_odd_address_is_an_error() {
        assert!(decode(&[2, 30, 0]).is_err());
        assert!(decode(&[2, 30, 0, 0, 7, 0, 0, 0, 7, 0, 1, 0, 1, 2, 3, 0]).is_err());
    }
}
