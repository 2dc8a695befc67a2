//! nictune's engines against the reference tools on one independent veth pair: `nictune
//! bench --peer` against `nictune serve` (the binaries users run) and then iperf3 or
//! sockperf, alternately, on the same pair, pinned identically; prints the medians and
//! their ratios and exits 1 when a target is missed.
//!
//! The pair is built here from netlink primitives ([`nictune_linux::lab`]), not by
//! nictune's testbed, so nothing of the testbed's set-up (its sysctls, its placement)
//! favours nictune's figures: namespaces `nictune-cmp-<pid>-{a,b}`, veth `cmp-a`
//! 198.18.91.1/24 ↔ `cmp-b` 198.18.91.2/24, GRO on and TSO off on both ends (veth in NAPI
//! mode, as nictune's testbed runs it). Every program runs inside its namespace pinned to
//! one CPU, set between fork and exec as `ip netns exec NS taskset -c CPU` would; nothing
//! but the reference tool itself needs to be installed. Removed at the end, also on failure.
//!
//! Usage (root; through `scripts/compare-iperf3` and `scripts/compare-sockperf`, which
//! install the tools):
//!   cargo bench -p nictune --bench compare_tools -- iperf3 [SECONDS] [REPS]
//!   cargo bench -p nictune --bench compare_tools -- sockperf [SECONDS] [REPS]
//!
//! Targets: stream throughput ≥ 0.95 × iperf3's, with 1 and with 4 connections; RR rate
//! ≥ 0.95 × sockperf's with p50 within 10 %, 14-byte messages (sockperf's smallest).

use nictune_bench::compare::{self, SockperfRatios, SockperfSummary};
use nictune_bench::pin_task;
use nictune_linux::{lab, netns};
use serde_json::Value as Json;
use std::net::Ipv4Addr;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_nictune");
const TOKEN: &str = "compare-tools-token-0123456789";
const CLIENT_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 91, 1);
const SERVER_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 91, 2);
const SERVE_PORT: u16 = 12898;
const TOOL_PORT: u16 = 11111;
/// sockperf's smallest message (its header); nictune uses the same size.
const MESSAGE: &str = "14";

type Error = Box<dyn std::error::Error>;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let tool = args.first().map(String::as_str).unwrap_or("");
    let secs: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let reps: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(3);
    let result = match tool {
        "iperf3" | "sockperf" => missing_programs(tool)
            .and_then(|()| Pair::create())
            .and_then(|pair| pair.compare(tool, secs, reps)),
        _ => {
            eprintln!("usage: compare_tools iperf3|sockperf [SECONDS] [REPS]");
            std::process::exit(2);
        }
    };
    match result {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("compare_tools: {e}");
            std::process::exit(2);
        }
    }
}

/// The reference tool, checked on PATH first so a machine without it is told how to get it
/// instead of failing after the pair is built.
fn missing_programs(tool: &str) -> Result<(), Error> {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(tool).is_file()));
    if on_path {
        return Ok(());
    }
    Err(format!(
        "{tool} is not on PATH; run scripts/compare-{tool}, which installs it (Debian package \
         {tool})"
    )
    .into())
}

/// The two namespaces and the `nictune serve` in b; removed when dropped.
struct Pair {
    a: String,
    b: String,
    serve: Option<Child>,
}

/// A process killed and reaped when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `cmd` to its end inside namespace `ns`, its output captured; an error unless it
/// exits 0.
fn run_in(ns: &str, cmd: &mut Command) -> Result<Output, Error> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = netns::spawn_in(ns, cmd)?.wait_with_output()?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(out)
}

/// `program` to be started pinned to `cpu` (what `taskset -c CPU PROGRAM` does).
fn pinned(cpu: u32, program: &str) -> Command {
    let mut c = Command::new(program);
    // SAFETY: between fork and exec the closure only makes the system call
    // sched_setaffinity on a CPU set on its stack (pin_task allocates nothing).
    #[allow(unsafe_code)]
    unsafe {
        c.pre_exec(move || pin_task(0, cpu));
    }
    c
}

/// Whether process `pid` sees a TCP socket listening on `port` in its network namespace
/// (`/proc/PID/net/tcp{,6}` list the sockets of the namespace the process is in; state 0A
/// is LISTEN).
fn listening(pid: u32, port: u16) -> bool {
    let local = format!(":{port:04X}");
    ["tcp", "tcp6"].iter().any(|f| {
        std::fs::read_to_string(format!("/proc/{pid}/net/{f}")).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3 && cols[1].ends_with(&local) && cols[3] == "0A"
            })
        })
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

