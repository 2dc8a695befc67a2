//! The catalog of scenario keys: name, kind, default and meaning.
//!
//! Host keys exist once per host (`client.` and `server.`); in files and `--set`, the prefix
//! `hosts.` sets a key on both. Defaults describe a Case 1 era host (e1000 on PCI-X, Linux
//! 2.6.18); each built-in scenario states the values it relies on and their sources.

use super::value::{Kind, ParamValue};
use nictune_core::catalog::edit_distance;
use std::sync::OnceLock;

/// One key.
#[derive(Debug, Clone)]
pub struct KeyDef {
    /// Full dotted name.
    pub name: String,
    /// What it accepts.
    pub kind: Kind,
    /// Its default.
    pub default: ParamValue,
    /// One line of meaning.
    pub help: &'static str,
}

/// Host names in a two-host topology.
pub const HOSTS: [&str; 2] = ["client", "server"];
/// Drivers (moderation policy families) the simulator knows: the e1000 generations, and the
/// Simulator II families ([`super::families`]).
pub const DRIVERS: &[&str] = &[
    "e1000-7.0",
    "e1000-7.3",
    "ixgbevf",
    "ixgbe",
    "ixgbe-oot",
    "igb",
    "dim",
];
/// NIC models: the 8254x with its interval-clock throttle, and the same NIC with the
/// minimum-gap reading (a what-if, see `nic::throttle`).
pub const NICS: &[&str] = &["8254x", "8254x-gap"];

const fn int(min: i64, max: i64, unit: &'static str) -> Kind {
    Kind::Int { min, max, unit }
}

const fn num(min: f64, max: f64, unit: &'static str) -> Kind {
    Kind::Float { min, max, unit }
}

fn t(s: &str) -> ParamValue {
    ParamValue::Text(s.to_string())
}

