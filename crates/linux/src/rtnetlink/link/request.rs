//! Link requests: `struct ifinfomsg`, the [`Link`] a message describes (encoded for
//! requests, decoded from replies with unknown attributes kept), and the operations
//! `ip link add … type veth peer …`, `ip link show NAME`, `ip link set NAME up` and
//! `ip link del NAME` send.
//!
//! A veth RTM_NEWLINK nests the peer: IFLA_LINKINFO { IFLA_INFO_KIND "veth",
//! IFLA_INFO_DATA { VETH_INFO_PEER { struct ifinfomsg, IFLA_IFNAME, IFLA_NET_NS_FD } } }.
//! IFLA_NET_NS_FD (an open namespace handle of the sender) places each end in that
//! namespace as it is created, so neither end ever exists in the sender's namespace.

use super::attr::*;
use crate::netlink::attr::{Attr, AttrWriter, Attrs, NLA_F_NESTED};
use crate::netlink::conn::NlError;
use crate::netlink::DecodeError;
use crate::rtnetlink::{RouteSocket, NLM_F_CREATE, NLM_F_EXCL};
use std::os::fd::{AsRawFd, BorrowedFd};

/// `struct ifinfomsg` (16 bytes): u8 family, u8 pad, u16 type, i32 index, u32 flags,
/// u32 change (the mask of `flags` bits a SET changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IfInfoMsg {
    /// AF_UNSPEC (0) in every request nictune sends.
    pub family: u8,
    /// ARPHRD_* of the link (`ifi_type`; 0 in requests).
    pub link_type: u16,
    /// The ifindex; 0 in a request means "pick one" (create) or "select by IFLA_IFNAME".
    pub index: i32,
    /// IFF_* flags (IFF_UP, ...).
    pub flags: u32,
    /// The mask of `flags` bits a request changes; 0 changes none.
    pub change: u32,
}

impl IfInfoMsg {
    /// The encoded size, bytes (the one pad byte included).
    pub const LEN: usize = 16;

    /// The 16 bytes as sent, integers in host byte order.
    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[0] = self.family;
        b[2..4].copy_from_slice(&self.link_type.to_ne_bytes());
        b[4..8].copy_from_slice(&self.index.to_ne_bytes());
        b[8..12].copy_from_slice(&self.flags.to_ne_bytes());
        b[12..16].copy_from_slice(&self.change.to_ne_bytes());
        b
    }

    /// The header and the attributes after it.
    pub fn decode(body: &[u8]) -> Result<(IfInfoMsg, &[u8]), DecodeError> {
        let Some(b) = body.get(..Self::LEN) else {
            return Err(DecodeError::new(
                "link message shorter than struct ifinfomsg",
            ));
        };
        let word = |i: usize| u32::from_ne_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let header = IfInfoMsg {
            family: b[0],
            link_type: u16::from_ne_bytes([b[2], b[3]]),
            index: word(4) as i32,
            flags: word(8),
            change: word(12),
        };
        Ok((header, &body[Self::LEN..]))
    }
}

/// IFLA_LINKINFO: the link kind and its kind-specific data.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LinkInfo {
    /// IFLA_INFO_KIND (`veth`, `dummy`, ...).
    pub kind: Option<String>,
    /// VETH_INFO_PEER inside IFLA_INFO_DATA, for a veth.
    pub peer: Option<Box<Link>>,
    /// IFLA_INFO_DATA of other kinds, as sent.
    pub data: Option<Vec<u8>>,
    /// Attributes not named above, in order.
    pub other: Vec<(u16, Vec<u8>)>,
}

/// A link as an RTM_*LINK message describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Link {
    /// The fixed header: type, ifindex, flags.
    pub header: IfInfoMsg,
    /// IFLA_IFNAME.
    pub name: Option<String>,
    /// IFLA_MTU.
    pub mtu: Option<u32>,
    /// IFLA_NET_NS_FD: the namespace to create or move the link in (requests only).
    pub netns_fd: Option<u32>,
    /// IFLA_LINKINFO.
    pub info: Option<LinkInfo>,
    /// Attributes not named above, in order (statistics, addresses, ... of a reply).
    pub other: Vec<(u16, Vec<u8>)>,
}

