//! RTM_NEWADDR: IPv4 addresses on a link.
pub mod attr;
pub mod request;
