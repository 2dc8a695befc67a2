//! The Linux OS adapter: ethtool and netdev generic netlink, procfs/sysfs reads, network
//! namespaces, and captures on disk. One of the two crates allowed to make system calls;
//! the `unsafe` is confined to [`netlink::socket`] and [`netns`].
//!
//! Flow B: **host** → snapshot → doctor / plan → apply → verify → rollback.
//!
//! - [`netlink`]: attributes, message framing, the socket, genl requests with extack errors.
//! - [`ethtool`], [`netdev`]: one folder per feature (`attr.rs` numbers, `request.rs` GET
//!   decoders and SET encoders).
//! - [`host::LinuxHost`]: `nictune_host::read::HostRead` on the live system (or any root).
//! - [`capture`]: writes a recording to a directory and loads it back as a `FakeHost`.
//! - [`netns`]: entering a named network namespace (`--netns`); creating, deleting and
//!   listing named namespaces, running a closure inside one, per-namespace sysctls.
//! - [`rtnetlink`]: NETLINK_ROUTE link and address requests (veth pairs, addresses, up).
//! - [`lab`]: isolated test networks from the above (the bench testbed, a VM's tap).
//! - [`mod@write`]: the apply side, `nictune_host::write::HostWrite` over netlink SETs and
//!   sysfs/procfs writes, plus the watchdog's detach and the SSH/default-route guard.

#![warn(missing_docs)]

pub mod capture;
pub mod ethtool;
pub mod host;
pub mod lab;
pub mod netdev;
pub mod netlink;
pub mod netns;
pub mod rtnetlink;
pub mod script;
pub mod write;

pub use host::LinuxHost;