impl Link {
    /// The ifindex (`ifi_index`).
    pub fn index(&self) -> u32 {
        self.header.index as u32
    }

    /// True when administratively up (IFF_UP).
    pub fn is_up(&self) -> bool {
        self.header.flags & IFF_UP != 0
    }

    /// The payload of the first attribute `kind` among those not decoded into a field.
    fn other_attr(&self, kind: u16) -> Option<&[u8]> {
        self.other
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, p)| p.as_slice())
    }

    /// IFLA_OPERSTATE by its RFC 2863 name; a value this code does not know as its number.
    pub fn operstate(&self) -> Option<String> {
        let state = *self.other_attr(IFLA_OPERSTATE)?.first()?;
        Some(
            OPERSTATES
                .get(usize::from(state))
                .map_or_else(|| state.to_string(), |s| (*s).to_string()),
        )
    }

    /// IFLA_QDISC (a NUL-terminated string).
    pub fn qdisc(&self) -> Option<String> {
        self.string_attr(IFLA_QDISC)
    }

    /// IFLA_PARENT_DEV_NAME: the sysfs name of the device below which the link hangs
    /// (`virtio2` for a virtio-net link). `None` for a virtual link, and on kernels before
    /// 5.14, which do not send it.
    pub fn parent_device(&self) -> Option<String> {
        self.string_attr(IFLA_PARENT_DEV_NAME)
    }

    /// IFLA_PERM_ADDRESS as `ip link` prints an address (`52:54:00:12:34:56`): `None` where
    /// the device has none (a virtual link) and on kernels before 5.5.
    pub fn perm_address(&self) -> Option<String> {
        let raw = self.other_attr(IFLA_PERM_ADDRESS)?;
        let hex: Vec<String> = raw.iter().map(|b| format!("{b:02x}")).collect();
        (!raw.is_empty() && raw.iter().any(|b| *b != 0)).then(|| hex.join(":"))
    }

    /// A NUL-terminated string attribute among those not decoded into a field.
    fn string_attr(&self, kind: u16) -> Option<String> {
        let raw = self.other_attr(kind)?;
        let text = raw.split(|b| *b == 0).next().unwrap_or(raw);
        Some(String::from_utf8_lossy(text).into_owned())
    }

    /// IFLA_TXQLEN.
    pub fn txqlen(&self) -> Option<u32> {
        let raw: [u8; 4] = self.other_attr(IFLA_TXQLEN)?.get(..4)?.try_into().ok()?;
        Some(u32::from_ne_bytes(raw))
    }

    /// IFLA_INFO_KIND (`veth`, `bridge`, ...): set for virtual devices only.
    pub fn kind(&self) -> Option<&str> {
        self.info.as_ref()?.kind.as_deref()
    }
}

/// The message body for `link`: its header, then its attributes.
pub fn encode(link: &Link) -> Vec<u8> {
    let mut out = link.header.encode().to_vec();
    let mut w = AttrWriter::new();
    if let Some(name) = &link.name {
        w.string(IFLA_IFNAME, name);
    }
    if let Some(mtu) = link.mtu {
        w.u32(IFLA_MTU, mtu);
    }
    if let Some(fd) = link.netns_fd {
        w.u32(IFLA_NET_NS_FD, fd);
    }
    if let Some(info) = &link.info {
        w.nest(IFLA_LINKINFO, |n| encode_info(n, info));
    }
    for (kind, data) in &link.other {
        w.bytes(*kind, data);
    }
    out.extend_from_slice(&w.finish());
    out
}

