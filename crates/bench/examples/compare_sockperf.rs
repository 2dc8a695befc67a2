//! nictune's RR engine against sockperf ping-pong on one testbed, one after the other, with
//! both tools pinned identically; prints the rate and p50 ratios. Run through
//! `scripts/compare-sockperf` (which installs sockperf and builds in release mode).
//!
//! Usage: compare_sockperf [SECONDS] [REPS]   (default 5 s, 3 repetitions per placement)

use nictune_bench::compare::{parse_sockperf, SockperfSummary, Verdict};
use nictune_bench::{run, BenchSpec, Target, TestKind, Testbed};
use nictune_core::progress::NoProgress;
use nictune_core::units::{Bytes, Nanos};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// sockperf's smallest message (its header); nictune uses the same size.
const MESSAGE: u64 = 14;
const PORT: &str = "11111";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args.next().map_or(Ok(5), |a| a.parse())?;
    let reps: usize = args.next().map_or(Ok(3), |a| a.parse())?;
    let bed = Testbed::create()?;
    let cpus = std::thread::available_parallelism()?.get() as u32;
    let placements: Vec<(&str, u32, u32)> = if cpus > 1 {
        vec![("same CPU", 0, 0), ("cross CPU", 0, 1)]
    } else {
        vec![("same CPU", 0, 0)]
    };
    println!(
        "testbed {:?}, NAPI mode {}, {secs} s per run, {reps} reps, TCP RR {MESSAGE} B",
        bed.names().client_ns,
        bed.napi_mode()
    );
    let mut all_met = true;
    for (label, client, server) in placements {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            ours.push(nictune_rr(&bed, secs, client, server)?);
            theirs.push(sockperf_rr(&bed, secs, client, server)?);
        }
        let o = (
            median(ours.iter().map(|x| x.0)),
            median(ours.iter().map(|x| x.1)),
        );
        let t = SockperfSummary {
            rate: median(theirs.iter().map(|s| s.rate)),
            p50_us: median(theirs.iter().map(|s| s.p50_us)),
            p99_us: median(theirs.iter().map(|s| s.p99_us)),
        };
        let v = Verdict::of(o, &t);
        all_met &= v.meets_target();
        println!(
            "{label:<9} (client CPU {client}, server CPU {server}): nictune {:.0} trans/s p50 {:.1} µs | sockperf {:.0} trans/s p50 {:.1} µs | rate ratio {:.3} (target ≥ 0.95), p50 ratio {:.3} (target 0.90–1.10) {}",
            o.0, o.1, t.rate, t.p50_us, v.rate_ratio, v.p50_ratio,
            if v.meets_target() { "MET" } else { "NOT MET" }
        );
    }
    bed.destroy()?;
    std::process::exit(if all_met { 0 } else { 1 });
}

fn median(v: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = v.collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One nictune RR run: (trans/s, p50 µs).
fn nictune_rr(
    bed: &Testbed,
    secs: u64,
    client: u32,
    server: u32,
) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let mut spec = BenchSpec::new(TestKind::Rr);
    spec.duration = Nanos::from_secs(secs);
    spec.warmup = Nanos::from_millis(400); // as sockperf's excluded start
    spec.request_size = Bytes(MESSAGE);
    spec.response_size = Bytes(MESSAGE);
    spec.client_cpu = Some(client);
    spec.server_cpu = Some(server);
    let r = run(&spec, Target::Testbed(bed), &NoProgress)?;
    let p50 = r.metrics.latency_us.map_or(f64::NAN, |l| l.p50);
    Ok((r.metrics.transactions_per_sec.unwrap_or(0.0), p50))
}

/// Kills the sockperf server when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One sockperf ping-pong run in the same namespaces, pinned the same way.
fn sockperf_rr(
    bed: &Testbed,
    secs: u64,
    client: u32,
    server: u32,
) -> Result<SockperfSummary, Box<dyn std::error::Error>> {
    let n = bed.names();
    let ip = nictune_bench::testbed::SERVER_IP.to_string();
    let _server = Server(
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &n.server_ns,
                "taskset",
                "-c",
                &server.to_string(),
            ])
            .args(["sockperf", "server", "--tcp", "-i", &ip, "-p", PORT])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?,
    );
    std::thread::sleep(Duration::from_millis(500));
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            &n.client_ns,
            "taskset",
            "-c",
            &client.to_string(),
        ])
        .args([
            "sockperf",
            "ping-pong",
            "--tcp",
            "--full-rtt",
            "-i",
            &ip,
            "-p",
            PORT,
        ])
        .args(["-m", &MESSAGE.to_string(), "-t", &secs.to_string()])
        .output()?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    parse_sockperf(&text).ok_or_else(|| format!("could not read sockperf's output:\n{text}").into())
}
