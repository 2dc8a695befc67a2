//! ETHTOOL_MSG_COALESCE_GET / _SET: interrupt coalescing.
pub mod attr;
pub mod request;
