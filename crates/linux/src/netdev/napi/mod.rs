//! NETDEV_CMD_NAPI_GET / NAPI_SET.
pub mod attr;
pub mod request;
