//! The Simulator II moderation families as engine drivers: a two-host scenario with
//! `driver = "ixgbevf" | "ixgbe" | "ixgbe-oot" | "igb" | "dim"` runs that family's algorithm
//! on the engine's NIC directly: there is one moderation trait.
//!
//! The per-host `itr` key keeps its `InterruptThrottleRate` meaning:
//! - `ixgbevf`, `ixgbe-oot` (Intel's out-of-tree ixgbe): 0 off, 1 dynamic, 3 dynamic
//!   conservative, or a rate of 956–488281 interrupts/s (the code's range,
//!   moderation-algorithms.md §4.1).
//! - `ixgbe` (in-tree, ≥ 4.16): 1 the current adaptive algorithm (§4.2; the size class of the
//!   link's speed, [`ixgbe_speed_class`]; HZ 1000 for its jiffy window \[assumed\]); 0 off or
//!   a fixed rate as above.
//! - `igb`: 0 off, 1 dynamic, 3 conservative (the default), or 100–100000 interrupts/s
//!   (ethtool rx-usecs 10–10000); one queue vector and no VFs, so the classifier (§3). On a
//!   link other than 1000 Mb/s the adaptive modes write the fixed 4000/s (`igb_set_itr`,
//!   `igb_update_ring_itr`: `link_speed != SPEED_1000`).
//! - `dim`: 0 adaptive moderation off; 1 Linux DIM on the rx EQE profile table, the net_dim
//!   default (§5); any other value is refused (DIM picks its own interval).
//!
//! The transmit side: these NICs have no TIDV/TADV pair; a transmit completion interrupts
//! through the same throttle, so the policy's base registers leave the transmit timers at 0.
//! The 8254x delay keys (`rx_int_delay`, `rx_abs_int_delay`, `tx_int_delay`,
//! `tx_abs_int_delay`) are not read under a family driver (their help says so).

use super::error::ScenarioError;
use crate::cases::ixgbevf;
use crate::moderation::dim::{Dim, Direction};
use crate::moderation::igb::{IgbAlgorithm, IgbItr, IgbSetting};
use crate::moderation::ixgbe::{IxgbeItr, SpeedClass};
use crate::moderation::ixgbe_legacy::{LegacyItr, LegacySetting, LegacyVariant};
use crate::moderation::{Coalescing, Fixed, ModerationPolicy, TimerStart};

/// The family drivers, in the order `--explain` lists them.
pub const FAMILIES: &[&str] = &["ixgbevf", "ixgbe", "ixgbe-oot", "igb", "dim"];

/// Kernel tick rate for the in-tree ixgbe's update window (CONFIG_HZ=1000, assumed).
const HZ: u32 = 1000;

/// The driver's default `itr`: dynamic for the ixgbe family and DIM, 3 for igb (its
/// `InterruptThrottleRate` default).
pub fn default_itr(driver: &str) -> Option<i64> {
    match driver {
        "igb" => Some(3),
        d if FAMILIES.contains(&d) => Some(1),
        _ => None,
    }
}

/// Whether the link runs at `mbps` (within a rounding of the float key).
fn speed_is(gbps: f64, mbps: f64) -> bool {
    (gbps * 1000.0 - mbps).abs() < 1e-6
}

/// The in-tree ixgbe's size class for a link of `gbps` (`ixgbe_update_itr`, Linux ≥ 4.16):
/// 2.5G, 1G and 10M use the 1 GbE scaling; 10G, 100M and every other speed the default one.
pub fn ixgbe_speed_class(gbps: f64) -> SpeedClass {
    if [2500.0, 1000.0, 10.0].iter().any(|&m| speed_is(gbps, m)) {
        SpeedClass::OneGig
    } else {
        SpeedClass::TenGig
    }
}

