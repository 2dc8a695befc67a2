//! What the netdev netlink family reports: NAPI instances with their per-NAPI settings, and
//! which NAPI serves each queue. NAPI ids change when queues are re-created; state is keyed
//! by interface and queue index, never by NAPI id.

use serde::{Deserialize, Serialize};

/// One NAPI instance (`napi-get`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Napi {
    /// NAPI id; changes when the driver recreates its queues.
    pub id: u32,
    /// Interface index of the device the instance belongs to.
    pub ifindex: u32,
    /// The IRQ that schedules it, when the driver linked one.
    pub irq: Option<u32>,
    /// The polling kthread's pid in threaded mode.
    pub pid: Option<u32>,
    /// Per-NAPI `defer-hard-irqs`: empty polls that keep the IRQ masked; `None` on kernels without
    /// per-NAPI settings.
    pub defer_hard_irqs: Option<u32>,
    /// Per-NAPI `gro-flush-timeout`, ns; `None` on kernels without per-NAPI settings.
    pub gro_flush_timeout_ns: Option<u64>,
    /// Per-NAPI `irq-suspend-timeout`, ns; `None` on kernels without it.
    pub irq_suspend_timeout_ns: Option<u64>,
    /// 0 disabled, 1 enabled (2 busy-poll on kernels that have it).
    pub threaded: Option<u32>,
}

/// Receive or transmit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    /// Receive queue.
    Rx,
    /// Transmit queue.
    Tx,
}

impl std::fmt::Display for QueueKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            QueueKind::Rx => "rx",
            QueueKind::Tx => "tx",
        })
    }
}

/// One queue (`queue-get`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetdevQueue {
    /// Interface index of the queue's device.
    pub ifindex: u32,
    /// Receive or transmit.
    pub kind: QueueKind,
    /// Queue number within its kind (the `N` of `queues/rx-N` or `queues/tx-N`).
    pub id: u32,
    /// The NAPI instance serving the queue; `None` when the driver does not link one.
    pub napi_id: Option<u32>,
}
