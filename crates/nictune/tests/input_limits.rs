//! Issue #12 item 9: counts read from a capture are checked against a sane range before
//! anything is sized by them. Runs unprivileged on a copy of a fixture.

mod common;

use common::{assert_exit, fixture, nictune, stderr};
use std::time::{Duration, Instant};

#[test]
fn doctor_freebsd_with_hw_ncpu_minus_one_fails_fast_naming_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::path::PathBuf::from(fixture("freebsd-case5-before"));
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    let sysctl = dir.path().join("sysctl.txt");
    let text = std::fs::read_to_string(&sysctl).unwrap();
    std::fs::write(&sysctl, text.replace("hw.ncpu: 24", "hw.ncpu: -1")).unwrap();
    let started = Instant::now();
    let root = dir.path().to_str().unwrap();
    let out = nictune(&["doctor", "--os", "freebsd", "--root", root]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("sysctl.txt: line 4: hw.ncpu = \"-1\" is out of range; allowed: an integer from 1 to 8192"),
        "{err}"
    );
    assert!(err.contains("hint: "), "{err}");
}
