//! The candidate lists of the per-driver spaces, as ids and as `KEY=VALUE` lines: a change to
//! a level, a label or the order shows up here (ids name points in results.json and reports).

use nictune_core::catalog::lookup;
use nictune_tune::knob::{Driver, Knob};
use nictune_tune::levels::rx_usecs_levels;
use nictune_tune::space::{Capabilities, Space};
use std::fmt::Write as _;

/// One line per candidate, baseline first: `id | KEY=VALUE ...` (the baseline sets nothing).
fn listing(space: &Space) -> String {
    let mut out = String::new();
    for c in space.with_baseline() {
        let kv: Vec<String> = c.settings.iter().map(|s| s.to_key_value()).collect();
        let _ = match kv.as_slice() {
            [] => writeln!(out, "{}", c.id()),
            _ => writeln!(out, "{} | {}", c.id(), kv.join(" ")),
        };
    }
    out
}

#[test]
fn real_driver_testbed_e1000_candidates() {
    let space = Space::from_capabilities(&Capabilities::real_driver_testbed(Driver::E1000));
    insta::assert_snapshot!(listing(&space));
}

#[test]
fn real_driver_testbed_e1000e_candidates() {
    let space = Space::from_capabilities(&Capabilities::real_driver_testbed(Driver::E1000e));
    insta::assert_snapshot!(listing(&space));
}

#[test]
fn rx_usecs_levels_per_driver() {
    let mut out = String::new();
    let entry = lookup(Knob::RxUsecs.key()).unwrap();
    for driver in entry.specs.iter().filter_map(|s| s.driver.as_deref()) {
        let _ = writeln!(out, "{driver}: {:?}", rx_usecs_levels(Some(driver)));
    }
    let _ = writeln!(out, "(unknown): {:?}", rx_usecs_levels(None));
    insta::assert_snapshot!(out);
}

#[test]
fn an_e1000_interface_tries_only_values_its_driver_accepts() {
    let caps = Capabilities {
        coalescing: vec![Knob::RxUsecs],
        driver: Some("e1000".into()),
        cpus: 1,
        ..Capabilities::default()
    };
    insta::assert_snapshot!(listing(&Space::from_capabilities(&caps)));
}
