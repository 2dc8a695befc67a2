//! `e1000e-dynamic-itr`: an e1000e port in MSI-X mode with a fixed `rx-usecs` set by ethtool
//! while the module runs a dynamic InterruptThrottleRate (1 or 3; 3 is the default).
//!
//! What the driver does (Linux 6.1, `drivers/net/ethernet/intel/e1000e/`):
//! - `ethtool.c` `e1000_set_coalesce`: rx-usecs N ≥ 10 sets `adapter->itr = 10^6/N` and
//!   `itr_setting` to it (low two bits cleared, so the dynamic classifier stops), then
//!   `netdev.c` `e1000e_write_itr` writes that rate once into every MSI-X vector's EITR. It
//!   does not touch `rx_ring->itr_val` (nor `tx_ring->itr_val`) or `rx_ring->set_itr`.
//! - `rx_ring->itr_val` is what the driver itself writes back into the RX vector's EITR:
//!   `e1000_intr_msix_rx` writes it when `set_itr` is pending, and `e1000_configure_msix`
//!   (every `e1000e_up`: a reset, a ring or MTU change) writes the rx and tx `itr_val` into
//!   the rx, tx and other-causes vectors. Only `e1000_set_itr` — the dynamic classifier, run
//!   from `e1000e_poll` while `itr_setting & 3` — updates `rx_ring->itr_val` and sets
//!   `set_itr`; `e1000_request_msix` sets both `itr_val`s to `adapter->itr` at open.
//! - So from a dynamic module setting, `itr_val` holds the classifier's last rate (70000,
//!   20000 or 4000/s, or a step between): a change still pending when ethtool runs is written
//!   into the RX vector by its next interrupt — after which nothing updates it, the RX vector
//!   keeps the stale dynamic rate and only TX is throttled — and any later reset puts the
//!   stale rates back on both vectors. Read-back (`ethtool -c`, from `itr_setting`) shows N
//!   throughout. Loaded with a fixed rate, `itr_val` is that rate and `set_itr` never set.
//!
//! Without rates the rule warns from the configuration; with `--interval` it is definite
//! when the RX vector fires faster than the limit (+30 %) while the TX vector keeps to it
//! (the pending change), or when both fire far above it (a reset since).

use crate::doctor::{Finding, Severity};
use crate::rates::Rates;
use crate::snapshot::{HostSnapshot, Nic, QueueKind};
use nictune_core::catalog::{self, CatalogValue, Context};

/// The driver's smallest fixed rx-usecs (`E1000_MIN_ITR_USECS`); 0–4 select modes.
const MIN_FIXED_USECS: u64 = 10;
/// How far above the limit a vector may fire before it counts as not throttled (the
/// emulated 82574L in the testbed overshoots by ~1.6× on both vectors alike — QEMU 7.2 never
/// clears a vector's `eitr_intr_pending` once set, so every EITR expiry notifies as well —
/// hence also the comparison with the TX vector).
const SLACK: f64 = 1.3;
/// How far above the limit both vectors must fire before that alone shows the stale rates
/// (the reset path puts them back on both): beyond the most an honoured EITR lets through
/// anywhere nictune has measured one — none over it on hardware, up to about twice it on the
/// testbed's emulated 82574L (README, "The real-driver testbed").
const FAR_OVER: f64 = 2.5;
const PARAM: &str = "InterruptThrottleRate";

pub fn dynamic_itr(snap: &HostSnapshot, rates: Option<&Rates>) -> Vec<Finding> {
    snap.nics
        .iter()
        .filter(|n| n.driver.value().map(String::as_str) == Some("e1000e"))
        .filter_map(|nic| finding(snap, nic, rates))
        .collect()
}

/// The RX and TX vectors of queue 0, when they are two different IRQs (MSI-X).
fn vectors(nic: &Nic) -> Option<(u32, u32)> {
    let irq = |kind| {
        nic.queues
            .iter()
            .find(|q| q.kind == kind && q.index == 0)?
            .irq
    };
    let (rx, tx) = (irq(QueueKind::Rx)?, irq(QueueKind::Tx)?);
    (rx != tx).then_some((rx, tx))
}

/// The module's InterruptThrottleRate for this port, what it means, and where it came from;
/// `None` when it is a fixed rate, off or the simplified mode (no trap).
fn dynamic_setting(snap: &HostSnapshot, nic: &Nic) -> Option<(String, String)> {
    let module = snap.modules.get("e1000e");
    let known = module.and_then(|m| m.port_value(PARAM, nic.device.as_deref().unwrap_or("")));
    let (value, from) = match known {
        Some((v, from)) => (v, from.to_string()),
        None => (default_itr(), default_source(module.is_some())),
    };
    let meaning = match value.parse::<i64>() {
        Ok(1) => "dynamic",
        Ok(3) => "dynamic conservative",
        Ok(2) => "invalid: the driver uses 3, dynamic conservative",
        Ok(0 | 4) | Ok(100..=100_000) => return None,
        Ok(_) => "out of range: the driver uses 3, dynamic conservative",
        Err(_) => "unreadable: the driver's default, 3, assumed",
    };
    Some((value.clone(), format!("{value} ({meaning}; {from})")))
}

