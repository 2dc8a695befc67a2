//! NETDEV_A_NAPI_* numbers and the commands that carry them.

/// NETDEV_CMD_NAPI_GET.
pub const CMD_GET: u8 = 11;
/// NETDEV_CMD_NAPI_SET (needs CAP_NET_ADMIN).
pub const CMD_SET: u8 = 14;

pub const IFINDEX: u16 = 1;
pub const ID: u16 = 2;
pub const IRQ: u16 = 3;
pub const PID: u16 = 4;
pub const DEFER_HARD_IRQS: u16 = 5;
/// NLA_UINT, nanoseconds.
pub const GRO_FLUSH_TIMEOUT: u16 = 6;
/// NLA_UINT, nanoseconds.
pub const IRQ_SUSPEND_TIMEOUT: u16 = 7;
/// u32 enum: 0 disabled, 1 enabled.
pub const THREADED: u16 = 8;
