//! The Simulator II moderation families as engine drivers: a two-host scenario with
//! `driver = "ixgbevf" | "ixgbe" | "ixgbe-oot" | "igb" | "dim"` runs that family's algorithm
//! on the engine's NIC through [`EnginePolicy`].
//!
//! The per-host `itr` key keeps its `InterruptThrottleRate` meaning:
//! - `ixgbevf`, `ixgbe-oot` (Intel's out-of-tree ixgbe): 0 off, 1 dynamic, 3 dynamic
//!   conservative, or a rate of 956–488281 interrupts/s (the code's range,
//!   moderation-algorithms.md §4.1).
//! - `ixgbe` (in-tree, ≥ 4.16): 1 the current adaptive algorithm (§4.2; 1 GbE size class, the
//!   engine's link; HZ 1000 for its jiffy window [assumed]); 0 off or a fixed rate as above.
//! - `igb`: 0 off, 1 dynamic, 3 conservative (the default), or 100–100000 interrupts/s
//!   (ethtool rx-usecs 10–10000); one queue vector and no VFs, so the classifier (§3).
//! - `dim`: 0 adaptive moderation off; anything else Linux DIM on the rx EQE profile table, the
//!   net_dim default (§5).
//!
//! The transmit side: these NICs have no TIDV/TADV pair; a transmit completion interrupts
//! through the same throttle, so the policy's base registers leave the transmit timers at 0.

use super::error::ScenarioError;
use crate::cases::ixgbevf;
use crate::driver::policy::ModerationPolicy as EngineSeam;
use crate::moderation::dim::{Dim, Direction};
use crate::moderation::engine::EnginePolicy;
use crate::moderation::igb::{IgbAlgorithm, IgbItr, IgbSetting};
use crate::moderation::ixgbe::{IxgbeItr, SpeedClass};
use crate::moderation::ixgbe_legacy::{LegacyItr, LegacySetting, LegacyVariant};
use crate::moderation::{Coalescing, Fixed, ModerationPolicy, TimerStart};
use crate::nic::Coalescing as Registers;

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

/// The engine policy of family `driver` at `itr`; `None` if `driver` is not a family.
pub fn policy(
    driver: &str,
    itr: i64,
    key: &str,
) -> Option<Result<Box<dyn EngineSeam>, ScenarioError>> {
    let bad = |allowed: &str| ScenarioError::BadValue {
        key: key.to_string(),
        value: itr.to_string(),
        problem: "not accepted by this driver",
        allowed: format!("{allowed} (driver {driver})"),
    };
    let inner: Result<Box<dyn ModerationPolicy + Send>, ScenarioError> = match driver {
        "ixgbevf" => legacy(LegacyVariant::Vf, itr).map_err(|_| bad(LEGACY_ALLOWED)),
        "ixgbe-oot" => legacy(LegacyVariant::OutOfTree, itr).map_err(|_| bad(LEGACY_ALLOWED)),
        "ixgbe" if itr == 1 => Ok(Box::new(IxgbeItr::new(SpeedClass::OneGig, HZ, true, true))),
        "ixgbe" if itr == 3 => Err(bad(IXGBE_ALLOWED)),
        "ixgbe" => legacy(LegacyVariant::OutOfTree, itr).map_err(|_| bad(IXGBE_ALLOWED)),
        "igb" => igb(itr).ok_or_else(|| bad(IGB_ALLOWED)),
        "dim" if itr == 0 => Ok(Box::new(Fixed(Coalescing::Off))),
        "dim" => Ok(Box::new(Dim::new(Direction::Rx, TimerStart::AtFirstEvent))),
        _ => return None,
    };
    Some(inner.map(|p| Box::new(EnginePolicy::new(p, Registers::default())) as Box<dyn EngineSeam>))
}

const LEGACY_ALLOWED: &str = "0, 1, 3 or 956–488281 interrupts/s";
const IXGBE_ALLOWED: &str = "0, 1 or 956–488281 interrupts/s";
const IGB_ALLOWED: &str = "0, 1, 3 or 100–100000 interrupts/s";

fn legacy(variant: LegacyVariant, itr: i64) -> Result<Box<dyn ModerationPolicy + Send>, String> {
    let setting: LegacySetting = ixgbevf::setting(itr)?;
    Ok(Box::new(LegacyItr::new(variant, setting)))
}

fn igb(itr: i64) -> Option<Box<dyn ModerationPolicy + Send>> {
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
        true,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_builds_at_its_default_and_rejects_what_its_code_rejects() {
        for d in FAMILIES {
            let itr = default_itr(d).expect("a family");
            assert!(policy(d, itr, "server.itr").expect("known").is_ok(), "{d}");
        }
        assert!(policy("e1000-7.0", 8000, "server.itr").is_none());
        for (d, itr) in [("ixgbevf", 500), ("ixgbe", 3), ("igb", 50), ("igb", 2)] {
            let e = policy(d, itr, "server.itr").expect("known").unwrap_err();
            assert!(e.to_string().contains(d), "{e}");
        }
        assert!(policy("igb", 8000, "k").expect("known").is_ok());
        assert!(policy("ixgbe-oot", 488_281, "k").expect("known").is_ok());
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
}
