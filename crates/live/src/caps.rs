//! What a real interface lets a tune change, read from the host snapshot: the candidates
//! come from what the driver and kernel report, never from a list of what drivers usually
//! have.
//!
//! - coalescing: `rx-usecs` when the ethtool netlink reply carries it, at the values the
//!   catalog accepts for the driver (`e1000`: its modes 0/1/3/4 and 10–500 µs, never the 8 µs
//!   it rejects; see [`nictune_tune::levels`]), `adaptive-rx` when the reply carries it;
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
//!
//! Driver module parameters (e1000/e1000e InterruptThrottleRate × TxIntDelay) are tried only
//! when the caller asks for them ([`capabilities_for`] with `reload_driver`, or
//! [`reload_capabilities`]): each candidate reloads the
//! driver, which drops the link of every port it drives, so it is never the default.

use nictune_core::error::Hinted;
use nictune_host::snapshot::{HostSnapshot, Nic};
use nictune_tune::knob::{Driver, Knob};
use nictune_tune::space::Capabilities;

/// What a tune of `nic` may change: the run-time knobs it reports ([`capabilities`]) or, when
/// the caller opts in with `reload_driver`, its driver's module parameters
/// ([`reload_capabilities`]; an error for a driver without any a tune knows).
pub fn capabilities_for(
    snap: &HostSnapshot,
    nic: &Nic,
    reload_driver: bool,
) -> Result<Capabilities, Hinted> {
    if reload_driver {
        reload_capabilities(nic)
    } else {
        Ok(capabilities(snap, nic))
    }
}

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
            // A driver's maximum is a u32; no device has more than MAX_QUEUES channels.
            .map(|m| u64::from(m).min(nictune_core::input::MAX_QUEUES)),
        cpus: 1,
        driver: nic.driver.value().cloned(),
        module_params: None,
    }
}

/// The capabilities of `nic` for a tune that may reload its driver: the driver's module
/// parameters only (InterruptThrottleRate × TxIntDelay, one unpinned placement). The run-time
/// knobs are left out, since every candidate costs a reload; tune them in a separate run.
/// An error when the driver is unknown or has no module parameters a tune knows.
pub fn reload_capabilities(nic: &Nic) -> Result<Capabilities, Hinted> {
    let driver = nic.driver.value().map(String::as_str);
    match driver.and_then(Driver::from_name) {
        Some(d) => Ok(Capabilities::reloading(d)),
        None => Err(no_module_params(&nic.name, driver)),
    }
}

fn no_module_params(iface: &str, driver: Option<&str>) -> Hinted {
    let known: Vec<&str> = Driver::ALL.iter().map(|d| d.name()).collect();
    let driver = driver.map_or("an unknown driver".to_string(), |d| format!("driver {d}"));
    Hinted::new(
        format!(
            "{iface} ({driver}): no module parameters to tune; nictune tunes those of {}",
            known.join(" and ")
        ),
        "tune without reloading the driver: the run-time knobs (ethtool, NAPI, busy polling)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_host::read::FakeHost;
    use nictune_host::snapshot::{build, Channels, Coalesce, Napi, Readable};
    use nictune_tune::space::Space;

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
            snap.sysctls.insert(s.into(), Readable::Value(0));
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

    /// v0 driven by `driver`, reporting `rx-usecs` as e1000 does (the mode, 3, by default).
    fn driven_by(driver: &str) -> Nic {
        let snap = base();
        let mut nic = nic(&snap);
        nic.driver = Readable::Value(driver.into());
        let mut c = Coalesce::default();
        c.0.insert("rx-usecs".into(), 3);
        nic.coalesce = Readable::Value(c);
        nic
    }

    #[test]
    fn an_e1000_interface_tries_only_rx_usecs_values_e1000_accepts() {
        use nictune_core::catalog::{catalog, check, Context};
        let snap = base();
        let caps = capabilities(&snap, &driven_by("e1000"));
        assert_eq!(caps.driver.as_deref(), Some("e1000"));
        assert_eq!(caps.module_params, None, "no reload unless asked for");
        let entry = catalog()
            .lookup("coalesce.rx-usecs", Some("e1000"))
            .unwrap();
        let context = Context {
            driver: Some("e1000".into()),
            ..Context::default()
        };
        let candidates = Space::from_capabilities(&caps).candidates();
        assert_eq!(candidates.len(), 8, "modes 0/1/3/4 and four fixed timers");
        for c in candidates {
            let s = c.settings[0];
            let value = entry.parse_value(&s.knob.render(s.value)).unwrap();
            let report = check(entry, &value, &context).unwrap();
            assert!(report.errors.is_empty(), "{}: {:?}", c.id(), report.errors);
        }
    }

    #[test]
    fn reloading_is_only_for_drivers_with_module_params() {
        let snap = base();
        let e1000e = driven_by("e1000e");
        let caps = capabilities_for(&snap, &e1000e, true).unwrap();
        assert_eq!(caps, Capabilities::reloading(Driver::E1000e));
        assert_eq!(Space::from_capabilities(&caps).size(), 24);
        let err = reload_capabilities(&driven_by("igb")).unwrap_err();
        assert!(err.to_string().contains("v0 (driver igb)"), "{err}");
        let err = reload_capabilities(&nic(&snap)).unwrap_err();
        assert!(err.to_string().contains("an unknown driver"), "{err}");
    }
}
