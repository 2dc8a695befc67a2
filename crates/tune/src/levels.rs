//! The values a tune tries for the moderation knobs, per driver, valid for that driver.
//!
//! Ranges, modes and defaults come from the settings catalog (`nictune explain KEY`,
//! crates/core/src/catalog/data/*.toml), so a level is never one the driver rejects: each is
//! the intersection of a list chosen here (with the reason for every value) and what the
//! catalog accepts for the driver. The tests check every level with the catalog's own check,
//! the one `nictune check KEY=VALUE --driver D` runs.
//!
//! Levels, by knob:
//! - `InterruptThrottleRate` (e1000, e1000e): the driver's modes from [`ITR_MODES`] and the
//!   fixed rates of [`ITR_RATES`], log-spaced over the whole range 100–100000 interrupts/s,
//!   four of them at or below the ≈2,000–4,000 interrupts/s the QEMU testbed fires at the
//!   defaults, so the search can find out whether fewer interrupts pay there.
//! - `TxIntDelay`: the driver default and 0 (see [`tx_int_delay_levels`]).
//! - `RxIntDelay`, `RxAbsIntDelay`, `TxAbsIntDelay`: not tried (see [`NOT_TRIED`]).
//! - `coalesce.rx-usecs`: for drivers whose catalog entry has modes (e1000, e1000e, igb, ixgbe)
//!   the modes plus the fixed timers of [`RX_USECS_FIXED`] the driver accepts; for any other
//!   driver (or an unknown one) [`RX_USECS_GENERIC`] within the range the catalog gives it.

use crate::knob::{Driver, Knob, ModuleParam};
use nictune_core::catalog::{self, default_value, select_spec, CatalogValue, Context, Entry, Spec};

/// The e1000-family moderation modes: 0 throttling off, 1 dynamic, 3 dynamic conservative,
/// 4 simplified balancing (torvalds/linux drivers/net/ethernet/intel/e1000/e1000_param.c
/// #e1000_check_options, the `switch (adapter->itr)` cases; e1000e/param.c likewise). A driver
/// gets the ones its catalog spec lists as specials: igb's rx-usecs has 0, 1, 3; ixgbe's 0, 1.
/// 2 is not a mode: e1000e maps it to 3 (catalog `e1000e.InterruptThrottleRate`) and e1000 and
/// ethtool reject it, so it is never tried.
pub const ITR_MODES: [u64; 4] = [0, 1, 3, 4];

/// Fixed InterruptThrottleRate values tried, interrupts/s, lowest first. Every one is a
/// multiple of 4: e1000_check_options keeps `itr & ~3` as the setting (the low two bits are
/// mode flags), so these are exactly the rates the driver runs at.
/// - 100: the range's floor (catalog `e1000.InterruptThrottleRate`, MIN_ITR): 10 ms windows,
///   the most moderation the driver allows.
/// - 300: the half decade between 100 and 1000 (≈3.3 ms).
/// - 1000: the rate that cut softirq CPU from ≈59 % to ≈7.6 % at similar ping latency in
///   seed-cases.md case 3 (catalog `ixgbevf.InterruptThrottleRate` caveat).
/// - 2000: the testbed's own rate at the defaults and the floor of mode 4's 2000–8000 band
///   (catalog `e1000.InterruptThrottleRate`, special 4).
/// - 4000: the dynamic classifier's bulk-latency class (e1000_main.c#e1000_set_itr,
///   `bulk_latency`: 4000 interrupts/s), the top of the testbed's rate.
/// - 8000: the static default of the 7.0 driver (catalog `e1000.InterruptThrottleRate`
///   generation 7.0; seed-cases.md case 1), just above the 7813 interrupts/s QEMU's e1000
///   lets through at most (qemu hw/net/e1000.c#set_interrupt_cause: no window shorter than
///   500 × 256 ns): above it the rates differ on real hardware only.
/// - 20000: the low-latency class, the rate modes 1 and 3 start at (e1000_check_options sets
///   `adapter->itr = 20000` for them).
/// - 100000: the range's ceiling (MAX_ITR): 10 µs windows, the least moderation a fixed rate
///   gives.
pub const ITR_RATES: [u64; 8] = [100, 300, 1_000, 2_000, 4_000, 8_000, 20_000, 100_000];

