//! Fuzz tier: Linux captures (`show --root`, `doctor --root`). The capture of the build
//! machine with one kernel file mutated (structure-aware) or replaced by arbitrary text, and
//! with its `index.json` / `netlink.json` mutated: loading, the snapshot, rates, the doctor
//! rules and the view never panic, stay within a time budget, and keep output in proportion
//! to the input.

use nictune_core::units::Nanos;
use nictune_fuzz::{
    any_text, assert_output_bounded, assert_size_bounded, bounded, config, mutated, repo_file,
    repo_root,
};
use nictune_host::doctor::{self, linux::caveats};
use nictune_host::read::FakeHost;
use nictune_host::{rates, snapshot, view};
use nictune_linux::capture;
use proptest::prelude::*;
use std::sync::OnceLock;

const FIXTURE: &str = "fixtures/linux-vm-6.18";

/// The fixture, loaded once.
fn fixture() -> &'static FakeHost {
    static HOST: OnceLock<FakeHost> = OnceLock::new();
    HOST.get_or_init(|| capture::load(&repo_root().join(FIXTURE)).unwrap().0)
}

/// Snapshot, counters, rates against the original, doctor and view of `host`.
fn exercise(host: &FakeHost, input_len: usize) {
    bounded("Linux snapshot, rates, doctor and view", || {
        let snap = snapshot::build(host, &[]);
        assert_output_bounded("snapshot", &snap, input_len);
        let before = snapshot::build_counters(fixture());
        let rates = rates::between(&before, &snap.counters, Nanos::from_secs(1));
        assert_output_bounded("rates", &rates, input_len);
        let findings = doctor::linux::run(&snap, Some(&rates), &caveats::from_catalog);
        assert_output_bounded("findings", &findings, input_len);
        let text = view::render_show(&snap, Some(&rates));
        assert_size_bounded("view", text.len(), input_len);
    });
}

/// The fixture with one of its files replaced by `make(its text)`.
fn one_file(make: fn(String) -> BoxedStrategy<String>) -> impl Strategy<Value = FakeHost> {
    let paths: Vec<String> = fixture().files.keys().cloned().collect();
    proptest::sample::select(paths).prop_flat_map(move |path| {
        let seed = fixture().files[&path].clone();
        make(seed).prop_map(move |text| {
            let mut host = fixture().clone();
            host.files.insert(path.clone(), text);
            host
        })
    })
}

fn total_len(host: &FakeHost) -> usize {
    host.files.values().map(String::len).sum::<usize>() + (16 << 10)
}

/// Loads a capture whose `index.json` and `netlink.json` are `index` and `netlink`.
fn load_json(index: &str, netlink: &str) {
    let dir = tempfile::tempdir().unwrap();
    let manifest = repo_file(&format!("{FIXTURE}/manifest.json"));
    std::fs::write(dir.path().join("manifest.json"), manifest).unwrap();
    std::fs::write(dir.path().join("index.json"), index).unwrap();
    std::fs::write(dir.path().join("netlink.json"), netlink).unwrap();
    let input_len = index.len() + netlink.len();
    if let Ok((host, _)) = bounded("loading a capture", || capture::load(dir.path())) {
        exercise(&host, input_len);
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_linux_capture_files_mutated(host in one_file(|seed| mutated(vec![seed]).boxed())) {
        exercise(&host, total_len(&host));
    }

    #[test]
    fn fuzz_linux_capture_files_as_arbitrary_text(host in one_file(|_| any_text().boxed())) {
        exercise(&host, total_len(&host));
    }

    #[test]
    fn fuzz_linux_capture_json_mutated(
        index in mutated(vec![repo_file(&format!("{FIXTURE}/index.json"))]),
        netlink in mutated(vec![repo_file(&format!("{FIXTURE}/netlink.json"))]),
    ) {
        load_json(&index, &netlink);
    }
}
