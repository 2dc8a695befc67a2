//! What to measure: the test, its sizes and duration, pacing and CPU placement.
//!
//! A [`BenchSpec`] is plain data, checked once by [`BenchSpec::validate`] before anything
//! touches the system; the same checks bound what `serve` accepts from a peer (with the
//! tighter [`Limits::SERVE`]).

use nictune_core::error::InvalidInput;
use nictune_core::units::{Bytes, Nanos};
use serde::{Deserialize, Serialize};

/// The kind of test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TestKind {
    /// TCP request/response, netperf TCP_RR semantics.
    Rr,
    /// UDP request/response, netperf UDP_RR semantics.
    UdpRr,
    /// TCP bulk transfer, client to server.
    Stream,
    /// UDP echo probes at a fixed interval, like `ping` (open loop).
    Ping,
}

impl TestKind {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            TestKind::Rr => "rr",
            TestKind::UdpRr => "udp-rr",
            TestKind::Stream => "stream",
            TestKind::Ping => "ping",
        }
    }
}

/// One measurement, as the user asked for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchSpec {
    /// What traffic to run: rr, udp-rr, stream or ping.
    pub test: TestKind,
    /// Measured interval (warm-up comes on top).
    #[serde(rename = "duration_ns")]
    pub duration: Nanos,
    /// Run before the measured interval and excluded from every figure.
    #[serde(rename = "warmup_ns")]
    pub warmup: Nanos,
    /// Parallel connections (flows), one client thread each.
    pub connections: u32,
    /// Request size (RR) or write size (stream) or probe size (ping).
    #[serde(rename = "request_bytes")]
    pub request_size: Bytes,
    /// Response size (RR); ignored by stream; ping echoes the probe.
    #[serde(rename = "response_bytes")]
    pub response_size: Bytes,
    /// Transactions in flight per connection (netperf `-b` burst + 1).
    pub outstanding: u32,
    /// Open loop: total transactions (or probes) per second, latency taken from each
    /// request's intended send time. `None` = closed loop as fast as responses come back.
    #[serde(rename = "rate_per_sec")]
    pub rate: Option<f64>,
    /// Pin the client threads to this CPU.
    pub client_cpu: Option<u32>,
    /// Pin the server threads to this CPU.
    pub server_cpu: Option<u32>,
    /// Ping only: ICMP echo (through a ping socket, or a raw socket as root where ping
    /// sockets are not allowed) instead of UDP echo.
    #[serde(default)]
    pub icmp: bool,
    /// Latency under load: bulk connections that run beside the probe (rr, udp-rr, ping),
    /// started and stopped with it, to the same server. `None`: an idle path.
    #[serde(default)]
    pub load: Option<Load>,
    /// Stream only: send with sendfile(2) from a memory file instead of write(2) (no copy
    /// from user space; as `iperf3 -Z`).
    #[serde(default)]
    pub zerocopy: bool,
}

/// Background bulk load during a latency test (`--load stream[:N]`): `connections` TCP
/// streams from client to server, each writing `write_size`-byte chunks as fast as the
/// socket takes them, through the warm-up and the measured window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Load {
    /// How many bulk TCP streams run beside the probe (at most `Limits::max_connections`).
    pub connections: u32,
    /// Bytes per write of each stream (JSON `write_bytes`).
    #[serde(rename = "write_bytes")]
    pub write_size: Bytes,
}

impl Load {
    /// The write size of a load stream: the same as a stream test's default.
    pub const WRITE: Bytes = Bytes(STREAM_WRITE);

    /// `connections` streams of [`Load::WRITE`]-byte writes.
    pub fn streams(connections: u32) -> Load {
        Load {
            connections,
            write_size: Load::WRITE,
        }
    }

    /// Parses `stream` or `stream:N` (N streams; one without it).
    pub fn parse(text: &str) -> Result<Load, InvalidInput> {
        let bad = || {
            InvalidInput::new(
                "--load",
                text,
                "stream or stream:N, N parallel bulk connections (for example stream:4)",
            )
        };
        let (kind, n) = text.split_once(':').unwrap_or((text, "1"));
        if kind != "stream" {
            return Err(bad());
        }
        let n: u32 = n.parse().map_err(|_| bad())?;
        Ok(Load::streams(n))
    }

