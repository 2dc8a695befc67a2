//! ETHTOOL_A_LINKMODES_* numbers (include/uapi/linux/ethtool_netlink.h, Linux 5.6+;
//! ethtool_netlink_generated.h since 6.14).

/// ETHTOOL_MSG_LINKMODES_GET.
pub const MSG_GET: u8 = 4;

/// ETHTOOL_A_LINKMODES_SPEED: Mb/s, u32; SPEED_UNKNOWN (-1 as u32) when the driver does not
/// know it (include/uapi/linux/ethtool.h).
pub const SPEED: u16 = 5;

/// SPEED_UNKNOWN.
pub const SPEED_UNKNOWN: u32 = u32::MAX;
