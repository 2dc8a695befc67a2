//! `nictune bench`: one live measurement — request/response, stream or ping — on the
//! namespace testbed (default), loopback, or against a `nictune serve` peer.

use super::testbed::{self, TestbedArg};
use crate::output::{Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use nictune_bench::cancel::Cancel;
use nictune_bench::{
    peer, BenchError, BenchSpec, Limits, PeerTarget, ServerSide, Sides, TestKind, Testbed, Token,
    MAX_OUTSTANDING,
};
use nictune_core::duration;
use nictune_core::error::InvalidInput;
use nictune_core::units::{Bytes, Nanos};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  sudo nictune bench rr --duration 5 --json
  sudo nictune bench rr --client-cpu 0 --server-cpu 0
  sudo nictune bench rr --testbed e1000 --duration 5     (Linux's e1000 driver in a QEMU guest)
  nictune bench udp-rr --loopback --connections 4
  nictune bench rr --loopback --rate 20000        (open loop: no coordinated omission)
  sudo nictune bench ping --load stream:8 --rate 100   (latency under 8 bulk streams)
  NICTUNE_TOKEN=... nictune bench stream --peer 198.18.0.2")]
// `--connections -5` reaches the flag's own check instead of reading as an unknown flag.
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// Test: rr (TCP request/response), udp-rr, stream (TCP bulk) or ping (probes).
    #[arg(value_enum)]
    pub test: TestArg,
    /// Built-in testbed (needs root): `veth` (the default) joins two fresh network
    /// namespaces; `e1000` and `e1000e` boot a QEMU guest running Linux's own driver on an
    /// emulated Intel NIC (set up with `scripts/install-guest`).
    #[arg(long, value_enum, value_name = "KIND", num_args = 0..=1, default_missing_value = "veth",
          conflicts_with_all = ["loopback", "peer"])]
    pub testbed: Option<TestbedArg>,
    /// Run both sides on 127.0.0.1.
    #[arg(long, conflicts_with = "peer")]
    pub loopback: bool,
    /// Measure against `nictune serve` on HOST[:PORT] (port 12866 by default).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub peer: Option<String>,
    /// File holding the peer's token (else $NICTUNE_TOKEN).
    #[arg(long, value_name = "PATH", requires = "peer")]
    pub token_file: Option<PathBuf>,
    /// Measured time (warm-up comes on top): seconds (10) or with a unit (10s, 500ms).
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = duration::arg)]
    pub duration: Nanos,
    /// Warm-up, excluded from every figure (`--warm-up` is accepted too).
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = duration::arg,
          alias = "warm-up")]
    pub warmup: Nanos,
    /// Parallel connections.
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(Limits::LOCAL.max_connections)))]
    pub connections: u32,
    /// Request size (rr, udp-rr), write size (stream) or probe size (ping), bytes.
    #[arg(long, value_name = "B", value_parser = message_size())]
    pub request_size: Option<u64>,
    /// Response size, bytes (rr, udp-rr).
    #[arg(long, value_name = "B", value_parser = message_size())]
    pub response_size: Option<u64>,
    /// Requests in flight per connection (netperf -b burst + 1).
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_OUTSTANDING)))]
    pub outstanding: u32,
    /// Open loop: total requests (or probes) per second; latency from intended send times.
    #[arg(long, value_name = "PPS")]
    pub rate: Option<f64>,
    /// Pin the client to this CPU.
    #[arg(long, value_name = "N", value_parser = cpu_id())]
    pub client_cpu: Option<u32>,
    /// Pin the server to this CPU.
    #[arg(long, value_name = "N", value_parser = cpu_id())]
    pub server_cpu: Option<u32>,
    /// ping: ICMP echo instead of UDP echo, through a ping socket where
    /// net.ipv4.ping_group_range admits the caller's group, else through a raw socket as root
    /// (the result's icmp_socket says which; the testbed allows ping sockets in its own
    /// namespace).
    #[arg(long)]
    pub icmp: bool,
    /// Latency under load (rr, udp-rr, ping): run N bulk TCP streams (128 KiB writes)
    /// to the same server beside the probe, started and stopped with it; the result shows
    /// the probe's latency with the load's throughput and CPU.
    #[arg(long, value_name = "stream[:N]", value_parser = parse_load)]
    pub load: Option<nictune_bench::Load>,
    /// stream: send with sendfile(2) from a memory file, without copying each write from
    /// user space (as iperf3 -Z).
    #[arg(long)]
    pub zerocopy: bool,
}

