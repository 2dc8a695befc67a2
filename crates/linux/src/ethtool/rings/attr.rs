//! ETHTOOL_A_RINGS_* numbers.

/// ETHTOOL_MSG_RINGS_GET.
pub const MSG_GET: u8 = 15;
/// ETHTOOL_MSG_RINGS_SET.
pub const MSG_SET: u8 = 16;

/// ETHTOOL_A_RINGS_RX_MAX (u32): largest RX ring the driver accepts, in descriptors; read-only.
pub const RX_MAX: u16 = 2;
/// ETHTOOL_A_RINGS_RX_MINI_MAX (u32): largest RX mini ring, in descriptors; read-only.
pub const RX_MINI_MAX: u16 = 3;
/// ETHTOOL_A_RINGS_RX_JUMBO_MAX (u32): largest RX jumbo ring, in descriptors; read-only.
pub const RX_JUMBO_MAX: u16 = 4;
/// ETHTOOL_A_RINGS_TX_MAX (u32): largest TX ring, in descriptors; read-only.
pub const TX_MAX: u16 = 5;
/// ETHTOOL_A_RINGS_RX (u32): RX ring size in descriptors (`ethtool -G DEV rx N`).
pub const RX: u16 = 6;
/// ETHTOOL_A_RINGS_RX_MINI (u32): RX mini ring size in descriptors.
pub const RX_MINI: u16 = 7;
/// ETHTOOL_A_RINGS_RX_JUMBO (u32): RX jumbo ring size in descriptors.
pub const RX_JUMBO: u16 = 8;
/// ETHTOOL_A_RINGS_TX (u32): TX ring size in descriptors (`ethtool -G DEV tx N`).
pub const TX: u16 = 9;
/// ETHTOOL_A_RINGS_RX_BUF_LEN (u32): RX buffer size in bytes.
pub const RX_BUF_LEN: u16 = 10;
/// ETHTOOL_A_RINGS_TCP_DATA_SPLIT (u8 enum): header/data split; 0 unknown, 1 disabled, 2 enabled.
pub const TCP_DATA_SPLIT: u16 = 11;
/// ETHTOOL_A_RINGS_CQE_SIZE (u32): completion queue entry size in bytes.
pub const CQE_SIZE: u16 = 12;
/// ETHTOOL_A_RINGS_TX_PUSH (u8 flag): TX push mode.
pub const TX_PUSH: u16 = 13;
/// ETHTOOL_A_RINGS_RX_PUSH (u8 flag): RX push mode.
pub const RX_PUSH: u16 = 14;
