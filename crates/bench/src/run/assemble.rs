//! Turning what both sides measured into a [`BenchResult`].

use super::far::{FarReport, FarSysctls};
use super::route::Route;
use super::Measured;
use crate::engine::ConnStats;
use crate::net::server::ServerReport;
use crate::result::{
    BenchResult, LoadFigures, LoopMode, NapiCheck, Placement, SidePlacement, StreamFigures,
    SysctlsInForce,
};
use crate::spec::{BenchSpec, TestKind};
use nictune_core::metrics::Metrics;
use std::collections::BTreeMap;

pub(super) fn assemble(
    spec: &BenchSpec,
    route: &Route,
    m: Measured,
    far: FarReport,
) -> BenchResult {
    let secs = m.window.length().as_secs_f64();
    let stream = spec.test == TestKind::Stream;
    let tps = (!stream).then(|| m.stats.completed as f64 / secs);
    let payload = (spec.request_size.0 + spec.response_size.0) as f64 * 8.0;
    let throughput = if stream {
        Some(crate::engine::stream::bps(m.stats.bytes, m.window.length()))
    } else {
        tps.map(|t| t * payload)
    };
    let server_acc = far.accounting.clone();
    let mut hosts = BTreeMap::new();
    hosts.insert("client".to_string(), m.accounting.host.clone());
    if let Some(a) = &server_acc {
        hosts.insert("server".to_string(), a.host.clone());
    }
    let metrics = Metrics {
        transactions_per_sec: tps,
        interim_transactions_per_sec: if stream {
            Vec::new()
        } else {
            m.stats.interim.rates(&m.window)
        },
        latency_us: m.stats.latency.summary(),
        throughput_bps: throughput,
        hosts,
    };
    let mut accounting = BTreeMap::from([("client".to_string(), m.accounting.clone())]);
    if let Some(a) = server_acc {
        accounting.insert("server".to_string(), a);
    }
    let mut warnings = route.warnings.clone();
    let sysctls = sysctls_in_force(&far, &mut warnings);
    if far.server.capped {
        warnings.push(
            "the server stopped answering at its per-test cap on bytes sent (16 GiB for \
             `nictune serve`): the rate and latency cover only the answered part; shorten \
             the test or the responses"
                .into(),
        );
    }
    let napi = napi_check(route, &m, &far.server, &mut warnings);
    BenchResult {
        target: route.label.clone(),
        spec: spec.clone(),
        metrics,
        mode: if spec.rate.is_some() {
            LoopMode::Open
        } else {
            LoopMode::Closed
        },
        measured_s: secs,
        completed: m.stats.completed,
        lost: m.stats.lost,
        stream: stream.then(|| stream_figures(&m.stats, spec.request_size.0)),
        placement: Placement {
            client: SidePlacement {
                requested_cpu: spec.client_cpu,
                cpus_seen: m.cpus.iter().copied().collect(),
            },
            server: SidePlacement {
                requested_cpu: spec.server_cpu,
                cpus_seen: far.server.cpus.iter().copied().collect(),
            },
            cal_per_sec: m.accounting.arch_irqs_per_sec.get("CAL").copied(),
            res_per_sec: m.accounting.arch_irqs_per_sec.get("RES").copied(),
        },
        napi,
        accounting,
        shared_host: route.shared_host,
        warnings,
        testbed: None,
        sysctls,
        icmp_socket: m.icmp_socket,
        load: spec
            .load
            .zip(m.load.as_ref())
            .map(|(l, stats)| LoadFigures {
                connections: l.connections,
                throughput_bps: crate::engine::stream::bps(stats.bytes, m.window.length()),
                stream: stream_figures(stats, l.write_size.0),
            }),
    }
}

fn stream_figures(stats: &ConnStats, write_size: u64) -> StreamFigures {
    StreamFigures {
        bytes: stats.bytes,
        retransmits: stats.retransmits,
        interim_throughput_bps: stats.interim_bps.clone(),
        write_size,
        path: stats.path.clone(),
    }
}

fn napi_check(
    route: &Route,
    m: &Measured,
    server: &ServerReport,
    warnings: &mut Vec<String>,
) -> NapiCheck {
    let ids = m.outcomes_napi.iter().chain(&server.napi_ids);
    let verified =
        (route.label == "testbed" && route.napi_applies).then(|| ids.clone().all(|&id| id != 0));
    if verified == Some(false) {
        warnings.push("sockets report NAPI id 0: veth did not deliver through NAPI, so NAPI settings cannot act on this path".into());
    }
    NapiCheck {
        client_ids: m.outcomes_napi.clone(),
        server_ids: server.napi_ids.clone(),
        verified,
    }
}

/// Both sides' sysctls, with a warning for each value that is not the kernel's default and
/// for each side whose values could not be read.
fn sysctls_in_force(far: &FarReport, warnings: &mut Vec<String>) -> SysctlsInForce {
    let here = crate::sysctls::read_host();
    warnings.extend(here.note);
    warnings.extend(crate::sysctls::warnings(
        &here.values,
        crate::sysctls::THIS_HOST,
    ));
    let server = match &far.sysctls {
        FarSysctls::Peer(Some(peer)) => {
            warnings.extend(crate::sysctls::warnings(peer, crate::sysctls::THE_PEER));
            Some(peer.clone())
        }
        FarSysctls::Peer(None) => {
            warnings.push(
                "the peer did not report its host-wide net.core sysctls (its `nictune serve` \
                 could not read them): whether its sockets busy-polled is not recorded"
                    .into(),
            );
            None
        }
        FarSysctls::ThisHost => Some(here.values.clone()),
    };
    SysctlsInForce {
        client: here.values,
        server,
    }
}