fn encode_info(w: &mut AttrWriter, info: &LinkInfo) {
    if let Some(kind) = &info.kind {
        w.string(IFLA_INFO_KIND, kind);
    }
    if let Some(peer) = &info.peer {
        w.nest(IFLA_INFO_DATA, |d| {
            d.bytes(VETH_INFO_PEER | NLA_F_NESTED, &encode(peer));
        });
    } else if let Some(data) = &info.data {
        w.bytes(IFLA_INFO_DATA | NLA_F_NESTED, data);
    }
    for (kind, data) in &info.other {
        w.bytes(*kind, data);
    }
}

/// Decodes a link message body (an RTM_NEWLINK reply, or a request).
pub fn decode(body: &[u8]) -> Result<Link, DecodeError> {
    let (header, attrs) = IfInfoMsg::decode(body)?;
    let mut link = Link {
        header,
        ..Link::default()
    };
    for a in Attrs::new(attrs) {
        let a = a?;
        match a.kind {
            IFLA_IFNAME => link.name = Some(a.string()?),
            IFLA_MTU => link.mtu = Some(a.u32()?),
            IFLA_NET_NS_FD => link.netns_fd = Some(a.u32()?),
            IFLA_LINKINFO => link.info = Some(decode_info(&a)?),
            kind => link.other.push((kind, a.payload.to_vec())),
        }
    }
    Ok(link)
}

fn decode_info(nest: &Attr<'_>) -> Result<LinkInfo, DecodeError> {
    let mut info = LinkInfo::default();
    for a in nest.nested() {
        let a = a?;
        match a.kind {
            IFLA_INFO_KIND => info.kind = Some(a.string()?),
            IFLA_INFO_DATA if info.kind.as_deref() == Some("veth") => {
                if let Some(peer) = a.nested().find(VETH_INFO_PEER) {
                    info.peer = Some(Box::new(decode(peer.payload)?));
                }
            }
            IFLA_INFO_DATA => info.data = Some(a.payload.to_vec()),
            kind => info.other.push((kind, a.payload.to_vec())),
        }
    }
    Ok(info)
}

/// One end of a veth pair: its name and the namespace to create it in (an open handle:
/// `/run/netns/NAME`, `/proc/PID/ns/net`); `None` is the sending socket's namespace.
#[derive(Debug, Clone, Copy)]
pub struct VethEnd<'a> {
    /// The interface name to create.
    pub name: &'a str,
    /// The namespace to create it in, as an open handle; `None` is the sending socket's.
    pub netns: Option<BorrowedFd<'a>>,
}

/// The [`Link`] of an RTM_NEWLINK creating the veth pair `end` ↔ `peer`.
pub fn veth(end: &VethEnd<'_>, peer: &VethEnd<'_>) -> Link {
    let one = |e: &VethEnd<'_>| Link {
        name: Some(e.name.to_string()),
        netns_fd: e.netns.map(|fd| fd.as_raw_fd() as u32),
        ..Link::default()
    };
    Link {
        info: Some(LinkInfo {
            kind: Some("veth".into()),
            peer: Some(Box::new(one(peer))),
            ..LinkInfo::default()
        }),
        ..one(end)
    }
}

/// Creates the veth pair `end` ↔ `peer` (`ip link add END netns A type veth peer name PEER
/// netns B`); fails if either name is taken in its namespace.
pub fn create_veth(
    sock: &RouteSocket,
    end: &VethEnd<'_>,
    peer: &VethEnd<'_>,
) -> Result<(), NlError> {
    let op = format!("creating veth pair {} ↔ {}", end.name, peer.name);
    let flags = NLM_F_CREATE | NLM_F_EXCL;
    sock.request_ack(RTM_NEWLINK, flags, &encode(&veth(end, peer)), &op)
}

/// The [`Link`] of an RTM_NEWLINK creating bridge `name`.
pub fn bridge(name: &str) -> Link {
    Link {
        info: Some(LinkInfo {
            kind: Some("bridge".into()),
            ..LinkInfo::default()
        }),
        ..by_name(name)
    }
}

