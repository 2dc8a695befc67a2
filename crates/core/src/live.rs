//! The one rule for tests that need the live system (root, network namespaces, QEMU): where
//! the machine cannot run them they say so and skip; where it must run them they fail.
//!
//! `scripts/test` sets [`REQUIRE_ENV`] when it runs as root, because a root run on a machine
//! that `scripts/install-deps` has set up (CI, a developer's own check) can run every live
//! test: a skip there would hide a broken test behind a pass.

/// When set (to anything but `0` or empty), a live test that would skip fails instead.
pub const REQUIRE_ENV: &str = "NICTUNE_REQUIRE_LIVE";

/// Whether this run demands every live test ([`REQUIRE_ENV`]).
pub fn required() -> bool {
    std::env::var(REQUIRE_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Reports that a live test cannot run here: prints `skipped: <why>` (the caller returns),
/// or, when this run demands every live test, panics with the reason.
pub fn skip(why: &str) {
    if required() {
        panic!("a live test would skip although {REQUIRE_ENV} is set: {why}");
    }
    eprintln!("skipped: {why}");
}
