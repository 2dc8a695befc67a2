//! What a run returns: the metrics shared with the simulator plus everything needed to
//! judge them (placement, NAPI verification, per-host accounting, warnings). Serialised as
//! the body of `nictune.bench/v2`.

use crate::accounting::Accounting;
use crate::spec::BenchSpec;
use nictune_core::metrics::Metrics;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The result of one measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// `loopback`, `testbed` or `peer <addr>`.
    pub target: String,
    /// The spec that was measured, so the file says what produced its figures.
    pub spec: BenchSpec,
    /// Same fields as the simulator's metrics; hosts are `client` and `server`.
    pub metrics: Metrics,
    /// Closed loop (as netperf/sockperf) or open loop (latency from intended send times).
    pub mode: LoopMode,
    /// Length of the measured interval, seconds (the rate's denominator).
    pub measured_s: f64,
    /// Transactions or probe replies completed inside the window.
    pub completed: u64,
    /// UDP requests or probes whose reply never came.
    pub lost: u64,
    /// Stream: bytes acknowledged inside the window, retransmitted segments, per-second rate.
    pub stream: Option<StreamFigures>,
    /// Where client and server were asked to run and where they were seen.
    pub placement: Placement,
    /// The NAPI ids of the sockets, and whether they prove the path goes through NAPI.
    pub napi: NapiCheck,
    /// Per-host accounting (`client`, `server`) in full.
    pub accounting: BTreeMap<String, Accounting>,
    /// Client and server share one machine (loopback, testbed): their host-wide figures are
    /// the same numbers, like netperf's local and remote CPU on one host.
    pub shared_host: bool,
    /// Anything that limits how far the figures can be trusted.
    pub warnings: Vec<String>,
    /// The real-driver testbed the run used (`None` for veth, loopback and peers).
    #[serde(default)]
    pub testbed: Option<TestbedInfo>,
    /// Host-wide sysctls that change the figures (busy polling, NAPI budgets), as they were
    /// on each side's host during the run ([`crate::sysctls::KEYS`]).
    #[serde(default)]
    pub sysctls: SysctlsInForce,
    /// ICMP echo (`ping --icmp`): the socket that carried the probes, `ping` (a ping socket,
    /// allowed by `net.ipv4.ping_group_range`) or `raw` (a raw socket, as root where ping
    /// sockets are not allowed); `None` for every other test.
    #[serde(default)]
    pub icmp_socket: Option<crate::net::icmp::IcmpSocket>,
    /// Latency under load: what the background streams moved while the probe ran.
    #[serde(default)]
    pub load: Option<LoadFigures>,
}

/// The host-wide sysctls of both sides ([`crate::sysctls::KEYS`]), key → value. A key that
/// could not be read is left out (the warnings say why).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SysctlsInForce {
    /// The measuring host's.
    pub client: crate::sysctls::Values,
    /// The server's host's: a peer's as its `nictune serve` read them, this host's again for
    /// loopback and the testbeds; `None` when the peer could not read them.
    pub server: Option<crate::sysctls::Values>,
}

/// What the load streams of a latency-under-load run moved inside the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadFigures {
    /// Number of load streams.
    pub connections: u32,
    /// Acknowledged bytes of all load streams together per second, bit/s.
    pub throughput_bps: f64,
    /// Their bytes, retransmits and per-second rates, all streams together.
    pub stream: StreamFigures,
}

/// What a real-driver testbed was: which NIC and driver, how the guest ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestbedInfo {
    /// `e1000` or `e1000e`.
    pub kind: String,
    /// The emulated controller (`Intel 82545EM`, `Intel 82574L`).
    pub nic_model: String,
    /// QEMU's `-device` model (`e1000-82545em`, `e1000e`).
    pub qemu_device: String,
    /// The guest kernel (`uname -r`), whose driver ran the NIC.
    pub guest_kernel: String,
    /// `kvm` or `tcg`.
    pub accel: String,
    /// Why KVM was not used, when it was not; `None` with KVM.
    pub accel_note: Option<String>,
    /// From starting QEMU to the guest's agent answering.
    pub boot_seconds: f64,
    /// CPU cores QEMU kept busy on the host during the measurement (warm-up included).
    #[serde(default)]
    pub qemu_cpu_cores: Option<f64>,
    /// QEMU's resident memory at the end, MiB.
    #[serde(default)]
    pub qemu_rss_mib: Option<f64>,
}