/// The engine policy of family `driver` at `itr` on a link of `link_gbps`; `None` if
/// `driver` is not a family.
pub fn policy(
    driver: &str,
    itr: i64,
    key: &str,
    link_gbps: f64,
) -> Option<Result<Box<dyn ModerationPolicy>, ScenarioError>> {
    let bad = |allowed: &str| ScenarioError::BadValue {
        key: key.to_string(),
        value: itr.to_string(),
        problem: "not accepted by this driver",
        allowed: format!("{allowed} (driver {driver})"),
    };
    let policy: Result<Box<dyn ModerationPolicy>, ScenarioError> = match driver {
        "ixgbevf" => legacy(LegacyVariant::Vf, itr).map_err(|_| bad(LEGACY_ALLOWED)),
        "ixgbe-oot" => legacy(LegacyVariant::OutOfTree, itr).map_err(|_| bad(LEGACY_ALLOWED)),
        "ixgbe" if itr == 1 => Ok(Box::new(IxgbeItr::new(
            ixgbe_speed_class(link_gbps),
            HZ,
            true,
            true,
        ))),
        "ixgbe" if itr == 3 => Err(bad(IXGBE_ALLOWED)),
        "ixgbe" => legacy(LegacyVariant::OutOfTree, itr).map_err(|_| bad(IXGBE_ALLOWED)),
        "igb" => igb(itr, speed_is(link_gbps, 1000.0)).ok_or_else(|| bad(IGB_ALLOWED)),
        "dim" if itr == 0 => Ok(Box::new(Fixed(Coalescing::OFF))),
        "dim" if itr == 1 => Ok(Box::new(Dim::new(Direction::Rx, TimerStart::AtFirstEvent))),
        "dim" => Err(bad(DIM_ALLOWED)),
        _ => return None,
    };
    Some(policy)
}

const LEGACY_ALLOWED: &str = "0, 1, 3 or 956–488281 interrupts/s";
const IXGBE_ALLOWED: &str = "0, 1 or 956–488281 interrupts/s";
const IGB_ALLOWED: &str = "0, 1, 3 or 100–100000 interrupts/s";
/// DIM chooses its own intervals: the key only turns it on or off.
const DIM_ALLOWED: &str = "0 (adaptive moderation off) or 1 (DIM picks the interval)";

fn legacy(variant: LegacyVariant, itr: i64) -> Result<Box<dyn ModerationPolicy>, String> {
    let setting: LegacySetting = ixgbevf::setting(itr)?;
    Ok(Box::new(LegacyItr::new(variant, setting)))
}