/// The catalog's code default for one port (3).
fn default_itr() -> String {
    let context = Context {
        driver: Some("e1000e".into()),
        device: None,
        generation: None,
    };
    let entry = catalog::catalog().lookup(&format!("e1000e.{PARAM}"), Some("e1000e"));
    match entry
        .ok()
        .and_then(|e| catalog::default_value(e, &context).ok().flatten())
    {
        Some(CatalogValue::Integer(v)) => v.to_string(),
        _ => "3".into(),
    }
}

fn default_source(module_read: bool) -> String {
    if module_read {
        "the driver's default: no nictune reload record, modprobe.d option or kernel \
         command-line value for this port (a hand-run `modprobe e1000e …` leaves none)"
            .into()
    } else {
        "the driver's default assumed: the module's parameters were not readable".into()
    }
}

fn finding(snap: &HostSnapshot, nic: &Nic, rates: Option<&Rates>) -> Option<Finding> {
    let (rx, tx) = vectors(nic)?;
    let usecs = nic.coalesce.value()?.get("rx-usecs")?;
    if usecs < MIN_FIXED_USECS {
        return None;
    }
    let (_, itr_text) = dynamic_setting(snap, nic)?;
    let limit = 1e6 / usecs as f64;
    let name = |irq: u32| {
        snap.irq(irq)
            .map(|i| i.actions.join(","))
            .unwrap_or_default()
    };
    let mut f = Finding::new("e1000e-dynamic-itr", Severity::Warning, &nic.name)
        .evidence("rx-usecs (read back)", usecs)
        .evidence(
            "interrupt limit it sets",
            format!("{limit:.0}/s per vector"),
        )
        .evidence(format!("module {PARAM}"), itr_text)
        .evidence(
            "MSI-X vectors",
            format!("rx irq {rx} ({}), tx irq {tx} ({})", name(rx), name(tx)),
        );
    let why = "e1000e's `ethtool -C rx-usecs` (e1000_set_coalesce) writes the new rate into every \
               MSI-X vector once but leaves rx_ring->itr_val, the value the driver itself writes \
               back into the RX vector, at the dynamic classifier's last rate. A classifier change \
               still pending then (rx_ring->set_itr) is written into the RX vector by its next \
               interrupt (e1000_intr_msix_rx) and stays, and every reset (e1000_configure_msix) \
               puts the stale rates back on the vectors — while rx-usecs still reads back the new \
               value. Loaded with a fixed InterruptThrottleRate the driver has no stale rate and \
               rx-usecs applies to both vectors.";
    let measured = rates.and_then(|r| {
        let per_sec = |irq| r.irqs.iter().find(|i| i.irq == irq).map(|i| i.per_sec);
        Some((per_sec(rx)?, per_sec(tx)?))
    });
    f = match measured {
        Some((rx_rate, tx_rate)) => {
            let f = f
                .evidence("rx vector interrupts/s", format!("{rx_rate:.0}"))
                .evidence("tx vector interrupts/s", format!("{tx_rate:.0}"));
            if rx_rate > limit * SLACK && tx_rate <= limit * SLACK {
                let mut f = f.explain(format!(
                    "rx-usecs {usecs} is not in effect on the RX vector: over the interval it fired \
                     {rx_rate:.0} times/s, above the {limit:.0}/s rx-usecs allows, while the TX \
                     vector kept to it ({tx_rate:.0}/s). {why}"
                ));
                f.severity = Severity::Error;
                f
            } else if rx_rate > limit * FAR_OVER && tx_rate > limit * FAR_OVER {
                let mut f = f.explain(format!(
                    "rx-usecs {usecs} is in effect on neither vector: over the interval the RX \
                     vector fired {rx_rate:.0} times/s and the TX vector {tx_rate:.0}, both far \
                     above the {limit:.0}/s rx-usecs allows — the rates a reset (a ring, MTU or \
                     channel change since rx-usecs was set) writes back. {why}"
                ));
                f.severity = Severity::Error;
                f
            } else {
                f.explain(format!(
                    "No stale rate shows on the RX vector over the interval (it did not fire \
                     above the limit while the TX vector kept to it), but the setting stays \
                     fragile. {why}"
                ))
            }
        }
        None => f.explain(why),
    };
    Some(fixes(f, snap, nic, usecs))
}

/// Load the module with the fixed rate rx-usecs means, so that rx-usecs and the driver's own
/// rate agree on both vectors; the other ports keep their values.
fn fixes(f: Finding, snap: &HostSnapshot, nic: &Nic, usecs: u64) -> Finding {
    let rate = 1_000_000 / usecs;
    let ports: Vec<String> = match snap.modules.get("e1000e") {
        Some(m) if m.devices.len() > 1 => m
            .devices
            .iter()
            .map(|d| match Some(d) == nic.device.as_ref() {
                true => rate.to_string(),
                false => m.port_value(PARAM, d).map_or_else(default_itr, |(v, _)| v),
            })
            .collect(),
        _ => vec![rate.to_string()],
    };
    let value = ports.join(",");
    f.fix(format!("nictune apply e1000e.{PARAM}={value}"))
        .fix(format!(
            "# or for every boot: echo 'options e1000e {PARAM}={value}' > /etc/modprobe.d/e1000e.conf, then reload e1000e"
        ))
        .fix(format!(
            "# then rx-usecs {usecs} applies to both vectors (the reload resets it from the module value)"
        ))
}
