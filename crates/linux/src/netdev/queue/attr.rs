//! NETDEV_A_QUEUE_* numbers.

/// NETDEV_CMD_QUEUE_GET.
pub const CMD_GET: u8 = 10;

pub const ID: u16 = 1;
pub const IFINDEX: u16 = 2;
/// u32 enum netdev_queue_type: 0 rx, 1 tx.
pub const TYPE: u16 = 3;
pub const NAPI_ID: u16 = 4;

pub const TYPE_RX: u32 = 0;
pub const TYPE_TX: u32 = 1;