fn igb(itr: i64, gigabit: bool) -> Option<Box<dyn ModerationPolicy>> {
    let setting = match itr {
        0 => IgbSetting::Off,
        1 => IgbSetting::Dynamic,
        3 => IgbSetting::Conservative,
        // ethtool rx-usecs = 1e6 / rate, stored as usecs << 2 (0.25 µs units).
        r @ 100..=100_000 => IgbSetting::Fixed(((1_000_000 / r) << 2) as u32),
        _ => return None,
    };
    Some(Box::new(IgbItr::new(
        setting,
        IgbAlgorithm::Classifier,
        gigabit,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::Sim;
    use crate::moderation::Coalescing;
    use crate::scenario::{build, builtin};
    use nictune_core::units::Nanos;

    /// The engine's 10 GbE stream with the server's policy replaced; interrupts and frames.
    fn engine_run(policy: Box<dyn ModerationPolicy>) -> (u64, u64) {
        let mut s = builtin::get("linerate-10g-64b").unwrap();
        s.set("workload.frame_bytes", "1514").unwrap();
        s.set("duration", "0.2").unwrap();
        let mut spec = build::spec(&s.resolved()).unwrap();
        let server = spec.hosts.iter_mut().find(|h| h.name == "server").unwrap();
        server.policy = policy;
        let out = Sim::new(spec).run();
        let h = out.hosts.iter().find(|h| h.name == "server").unwrap();
        (h.counters.interrupts, h.stats.rx_processed)
    }

    #[test]
    fn dim_runs_in_the_engine_and_lowers_interrupts_at_equal_throughput() {
        let fixed = Fixed(Coalescing::timer(
            Nanos::from_micros(8),
            256,
            TimerStart::AtFirstEvent,
        ));
        let (fixed_irqs, fixed_rx) = engine_run(Box::new(fixed));
        let dim = Dim::new(Direction::Rx, TimerStart::AtFirstEvent);
        let (dim_irqs, dim_rx) = engine_run(Box::new(dim));
        assert!(dim_irqs * 2 < fixed_irqs, "{dim_irqs} vs {fixed_irqs}");
        assert!(
            (dim_rx as f64 - fixed_rx as f64).abs() / (fixed_rx as f64) < 0.01,
            "{dim_rx} vs {fixed_rx}"
        );
    }

    #[test]
    fn every_family_builds_at_its_default_and_rejects_what_its_code_rejects() {
        for d in FAMILIES {
            let itr = default_itr(d).expect("a family");
            assert!(
                policy(d, itr, "server.itr", 1.0).expect("known").is_ok(),
                "{d}"
            );
        }
        assert!(policy("e1000-7.0", 8000, "server.itr", 1.0).is_none());
        for (d, itr) in [
            ("ixgbevf", 500),
            ("ixgbe", 3),
            ("igb", 50),
            ("igb", 2),
            ("dim", 8000),
        ] {
            let e = policy(d, itr, "server.itr", 1.0)
                .expect("known")
                .unwrap_err();
            assert!(e.to_string().contains(d), "{e}");
        }
        assert!(policy("igb", 8000, "k", 1.0).expect("known").is_ok());
        assert!(policy("ixgbe-oot", 488_281, "k", 1.0)
            .expect("known")
            .is_ok());
    }

    fn rr(driver: &str) -> crate::scenario::RunResult {
        let mut s = crate::scenario::builtin::get("seed-e1000-rr").unwrap();
        s.set("driver", driver).unwrap();
        s.set("duration", "1").unwrap();
        s.run().unwrap()
    }

    #[test]
    fn two_host_rr_runs_each_family_by_its_own_rules() {
        // igb's default 3 caps each host at 20 K interrupts/s; ixgbevf's dynamic mode lets a
        // sparse request/response stream run at the 100 K lowest-latency class.
        let igb = rr("igb");
        let vf = rr("ixgbevf");
        for (name, h) in &igb.metrics.hosts {
            let ips = h.interrupts_per_sec.unwrap();
            assert!(ips <= 20_000.0 * 1.03, "{name}: {ips}");
        }
        let tps = |r: &crate::scenario::RunResult| r.metrics.transactions_per_sec.unwrap();
        assert!(tps(&vf) > 1.5 * tps(&igb), "{} vs {}", tps(&vf), tps(&igb));
        for d in ["ixgbe", "ixgbe-oot", "dim"] {
            assert!(tps(&rr(d)) > 0.0, "{d}");
        }
    }

    /// igb writes 4000/s on any link but 1000 Mb/s; the in-tree ixgbe scales its size
    /// formula by the link's speed class.
    #[test]
    fn the_adaptive_families_follow_the_link_speed() {
        let mut s = crate::scenario::builtin::get("seed-e1000-rr").unwrap();
        s.set("driver", "igb").unwrap();
        s.set("duration", "1").unwrap();
        s.set("link.gbps", "0.1").unwrap();
        for (name, h) in &s.run().unwrap().metrics.hosts {
            let ips = h.interrupts_per_sec.unwrap();
            assert!(ips <= 4_000.0 * 1.03, "{name}: {ips}");
        }
        assert_eq!(ixgbe_speed_class(10.0), SpeedClass::TenGig);
        assert_eq!(ixgbe_speed_class(0.1), SpeedClass::TenGig);
        assert_eq!(ixgbe_speed_class(1.0), SpeedClass::OneGig);
        assert_eq!(ixgbe_speed_class(2.5), SpeedClass::OneGig);
        assert_eq!(ixgbe_speed_class(0.01), SpeedClass::OneGig);
        assert_eq!(ixgbe_speed_class(25.0), SpeedClass::TenGig);
    }
}
