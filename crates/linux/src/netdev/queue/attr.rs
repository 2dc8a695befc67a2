//! NETDEV_A_QUEUE_* numbers.

/// NETDEV_CMD_QUEUE_GET.
pub const CMD_GET: u8 = 10;

/// u32: the queue's index within its type on the interface.
pub const ID: u16 = 1;
/// u32: the interface index the queue belongs to.
pub const IFINDEX: u16 = 2;
/// u32 enum netdev_queue_type: 0 rx, 1 tx.
pub const TYPE: u16 = 3;
/// u32: the NAPI id serving the queue; absent when the queue has none.
pub const NAPI_ID: u16 = 4;

/// The TYPE value of a receive queue.
pub const TYPE_RX: u32 = 0;
/// The TYPE value of a transmit queue.
pub const TYPE_TX: u32 = 1;
