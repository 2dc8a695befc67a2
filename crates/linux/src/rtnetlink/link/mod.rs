//! RTM_NEWLINK / RTM_GETLINK / RTM_SETLINK / RTM_DELLINK: veth pairs and link state.
pub mod attr;
pub mod request;
