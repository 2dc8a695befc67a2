//! The control protocol between `nictune bench --peer` and `nictune serve`.
//!
//! One TCP connection, one JSON object per line, each at most [`MAX_LINE`] bytes. Unknown
//! fields and message types are rejected. The exchange:
//!
//! ```text
//! client                                   server
//! {"type":"hello","version":1,"token":…}  →
//!                                         ←  {"type":"welcome","version":1}   (or error, close)
//! {"type":"start","spec":{…}}             →     checked against Limits::SERVE
//!                                         ←  {"type":"ready","port":N}        data listener up
//!   … clients connect to port N, warm up …
//! {"type":"measure"}                      →     server samples its counters
//!   … measured window …
//! {"type":"stop"}                         →     server samples again, stops the test
//!                                         ←  {"type":"report",…}
//! ```

use crate::accounting::Accounting;
use crate::spec::BenchSpec;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::io::{self, BufRead, Write};

/// Protocol version; a peer with another version is refused.
pub const VERSION: u32 = 1;
/// How a refusal because another client's test is running starts (`peer busy: a test from
/// ADDR is running, retry in ~Ns`); clients tell it apart from other refusals by it.
pub const BUSY: &str = "peer busy:";
/// Longest accepted line, bytes (a report with per-CPU figures for 512 CPUs fits).
pub const MAX_LINE: usize = 256 * 1024;

/// Client to server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    Hello {
        version: u32,
        token: String,
    },
    Start {
        spec: BenchSpec,
    },
    Measure,
    /// Ends the test; the client's counts let the server derive its service demand.
    Stop {
        #[serde(default)]
        transactions: Option<u64>,
        #[serde(default)]
        bytes: Option<u64>,
    },
}

/// Server to client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    Welcome { version: u32 },
    Ready { port: u16 },
    Report(Box<PeerReport>),
    Error { message: String },
}

/// What the server side measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PeerReport {
    pub accounting: Option<Accounting>,
    pub napi_ids: Vec<u32>,
    pub cpus: Vec<u32>,
    pub served: u64,
    pub refused: u64,
}

/// Why a line was not a valid message.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("connection closed")]
    Closed,
    #[error("message longer than {MAX_LINE} bytes")]
    TooLong,
    #[error("malformed message: {0}")]
    Malformed(String),
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Writes one message as a line.
pub fn send<T: Serialize>(w: &mut impl Write, msg: &T) -> io::Result<()> {
    let mut line = serde_json::to_vec(msg).map_err(io::Error::other)?;
    line.push(b'\n');
    w.write_all(&line)?;
    w.flush()
}

/// Reads one message line, never buffering more than [`MAX_LINE`] bytes.
pub fn recv<T: DeserializeOwned, R: BufRead>(r: &mut R) -> Result<T, WireError> {
    let mut line = Vec::new();
    let mut limited = io::Read::take(&mut *r, MAX_LINE as u64 + 1);
    let n = limited.read_until(b'\n', &mut line)?;
    if n == 0 {
        return Err(WireError::Closed);
    }
    if line.last() != Some(&b'\n') {
        return Err(if n > MAX_LINE {
            WireError::TooLong
        } else {
            WireError::Closed
        });
    }
    serde_json::from_slice(&line).map_err(|e| WireError::Malformed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::TestKind;

    fn parse(text: &str) -> Result<Request, WireError> {
        recv(&mut io::Cursor::new(text.as_bytes()))
    }

    #[test]
    fn messages_round_trip_as_single_lines() {
        let msgs = [
            Request::Hello {
                version: 1,
                token: "t".into(),
            },
            Request::Start {
                spec: BenchSpec::new(TestKind::Rr),
            },
            Request::Measure,
            Request::Stop {
                transactions: Some(5),
                bytes: None,
            },
        ];
        let mut buf = Vec::new();
        for m in &msgs {
            send(&mut buf, m).unwrap();
        }
        assert_eq!(buf.iter().filter(|&&b| b == b'\n').count(), 4);
        let mut r = io::Cursor::new(buf);
        for m in &msgs {
            assert_eq!(&recv::<Request, _>(&mut r).unwrap(), m);
        }
        assert!(matches!(recv::<Request, _>(&mut r), Err(WireError::Closed)));
    }

    #[test]
    fn wire_format_is_stable() {
        let mut buf = Vec::new();
        send(
            &mut buf,
            &Request::Hello {
                version: 1,
                token: "abc".into(),
            },
        )
        .unwrap();
        assert_eq!(
            buf,
            b"{\"type\":\"hello\",\"version\":1,\"token\":\"abc\"}\n"
        );
        let mut buf = Vec::new();
        send(&mut buf, &Reply::Ready { port: 4242 }).unwrap();
        assert_eq!(buf, b"{\"type\":\"ready\",\"port\":4242}\n");
    }

    #[test]
    fn malformed_unknown_and_oversized_messages_are_rejected() {
        for bad in [
            "not json\n",
            "{\"type\":\"shell\",\"cmd\":\"rm\"}\n",
            "{\"type\":\"hello\",\"version\":1}\n",
            "{\"type\":\"hello\",\"version\":1,\"token\":\"t\",\"extra\":1}\n",
            "{\"type\":\"start\",\"spec\":{\"test\":\"rr\"}}\n",
            "[]\n",
        ] {
            assert!(matches!(parse(bad), Err(WireError::Malformed(_))), "{bad}");
        }
        let huge = format!("{}\n", "x".repeat(MAX_LINE + 10));
        assert!(matches!(parse(&huge), Err(WireError::TooLong)));
        assert!(matches!(
            parse("{\"type\":\"stop\"}"),
            Err(WireError::Closed)
        ));
        assert!(matches!(
            parse("{\"type\":\"stop\"}\n"),
            Ok(Request::Stop {
                transactions: None,
                ..
            })
        ));
    }
}
