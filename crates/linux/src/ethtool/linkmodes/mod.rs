//! ETHTOOL_MSG_LINKMODES_GET: the link speed (what `ethtool IF` prints as `Speed:`).
pub mod attr;
pub mod request;
