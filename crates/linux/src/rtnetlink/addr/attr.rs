//! Address message types and attributes (include/uapi/linux/rtnetlink.h, if_addr.h).

/// RTM_NEWADDR: adds an address (request), or one address of a dump (reply).
pub const RTM_NEWADDR: u16 = 20;
/// RTM_DELADDR: removes an address.
pub const RTM_DELADDR: u16 = 21;
/// RTM_GETADDR: lists addresses (sent as a dump).
pub const RTM_GETADDR: u16 = 22;

/// IFA_*: attributes after `struct ifaddrmsg`.
pub const IFA_ADDRESS: u16 = 1;
/// IFA_LOCAL: the interface's own address (IFA_ADDRESS is the peer on point-to-point links).
pub const IFA_LOCAL: u16 = 2;
/// IFA_LABEL: the address label, a NUL-terminated string (`eth0:1`).
pub const IFA_LABEL: u16 = 3;
/// IFA_BROADCAST: the IPv4 broadcast address.
pub const IFA_BROADCAST: u16 = 4;

/// RT_SCOPE_UNIVERSE: `ifa_scope` of a global address.
pub const RT_SCOPE_UNIVERSE: u8 = 0;
