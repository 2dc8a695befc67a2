//! Fuzz tier: profiles (`apply --profile`, `export`) and `KEY=VALUE` settings (`apply`,
//! `check`). The README's example profiles and a list of real assignments, mutated
//! structure-aware, and arbitrary text: parsing never panics and stays within its time
//! budget; whatever parses exports in every format to a file without control characters
//! that the format's strict parser accepts, whose unit has only the keys nictune writes (no
//! injected `ExecStartPre=`), and whose size is in proportion to the profile.

use nictune_apply::desired;
use nictune_apply::export::{self, validate, ExportContext, Format};
use nictune_core::catalog::{self, Context};
use nictune_fuzz::{any_text, assert_size_bounded, bounded, config, mutated, repo_file};
use proptest::prelude::*;

/// The ```toml blocks of the README: the profiles users copy.
fn readme_profiles() -> Vec<String> {
    let readme = repo_file("README.md");
    readme
        .split("```toml\n")
        .skip(1)
        .filter_map(|block| block.split_once("```").map(|(toml, _)| toml.to_string()))
        .collect()
}

/// Assignments as users type them, one per line.
const ASSIGNMENTS: &str = "coalesce.rx-usecs=50\ncoalesce.adaptive-rx=off\n\
napi.defer-hard-irqs@1=2\nnapi.gro-flush-timeout=20000\nrps.cpus@0=3\nxps.cpus=0-1\n\
irq.affinity@45=2-3\nsysctl.net.core.busy_poll=50\nchannels.combined=4\nring.rx=1024\n\
feature.gro=on\nsysfs.threaded=1\nInterruptThrottleRate=3000,3000\nrx-usecs=0x20\n";

const SYSTEMD_UNIT_KEYS: [&str; 8] = [
    "Description",
    "BindsTo",
    "After",
    "Before",
    "Type",
    "RemainAfterExit",
    "ExecStart",
    "WantedBy",
];

/// Parses `text` as `apply` and `export` do, and exports whatever parses in every format.
fn profile(text: &str) {
    bounded("profile parse and export", || {
        let _ = desired::parse_profile(text);
        let Ok(p) = export::parse_profile(text) else {
            return;
        };
        let target = ExportContext {
            iface: p.iface.as_deref().or(Some("eth1")),
            profile_path: "/etc/nictune/p.toml",
            nictune: "/usr/bin/nictune",
            netns: p.netns.as_deref(),
            version: None,
            link_match: &[],
        };
        for (format, name) in Format::ALL {
            let Ok(out) = export::export(format, &p.items, &target) else {
                continue;
            };
            assert_size_bounded(name, out.text.len(), text.len() + 4096);
            let control = out
                .text
                .chars()
                .find(|c| c.is_control() && !matches!(c, '\n' | '\t'));
            assert_eq!(
                control, None,
                "{name}: a control character in\n{}",
                out.text
            );
            if let Some(checked) = validate::check(format, &out.text) {
                checked.unwrap_or_else(|e| panic!("{name}: {e}\n{}", out.text));
            }
            if format == Format::SystemdUnit {
                for (_, key, _) in validate::ini(&out.text).unwrap() {
                    assert!(
                        SYSTEMD_UNIT_KEYS.contains(&key.as_str()),
                        "{key}:\n{}",
                        out.text
                    );
                }
            }
        }
    });
}

/// Every line of `text` as one `KEY=VALUE`, through `apply`'s and `check`'s parsers.
fn assignments(text: &str) {
    let args: Vec<String> = text.lines().map(str::to_string).collect();
    bounded("KEY=VALUE parsers", || {
        if let Ok(settings) = desired::parse_request(&args) {
            assert!(settings.len() <= args.len());
            let _ = desired::check_unique(&settings);
        }
        for arg in &args {
            let Some((key, value)) = arg.split_once('=') else {
                continue;
            };
            let Ok(entry) = catalog::catalog().lookup(key.trim(), None) else {
                continue;
            };
            if let Ok(v) = entry.parse_value(value) {
                let _ = catalog::check(entry, &v, &Context::default());
            }
        }
    });
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_profile_readme_examples_mutated(text in mutated(readme_profiles())) {
        profile(&text);
    }

    #[test]
    fn fuzz_profile_arbitrary_text(text in any_text()) {
        profile(&text);
    }

    #[test]
    fn fuzz_assignments_mutated(text in mutated(vec![ASSIGNMENTS.to_string()])) {
        assignments(&text);
    }

    #[test]
    fn fuzz_assignments_arbitrary_text(text in any_text()) {
        assignments(&text);
    }
}
