//! docs/calibration.md names every test that re-checks a calibration point (`calibration_*`);
//! this keeps the table and the tests in step, so a re-checked calibration point cannot pass
//! for a validation point.

use std::collections::BTreeSet;
use std::path::Path;

/// Every `fn calibration_*` in the `.rs` files under `dir`.
fn tests_named_calibration(dir: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).expect("readable source directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            tests_named_calibration(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("readable source");
            for line in text.lines() {
                if let Some(rest) = line.trim_start().strip_prefix("fn calibration_") {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    out.insert(format!("calibration_{name}"));
                }
            }
        }
    }
}

/// Every `` `calibration_*` `` the table names.
fn named_in_table(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            s.starts_with("calibration_") && s.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn the_calibration_table_names_exactly_the_calibration_tests() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = std::fs::read_to_string(crate_dir.join("../../docs/calibration.md"))
        .expect("docs/calibration.md");
    let mut tests = BTreeSet::new();
    tests_named_calibration(&crate_dir.join("src"), &mut tests);
    tests_named_calibration(&crate_dir.join("tests"), &mut tests);
    assert!(!tests.is_empty(), "no calibration_* tests found");
    let named = named_in_table(&table);
    let missing: Vec<_> = tests.difference(&named).collect();
    let stale: Vec<_> = named.difference(&tests).collect();
    assert!(
        missing.is_empty(),
        "calibration tests not in docs/calibration.md: {missing:?}"
    );
    assert!(
        stale.is_empty(),
        "docs/calibration.md names tests that do not exist: {stale:?}"
    );
}