/// Fixed `coalesce.rx-usecs` timers tried on drivers with modes, µs. On e1000/e1000e the
/// driver turns them into the same register as InterruptThrottleRate (10^6 / µs interrupts/s,
/// catalog `coalesce.rx-usecs` e1000 note); fewer than [`ITR_RATES`] because this axis is
/// multiplied with the NAPI, busy-polling and channel axes of a run-time tune.
/// - 10: the floor of e1000/e1000e/igb (E1000_MIN_ITR_USECS): 100000 interrupts/s.
/// - 50: 20000 interrupts/s, the dynamic classifier's low-latency class.
/// - 125: 8000 interrupts/s, the 7.0 driver's static default.
/// - 500: 2000 interrupts/s, the floor of mode 4's band.
pub const RX_USECS_FIXED: [u64; 4] = [10, 50, 125, 500];

/// `coalesce.rx-usecs` values tried on drivers without modes in the catalog, µs: no delay, then
/// log-spaced past the 50–125 µs defaults of common drivers (moderation-algorithms.md). All
/// inside the kernel's generic range (0–4294967295, catalog `coalesce.rx-usecs` "kernel (any
/// driver)") and i40e/ice's 0–8160; 10 rather than 8 so an e1000-style floor of 10 accepts it.
pub const RX_USECS_GENERIC: [u64; 4] = [0, 10, 50, 200];

/// Module parameters a tune never varies, and why:
/// - `RxIntDelay`: any value but its default 0 may hang adapters (catalog `e1000.RxIntDelay`
///   warning: "set 0 and moderate with InterruptThrottleRate").
/// - `RxAbsIntDelay`: with RxIntDelay at 0 the absolute timer is off (catalog
///   `e1000.RxIntDelay` note, SDM §3.2.7.1), so its levels would all measure the same.
/// - `TxAbsIntDelay`: bounds only the delayed Tx interrupts that `TxIntDelay` 0 turns off;
///   with the default TxIntDelay its 32 ticks sit inside the ITR window. A third axis would
///   double the space (each candidate is a driver reload) for a second-order effect.
pub const NOT_TRIED: [ModuleParam; 3] = [
    ModuleParam::RxIntDelay,
    ModuleParam::RxAbsIntDelay,
    ModuleParam::TxAbsIntDelay,
];

/// InterruptThrottleRate levels for `driver`: its modes, then the fixed rates it accepts.
pub fn itr_levels(driver: Driver) -> Vec<u64> {
    let key = Knob::Module(driver, ModuleParam::InterruptThrottleRate).key();
    let Some(spec) = spec_of(key, Some(driver.name())) else {
        return Vec::new();
    };
    let modes = ITR_MODES.into_iter().filter(|&m| is_special(spec, m));
    let rates = ITR_RATES.into_iter().filter(|&r| in_range(spec, r));
    modes.chain(rates).collect()
}

/// TxIntDelay levels for `driver`: the driver default (8 ticks on e1000 and e1000e, catalog
/// `e1000.TxIntDelay` / `e1000e.TxIntDelay`, DEFAULT_TIDV) and 0. With the default every Tx
/// descriptor asks for a delayed interrupt (IDE), and QEMU's e1000 then opens its mitigation
/// window from the shorter of TADV and ITR (hw/net/e1000.c#set_interrupt_cause with
/// mit_update_delay), floored at 128 µs: on Tx causes ITR rates below ≈7800/s are not
/// honoured. 0 clears IDE (e1000e/netdev.c#e1000_configure_tx), leaving ITR alone in charge.
/// Empty when the catalog has no default for the driver.
pub fn tx_int_delay_levels(driver: Driver) -> Vec<u64> {
    match module_default(driver, ModuleParam::TxIntDelay) {
        Some(0) => vec![0],
        Some(default) => vec![default, 0],
        None => Vec::new(),
    }
}

