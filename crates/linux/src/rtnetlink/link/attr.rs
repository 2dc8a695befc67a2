//! Link message types and attributes (include/uapi/linux/rtnetlink.h, if_link.h, veth.h,
//! if.h).

/// RTM_NEWLINK: creates a link (request), or one link of a dump (reply).
pub const RTM_NEWLINK: u16 = 16;
/// RTM_DELLINK: deletes a link.
pub const RTM_DELLINK: u16 = 17;
/// RTM_GETLINK: reads one link or, as a dump, all of them.
pub const RTM_GETLINK: u16 = 18;
/// RTM_SETLINK: changes an existing link (flags, name, namespace).
pub const RTM_SETLINK: u16 = 19;

/// IFLA_*: attributes after `struct ifinfomsg`.
pub const IFLA_ADDRESS: u16 = 1;
/// The interface name (NUL-terminated string).
pub const IFLA_IFNAME: u16 = 3;
/// The MTU, bytes (u32).
pub const IFLA_MTU: u16 = 4;
/// The root qdisc's name (string).
pub const IFLA_QDISC: u16 = 6;
/// The transmit queue length, packets (u32).
pub const IFLA_TXQLEN: u16 = 13;
/// The ifindex of the link's master (a bridge port's bridge).
pub const IFLA_MASTER: u16 = 10;
/// RFC 2863 operational state (u8, `IF_OPER_*` of include/uapi/linux/if.h).
pub const IFLA_OPERSTATE: u16 = 16;
/// The nest carrying the link kind and its kind-specific data (IFLA_INFO_*).
pub const IFLA_LINKINFO: u16 = 18;
/// Moves the link into the network namespace of this pid (u32).
pub const IFLA_NET_NS_PID: u16 = 19;
/// Moves the link into the network namespace this file descriptor refers to (u32).
pub const IFLA_NET_NS_FD: u16 = 28;
/// The permanent hardware address (bytes), sent only where the device has one (a NIC's
/// burned-in address; not a veth's random one): Linux 5.5 and later.
pub const IFLA_PERM_ADDRESS: u16 = 54;
/// The sysfs name of the device the link hangs below (`virtio2`, `0000:03:00.0`; a string):
/// Linux 5.14 and later, and only for links that have a parent device.
pub const IFLA_PARENT_DEV_NAME: u16 = 56;

/// IFLA_INFO_*: inside IFLA_LINKINFO.
pub const IFLA_INFO_KIND: u16 = 1;
/// The kind-specific nest (a veth's VETH_INFO_PEER).
pub const IFLA_INFO_DATA: u16 = 2;

/// VETH_INFO_PEER: inside IFLA_INFO_DATA of a veth; its payload is the peer's
/// `struct ifinfomsg` followed by the peer's IFLA_* attributes.
pub const VETH_INFO_PEER: u16 = 1;

/// IFF_UP: `ifi_flags` bit of an administratively up link.
pub const IFF_UP: u32 = 0x1;

/// ARPHRD_ETHER, ARPHRD_LOOPBACK: `ifi_type` of an Ethernet-like link and of `lo`.
pub const ARPHRD_ETHER: u16 = 1;
/// See ARPHRD_ETHER.
pub const ARPHRD_LOOPBACK: u16 = 772;

/// `IF_OPER_*` (include/uapi/linux/if.h), in value order 0..=6, named as `ip link` and
/// `/sys/class/net/IF/operstate` print them.
pub const OPERSTATES: [&str; 7] = [
    "unknown",
    "notpresent",
    "down",
    "lowerlayerdown",
    "testing",
    "dormant",
    "up",
];
