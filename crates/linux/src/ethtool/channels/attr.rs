//! ETHTOOL_A_CHANNELS_* numbers.

/// ETHTOOL_MSG_CHANNELS_GET.
pub const MSG_GET: u8 = 17;
/// ETHTOOL_MSG_CHANNELS_SET.
pub const MSG_SET: u8 = 18;

/// ETHTOOL_A_CHANNELS_RX_MAX (u32): most RX-only channels the driver supports; read-only.
pub const RX_MAX: u16 = 2;
/// ETHTOOL_A_CHANNELS_TX_MAX (u32): most TX-only channels; read-only.
pub const TX_MAX: u16 = 3;
/// ETHTOOL_A_CHANNELS_OTHER_MAX (u32): most "other" channels (link, mailbox interrupts); read-only.
pub const OTHER_MAX: u16 = 4;
/// ETHTOOL_A_CHANNELS_COMBINED_MAX (u32): most combined RX+TX channels; read-only.
pub const COMBINED_MAX: u16 = 5;
/// ETHTOOL_A_CHANNELS_RX_COUNT (u32): RX-only channels in use (`ethtool -L DEV rx N`).
pub const RX_COUNT: u16 = 6;
/// ETHTOOL_A_CHANNELS_TX_COUNT (u32): TX-only channels in use (`ethtool -L DEV tx N`).
pub const TX_COUNT: u16 = 7;
/// ETHTOOL_A_CHANNELS_OTHER_COUNT (u32): "other" channels in use (`ethtool -L DEV other N`).
pub const OTHER_COUNT: u16 = 8;
/// ETHTOOL_A_CHANNELS_COMBINED_COUNT (u32): combined channels in use (`ethtool -L DEV combined N`).
pub const COMBINED_COUNT: u16 = 9;
