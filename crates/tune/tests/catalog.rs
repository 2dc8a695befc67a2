//! Every setting a tune can try is a catalog key with a value the catalog accepts, so the
//! profile it writes is one `nictune apply --profile` and `nictune export` can read.

use nictune_core::catalog::{check_many, lookup, Context, Entry, Value};
use nictune_tune::knob::Knob;
use nictune_tune::space::{Capabilities, Space};

/// A target that supports every kind of knob a space can hold.
fn everything() -> Capabilities {
    Capabilities {
        coalescing: vec![Knob::RxUsecs],
        adaptive_rx: true,
        napi: true,
        irq_suspend: true,
        busy_polling: true,
        max_combined_channels: Some(8),
        cpus: 4,
    }
}

#[test]
fn every_candidate_passes_the_catalog_check() {
    for caps in [Capabilities::veth_testbed(2), everything()] {
        for candidate in Space::from_capabilities(&caps).candidates() {
            let parsed: Vec<(&Entry, Value)> = candidate
                .settings
                .iter()
                .map(|s| {
                    let entry = lookup(s.knob.key()).expect("a catalog key");
                    assert_eq!(entry.key, s.knob.key(), "canonical, not an alias");
                    let text = s.knob.render(s.value);
                    let value = entry
                        .parse_value(&text)
                        .unwrap_or_else(|e| panic!("{}={text}: {e}", s.knob.key()));
                    (entry, value)
                })
                .collect();
            let reports = check_many(&parsed, &Context::default()).expect("a context");
            for r in reports {
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
fn the_remaining_knobs_are_catalog_keys_too() {
    for knob in [Knob::RxFrames, Knob::TxUsecs, Knob::AdaptiveTx] {
        assert_eq!(lookup(knob.key()).unwrap().key, knob.key());
    }
}