/// `coalesce.rx-usecs` levels for `driver` (as the kernel names it; `None` when unknown).
pub fn rx_usecs_levels(driver: Option<&str>) -> Vec<u64> {
    let Some(spec) = spec_of(Knob::RxUsecs.key(), driver) else {
        return RX_USECS_GENERIC.to_vec();
    };
    if spec.specials.is_empty() {
        let ok = |&us: &u64| !spec.is_ranged() || in_range(spec, us);
        return RX_USECS_GENERIC.into_iter().filter(ok).collect();
    }
    let modes = ITR_MODES.into_iter().filter(|&m| is_special(spec, m));
    let fixed = RX_USECS_FIXED.into_iter().filter(|&us| in_range(spec, us));
    modes.chain(fixed).collect()
}

/// The value `driver` starts `param` with when modprobe gives none (the catalog's first
/// code claim for the current driver generation).
pub fn module_default(driver: Driver, param: ModuleParam) -> Option<u64> {
    let entry = entry_of(Knob::Module(driver, param).key())?;
    let value = default_value(entry, &context(Some(driver.name()))).ok()??;
    match value {
        CatalogValue::Integer(n) => u64::try_from(n).ok(),
        _ => None,
    }
}

fn entry_of(key: &str) -> Option<&'static Entry> {
    catalog::catalog().get(key)
}

/// The catalog spec of `key` for `driver` (its current generation), or the generic one.
fn spec_of(key: &str, driver: Option<&str>) -> Option<&'static Spec> {
    let entry = entry_of(key)?;
    select_spec(entry, &context(driver)).ok().flatten()
}

fn context(driver: Option<&str>) -> Context {
    Context {
        driver: driver.map(str::to_string),
        ..Context::default()
    }
}

fn is_special(spec: &Spec, value: u64) -> bool {
    i64::try_from(value).is_ok_and(|v| spec.specials.iter().any(|s| s.value == v))
}

fn in_range(spec: &Spec, value: u64) -> bool {
    i64::try_from(value).is_ok_and(|v| spec.in_range(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e1000_family_itr_has_four_modes_and_eight_rates() {
        for driver in Driver::ALL {
            let levels = itr_levels(driver);
            assert_eq!(levels[..4], ITR_MODES, "{driver}");
            assert_eq!(levels[4..], ITR_RATES, "{driver}");
        }
    }

    #[test]
    fn fixed_rates_keep_their_low_two_bits_clear() {
        assert!(ITR_RATES.iter().all(|r| r & 3 == 0));
    }

    #[test]
    fn tx_int_delay_is_the_default_and_zero() {
        for driver in Driver::ALL {
            assert_eq!(tx_int_delay_levels(driver), [8, 0], "{driver}");
        }
    }

    #[test]
    fn rx_usecs_follows_the_driver() {
        assert_eq!(
            rx_usecs_levels(Some("e1000")),
            [0, 1, 3, 4, 10, 50, 125, 500]
        );
        assert_eq!(rx_usecs_levels(Some("igb")), [0, 1, 3, 10, 50, 125, 500]);
        assert_eq!(rx_usecs_levels(Some("ixgbe")), [0, 1, 10, 50, 125, 500]);
        assert_eq!(rx_usecs_levels(Some("virtio_net")), RX_USECS_GENERIC);
        assert_eq!(rx_usecs_levels(None), RX_USECS_GENERIC);
        assert_eq!(rx_usecs_levels(Some("no-such-driver")), RX_USECS_GENERIC);
    }
}