/// A request or response size: 1 byte up to the largest message (`-1` is out of range, not an
/// unparsable number).
fn message_size() -> clap::builder::RangedI64ValueParser<u64> {
    let max = i64::try_from(Limits::LOCAL.max_message.0).unwrap_or(i64::MAX);
    clap::builder::RangedI64ValueParser::new().range(1..=max)
}

/// A CPU id, 0 to [`nictune_core::cpuset::MAX_CPU`].
fn cpu_id() -> clap::builder::RangedI64ValueParser<u32> {
    clap::builder::RangedI64ValueParser::new().range(0..=i64::from(nictune_core::cpuset::MAX_CPU))
}

fn parse_load(text: &str) -> std::result::Result<nictune_bench::Load, String> {
    nictune_bench::Load::parse(text).map_err(|e| e.to_string())
}

/// The test names on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum TestArg {
    Rr,
    UdpRr,
    Stream,
    Ping,
}

impl From<TestArg> for TestKind {
    fn from(t: TestArg) -> TestKind {
        match t {
            TestArg::Rr => TestKind::Rr,
            TestArg::UdpRr => TestKind::UdpRr,
            TestArg::Stream => TestKind::Stream,
            TestArg::Ping => TestKind::Ping,
        }
    }
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    let spec = spec_of(&args)?;
    spec.validate(&Limits::LOCAL)
        .hint("see `nictune bench --help` for the allowed values")?;
    // Before any testbed or guest exists: a peer's or a guest's server is pinned there.
    let here = match args.peer.is_some() || args.testbed.and_then(TestbedArg::nic).is_some() {
        true => Sides::Client,
        false => Sides::Both,
    };
    spec.check_cpus(&nictune_bench::allowed_cpus()?, here)
        .hint("`nproc` and `taskset -p $$` show the CPUs this shell may use")?;
    let cancel = Cancel::new();
    cancel
        .on_signals()
        .context("installing the Ctrl-C handler")?;
    let progress = ctx.progress();
    let result = match (&args.peer, args.loopback) {
        (Some(peer), _) => {
            let target = peer_target(peer, args.token_file.as_ref())?;
            measure(&spec, ServerSide::Peer(&target), progress.as_ref(), &cancel)?
        }
        (None, true) => measure(&spec, ServerSide::Loopback, progress.as_ref(), &cancel)?,
        (None, false) if args.testbed.and_then(TestbedArg::nic).is_some() => {
            let nic = args.testbed.and_then(TestbedArg::nic).expect("checked");
            measure_guest(&spec, nic, ctx.privilege, progress.as_ref(), &cancel)?
        }
        (None, false) => {
            let bed = Testbed::create(ctx.privilege).map_err(testbed_hint)?;
            let r = measure(&spec, ServerSide::Testbed(&bed), progress.as_ref(), &cancel);
            bed.destroy().context("removing the testbed")?;
            r?
        }
    };
    ctx.emit("bench", &result, nictune_bench::text::render)?;
    Ok(Outcome::Success)
}

fn measure(
    spec: &BenchSpec,
    target: ServerSide<'_>,
    progress: &dyn nictune_core::progress::Progress,
    cancel: &Cancel,
) -> Result<nictune_bench::BenchResult> {
    nictune_bench::run_cancellable(spec, target, progress, cancel)
        .map_err(peer_hint)
        .context("measuring")
}

/// The next step for a peer that is busy or went silent; other errors unchanged.
fn peer_hint(e: BenchError) -> anyhow::Error {
    let hint = match &e {
        BenchError::PeerBusy { .. } => "one test at a time per `nictune serve`: retry then",
        BenchError::PeerSilent { .. } => {
            "check that `nictune serve` still runs on the peer and that the path to it is up"
        }
        _ => return anyhow::Error::new(e),
    };
    Err::<(), _>(e).hint(hint).unwrap_err()
}

