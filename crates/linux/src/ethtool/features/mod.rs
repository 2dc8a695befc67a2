//! ETHTOOL_MSG_FEATURES_GET: offload features (GRO, LRO, ...).
pub mod attr;
pub mod request;
