//! ETHTOOL_A_RINGS_* numbers.

/// ETHTOOL_MSG_RINGS_GET.
pub const MSG_GET: u8 = 15;
/// ETHTOOL_MSG_RINGS_SET.
pub const MSG_SET: u8 = 16;

pub const RX_MAX: u16 = 2;
pub const RX_MINI_MAX: u16 = 3;
pub const RX_JUMBO_MAX: u16 = 4;
pub const TX_MAX: u16 = 5;
pub const RX: u16 = 6;
pub const RX_MINI: u16 = 7;
pub const RX_JUMBO: u16 = 8;
pub const TX: u16 = 9;
pub const RX_BUF_LEN: u16 = 10;
pub const TCP_DATA_SPLIT: u16 = 11;
pub const CQE_SIZE: u16 = 12;
pub const TX_PUSH: u16 = 13;
pub const RX_PUSH: u16 = 14;