/// Creates bridge `name` (`ip link add NAME type bridge`); fails if the name is taken.
pub fn create_bridge(sock: &RouteSocket, name: &str) -> Result<(), NlError> {
    let op = format!("creating bridge {name}");
    let flags = NLM_F_CREATE | NLM_F_EXCL;
    sock.request_ack(RTM_NEWLINK, flags, &encode(&bridge(name)), &op)
}

/// The [`Link`] of an RTM_SETLINK making link `name` a port of the link with ifindex
/// `master`.
pub fn set_master_of(name: &str, master: u32) -> Link {
    let mut link = by_name(name);
    link.other
        .push((IFLA_MASTER, master.to_ne_bytes().to_vec()));
    link
}

/// Makes link `name` a port of bridge `bridge` (`ip link set NAME master BRIDGE`).
pub fn set_master(sock: &RouteSocket, name: &str, bridge: &str) -> Result<(), NlError> {
    let master = index_of(sock, bridge)?;
    let op = format!("adding {name} to bridge {bridge}");
    sock.request_ack(RTM_SETLINK, 0, &encode(&set_master_of(name, master)), &op)
}

/// A request body naming link `name` (index 0: the kernel looks the name up).
pub fn by_name(name: &str) -> Link {
    Link {
        name: Some(name.to_string()),
        ..Link::default()
    }
}

/// Reads link `name` (`ip link show NAME`).
pub fn get(sock: &RouteSocket, name: &str) -> Result<Link, NlError> {
    let op = format!("looking up link {name}");
    let replies = sock.request_do(RTM_GETLINK, &encode(&by_name(name)), &op)?;
    let first = replies
        .first()
        .ok_or_else(|| NlError::decode(&op, DecodeError::new("no reply")))?;
    decode(first).map_err(|source| NlError::decode(&op, source))
}

/// The ifindex of link `name`.
pub fn index_of(sock: &RouteSocket, name: &str) -> Result<u32, NlError> {
    get(sock, name).map(|l| l.index())
}

/// The [`Link`] of an RTM_SETLINK turning IFF_UP on (`up`) or off on link `name`, leaving
/// every other flag alone (`change` masks IFF_UP only).
pub fn set_flags_up(name: &str, up: bool) -> Link {
    let mut link = by_name(name);
    link.header.flags = if up { IFF_UP } else { 0 };
    link.header.change = IFF_UP;
    link
}

/// Sets link `name` administratively up (`ip link set NAME up`).
pub fn set_up(sock: &RouteSocket, name: &str) -> Result<(), NlError> {
    let op = format!("setting link {name} up");
    sock.request_ack(RTM_SETLINK, 0, &encode(&set_flags_up(name, true)), &op)
}

