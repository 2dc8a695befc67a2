//! NETDEV_A_NAPI_* numbers and the commands that carry them.

/// NETDEV_CMD_NAPI_GET.
pub const CMD_GET: u8 = 11;
/// NETDEV_CMD_NAPI_SET (needs CAP_NET_ADMIN).
pub const CMD_SET: u8 = 14;

/// u32: the interface index the NAPI instance belongs to.
pub const IFINDEX: u16 = 1;
/// u32: the NAPI id (the same number `SO_INCOMING_NAPI_ID` and the queue's NAPI_ID give).
pub const ID: u16 = 2;
/// u32: the hardware interrupt line the NAPI instance is bound to; absent when none.
pub const IRQ: u16 = 3;
/// u32: the pid of the NAPI kernel thread when threaded; absent otherwise.
pub const PID: u16 = 4;
/// u32: `napi_defer_hard_irqs`, how many consecutive empty polls keep the IRQ masked (with
/// GRO_FLUSH_TIMEOUT as the fallback timer); 0 never defers.
pub const DEFER_HARD_IRQS: u16 = 5;
/// NLA_UINT, nanoseconds.
pub const GRO_FLUSH_TIMEOUT: u16 = 6;
/// NLA_UINT, nanoseconds.
pub const IRQ_SUSPEND_TIMEOUT: u16 = 7;
/// u32 enum: 0 disabled, 1 enabled.
pub const THREADED: u16 = 8;