impl Pair {
    fn create() -> Result<Pair, Error> {
        let pid = std::process::id();
        let mut pair = Pair {
            a: format!("nictune-cmp-{pid}-a"),
            b: format!("nictune-cmp-{pid}-b"),
            serve: None,
        };
        lab::create_netns(&pair.a)?;
        lab::create_netns(&pair.b)?;
        lab::veth_pair((&pair.a, "cmp-a"), (&pair.b, "cmp-b"))?;
        for (ns, dev, addr) in [(&pair.a, "cmp-a", CLIENT_IP), (&pair.b, "cmp-b", SERVER_IP)] {
            lab::ipv4_up(ns, dev, addr, 24)?;
            lab::gro_on_tso_off(ns, dev)?;
        }
        let mut serve = Command::new(BIN);
        serve
            .args(["serve", "--bind", &format!("{SERVER_IP}:{SERVE_PORT}")])
            .env("NICTUNE_TOKEN", TOKEN)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let serve = netns::spawn_in(&pair.b, &mut serve)?;
        let pid = serve.id();
        pair.serve = Some(serve);
        pair.wait_listening(pid, SERVE_PORT)?;
        Ok(pair)
    }

    /// The tool's server in b on `cpu`, listening on [`TOOL_PORT`].
    fn tool_server(&self, cpu: u32, tool: &str, args: &[&str]) -> Result<Reaped, Error> {
        let mut cmd = pinned(cpu, tool);
        cmd.args(args)
            .args(["-p", &TOOL_PORT.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let server = Reaped(netns::spawn_in(&self.b, &mut cmd)?);
        self.wait_listening(server.0.id(), TOOL_PORT)?;
        Ok(server)
    }

    fn wait_listening(&self, pid: u32, port: u16) -> Result<(), Error> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if listening(pid, port) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!("nothing listens on {port} in {}", self.b).into())
    }

