//! Address message types and attributes (include/uapi/linux/rtnetlink.h, if_addr.h).

pub const RTM_NEWADDR: u16 = 20;
pub const RTM_DELADDR: u16 = 21;
pub const RTM_GETADDR: u16 = 22;

/// IFA_*: attributes after `struct ifaddrmsg`.
pub const IFA_ADDRESS: u16 = 1;
pub const IFA_LOCAL: u16 = 2;
pub const IFA_LABEL: u16 = 3;
pub const IFA_BROADCAST: u16 = 4;

/// RT_SCOPE_UNIVERSE: `ifa_scope` of a global address.
pub const RT_SCOPE_UNIVERSE: u8 = 0;
