//! ETHTOOL_MSG_CHANNELS_GET / _SET.
pub mod attr;
pub mod request;