/// Keys that exist once per host, without the host prefix.
fn host_keys() -> Vec<(&'static str, Kind, ParamValue, &'static str)> {
    use ParamValue::{Float as F, Int as I};
    vec![
        (
            "nic",
            Kind::Choice(NICS),
            t("8254x"),
            "NIC model (throttle reading)",
        ),
        // 8000: e1000 7.0.x default; 3 on 7.3.x (resolved per driver).
        (
            "itr",
            int(0, 488_281, "driver InterruptThrottleRate"),
            I(8000),
            "InterruptThrottleRate: 0 off, 1/3/4 modes, or a fixed rate in the driver's range; default per driver",
        ),
        // Delay defaults: e1000_param.c (RDTR 0, RADV 8, TIDV 8, TADV 32).
        (
            "rx_int_delay",
            int(0, 65_535, "1.024 µs ticks"),
            I(0),
            "RxIntDelay → RDTR (e1000 drivers only; the family drivers have no such timer)",
        ),
        (
            "rx_abs_int_delay",
            int(0, 65_535, "1.024 µs ticks"),
            I(8),
            "RxAbsIntDelay → RADV (e1000 drivers only; the family drivers have no such timer)",
        ),
        (
            "tx_int_delay",
            int(0, 65_535, "1.024 µs ticks"),
            I(8),
            "TxIntDelay → TIDV (e1000 drivers only; the family drivers have no such timer)",
        ),
        (
            "tx_abs_int_delay",
            int(0, 65_535, "1.024 µs ticks"),
            I(32),
            "TxAbsIntDelay → TADV (e1000 drivers only; the family drivers have no such timer)",
        ),
        // 256: e1000 default Rx/TxDescriptors.
        (
            "rx_ring",
            int(48, 4096, "descriptors"),
            I(256),
            "rx descriptors",
        ),
        (
            "tx_ring",
            int(48, 4096, "descriptors"),
            I(256),
            "tx descriptors",
        ),
        // 48 KB: the 8254x packet buffer share for receive at standard MTU (PBA).
        (
            "card_buffer_kb",
            int(1, 4096, "KiB"),
            I(48),
            "on-card receive buffer",
        ),
        // 8.5 Gb/s: PCI-X 64-bit/133 MHz (sim-notes §4.2).
        (
            "bus_gbps",
            num(0.1, 1024.0, "Gb/s"),
            F(8.5),
            "bus rate per direction",
        ),
        // DMA latencies: RAMCloud's e1000 "life of an RTT" (sim-notes §1.8): DMA of a frame to
        // host memory 260–264 ns; doorbell 147–150 ns + frame fetch 200–205 ns. The rest of
        // the NIC path is the link's fixed latency below. See seed-e1000-rr.toml.
        (
            "rx_dma_ns",
            int(0, 100_000, "ns"),
            I(260),
            "DMA time per received frame besides bytes",
        ),
        (
            "tx_dma_ns",
            int(0, 100_000, "ns"),
            I(350),
            "doorbell + descriptor and frame fetch per sent frame",
        ),
        (
            "clock_ppm",
            num(-500.0, 500.0, "ppm"),
            F(0.0),
            "oscillator offset the NIC timers run on",
        ),
        (
            "host_clock_ppm",
            num(-500.0, 500.0, "ppm"),
            F(0.0),
            "oscillator offset the kernel tick (and the driver's watchdog) runs on",
        ),
        // A 2007 dual-core server, IRQ and application on CPU0 (assumed for Case 1).
        ("cores", int(1, 256, "cores"), I(2), "CPU cores"),
        (
            "irq_core",
            int(0, 255, "core"),
            I(0),
            "core that takes the NIC interrupt",
        ),
        (
            "app_core",
            int(0, 255, "core"),
            I(0),
            "core the application runs on",
        ),
        // Costs: the Case 1 calibration (seed-e1000-rr.toml derives app_ns, the one fitted
        // constant, from 41.71 µs) with the split of sim-notes §4.3; hrtimer ≈0.5 µs assumed (a
        // local APIC timer interrupt).
        (
            "cost.irq_ns",
            int(0, 10_000_000, "ns"),
            I(2000),
            "hard interrupt cost",
        ),
        (
            "cost.poll_ns",
            int(0, 10_000_000, "ns"),
            I(1000),
            "fixed cost per NAPI poll",
        ),
        (
            "cost.rx_pkt_ns",
            int(0, 10_000_000, "ns"),
            I(3000),
            "receive cost per frame",
        ),
        (
            "cost.tx_pkt_ns",
            int(0, 10_000_000, "ns"),
            I(3000),
            "send cost per frame",
        ),
        (
            "cost.tx_clean_ns",
            int(0, 10_000_000, "ns"),
            I(300),
            "tx completion cost per frame",
        ),
        (
            "cost.app_ns",
            int(0, 10_000_000, "ns"),
            I(6263),
            "application cost per transaction/message",
        ),
        (
            "cost.hrtimer_ns",
            int(0, 10_000_000, "ns"),
            I(500),
            "NAPI hrtimer interrupt cost",
        ),
        // NAPI and softirq: Linux defaults (moderation-algorithms.md §6, sim-notes §4.4).
        (
            "napi.weight",
            int(1, 4096, "packets"),
            I(64),
            "NAPI poll budget",
        ),
        (
            "napi.netdev_budget",
            int(1, 1_000_000, "packets"),
            I(300),
            "net.core.netdev_budget",
        ),
        (
            "napi.netdev_budget_usecs",
            int(1, 10_000_000, "µs"),
            I(2000),
            "net.core.netdev_budget_usecs",
        ),
        (
            "napi.hz",
            int(100, 10_000, "Hz"),
            I(1000),
            "kernel tick rate",
        ),
        (
            "napi.defer_hard_irqs",
            int(0, 1_000_000, "polls"),
            I(0),
            "napi_defer_hard_irqs",
        ),
        (
            "napi.gro_flush_timeout_ns",
            int(0, 1_000_000_000, "ns"),
            I(0),
            "gro_flush_timeout",
        ),
    ]
}