/// How requests were paced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoopMode {
    /// Each connection sends its next request when the reply to the last one is in.
    Closed,
    /// Requests go out on a fixed schedule (`--rate`); latency counts from each request's
    /// intended send time, so queueing behind a slow reply is included.
    Open,
}

/// Bulk-transfer figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamFigures {
    /// Bytes acknowledged by the receiver inside the window (`tcpi_bytes_acked`).
    pub bytes: u64,
    /// TCP segments retransmitted inside the window (`tcpi_total_retrans`).
    pub retransmits: u64,
    /// Throughput in each 1 s interim interval of the window, bit/s.
    pub interim_throughput_bps: Vec<f64>,
    /// Size of each write (the figure that most changes bulk results on veth).
    pub write_size: u64,
    /// Path MTU, MSS and congestion control of the first connection.
    pub path: Option<crate::conn::TcpPath>,
}

/// Where each side asked to run and where it was seen running.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// The client side's placement.
    pub client: SidePlacement,
    /// The server side's placement.
    pub server: SidePlacement,
    /// `CAL` interrupts per second during the window (function-call IPIs, the cross-CPU
    /// wake-ups), measuring host; `None` when none fired.
    pub cal_per_sec: Option<f64>,
    /// `RES` interrupts per second during the window (rescheduling IPIs), measuring
    /// host; `None` when none fired.
    pub res_per_sec: Option<f64>,
}

/// One side's CPU placement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SidePlacement {
    /// The CPU the side's threads were pinned to (`--client-cpu`, `--server-cpu`); `None`:
    /// unpinned.
    pub requested_cpu: Option<u32>,
    /// CPUs the side's threads were seen on (sampled when each thread started and ended).
    pub cpus_seen: Vec<u32>,
}

/// The sockets' `SO_INCOMING_NAPI_ID`s: non-zero means packets came through a NAPI instance.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NapiCheck {
    /// NAPI id of each client socket with one (0: not delivered through NAPI).
    pub client_ids: Vec<u32>,
    /// NAPI id of each server socket that got an answer (0: not delivered through NAPI).
    pub server_ids: Vec<u32>,
    /// Testbed: every id non-zero. `None` where NAPI does not apply (loopback) or is unknown.
    pub verified: Option<bool>,
}

impl BenchResult {
    /// A result carrying `metrics` for `spec` with no live detail (target `synthetic`), for
    /// fakes and tests of code that consumes results.
    pub fn synthetic(spec: &BenchSpec, metrics: Metrics) -> BenchResult {
        BenchResult {
            target: "synthetic".into(),
            spec: spec.clone(),
            mode: if spec.rate.is_some() {
                LoopMode::Open
            } else {
                LoopMode::Closed
            },
            measured_s: spec.duration.as_secs_f64(),
            completed: 0,
            lost: 0,
            stream: None,
            placement: Placement::default(),
            napi: NapiCheck::default(),
            accounting: BTreeMap::new(),
            shared_host: false,
            warnings: vec!["synthetic result: nothing was measured".into()],
            testbed: None,
            sysctls: SysctlsInForce::default(),
            icmp_socket: None,
            load: None,
            metrics,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::TestKind;
    use nictune_core::metrics::LatencySummary;

    #[test]
    fn json_field_names_are_stable() {
        let metrics = Metrics {
            transactions_per_sec: Some(9_500.0),
            interim_transactions_per_sec: vec![9_400.0, 9_600.0],
            latency_us: Some(LatencySummary {
                min: 80.0,
                mean: 104.7,
                p50: 99.0,
                p90: 120.0,
                p99: 167.0,
                p999: 210.0,
                max: 400.0,
                stddev: 12.0,
            }),
            throughput_bps: Some(152_000.0),
            hosts: BTreeMap::new(),
        };
        let r = BenchResult::synthetic(&BenchSpec::new(TestKind::Rr), metrics);
        insta::assert_json_snapshot!(r);
    }
}