/// One measurement against a freshly booted real-driver guest, removed afterwards.
fn measure_guest(
    spec: &BenchSpec,
    nic: nictune_vm::Nic,
    privilege: nictune_core::privilege::Privilege,
    progress: &dyn nictune_core::progress::Progress,
    cancel: &Cancel,
) -> Result<nictune_bench::BenchResult> {
    let lifetime = Duration::from_secs(180) + Duration::from_nanos(spec.total().0);
    let mut bed = testbed::start_guest(nic, lifetime, privilege)?;
    let peer = bed
        .peer()
        .context("starting `nictune serve` in the guest")?;
    let before = bed.qemu_usage();
    let r = measure(spec, ServerSide::Peer(&peer), progress, cancel);
    let mut info = bed.info();
    info.qemu_cpu_cores = before.zip(bed.qemu_usage()).map(|(b, a)| a.cores_since(&b));
    bed.destroy().context("removing the guest")?;
    let mut r = r?;
    r.target = format!("testbed {}", info.kind);
    r.warnings.push(nictune_vm::bed::caveat(&info));
    r.testbed = Some(info);
    Ok(r)
}

fn testbed_hint(e: BenchError) -> anyhow::Error {
    let hint = match &e {
        BenchError::TestbedUnavailable(_) => "run as root (sudo), or measure with --loopback",
        _ => "stale testbeds are removed at the next start; `ip netns list | grep nictune-tb` shows any left",
    };
    Err::<(), _>(e).hint(hint).unwrap_err()
}

/// Turns the typed flags into a spec (the values are checked by `BenchSpec::validate`).
fn spec_of(a: &Args) -> Result<BenchSpec> {
    let mut s = BenchSpec::new(a.test.into());
    s.duration = a.duration;
    s.warmup = a.warmup;
    s.connections = a.connections;
    if let Some(b) = a.request_size {
        s.request_size = Bytes(b);
        if s.test == TestKind::Ping {
            s.response_size = Bytes(b);
        }
    }
    if let Some(b) = a.response_size {
        s.response_size = Bytes(b);
    }
    s.outstanding = a.outstanding;
    s.rate = a.rate.or(s.rate);
    s.client_cpu = a.client_cpu;
    s.server_cpu = a.server_cpu;
    s.icmp = a.icmp;
    s.load = a.load;
    s.zerocopy = a.zerocopy;
    Ok(s)
}

/// Resolves HOST[:PORT] and reads the token.
pub(crate) fn peer_target(peer: &str, token_file: Option<&PathBuf>) -> Result<PeerTarget> {
    let addr = resolve(peer)?;
    let token = Token::load(token_file.map(PathBuf::as_path))
        .hint("use the token the peer's `nictune serve` was started with")?;
    Ok(PeerTarget::new(addr, token))
}

fn resolve(peer: &str) -> Result<SocketAddr> {
    let with_port = peer.to_socket_addrs().ok().and_then(|mut it| it.next());
    let host = peer.trim_start_matches('[').trim_end_matches(']');
    let bare = || {
        (host, peer::DEFAULT_PORT)
            .to_socket_addrs()
            .ok()
            .and_then(|mut it| it.next())
    };
    with_port.or_else(bare).ok_or_else(|| {
        let bad = InvalidInput::new("--peer", peer, "HOST or HOST:PORT that resolves");
        Err::<(), _>(bad)
            .hint("for example --peer 198.18.0.2 or --peer server.example:12866")
            .unwrap_err()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_addresses_get_the_default_port() {
        assert_eq!(resolve("127.0.0.1").unwrap().to_string(), "127.0.0.1:12866");
        assert_eq!(resolve("127.0.0.1:99").unwrap().to_string(), "127.0.0.1:99");
        assert_eq!(resolve("[::1]").unwrap().to_string(), "[::1]:12866");
        assert_eq!(resolve("[::1]:7").unwrap().to_string(), "[::1]:7");
        assert!(resolve("no such host.invalid:x").is_err());
    }

    #[test]
    fn durations_are_bare_seconds_or_with_a_unit() {
        use clap::Parser;
        #[derive(Debug, Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let parse = |argv: &[&str]| Cli::try_parse_from(argv.iter().copied()).map(|c| c.args);
        let a = parse(&["bench", "rr", "--duration", "2", "--warm-up", "500ms"]).unwrap();
        assert_eq!(
            (a.duration, a.warmup),
            (Nanos::from_secs(2), Nanos::from_millis(500))
        );
        let a = parse(&["bench", "rr", "--duration", "2s", "--warmup", "0"]).unwrap();
        assert_eq!((a.duration, a.warmup), (Nanos::from_secs(2), Nanos::ZERO));
        let e = parse(&["bench", "rr", "--duration=-1"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--duration") && e.contains("e.g. 2s or 2"),
            "{e}"
        );
    }
}
