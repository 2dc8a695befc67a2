//! ETHTOOL_MSG_RINGS_GET / _SET.
pub mod attr;
pub mod request;
