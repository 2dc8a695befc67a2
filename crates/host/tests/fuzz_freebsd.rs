//! Fuzz tier: FreeBSD captures (`doctor --os freebsd --root`, `show --os freebsd`). Every
//! capture file as arbitrary text, and the Case 5 fixtures with structure-aware mutations;
//! the snapshot, the doctor rules and the text view never panic, stay within a time budget,
//! and keep output in proportion to the input.

use nictune_fuzz::{
    any_text, assert_output_bounded, assert_size_bounded, bounded, config, mutated, repo_file,
};
use nictune_host::freebsd::{self, FreeBsdInputs};
use nictune_host::{doctor, view};
use proptest::prelude::*;

const FIXTURES: [&str; 3] = [
    "freebsd-case5-before",
    "freebsd-case5-after",
    "freebsd-case5-nat",
];

/// The files of one fixture directory.
fn fixture(dir: &str) -> FreeBsdInputs {
    freebsd::FILES
        .iter()
        .filter_map(|f| {
            let path = nictune_fuzz::repo_root().join("fixtures").join(dir).join(f);
            path.exists()
                .then(|| (f.to_string(), repo_file(&format!("fixtures/{dir}/{f}"))))
        })
        .collect()
}

/// Every step a capture goes through, checked for time and output size.
fn exercise(inputs: &FreeBsdInputs) {
    let input_len: usize = inputs.values().map(String::len).sum();
    bounded("FreeBSD snapshot, doctor and view", || {
        let Ok(snap) = freebsd::snapshot(inputs) else {
            return;
        };
        assert_output_bounded("snapshot", &snap, input_len);
        let findings = doctor::freebsd::run(&snap);
        assert_output_bounded("findings", &findings, input_len);
        assert_size_bounded("view", view::render_freebsd(&snap).len(), input_len);
    });
}

/// One file of a fixture replaced by `make(its text)`.
fn one_file(
    make: impl Fn(String) -> BoxedStrategy<String>,
) -> impl Strategy<Value = FreeBsdInputs> {
    let choices: Vec<(usize, &'static str)> = (0..FIXTURES.len())
        .flat_map(|d| freebsd::FILES.iter().map(move |f| (d, *f)))
        .collect();
    proptest::sample::select(choices).prop_flat_map(move |(d, file)| {
        let base = fixture(FIXTURES[d]);
        let seed = base.get(file).cloned().unwrap_or_default();
        make(seed).prop_map(move |text| {
            let mut inputs = base.clone();
            inputs.insert(file.to_string(), text);
            inputs
        })
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_freebsd_files_as_arbitrary_text(inputs in one_file(|_| any_text().boxed())) {
        exercise(&inputs);
    }

    #[test]
    fn fuzz_freebsd_fixtures_mutated(inputs in one_file(|seed| mutated(vec![seed]).boxed())) {
        exercise(&inputs);
    }

    #[test]
    fn fuzz_freebsd_every_file_mutated_at_once(
        texts in proptest::collection::vec(
            mutated(fixture(FIXTURES[0]).into_values().collect()),
            freebsd::FILES.len(),
        )
    ) {
        let inputs: FreeBsdInputs = freebsd::FILES
            .iter()
            .map(|f| f.to_string())
            .zip(texts)
            .collect();
        exercise(&inputs);
    }
}
