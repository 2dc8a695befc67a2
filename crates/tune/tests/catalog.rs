//! Every setting a tune can try is a catalog key with a value the catalog accepts, so the
//! profile it writes is one `nictune apply --profile` and `nictune export` can read. Values
//! are checked the way `nictune check KEY=VALUE --driver D` checks them: looked up with the
//! driver, parsed, then [`check_many`] in that driver's context.

use nictune_core::catalog::{
    self as cat, catalog, check_many, lookup, CheckReport, Context, Entry,
};
use nictune_core::units::Nanos;
use nictune_tune::knob::{Driver, Knob, KnobValue, ModuleParam, Setting};
use nictune_tune::levels::{itr_levels, rx_usecs_levels, tx_int_delay_levels, NOT_TRIED};
use nictune_tune::space::{Capabilities, Space};

/// A target that supports every kind of run-time knob a space can hold.
fn everything() -> Capabilities {
    Capabilities {
        coalescing: vec![Knob::RxUsecs],
        adaptive_rx: true,
        napi: true,
        irq_suspend: true,
        busy_polling: true,
        max_combined_channels: Some(8),
        cpus: 4,
        ..Capabilities::default()
    }
}

/// Every driver the catalog specifies `coalesce.rx-usecs` for, then one it does not know.
fn rx_usecs_drivers() -> Vec<String> {
    let entry = lookup(Knob::RxUsecs.key()).unwrap();
    let known = entry.specs.iter().filter_map(|s| s.driver.clone());
    known.chain(["veth".to_string()]).collect()
}

/// `nictune check` on `settings` as one set, with `--driver driver`.
fn check(settings: &[Setting], driver: Option<&str>) -> Vec<CheckReport> {
    let context = Context {
        driver: driver.map(str::to_string),
        ..Context::default()
    };
    let parsed: Vec<(&Entry, cat::CatalogValue)> = settings
        .iter()
        .map(|s| {
            let entry = catalog()
                .lookup(s.knob.key(), driver)
                .unwrap_or_else(|e| panic!("{}: {e}", s.knob.key()));
            assert_eq!(entry.key, s.knob.key(), "canonical, not an alias");
            let text = s.knob.render(s.value);
            let value = entry
                .parse_value(&text)
                .unwrap_or_else(|e| panic!("{}={text}: {e}", s.knob.key()));
            (entry, value)
        })
        .collect();
    check_many(&parsed, &context).expect("a context")
}

fn assert_clean(settings: &[Setting], driver: Option<&str>) {
    for r in check(settings, driver) {
        assert!(
            r.is_clean(),
            "{}={} --driver {driver:?}: {:?} {:?}",
            r.key,
            r.value,
            r.errors,
            r.warnings
        );
    }
}

#[test]
fn every_candidate_passes_the_catalog_check() {
    for caps in [Capabilities::veth_testbed(2), everything()] {
        for candidate in Space::from_capabilities(&caps).candidates() {
            for r in check(&candidate.settings, None) {
                assert!(
                    r.errors.is_empty(),
                    "{}: {:?} ({})",
                    r.key,
                    r.errors,
                    candidate.id()
                );
            }
        }
    }
}

#[test]
fn every_real_driver_testbed_candidate_is_clean_for_its_driver() {
    for driver in Driver::ALL {
        let space = Space::from_capabilities(&Capabilities::real_driver_testbed(driver));
        for candidate in space.candidates() {
            assert_clean(&candidate.settings, Some(driver.name()));
        }
    }
}

#[test]
fn every_module_param_level_is_clean_for_its_driver() {
    for driver in Driver::ALL {
        let axes = [
            (ModuleParam::InterruptThrottleRate, itr_levels(driver)),
            (ModuleParam::TxIntDelay, tx_int_delay_levels(driver)),
        ];
        for (param, levels) in axes {
            assert!(!levels.is_empty(), "{driver} {param:?}");
            for n in levels {
                let setting = Setting::new(Knob::Module(driver, param), KnobValue::Count(n));
                assert_clean(&[setting], Some(driver.name()));
            }
        }
    }
}

#[test]
fn every_rx_usecs_level_is_clean_for_its_driver() {
    let drivers = rx_usecs_drivers();
    let drivers = drivers.iter().map(|d| Some(d.as_str())).chain([None]);
    for driver in drivers {
        let levels = rx_usecs_levels(driver);
        assert!(levels.len() >= 4, "{driver:?}: {levels:?}");
        for us in levels {
            let value = KnobValue::Duration(Nanos::from_micros(us));
            assert_clean(&[Setting::new(Knob::RxUsecs, value)], driver);
        }
    }
}

#[test]
fn the_seed_drivers_invalid_timer_is_gone() {
    // `nictune check coalesce.rx-usecs=8 --driver e1000` is an error: 8 was a level before.
    let eight = Setting::new(Knob::RxUsecs, KnobValue::Duration(Nanos::from_micros(8)));
    for driver in ["e1000", "e1000e"] {
        assert!(
            !check(&[eight], Some(driver))[0].errors.is_empty(),
            "the check is sharp"
        );
        assert!(!rx_usecs_levels(Some(driver)).contains(&8), "{driver}");
    }
}

#[test]
fn every_module_param_knob_is_a_catalog_key_of_its_driver() {
    for driver in Driver::ALL {
        for param in ModuleParam::ALL {
            let knob = Knob::Module(driver, param);
            let entry = lookup(knob.key()).unwrap_or_else(|e| panic!("{}: {e}", knob.key()));
            assert_eq!(entry.key, knob.key());
            assert_eq!(entry.driver.as_deref(), Some(driver.name()));
            assert!(entry.per_port, "{}: one value per port", knob.key());
        }
    }
    assert_eq!(NOT_TRIED.len() + 2, ModuleParam::ALL.len());
}

#[test]
fn the_remaining_knobs_are_catalog_keys_too() {
    for knob in [Knob::RxFrames, Knob::TxUsecs, Knob::AdaptiveTx] {
        assert_eq!(lookup(knob.key()).unwrap().key, knob.key());
    }
}