    /// Pins every thread of the running `nictune serve` to `cpu` (what `taskset -a -p`
    /// does); the threads it starts for a test inherit that.
    fn pin_serve(&self, cpu: u32) -> Result<(), Error> {
        let pid = self.serve.as_ref().ok_or("serve is not running")?.id();
        for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
            let tid: libc::pid_t = task?.file_name().to_string_lossy().parse()?;
            pin_task(tid, cpu)?;
        }
        Ok(())
    }

    /// `nictune bench TEST --peer … --json` from a, pinned like the tools: the whole client
    /// process under `taskset` on the client CPU and every thread of `serve` on the server
    /// CPU, besides `--client-cpu`/`--server-cpu` (which pin only the measuring threads).
    fn nictune(&self, test: &str, extra: &[&str], place: (u32, u32)) -> Result<Json, Error> {
        let peer = format!("{SERVER_IP}:{SERVE_PORT}");
        let (client, server) = (place.0.to_string(), place.1.to_string());
        self.pin_serve(place.1)?;
        let out = run_in(
            &self.a,
            pinned(place.0, BIN)
                .args(["bench", test, "--peer", &peer])
                .args(["--client-cpu", &client, "--server-cpu", &server, "--json"])
                .args(extra)
                .env("NICTUNE_TOKEN", TOKEN),
        )?;
        Ok(serde_json::from_slice(&out.stdout)?)
    }

    fn compare(&self, tool: &str, secs: u64, reps: usize) -> Result<bool, Error> {
        let cpus = std::thread::available_parallelism()?.get() as u32;
        let mut placements = vec![("same CPU", (0, 0))];
        if cpus > 1 {
            placements.push(("cross CPU", (0, 1)));
        }
        println!(
            "independent veth pair {} ↔ {} (GRO on, TSO off), {secs} s per run, {reps} reps, medians",
            self.a, self.b
        );
        let mut all_met = true;
        for (label, place) in placements {
            all_met &= match tool {
                "iperf3" => self.versus_iperf3(label, place, secs, reps)?,
                _ => self.versus_sockperf(label, place, secs, reps)?,
            };
        }
        Ok(all_met)
    }

    fn versus_iperf3(
        &self,
        label: &str,
        place: (u32, u32),
        secs: u64,
        reps: usize,
    ) -> Result<bool, Error> {
        let mut met = true;
        for conns in [1u32, 4] {
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            for _ in 0..reps {
                ours.push(self.nictune_stream(conns, place, secs)?);
                theirs.push(self.iperf3_stream(conns, place, secs)?);
            }
            let (o, t) = (median(ours), median(theirs));
            let ok = compare::stream_meets_target(o, t);
            met &= ok;
            println!(
                "stream {label:<9} (client CPU {}, server CPU {}), {conns} conn: nictune {:.2} Gbit/s | iperf3 {:.2} Gbit/s | ratio {:.3} (target ≥ 0.95) {}",
                place.0, place.1, o / 1e9, t / 1e9, o / t,
                if ok { "MET" } else { "NOT MET" }
            );
        }
        Ok(met)
    }

    fn nictune_stream(&self, conns: u32, place: (u32, u32), secs: u64) -> Result<f64, Error> {
        let (c, d) = (conns.to_string(), secs.to_string());
        let r = self.nictune(
            "stream",
            &["--connections", &c, "--duration", &d, "--warmup", "1"],
            place,
        )?;
        r.pointer("/metrics/throughput_bps")
            .and_then(Json::as_f64)
            .ok_or_else(|| format!("no throughput in nictune's result: {r}").into())
    }

    /// iperf3 with its defaults (128 KiB writes), the first second omitted as nictune's
    /// warm-up; the whole client process pinned (iperf3 3.12 runs every stream in one
    /// thread, nictune's threads are all pinned to the same CPU).
    fn iperf3_stream(&self, conns: u32, place: (u32, u32), secs: u64) -> Result<f64, Error> {
        let server_ip = SERVER_IP.to_string();
        let _server = self.tool_server(place.1, "iperf3", &["-s", "-1", "-B", &server_ip])?;
        let out = run_in(
            &self.a,
            pinned(place.0, "iperf3")
                .args([
                    "-c",
                    &server_ip,
                    "-p",
                    &TOOL_PORT.to_string(),
                    "-J",
                    "-O",
                    "1",
                ])
                .args(["-t", &secs.to_string(), "-P", &conns.to_string()]),
        )?;
        let text = String::from_utf8_lossy(&out.stdout);
        compare::parse_iperf3(&text)
            .ok_or_else(|| format!("could not read iperf3's output:\n{text}").into())
    }

    fn versus_sockperf(
        &self,
        label: &str,
        place: (u32, u32),
        secs: u64,
        reps: usize,
    ) -> Result<bool, Error> {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            ours.push(self.nictune_rr(place, secs)?);
            theirs.push(self.sockperf_rr(place, secs)?);
        }
        let o = (
            median(ours.iter().map(|x| x.0).collect()),
            median(ours.iter().map(|x| x.1).collect()),
        );
        let t = SockperfSummary {
            rate: median(theirs.iter().map(|s| s.rate).collect()),
            p50_us: median(theirs.iter().map(|s| s.p50_us).collect()),
            p99_us: median(theirs.iter().map(|s| s.p99_us).collect()),
        };
        let v = SockperfRatios::of(o, &t);
        println!(
            "rr {label:<9} (client CPU {}, server CPU {}): nictune {:.0} trans/s p50 {:.1} µs | sockperf {:.0} trans/s p50 {:.1} µs | rate ratio {:.3} (target ≥ 0.95), p50 ratio {:.3} (target 0.90–1.10) {}",
            place.0, place.1, o.0, o.1, t.rate, t.p50_us, v.rate_ratio, v.p50_ratio,
            if v.meets_target() { "MET" } else { "NOT MET" }
        );
        Ok(v.meets_target())
    }

    /// One nictune RR run: (trans/s, p50 µs); 0.4 s warm-up as sockperf's excluded start.
    fn nictune_rr(&self, place: (u32, u32), secs: u64) -> Result<(f64, f64), Error> {
        let d = secs.to_string();
        let r = self.nictune(
            "rr",
            &[
                "--request-size",
                MESSAGE,
                "--response-size",
                MESSAGE,
                "--duration",
                &d,
                "--warmup",
                "0.4",
            ],
            place,
        )?;
        let rate = r
            .pointer("/metrics/transactions_per_sec")
            .and_then(Json::as_f64);
        let p50 = r.pointer("/metrics/latency_us/p50").and_then(Json::as_f64);
        rate.zip(p50)
            .ok_or_else(|| format!("no rate or p50 in nictune's result: {r}").into())
    }

    fn sockperf_rr(&self, place: (u32, u32), secs: u64) -> Result<SockperfSummary, Error> {
        let server_ip = SERVER_IP.to_string();
        let server = ["server", "--tcp", "-i", &server_ip];
        let _server = self.tool_server(place.1, "sockperf", &server)?;
        let out = run_in(
            &self.a,
            pinned(place.0, "sockperf")
                .args(["ping-pong", "--tcp", "--full-rtt", "-i", &server_ip])
                .args(["-p", &TOOL_PORT.to_string()])
                .args(["-m", MESSAGE, "-t", &secs.to_string()]),
        )?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        compare::parse_sockperf(&text)
            .ok_or_else(|| format!("could not read sockperf's output:\n{text}").into())
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        drop(self.serve.take().map(Reaped));
        for ns in [&self.a, &self.b] {
            let _ = lab::delete_netns(ns);
        }
    }
}