    /// The stream test each load connection runs, timed like `probe`.
    pub fn stream_spec(&self, probe: &BenchSpec) -> BenchSpec {
        let mut s = BenchSpec::new(TestKind::Stream);
        s.duration = probe.duration;
        s.warmup = probe.warmup;
        s.connections = self.connections;
        s.request_size = self.write_size;
        s.client_cpu = probe.client_cpu;
        s.server_cpu = probe.server_cpu;
        s
    }
}

/// Bytes per write of a stream test by default: as iperf3's default for TCP (128 KiB), so
/// the two compare like for like; small writes cost a system call per few segments.
pub const STREAM_WRITE: u64 = 128 * 1024;

impl BenchSpec {
    /// The defaults for `test`: 10 s measured after 1 s warm-up, one connection, 1-byte
    /// messages (128 KiB writes for stream, 64-byte probes at 5/s for ping), unpinned.
    pub fn new(test: TestKind) -> BenchSpec {
        let (request, rate) = match test {
            TestKind::Stream => (STREAM_WRITE, None),
            TestKind::Ping => (64, Some(5.0)),
            _ => (1, None),
        };
        BenchSpec {
            test,
            duration: Nanos::from_secs(10),
            warmup: Nanos::from_secs(1),
            connections: 1,
            request_size: Bytes(request),
            response_size: Bytes(if test == TestKind::Ping { request } else { 1 }),
            outstanding: 1,
            rate,
            client_cpu: None,
            server_cpu: None,
            icmp: false,
            load: None,
            zerocopy: false,
        }
    }

    /// Checks every field against `limits`; the first bad one is reported.
    pub fn validate(&self, limits: &Limits) -> Result<(), InvalidInput> {
        check_duration(self.duration, limits)?;
        check_range(
            "--warmup",
            self.warmup.0,
            0,
            Nanos::from_secs(10).0,
            "0 to 10 s",
        )?;
        check_range(
            "--connections",
            self.connections.into(),
            1,
            limits.max_connections.into(),
            &format!("1 to {}", limits.max_connections),
        )?;
        check_size(
            "--request-size",
            self.request_size,
            self.min_request(),
            limits,
        )?;
        check_size("--response-size", self.response_size, 1, limits)?;
        check_range(
            "--outstanding",
            self.outstanding.into(),
            1,
            MAX_OUTSTANDING.into(),
            &format!("1 to {MAX_OUTSTANDING}"),
        )?;
        if self.zerocopy && self.test != TestKind::Stream {
            return Err(InvalidInput::new(
                "--zerocopy",
                self.test.name(),
                "only with the stream test",
            ));
        }
        if self.icmp && self.test != TestKind::Ping {
            return Err(InvalidInput::new(
                "--icmp",
                self.test.name(),
                "only with the ping test",
            ));
        }
        check_rate(self.rate, self.test, limits)?;
        self.load
            .map_or(Ok(()), |l| check_load(&l, self.test, limits))
    }

