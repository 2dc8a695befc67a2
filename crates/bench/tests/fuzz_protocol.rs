//! Fuzz tier: the `serve` control protocol decoder, on both ends (requests as `serve` reads
//! them, replies as `bench --peer` reads them). Real messages serialized by the protocol
//! module, mutated structure-aware, and arbitrary bytes: decoding never panics, never reads
//! past one line of at most `MAX_LINE` bytes, stays within the time budget, and a decoded
//! start request is checked against the serve limits without panicking.

use nictune_bench::accounting::Accounting;
use nictune_bench::protocol::{self, PeerReport, Reply, Request, WireError, MAX_LINE};
use nictune_bench::{BenchSpec, Limits, TestKind};
use nictune_fuzz::{any_bytes, bounded, config, mutated};
use proptest::prelude::*;
use std::io::{self, BufReader, Read};

/// Every message type as the protocol writes it, one per line.
fn seeds() -> Vec<String> {
    let mut spec = BenchSpec::new(TestKind::Rr);
    spec.connections = 4;
    spec.rate = Some(20_000.0);
    let requests = [
        Request::Hello {
            version: protocol::VERSION,
            token: "test-token-0123456789".into(),
        },
        Request::Start { spec },
        Request::Start {
            spec: BenchSpec::new(TestKind::Stream),
        },
        Request::Measure,
        Request::Stop {
            transactions: Some(123_456),
            bytes: Some(7),
        },
    ];
    let report = PeerReport {
        accounting: Some(Accounting {
            interval_s: 5.0,
            steal: 0.01,
            ..Accounting::default()
        }),
        napi_ids: vec![376, 377],
        cpus: vec![0, 1],
        served: 128_000,
        refused: 0,
        capped: false,
        sysctls: [("net.core.busy_poll".to_string(), 50)].into(),
    };
    let replies = [
        Reply::Welcome {
            version: protocol::VERSION,
        },
        Reply::Ready {
            port: 40_000,
            load_port: Some(40_001),
        },
        Reply::Report(Box::new(report)),
        Reply::Error {
            message: "peer busy: a test from 127.0.0.1:5 is running, retry in ~3s".into(),
        },
    ];
    let line = |v: Vec<u8>| String::from_utf8(v).unwrap();
    let mut out: Vec<String> = Vec::new();
    for r in &requests {
        let mut buf = Vec::new();
        protocol::send(&mut buf, r).unwrap();
        out.push(line(buf));
    }
    for r in &replies {
        let mut buf = Vec::new();
        protocol::send(&mut buf, r).unwrap();
        out.push(line(buf));
    }
    out
}

/// A reader that counts what is taken from it.
struct Counting<R> {
    inner: R,
    taken: usize,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.taken += n;
        Ok(n)
    }
}

/// Decodes `bytes` as requests and as replies, message by message.
fn decode(bytes: &[u8]) {
    bounded("protocol decoder", || {
        let mut r = BufReader::new(bytes);
        for _ in 0..=bytes.len() {
            match protocol::recv::<Request, _>(&mut r) {
                Ok(Request::Start { spec }) => {
                    // What serve computes from a spec it accepted.
                    if spec.validate(&Limits::SERVE).is_ok() {
                        assert!(spec.total().0 <= 200 * 1_000_000_000);
                    }
                }
                Ok(_) | Err(WireError::Malformed(_)) => {}
                Err(_) => break,
            }
        }
        let mut r = BufReader::new(bytes);
        for _ in 0..=bytes.len() {
            if let Err(WireError::Closed | WireError::TooLong | WireError::Io(_)) =
                protocol::recv::<Reply, _>(&mut r)
            {
                break;
            }
        }
    });
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_protocol_messages_mutated(text in mutated(vec![seeds().concat()])) {
        decode(text.as_bytes());
    }

    #[test]
    fn fuzz_protocol_arbitrary_bytes(bytes in any_bytes()) {
        decode(&bytes);
    }
}

/// An endless line is cut at the limit: the decoder never holds more than one line.
#[test]
fn fuzz_protocol_an_endless_line_is_refused_at_the_limit() {
    let mut r = BufReader::new(Counting {
        inner: io::repeat(b'{'),
        taken: 0,
    });
    let err = bounded("endless line", || {
        protocol::recv::<Request, _>(&mut r).unwrap_err()
    });
    assert!(matches!(err, WireError::TooLong), "{err}");
    let slack = r.capacity();
    assert!(
        r.get_ref().taken <= MAX_LINE + 1 + slack,
        "{}",
        r.get_ref().taken
    );
}
