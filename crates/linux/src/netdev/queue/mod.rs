//! NETDEV_CMD_QUEUE_GET.
pub mod attr;
pub mod request;