    /// Checks the CPUs the spec pins to against `allowed`, the CPUs this process may run on
    /// ([`crate::allowed_cpus`]): `--client-cpu` where the client runs here, and
    /// `--server-cpu` where the server does (not for a peer's server, whose own `serve`
    /// checks it). A CPU outside the set would fail at `sched_setaffinity` after the testbed
    /// or the peer's test had started.
    pub fn check_cpus(&self, allowed: &[u32], here: Sides) -> Result<(), InvalidInput> {
        let pins = [
            ("--client-cpu", self.client_cpu, here != Sides::Server),
            ("--server-cpu", self.server_cpu, here != Sides::Client),
        ];
        for (flag, cpu, checked) in pins {
            match cpu {
                Some(cpu) if checked && !allowed.contains(&cpu) => {
                    let list: nictune_core::cpuset::CpuSet = allowed.iter().copied().collect();
                    // Said to the client: on the serving side, "this process" is not its own.
                    let who = match here {
                        Sides::Server => "the peer's `nictune serve`",
                        Sides::Both | Sides::Client => "this process",
                    };
                    return Err(InvalidInput::new(
                        flag,
                        cpu,
                        format!("a CPU {who} may run on: {}", list.to_list()),
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Ping probes carry a sequence number and a timestamp.
    fn min_request(&self) -> u64 {
        if self.test == TestKind::Ping {
            crate::engine::ping::PROBE_HEADER as u64
        } else {
            1
        }
    }

    /// Warm-up plus the measured interval.
    pub fn total(&self) -> Nanos {
        self.warmup + self.duration
    }
}

/// Most requests in flight per connection (`--outstanding`).
pub const MAX_OUTSTANDING: u32 = 64;

/// Which sides of a test run on this machine ([`BenchSpec::check_cpus`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sides {
    /// Client and server (loopback, or a testbed's two namespaces).
    Both,
    /// The client only: the server is a peer's `nictune serve`.
    Client,
    /// The server only: `nictune serve` answering a peer's client.
    Server,
}

/// Bounds a spec must stay within.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Longest measured interval (`--duration`).
    pub max_duration: Nanos,
    /// Most parallel connections, and most load streams.
    pub max_connections: u32,
    /// Largest request, response or write size.
    pub max_message: Bytes,
    /// Highest open-loop rate (`--rate`), transactions or probes per second in total.
    pub max_rate: f64,
    /// Bytes the answering side may send in one test (responses and echoes; it only ever
    /// receives bulk data). `None`: no cap.
    pub max_sent: Option<Bytes>,
}

impl Limits {
    /// What the local command accepts.
    pub const LOCAL: Limits = Limits {
        max_duration: Nanos::from_secs(3600),
        max_connections: 256,
        max_message: Bytes(16 * 1024 * 1024),
        max_rate: 10_000_000.0,
        max_sent: None,
    };
    /// What `serve` accepts from a peer: short, small and bounded, so it cannot be turned
    /// into a long-running traffic source. 256 connections (plus as many load streams)
    /// cover the field cases' many-flow loads (150 concurrent senders).
    pub const SERVE: Limits = Limits {
        max_duration: Nanos::from_secs(120),
        max_connections: 256,
        max_message: Bytes(1024 * 1024),
        max_rate: 1_000_000.0,
        max_sent: Some(Bytes(16 << 30)),
    };
}

fn check_load(load: &Load, test: TestKind, limits: &Limits) -> Result<(), InvalidInput> {
    if test == TestKind::Stream {
        return Err(InvalidInput::new(
            "--load",
            "stream",
            "a load beside rr, udp-rr or ping (a stream test is itself the load)",
        ));
    }
    check_range(
        "--load stream:N",
        load.connections.into(),
        1,
        limits.max_connections.into(),
        &format!("1 to {} load connections", limits.max_connections),
    )?;
    check_size("load write size", load.write_size, 1, limits)
}

fn check_range(what: &str, v: u64, lo: u64, hi: u64, allowed: &str) -> Result<(), InvalidInput> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(InvalidInput::new(what, v, allowed))
    }
}

fn check_duration(d: Nanos, limits: &Limits) -> Result<(), InvalidInput> {
    if d >= Nanos::from_millis(100) && d <= limits.max_duration {
        return Ok(());
    }
    let allowed = format!("0.1 to {} seconds", limits.max_duration.as_secs_f64());
    Err(InvalidInput::new(
        "--duration",
        format!("{} s", d.as_secs_f64()),
        &allowed,
    ))
}

fn check_size(what: &str, b: Bytes, min: u64, limits: &Limits) -> Result<(), InvalidInput> {
    let allowed = format!("{min} to {} bytes", limits.max_message.0);
    check_range(what, b.0, min, limits.max_message.0, &allowed)
}

fn check_rate(rate: Option<f64>, test: TestKind, limits: &Limits) -> Result<(), InvalidInput> {
    let Some(r) = rate else {
        return match test {
            TestKind::Ping => Err(InvalidInput::new("--rate", "none", "a probe rate for ping")),
            _ => Ok(()),
        };
    };
    if test == TestKind::Stream {
        return Err(InvalidInput::new(
            "--rate",
            r,
            "no rate for stream (it is a bulk test)",
        ));
    }
    if r.is_finite() && r >= 0.1 && r <= limits.max_rate {
        Ok(())
    } else {
        Err(InvalidInput::new(
            "--rate",
            r,
            format!("0.1 to {} per second", limits.max_rate),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_for_every_test() {
        for t in [
            TestKind::Rr,
            TestKind::UdpRr,
            TestKind::Stream,
            TestKind::Ping,
        ] {
            BenchSpec::new(t).validate(&Limits::LOCAL).unwrap();
        }
    }

    #[test]
    fn bad_values_name_the_flag_and_the_range() {
        let mut s = BenchSpec::new(TestKind::Rr);
        s.connections = 0;
        let e = s.validate(&Limits::LOCAL).unwrap_err();
        assert_eq!(e.what, "--connections");
        assert_eq!(e.allowed, "1 to 256");
        s.connections = 1;
        s.duration = Nanos::from_secs(500);
        let e = s.validate(&Limits::SERVE).unwrap_err();
        assert_eq!(e.what, "--duration");
        assert!(e.allowed.contains("120"), "{}", e.allowed);
    }

    #[test]
    fn stream_takes_no_rate_and_ping_needs_one() {
        let mut s = BenchSpec::new(TestKind::Stream);
        s.rate = Some(10.0);
        assert_eq!(s.validate(&Limits::LOCAL).unwrap_err().what, "--rate");
        let mut p = BenchSpec::new(TestKind::Ping);
        p.rate = None;
        assert_eq!(p.validate(&Limits::LOCAL).unwrap_err().what, "--rate");
        p.rate = Some(f64::NAN);
        assert_eq!(p.validate(&Limits::LOCAL).unwrap_err().what, "--rate");
    }

    #[test]
    fn ping_probes_must_hold_their_header() {
        let mut p = BenchSpec::new(TestKind::Ping);
        p.request_size = Bytes(4);
        assert_eq!(
            p.validate(&Limits::LOCAL).unwrap_err().what,
            "--request-size"
        );
    }

    #[test]
    fn load_parses_stream_with_an_optional_count_and_is_bounded() {
        assert_eq!(Load::parse("stream").unwrap().connections, 1);
        assert_eq!(Load::parse("stream:150").unwrap().connections, 150);
        for bad in ["bulk", "stream:", "stream:x", "stream:-1", ""] {
            let e = Load::parse(bad).unwrap_err();
            assert_eq!(e.what, "--load", "{bad}");
            assert!(e.allowed.contains("stream:N"), "{}", e.allowed);
        }
        let mut p = BenchSpec::new(TestKind::Ping);
        p.load = Some(Load::streams(0));
        assert_eq!(
            p.validate(&Limits::SERVE).unwrap_err().what,
            "--load stream:N"
        );
        p.load = Some(Load::streams(257));
        assert_eq!(
            p.validate(&Limits::SERVE).unwrap_err().allowed,
            "1 to 256 load connections"
        );
        p.load = Some(Load::streams(256));
        p.validate(&Limits::SERVE).unwrap();
        let mut s = BenchSpec::new(TestKind::Stream);
        s.load = Some(Load::streams(1));
        assert_eq!(s.validate(&Limits::LOCAL).unwrap_err().what, "--load");
    }

    #[test]
    fn pins_are_checked_on_the_sides_that_run_here_only() {
        let mut s = BenchSpec::new(TestKind::Rr);
        s.client_cpu = Some(1);
        s.server_cpu = Some(5);
        let allowed = [0, 1, 2];
        let e = s.check_cpus(&allowed, Sides::Both).unwrap_err();
        assert_eq!((e.what.as_str(), e.value.as_str()), ("--server-cpu", "5"));
        assert_eq!(e.allowed, "a CPU this process may run on: 0-2");
        // A peer's server is pinned on the peer; `serve` checks only its own side.
        s.check_cpus(&allowed, Sides::Client).unwrap();
        s.client_cpu = Some(3);
        let e = s.check_cpus(&allowed, Sides::Client).unwrap_err();
        assert_eq!(e.what, "--client-cpu");
        let e = s.check_cpus(&[0, 5], Sides::Server);
        assert!(
            e.is_ok(),
            "the client's CPU is not the server's to check: {e:?}"
        );
        let e = s.check_cpus(&[0, 1], Sides::Server).unwrap_err();
        assert_eq!(
            e.allowed,
            "a CPU the peer's `nictune serve` may run on: 0-1"
        );
        s.client_cpu = None;
        s.server_cpu = None;
        s.check_cpus(&[], Sides::Both).unwrap();
    }

    #[test]
    fn a_load_stream_is_timed_and_placed_like_its_probe() {
        let mut p = BenchSpec::new(TestKind::Rr);
        p.duration = Nanos::from_secs(3);
        p.warmup = Nanos::from_millis(200);
        p.client_cpu = Some(1);
        let s = Load::streams(4).stream_spec(&p);
        assert_eq!(
            (s.test, s.duration, s.warmup, s.connections, s.client_cpu),
            (TestKind::Stream, p.duration, p.warmup, 4, Some(1))
        );
        assert_eq!(s.request_size, Load::WRITE);
        s.validate(&Limits::SERVE).unwrap();
    }
}
