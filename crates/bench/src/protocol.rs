//! The control protocol between `nictune bench --peer` and `nictune serve`.
//!
//! One TCP connection, one JSON object per line, each at most [`MAX_LINE`] bytes. Unknown
//! fields and message types are rejected. The exchange:
//!
//! ```text
//! client                                   server
//! {"type":"hello","version":3,"token":…}  →
//!                                         ←  {"type":"welcome","version":3}   (or error, close)
//! {"type":"start","spec":{…}}             →     checked against Limits::SERVE
//!                                         ←  {"type":"ready","port":N,"load_port":L}
//!                                                data listener (and load sink) up
//!   … clients connect to port N, warm up …
//! {"type":"measure"}                      →     server samples its counters
//!   … measured window …
//! {"type":"stop"}                         →     server samples again, stops the test
//!                                         ←  {"type":"report",…}
//! ```
//!
//! A server started with `--allow-changes IFACE` also takes a *change session* on a
//! connection of its own, held open for as long as the changes should stay (a tune's whole
//! search); tests run on other connections meanwhile:
//!
//! ```text
//! {"type":"hello",…} → ← {"type":"welcome",…}
//! {"type":"claim","idle_ms":N}            →     one change session at a time
//!                                         ←  {"type":"granted","iface":…,"driver":…,"reload":…,"idle_ms":M}
//! {"type":"read","keys":[…]}              →  ←  {"type":"values","values":{KEY: VALUE}}
//! {"type":"change","settings":["K=V",…]}  →     in place of the session's previous change
//!                                         ←  {"type":"changed","changes":[…],"read_back":[…]}
//! {"type":"ping"}                         →     (no reply) the client is still there
//! {"type":"release"}                      →     everything put back
//!                                         ←  {"type":"released","restored":[…]}
//! ```
//!
//! The server puts back everything the session changed when the client releases it, closes
//! the connection, stays silent for `idle_ms` (M: at most the server's limit), or when the
//! server stops; every change is a journaled transaction on the server's host, so a server
//! killed outright leaves a journal that `nictune revert` there undoes.

use crate::accounting::Accounting;
use crate::spec::BenchSpec;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::io::{self, BufRead, Write};

/// Protocol version; a peer with another version is refused.
/// Version 2 added latency under load (`spec.load`, `ready.load_port`), the byte cap and the
/// server's sysctls in its report. Version 3: `changed` carries `read_back`, the values that
/// read back other than written (a driver that kept or rounded one), so a tune knows what the
/// peer really ran with.
pub const VERSION: u32 = 3;
/// How a refusal because another client's test is running starts (`peer busy: a test from
/// ADDR is running, retry in ~Ns`); clients tell it apart from other refusals by it.
pub const BUSY: &str = "peer busy:";
/// Longest accepted line, bytes (a report with per-CPU figures for 512 CPUs fits).
pub const MAX_LINE: usize = 256 * 1024;

/// Client to server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// First message of every connection; the server answers [`Reply::Welcome`] or refuses.
    Hello {
        /// The client's [`VERSION`]; any other is refused.
        version: u32,
        /// The shared secret from `--token-file` or `$NICTUNE_TOKEN`; must match the server's.
        token: String,
    },
    /// Starts a test; the server answers [`Reply::Ready`] once its listener is up.
    Start {
        /// The test to serve, checked against the server's limits before anything starts.
        spec: BenchSpec,
    },
    /// Starts the measured window: the server samples its counters now.
    Measure,
    /// Ends the test; the client's counts let the server derive its service demand.
    Stop {
        /// Transactions the client completed in the window (RR, ping); `None` for stream.
        #[serde(default)]
        transactions: Option<u64>,
        /// Bytes the client moved in the window (stream); `None` otherwise.
        #[serde(default)]
        bytes: Option<u64>,
    },
    /// Opens a change session; it ends, and everything it changed is put back, when the
    /// client has sent nothing for `idle_ms` (capped by the server).
    Claim {
        /// Requested silence before the session ends, ms; the server caps it at its own limit.
        idle_ms: u64,
    },
    /// The current values of these catalog keys on the server's interface.
    Read {
        /// Catalog keys (`coalesce.rx-usecs`, `e1000.InterruptThrottleRate`, ...).
        keys: Vec<String>,
    },
    /// Puts back what the session changed last, then applies these `KEY=VALUE` settings as
    /// one journaled transaction; empty puts back only.
    Change {
        /// `KEY=VALUE` settings in catalog syntax; empty puts back only.
        settings: Vec<String>,
    },
    /// Keeps an idle change session alive; no reply.
    Ping,
    /// Puts back everything the session changed and ends it.
    Release,
}

