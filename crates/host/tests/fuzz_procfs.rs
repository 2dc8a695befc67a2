//! Fuzz tier: the procfs parsers (`/proc/stat`, `/proc/interrupts`, `/proc/softirqs`,
//! `/proc/net/softnet_stat`, `/proc/net/dev`, `/proc/net/netstat`) on arbitrary text and on
//! the capture machine's files with structure-aware mutations: no panic, bounded time, and
//! output in proportion to the input.

use nictune_fuzz::{any_text, assert_ok_bounded, bounded, config, mutated, repo_file};
use nictune_host::procfs::{self, netstat};
use proptest::prelude::*;

const FILES: [&str; 5] = [
    "stat",
    "interrupts",
    "softirqs",
    "net/softnet_stat",
    "net/dev",
];

/// The capture machine's procfs files (`/proc/stat` is not in the capture: a synthetic one).
fn seeds() -> Vec<String> {
    let mut out: Vec<String> = FILES[1..]
        .iter()
        .map(|f| repo_file(&format!("fixtures/linux-vm-6.18/proc/{f}")))
        .collect();
    out.push(
        "cpu  10 0 20 300 4 5 6 0 0 0\ncpu0 5 0 10 150 2 2 3 0 0 0\n\
         cpu1 5 0 10 150 2 3 3 0 0 0\nintr 100 1 2\nctxt 500\nbtime 1\n"
            .into(),
    );
    out
}

/// Every parser on `text`; each result checked for size.
fn parse_all(text: &str) {
    let n = text.len();
    bounded("procfs parsers", || {
        assert_ok_bounded("stat", procfs::parse_stat(text), n);
        assert_ok_bounded("interrupts", procfs::parse_interrupts(text), n);
        assert_ok_bounded("softirqs", procfs::parse_softirqs(text), n);
        assert_ok_bounded("softnet_stat", procfs::parse_softnet_stat(text), n);
        assert_ok_bounded("net/dev", procfs::parse_net_dev(text), n);
        let _ = netstat::busy_poll_rx_packets(text);
    });
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_procfs_arbitrary_text(text in any_text()) {
        parse_all(&text);
    }

    #[test]
    fn fuzz_procfs_fixtures_mutated(text in mutated(seeds())) {
        parse_all(&text);
    }
}
