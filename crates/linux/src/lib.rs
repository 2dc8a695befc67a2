//! The Linux OS adapter: ethtool and netdev generic netlink, procfs/sysfs reads and writes,
//! network namespaces. One of the two crates allowed to make system calls.
//!
//! Flow B: **host** → snapshot → doctor / plan → apply → verify → rollback. The [`write`]
//! module is the apply side: it implements `nictune_apply::host::HostWrite`.

pub mod write;