/// Keys that exist once.
fn global_keys() -> Vec<(&'static str, Kind, ParamValue, &'static str)> {
    use ParamValue::{Float as F, Int as I};
    vec![
        (
            "driver",
            Kind::Choice(DRIVERS),
            t("e1000-7.0"),
            "driver generation on both hosts",
        ),
        (
            "topology",
            Kind::Choice(&["pair", "generator"]),
            t("pair"),
            "two hosts, or a generator into the server",
        ),
        (
            "duration",
            num(0.000_001, 3600.0, "s"),
            F(10.0),
            "simulated seconds",
        ),
        ("seed", int(0, i64::MAX, ""), I(1), "random seed"),
        (
            "link.gbps",
            num(0.001, 1000.0, "Gb/s"),
            F(1.0),
            "link bit rate",
        ),
        // 4,120 ns: ~2 m of cable (10 ns) and the two e1000s' MAC/PHY pipelines — the part of
        // RAMCloud's measured e1000 round trip its timed steps leave over (seed-e1000-rr.toml).
        (
            "link.propagation_ns",
            int(0, 1_000_000_000, "ns"),
            I(4_120),
            "fixed one-way latency besides serialization (cable, MAC/PHY pipelines)",
        ),
        (
            "workload.kind",
            Kind::Choice(&["rr", "ping", "stream", "bulk"]),
            t("rr"),
            "what runs",
        ),
        (
            "workload.request_bytes",
            int(1, 100_000_000, "bytes"),
            I(1),
            "rr request size",
        ),
        (
            "workload.response_bytes",
            int(1, 100_000_000, "bytes"),
            I(1),
            "rr response size",
        ),
        (
            "workload.outstanding",
            int(1, 4096, "transactions"),
            I(1),
            "rr transactions in flight",
        ),
        // 1448: 1500 MTU − 20 IP − 32 TCP with timestamps.
        (
            "workload.mss",
            int(88, 9000, "bytes"),
            I(1448),
            "TCP segment payload",
        ),
        (
            "workload.interval_ms",
            num(0.001, 100_000.0, "ms"),
            F(1000.0),
            "ping interval",
        ),
        // 56: ping's default payload.
        (
            "workload.payload_bytes",
            int(0, 65_507, "bytes"),
            I(56),
            "ping payload (-s); above 1472 the echo goes as IP fragments of the 1500-byte MTU",
        ),
        (
            "workload.pattern",
            Kind::Choice(&["constant", "poisson", "onoff"]),
            t("constant"),
            "stream release pattern",
        ),
        (
            "workload.rate_pps",
            num(0.0, 1e9, "frames/s"),
            F(0.0),
            "stream rate; 0 = line rate",
        ),
        (
            "workload.frame_bytes",
            int(64, 9018, "bytes"),
            I(64),
            "stream frame size",
        ),
        (
            "workload.size_mix",
            Kind::Text,
            t(""),
            "stream sizes as BYTES:WEIGHT,...; empty = frame_bytes",
        ),
        (
            "workload.on_ms",
            num(0.001, 100_000.0, "ms"),
            F(1.0),
            "on/off: on period",
        ),
        (
            "workload.off_ms",
            num(0.0, 100_000.0, "ms"),
            F(1.0),
            "on/off: off period",
        ),
        (
            "workload.window_bytes",
            int(1448, 1_000_000_000, "bytes"),
            I(262_144),
            "bulk receiver window",
        ),
    ]
}

/// Every key, globals first, then `client.*`, then `server.*`.
pub fn catalog() -> &'static [KeyDef] {
    static CATALOG: OnceLock<Vec<KeyDef>> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let mut all: Vec<KeyDef> = global_keys()
            .into_iter()
            .map(|(n, kind, default, help)| KeyDef {
                name: n.to_string(),
                kind,
                default,
                help,
            })
            .collect();
        for host in HOSTS {
            all.extend(
                host_keys()
                    .into_iter()
                    .map(|(n, kind, default, help)| KeyDef {
                        name: format!("{host}.{n}"),
                        kind,
                        default,
                        help,
                    }),
            );
        }
        all
    })
}

/// The definition of `name`.
pub fn find(name: &str) -> Option<&'static KeyDef> {
    catalog().iter().find(|k| k.name == name)
}

/// The known key closest to `name`, for "did you mean": by edit distance over the catalog,
/// and for a `hosts.` key over the host keys under that prefix.
pub fn suggest(name: &str) -> Option<String> {
    match name.strip_prefix("hosts.") {
        Some(rest) => {
            let prefix = format!("{}.", HOSTS[0]);
            let host_keys = catalog()
                .iter()
                .filter_map(|k| k.name.strip_prefix(prefix.as_str()));
            closest(rest, host_keys).map(|k| format!("hosts.{k}"))
        }
        None => closest(name, catalog().iter().map(|k| k.name.as_str())),
    }
}

/// The known key closest to `key` by edit distance, if it is close (at most a third of its
/// letters differ).
pub fn closest<'a>(key: &str, known: impl Iterator<Item = &'a str>) -> Option<String> {
    known
        .map(|k| (edit_distance(key, k), k))
        .filter(|&(d, k)| d * 3 <= k.len().max(3))
        .min()
        .map(|(_, k)| k.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_the_nearest_key() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(suggest("server.itrr").as_deref(), Some("server.itr"));
        assert_eq!(suggest("hosts.itrr").as_deref(), Some("hosts.itr"));
        assert_eq!(
            suggest("client.napi.wieght").as_deref(),
            Some("client.napi.weight")
        );
        assert_eq!(suggest("completely.unrelated.words"), None);
    }
}
