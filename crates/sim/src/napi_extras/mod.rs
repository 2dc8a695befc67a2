//! NAPI beyond the basic IRQ → poll → complete cycle (moderation-algorithms.md §6).
//!
//! - [`complete`]: `napi_complete_done` with IRQ deferral (`napi_defer_hard_irqs`,
//!   `gro_flush_timeout`) and IRQ suspension (`irq_suspend_timeout` with prefer-busy-poll).
//! - [`busy_poll`]: the application's busy-poll loop (`busy_read`/`busy_poll`, budget 8).
//! - [`softirq`]: the NET_RX budget (`netdev_budget`, `netdev_budget_usecs`) and the softirq
//!   restart limits that hand work to ksoftirqd.
//! - [`threaded`]: a fair-share CPU scheduler for threads competing on one core (threaded
//!   NAPI or ksoftirqd against the application).

pub mod busy_poll;
pub mod complete;
pub mod softirq;
pub mod threaded;