/// Deletes link `name` (`ip link del NAME`); a veth takes its peer with it.
pub fn delete(sock: &RouteSocket, name: &str) -> Result<(), NlError> {
    let op = format!("deleting link {name}");
    sock.request_ack(RTM_DELLINK, 0, &encode(&by_name(name)), &op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    /// RTM_NEWLINK body for `ip link add nt1c netns <fd 5> type veth peer name nt1s netns
    /// <fd 6>`, laid out from if_link.h / veth.h (x86-64, little-endian).
    #[rustfmt::skip]
    const NEW_VETH: &[u8] = &[
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // ifinfomsg: all zero
        9, 0, 3, 0, b'n', b't', b'1', b'c', 0, 0, 0, 0, // IFLA_IFNAME "nt1c", padded
        8, 0, 28, 0, 5, 0, 0, 0,                        // IFLA_NET_NS_FD 5
        60, 0, 18, 0x80,                                // IFLA_LINKINFO nest
            9, 0, 1, 0, b'v', b'e', b't', b'h', 0, 0, 0, 0, // IFLA_INFO_KIND "veth"
            44, 0, 2, 0x80,                             // IFLA_INFO_DATA nest
                40, 0, 1, 0x80,                         // VETH_INFO_PEER nest:
                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // the peer's ifinfomsg
                    9, 0, 3, 0, b'n', b't', b'1', b's', 0, 0, 0, 0, // IFLA_IFNAME "nt1s"
                    8, 0, 28, 0, 6, 0, 0, 0,            // IFLA_NET_NS_FD 6
    ];

    fn named(name: &str, fd: u32) -> Link {
        Link {
            name: Some(name.into()),
            netns_fd: Some(fd),
            ..Link::default()
        }
    }

    /// An RTM_NEWLINK reply for a veth that is up: MTU 1500, qdisc noqueue, txqlen 1000,
    /// operstate 6 (IF_OPER_UP), kind veth (x86-64, little-endian).
    #[rustfmt::skip]
    const VETH_REPLY: &[u8] = &[
        0, 0, 1, 0, 7, 0, 0, 0, 0x43, 0x10, 1, 0, 0, 0, 0, 0, // ifinfomsg: ether, index 7
        8, 0, 4, 0, 0xdc, 0x05, 0, 0,                   // IFLA_MTU 1500
        12, 0, 6, 0, b'n', b'o', b'q', b'u', b'e', b'u', b'e', 0, // IFLA_QDISC "noqueue"
        8, 0, 13, 0, 0xe8, 0x03, 0, 0,                  // IFLA_TXQLEN 1000
        5, 0, 16, 0, 6, 0, 0, 0,                        // IFLA_OPERSTATE up, padded
        16, 0, 18, 0x80,                                // IFLA_LINKINFO nest
            9, 0, 1, 0, b'v', b'e', b't', b'h', 0, 0, 0, 0, // IFLA_INFO_KIND "veth"
    ];

    #[test]
    fn a_reply_gives_mtu_operstate_qdisc_txqlen_and_kind() {
        let link = decode(VETH_REPLY).unwrap();
        assert_eq!(link.index(), 7);
        assert_eq!(link.mtu, Some(1500));
        assert_eq!(link.operstate().as_deref(), Some("up"));
        assert_eq!(link.qdisc().as_deref(), Some("noqueue"));
        assert_eq!(link.txqlen(), Some(1000));
        assert_eq!(link.kind(), Some("veth"));
    }

    /// An RTM_NEWLINK reply for a virtio-net link: IFLA_PARENT_DEV_NAME "virtio2", then
    /// IFLA_PARENT_DEV_BUS_NAME "virtio" (57), which this code leaves undecoded.
    #[rustfmt::skip]
    const VIRTIO_REPLY: &[u8] = &[
        0, 0, 1, 0, 2, 0, 0, 0, 0x43, 0x10, 1, 0, 0, 0, 0, 0, // ifinfomsg: ether, index 2
        12, 0, 56, 0, b'v', b'i', b'r', b't', b'i', b'o', b'2', 0, // IFLA_PARENT_DEV_NAME
        11, 0, 57, 0, b'v', b'i', b'r', b't', b'i', b'o', 0, 0,    // IFLA_PARENT_DEV_BUS_NAME
    ];

    #[test]
    fn a_device_links_reply_names_its_parent_device() {
        let link = decode(VIRTIO_REPLY).unwrap();
        assert_eq!(link.parent_device().as_deref(), Some("virtio2"));
        assert_eq!(decode(VETH_REPLY).unwrap().parent_device(), None);
    }

    #[test]
    fn an_operstate_beyond_if_h_is_its_number_and_missing_attributes_are_none() {
        let mut link = Link::default();
        assert_eq!(
            (link.operstate(), link.qdisc(), link.txqlen()),
            (None, None, None)
        );
        link.other.push((IFLA_OPERSTATE, vec![9]));
        assert_eq!(link.operstate().as_deref(), Some("9"));
    }

    #[test]
    fn a_veth_pair_request_nests_the_peer_with_its_namespace() {
        let mut want = named("nt1c", 5);
        want.info = Some(LinkInfo {
            kind: Some("veth".into()),
            peer: Some(Box::new(named("nt1s", 6))),
            ..LinkInfo::default()
        });
        assert_eq!(encode(&want), NEW_VETH);
        assert_eq!(decode(NEW_VETH).unwrap(), want);
    }

    #[test]
    fn veth_takes_each_ends_namespace_handle() {
        let file = std::fs::File::open("/proc/self/ns/net").unwrap();
        let fd = file.as_fd();
        let end = VethEnd {
            name: "a",
            netns: Some(fd),
        };
        let peer = VethEnd {
            name: "b",
            netns: None,
        };
        let link = veth(&end, &peer);
        assert_eq!(link.netns_fd, Some(fd.as_raw_fd() as u32));
        let peer = link.info.unwrap().peer.unwrap();
        assert_eq!((peer.name.as_deref(), peer.netns_fd), (Some("b"), None));
    }

    /// RTM_SETLINK body for `ip link set nt1c up`: index 0 (look the name up), IFF_UP set
    /// in both flags and change.
    #[rustfmt::skip]
    const SET_UP: &[u8] = &[
        0, 0,                   // family AF_UNSPEC, pad
        0, 0,                   // ifi_type
        0, 0, 0, 0,             // ifi_index 0
        1, 0, 0, 0,             // ifi_flags IFF_UP
        1, 0, 0, 0,             // ifi_change IFF_UP
        9, 0, 3, 0, b'n', b't', b'1', b'c', 0, 0, 0, 0, // IFLA_IFNAME "nt1c"
    ];

    #[test]
    fn set_up_changes_only_the_up_flag() {
        let up = set_flags_up("nt1c", true);
        assert_eq!(encode(&up), SET_UP);
        assert_eq!(decode(SET_UP).unwrap(), up);
        let down = set_flags_up("nt1c", false);
        assert_eq!((down.header.flags, down.header.change), (0, IFF_UP));
    }

    /// The start of an RTM_NEWLINK reply for `lo`, laid out by hand as the kernel sends it,
    /// with an attribute this decoder does not name (IFLA_TXQLEN 13).
    #[rustfmt::skip]
    const LO_REPLY: &[u8] = &[
        0, 0,                   // family AF_UNSPEC, pad
        0x04, 0x03,             // ifi_type 772 ARPHRD_LOOPBACK
        1, 0, 0, 0,             // ifi_index 1
        0x49, 0, 1, 0,          // ifi_flags UP|LOOPBACK|RUNNING|LOWER_UP
        0, 0, 0, 0,             // ifi_change
        7, 0, 3, 0, b'l', b'o', 0, 0, // IFLA_IFNAME "lo"
        8, 0, 13, 0, 0xe8, 0x03, 0, 0, // IFLA_TXQLEN 1000 (kept, not named)
        8, 0, 4, 0, 0, 0, 1, 0, // IFLA_MTU 65536
    ];

    #[test]
    fn a_reply_decodes_with_unknown_attributes_kept() {
        let lo = decode(LO_REPLY).unwrap();
        assert_eq!(lo.name.as_deref(), Some("lo"));
        assert_eq!((lo.index(), lo.is_up()), (1, true));
        assert_eq!(lo.header.link_type, ARPHRD_LOOPBACK);
        assert_eq!(lo.mtu, Some(65536));
        assert_eq!(lo.other, vec![(13, vec![0xe8, 0x03, 0, 0])]);
        // Re-encoded, the kept attribute goes last: the same attributes, in encoder order.
        assert_eq!(decode(&encode(&lo)).unwrap(), lo);
    }

    #[test]
    fn a_body_shorter_than_ifinfomsg_is_an_error() {
        assert!(decode(&[0; 8]).is_err());
    }

    #[test]
    fn other_kinds_keep_their_data_as_sent() {
        let link = Link {
            info: Some(LinkInfo {
                kind: Some("vlan".into()),
                data: Some(vec![6, 0, 1, 0, 7, 0, 0, 0]),
                other: vec![(4, b"x\0\0\0".to_vec())],
                ..LinkInfo::default()
            }),
            ..Link::default()
        };
        assert_eq!(decode(&encode(&link)).unwrap(), link);
    }
}
