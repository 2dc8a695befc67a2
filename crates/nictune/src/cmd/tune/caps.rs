//! What a real interface lets a tune change, read from the host snapshot: the candidates
//! come from what the driver and kernel report, never from a list of what drivers usually
//! have.
//!
//! - coalescing: `rx-usecs` when the ethtool netlink reply carries it, `adaptive-rx` likewise;
//! - channels: when the driver reports a combined maximum above one;
//! - per-NAPI `defer-hard-irqs` / `gro-flush-timeout`: when netdev netlink lists NAPI
//!   instances carrying them, or the device-wide sysfs files are readable;
//! - busy polling: when both sysctls are readable in this namespace (they are host-wide and
//!   registered in the initial namespace only, so inside `--netns` they are absent and the
//!   dimension is left out rather than changed for the whole machine);
//! - placement: one local client thread; the server side runs on the peer, so there is no
//!   cross/same-CPU pair to choose between.
//!
//! `irq-suspend-timeout` is left out: it engages only for an application that pledges
//! `prefer_busy_poll` through epoll (see [`Capabilities::irq_suspend`]), and the bench client
//! does not, so every level would measure the same thing.

use nictune_host::snapshot::{HostSnapshot, Nic};
use nictune_tune::knob::Knob;
use nictune_tune::space::Capabilities;

/// The capabilities of `nic` on the host `snap` was read from.
pub fn capabilities(snap: &HostSnapshot, nic: &Nic) -> Capabilities {
    let coalesce = nic.coalesce.value();
    let has = |field: &str| coalesce.is_some_and(|c| c.get(field).is_some());
    // When netdev netlink answers, it decides: a device without NAPI instances (veth out of
    // NAPI mode) has nothing for these keys to act on, whatever sysfs shows.
    let napi = match nic.napis.value() {
        Some(napis) => napis
            .iter()
            .any(|n| n.defer_hard_irqs.is_some() && n.gro_flush_timeout_ns.is_some()),
        None => {
            nic.napi_defer_hard_irqs.value().is_some() && nic.gro_flush_timeout_ns.value().is_some()
        }
    };
    let busy = ["net.core.busy_read", "net.core.busy_poll"]
        .iter()
        .all(|s| snap.sysctl_u64(s).is_some());
    Capabilities {
        coalescing: if has("rx-usecs") {
            vec![Knob::RxUsecs]
        } else {
            Vec::new()
        },
        adaptive_rx: has("adaptive-rx"),
        napi,
        irq_suspend: false,
        busy_polling: busy,
        max_combined_channels: nic
            .channels
            .value()
            .and_then(|c| c.combined_max)
            .map(u64::from),
        cpus: 1,
        ..Capabilities::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_host::read::FakeHost;
    use nictune_host::snapshot::{build, Channels, Coalesce, Napi, Readable};

    fn nic(snap: &HostSnapshot) -> Nic {
        snap.nics[0].clone()
    }

    /// A snapshot of a host with one interface, v0, that reports nothing.
    fn base() -> HostSnapshot {
        let host = FakeHost::new().with_file("/sys/class/net/v0/ifindex", "3\n");
        let mut snap = build(&host, &["v0".to_string()]);
        assert_eq!(snap.nics.len(), 1, "the fake host lists v0");
        snap.sysctls.clear();
        snap
    }

    #[test]
    fn a_device_reporting_nothing_offers_nothing_but_the_baseline() {
        let snap = base();
        let caps = capabilities(&snap, &nic(&snap));
        assert_eq!(
            caps,
            Capabilities {
                cpus: 1,
                ..Capabilities::default()
            }
        );
    }

    #[test]
    fn what_the_driver_reports_becomes_the_space() {
        let mut snap = base();
        let mut c = Coalesce::default();
        c.0.insert("rx-usecs".into(), 50);
        c.0.insert("adaptive-rx".into(), 1);
        snap.nics[0].coalesce = Readable::Value(c);
        snap.nics[0].channels = Readable::Value(Channels {
            combined: Some(4),
            combined_max: Some(8),
            ..Channels::default()
        });
        snap.nics[0].napis = Readable::Value(vec![Napi {
            defer_hard_irqs: Some(0),
            gro_flush_timeout_ns: Some(0),
            ..Napi::default()
        }]);
        for s in ["net.core.busy_read", "net.core.busy_poll"] {
            snap.sysctls.insert(s.into(), Readable::Value("0".into()));
        }
        let caps = capabilities(&snap, &nic(&snap));
        assert_eq!(caps.coalescing, [Knob::RxUsecs]);
        assert!(caps.adaptive_rx && caps.napi && caps.busy_polling);
        assert_eq!(caps.max_combined_channels, Some(8));
        assert!(
            !caps.irq_suspend,
            "the bench client never pledges prefer_busy_poll"
        );
    }
}