/// What a change session may change on the server, as granted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// The one interface the server lets clients change (`serve --allow-changes IFACE`).
    pub iface: String,
    /// Its kernel driver, when known.
    pub driver: Option<String>,
    /// Whether driver module parameters may be changed (a reload of the driver;
    /// `serve --allow-reload`).
    pub reload: bool,
    /// The session ends after this much silence from the client, ms.
    pub idle_ms: u64,
}

/// Server to client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    /// Accepts the hello.
    Welcome {
        /// The server's [`VERSION`].
        version: u32,
    },
    /// The data listener (and the load sink, if any) is up.
    Ready {
        /// The port the test's clients connect to (TCP) or send to (UDP).
        port: u16,
        /// Where the load streams connect, when the spec has a load.
        #[serde(default)]
        load_port: Option<u16>,
    },
    /// The server side's measurement, after [`Request::Stop`].
    Report(Box<PeerReport>),
    /// A refusal or failure; the server closes the connection after it.
    Error {
        /// Why, for a person; a busy server's starts with [`BUSY`].
        message: String,
    },
    /// Answer to [`Request::Claim`]: the change session is open on these terms.
    Granted(Grant),
    /// Answer to [`Request::Read`].
    Values {
        /// Catalog key (expanded per object, e.g. `eth1 napi 8193 gro-flush-timeout`) → current
        /// value as the catalog writes it.
        values: std::collections::BTreeMap<String, String>,
    },
    /// What the change did, one line per setting (`eth1 coalesce.rx-usecs: 3 → 50`).
    Changed {
        /// One line per setting changed, as the apply engine describes it.
        changes: Vec<String>,
        /// The settings whose value read back after the write differs from the one written:
        /// kept by the driver (read back as before) or adjusted (another value).
        #[serde(default)]
        read_back: Vec<nictune_tune::readback::HostReadBack>,
    },
    /// What was put back, one line per setting.
    Released {
        /// One line per setting restored.
        restored: Vec<String>,
    },
}

/// What the server side measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PeerReport {
    /// CPU and interrupt accounting of the server's host over the measured window; `None`
    /// when the server could not sample it.
    pub accounting: Option<Accounting>,
    /// NAPI id of each served socket (`SO_INCOMING_NAPI_ID`, 0 when unavailable), one per
    /// connection that got an answer.
    pub napi_ids: Vec<u32>,
    /// CPUs the server's threads were seen on.
    pub cpus: Vec<u32>,
    /// Requests answered (RR, ping) or bytes received (stream) by the test's server; the load
    /// sink's bytes are not counted.
    pub served: u64,
    /// Connections or datagrams refused because they came from another address, load sink
    /// included.
    pub refused: u64,
    /// The server stopped answering at its per-test byte cap.
    #[serde(default)]
    pub capped: bool,
    /// The server host's host-wide sysctls that change the figures ([`crate::sysctls::KEYS`]);
    /// empty when it could not read them.
    #[serde(default)]
    pub sysctls: crate::sysctls::Values,
}

/// Why a line was not a valid message.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The other end closed the connection (or sent a last line without a newline).
    #[error("connection closed")]
    Closed,
    /// No newline within [`MAX_LINE`] bytes.
    #[error("message longer than {MAX_LINE} bytes")]
    TooLong,
    /// Not JSON, an unknown message type or field, or a missing field; serde's message.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// Reading or writing the socket failed.
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
            Request::Claim { idle_ms: 30_000 },
            Request::Read {
                keys: vec!["coalesce.rx-usecs".into()],
            },
            Request::Change {
                settings: vec!["e1000.InterruptThrottleRate=2000".into()],
            },
            Request::Ping,
            Request::Release,
        ];
        let mut buf = Vec::new();
        for m in &msgs {
            send(&mut buf, m).unwrap();
        }
        assert_eq!(buf.iter().filter(|&&b| b == b'\n').count(), msgs.len());
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
        let ready = Reply::Ready {
            port: 4242,
            load_port: Some(4243),
        };
        send(&mut buf, &ready).unwrap();
        assert_eq!(
            buf,
            b"{\"type\":\"ready\",\"port\":4242,\"load_port\":4243}\n"
        );
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
