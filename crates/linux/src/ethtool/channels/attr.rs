//! ETHTOOL_A_CHANNELS_* numbers.

/// ETHTOOL_MSG_CHANNELS_GET.
pub const MSG_GET: u8 = 17;
/// ETHTOOL_MSG_CHANNELS_SET.
pub const MSG_SET: u8 = 18;

pub const RX_MAX: u16 = 2;
pub const TX_MAX: u16 = 3;
pub const OTHER_MAX: u16 = 4;
pub const COMBINED_MAX: u16 = 5;
pub const RX_COUNT: u16 = 6;
pub const TX_COUNT: u16 = 7;
pub const OTHER_COUNT: u16 = 8;
pub const COMBINED_COUNT: u16 = 9;
