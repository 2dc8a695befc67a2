//! TCP: fixed-size request/response messages and bulk writes, with `TCP_INFO` counters.

use super::{timed_out, wait_readable};
use crate::cancel::POLL_SLICE;
use crate::clock::MonotonicClock;
use crate::conn::{Conn, StreamConn, TcpCounters, TcpPath};
use nictune_core::units::Nanos;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// A connected TCP socket used by an engine.
#[derive(Debug)]
pub struct TcpConn {
    stream: TcpStream,
    clock: MonotonicClock,
    /// Bytes of the current message already read.
    filled: usize,
}

impl TcpConn {
    /// Connects to `addr` with `TCP_NODELAY` (as sockperf does) and poll-slice timeouts.
    pub fn connect(addr: SocketAddr, clock: MonotonicClock) -> io::Result<TcpConn> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(3))?;
        TcpConn::from_stream(stream, clock)
    }

    /// Wraps an accepted or connected stream.
    pub fn from_stream(stream: TcpStream, clock: MonotonicClock) -> io::Result<TcpConn> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(POLL_SLICE))?;
        stream.set_write_timeout(Some(POLL_SLICE))?;
        Ok(TcpConn {
            stream,
            clock,
            filled: 0,
        })
    }

    /// The NAPI id of the last packet received.
    pub fn napi_id(&self) -> io::Result<u32> {
        super::napi_id(self.stream.as_raw_fd())
    }
}

/// Stream writes through sendfile(2) from a memory file holding one write's worth of bytes:
/// the kernel hands the file's pages to the socket instead of copying each write from user
/// space — the zero-copy path `iperf3 -Z` takes (`--zerocopy`).
#[derive(Debug)]
pub struct Sendfile<'a> {
    conn: &'a mut TcpConn,
    file: std::fs::File,
    len: usize,
}

impl<'a> Sendfile<'a> {
    /// Sends from a fresh memory file of `len` bytes over `conn`.
    pub fn new(conn: &'a mut TcpConn, len: usize) -> io::Result<Sendfile<'a>> {
        let file = crate::sys::memory_file(&vec![0x5a; len])?;
        Ok(Sendfile { conn, file, len })
    }
}

impl StreamConn for Sendfile<'_> {
    /// Sends the file once (`buf` gives only the length the engine expects).
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let (to, from) = (self.conn.stream.as_raw_fd(), self.file.as_raw_fd());
        match crate::sys::sendfile(to, from, self.len.min(buf.len())) {
            Ok(n) => Ok(n),
            Err(e) if timed_out(&e) => Ok(0),
            Err(e) => Err(e),
        }
    }

    fn counters(&self) -> io::Result<TcpCounters> {
        self.conn.counters()
    }

    fn path(&self) -> io::Result<TcpPath> {
        self.conn.path()
    }
}

impl Conn for TcpConn {
    fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        self.stream.write_all(msg)
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Nanos>) -> io::Result<Option<usize>> {
        while self.filled < buf.len() {
            if let Some(d) = deadline {
                if !wait_readable(self.stream.as_raw_fd(), &self.clock, d)? {
                    return Ok(None);
                }
            }
            match self.stream.read(&mut buf[self.filled..]) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => self.filled += n,
                Err(e) if timed_out(&e) && deadline.is_none() => return Ok(None),
                Err(e) if timed_out(&e) => {}
                Err(e) => return Err(e),
            }
        }
        self.filled = 0;
        Ok(Some(buf.len()))
    }
}

impl StreamConn for TcpConn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.stream.write(buf) {
            Ok(n) => Ok(n),
            Err(e) if timed_out(&e) => Ok(0),
            Err(e) => Err(e),
        }
    }

    fn counters(&self) -> io::Result<TcpCounters> {
        let raw = self.tcp_info()?;
        parse_tcp_info(&raw).ok_or_else(|| io::Error::other("TCP_INFO too short (kernel < 4.1)"))
    }

    fn path(&self) -> io::Result<TcpPath> {
        let raw = self.tcp_info()?;
        let mut name = [0u8; 16];
        let fd = self.stream.as_raw_fd();
        let n =
            crate::sys::getsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, &mut name)?;
        let cc = name[..n].split(|&b| b == 0).next().unwrap_or_default();
        Ok(TcpPath {
            pmtu: u32_at(&raw, PMTU_AT).unwrap_or(0),
            snd_mss: u32_at(&raw, SND_MSS_AT).unwrap_or(0),
            congestion_control: String::from_utf8_lossy(cc).into_owned(),
        })
    }
}

impl TcpConn {
    fn tcp_info(&self) -> io::Result<Vec<u8>> {
        let mut raw = vec![0u8; 256];
        let fd = self.stream.as_raw_fd();
        let n = crate::sys::getsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut raw)?;
        raw.truncate(n);
        Ok(raw)
    }
}

/// `tcpi_snd_mss` is the third `__u32`, `tcpi_pmtu` the fourteenth.
const SND_MSS_AT: usize = 8 + 2 * 4;
const PMTU_AT: usize = 8 + 13 * 4;

fn u32_at(raw: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(raw.get(at..at + 4)?.try_into().ok()?))
}

/// Offsets in `struct tcp_info` (include/uapi/linux/tcp.h): 8 one-byte fields, then 23
/// `__u32` before `tcpi_total_retrans`; `tcpi_bytes_acked` follows the two `__u64` pacing
/// rates.
const TOTAL_RETRANS_AT: usize = 8 + 23 * 4;
const BYTES_ACKED_AT: usize = TOTAL_RETRANS_AT + 4 + 2 * 8;

/// Reads the two counters the stream engine needs from raw `TCP_INFO` bytes.
pub fn parse_tcp_info(raw: &[u8]) -> Option<TcpCounters> {
    let acked = raw.get(BYTES_ACKED_AT..BYTES_ACKED_AT + 8)?;
    Some(TcpCounters {
        total_retrans: u32_at(raw, TOTAL_RETRANS_AT)?.into(),
        bytes_acked: u64::from_ne_bytes(acked.try_into().ok()?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_info_offsets_match_the_kernel_layout() {
        // Hand-built struct: total_retrans = 7 at byte 100, bytes_acked = 123 456 at 120.
        let mut raw = vec![0u8; 232];
        raw[100..104].copy_from_slice(&7u32.to_ne_bytes());
        raw[104..112].copy_from_slice(&u64::MAX.to_ne_bytes()); // pacing rate: not read
        raw[120..128].copy_from_slice(&123_456u64.to_ne_bytes());
        let c = parse_tcp_info(&raw).unwrap();
        assert_eq!((c.total_retrans, c.bytes_acked), (7, 123_456));
        assert_eq!(parse_tcp_info(&raw[..104]), None);
    }

    #[test]
    fn bytes_acked_counts_what_a_loopback_peer_received() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let reader = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut sink = Vec::new();
            s.read_to_end(&mut sink).unwrap();
            sink.len()
        });
        let mut c = TcpConn::connect(addr, MonotonicClock::new()).unwrap();
        let before = c.counters().unwrap();
        c.send(&[1u8; 100_000]).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let after = c.counters().unwrap();
        let path = c.path().unwrap();
        drop(c);
        assert_eq!(reader.join().unwrap(), 100_000);
        // Loopback's MTU is 64 KiB (TCP caps its path MTU at 65 535); some congestion
        // control is always set.
        assert!(path.pmtu > 60_000, "{path:?}");
        assert!(
            path.snd_mss > 1_000 && !path.congestion_control.is_empty(),
            "{path:?}"
        );
        assert_eq!(after.bytes_acked - before.bytes_acked, 100_000);
    }
}
