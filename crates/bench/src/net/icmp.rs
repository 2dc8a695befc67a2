//! ICMP echo probes for the ping test. The reply comes from the peer's kernel, so no
//! server process is involved. Two ways to send them:
//! * an unprivileged ping socket (`SOCK_DGRAM`/`IPPROTO_ICMP`, icmp(7)), when
//!   `net.ipv4.ping_group_range` admits the caller's group: the kernel sets the echo id and
//!   checksum and delivers only this socket's replies;
//! * otherwise, with `CAP_NET_RAW` (root), a raw socket (raw(7)), as ping(8) does: this
//!   side writes the id and the RFC 1071 checksum and picks its own replies (by id) out of
//!   every ICMP packet the namespace receives, each behind its IPv4 header.

use super::{timed_out, wait_readable};
use crate::cancel::POLL_SLICE;
use crate::clock::MonotonicClock;
use crate::conn::Conn;
use nictune_core::units::Nanos;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

/// ICMP echo header: type, code, checksum, id, sequence (RFC 792).
const HEADER: usize = 8;
const ECHO_REQUEST: u8 = 8;
const ECHO_REPLY: u8 = 0;

/// An ICMP echo "connection" to one host.
#[derive(Debug)]
pub struct IcmpConn {
    socket: UdpSocket,
    clock: MonotonicClock,
    seq: u16,
    wire: Vec<u8>,
    /// Raw socket: the echo id this connection writes and expects back.
    raw_id: Option<u16>,
}

/// Which kind of socket carries the probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IcmpSocket {
    /// An unprivileged ICMP datagram socket (`SOCK_DGRAM`, `IPPROTO_ICMP`): the kernel sets
    /// the echo id; used when `net.ipv4.ping_group_range` admits the caller's group.
    Ping,
    /// A raw ICMP socket (needs `CAP_NET_RAW`): the echo id is this process's own, and
    /// replies to other processes are filtered out.
    Raw,
}

impl IcmpConn {
    /// Opens a ping socket towards `host`, or a raw socket where ping sockets are not
    /// allowed; fails with the ping socket's `PermissionDenied` when neither is.
    pub fn connect(host: Ipv4Addr, clock: MonotonicClock) -> io::Result<IcmpConn> {
        let (socket, raw_id) = match crate::sys::icmp_ping_socket() {
            Ok(s) => (s, None),
            Err(ping) if ping.kind() == io::ErrorKind::PermissionDenied => {
                let raw = crate::sys::icmp_raw_socket().map_err(|_| ping)?;
                (raw, Some(echo_id()))
            }
            Err(e) => return Err(e),
        };
        socket.connect(SocketAddr::from((host, 0)))?;
        socket.set_read_timeout(Some(POLL_SLICE))?;
        Ok(IcmpConn {
            socket,
            clock,
            seq: 0,
            wire: Vec::new(),
            raw_id,
        })
    }

    /// The kind of socket in use.
    pub fn kind(&self) -> IcmpSocket {
        if self.raw_id.is_some() {
            IcmpSocket::Raw
        } else {
            IcmpSocket::Ping
        }
    }
}

/// An echo id of this process's own for a raw socket: the pid's low bits mixed with a
/// per-connection counter, so parallel connections (and a ping(8) beside) keep apart.
fn echo_id() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    (std::process::id() as u16).wrapping_mul(31) ^ NEXT.fetch_add(0x1235, Ordering::Relaxed)
}

/// Builds an echo request around `payload`; with `id` (raw socket) the id and checksum are
/// filled in here, otherwise they are the kernel's job.
pub fn echo_request(seq: u16, id: Option<u16>, payload: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&[ECHO_REQUEST, 0, 0, 0]);
    out.extend_from_slice(&id.unwrap_or(0).to_be_bytes());
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(payload);
    if id.is_some() {
        let sum = checksum(out);
        out[2..4].copy_from_slice(&sum.to_be_bytes());
    }
}

/// The Internet checksum (RFC 1071): the ones' complement of the ones' complement sum of
/// the 16-bit big-endian words, an odd last byte padded with zero.
pub fn checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c.get(1).copied().unwrap_or(0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The payload of an echo reply, or `None` for anything else.
pub fn echo_reply_payload(wire: &[u8]) -> Option<&[u8]> {
    (wire.len() >= HEADER && wire[0] == ECHO_REPLY).then(|| &wire[HEADER..])
}

/// A raw socket's packet: the payload of an echo reply carrying `id`, behind the IPv4
/// header (its length from the IHL field), or `None` for anything else.
pub fn raw_reply_payload(packet: &[u8], id: u16) -> Option<&[u8]> {
    let ihl = usize::from(packet.first()? & 0x0f) * 4;
    let icmp = packet.get(ihl..).filter(|_| ihl >= 20)?;
    let ours = icmp.get(4..6) == Some(&id.to_be_bytes()[..]);
    echo_reply_payload(icmp).filter(|_| ours)
}

impl Conn for IcmpConn {
    fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        echo_request(self.seq, self.raw_id, msg, &mut self.wire);
        self.seq = self.seq.wrapping_add(1);
        self.socket.send(&self.wire).map(|_| ())
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Nanos>) -> io::Result<Option<usize>> {
        // Room for an IPv4 header with options (60 bytes) in front of a raw socket's reply.
        let mut wire = vec![0u8; buf.len() + HEADER + 60];
        loop {
            if let Some(d) = deadline {
                if !wait_readable(self.socket.as_raw_fd(), &self.clock, d)? {
                    return Ok(None);
                }
            }
            match self.socket.recv(&mut wire) {
                Ok(n) => {
                    let payload = match self.raw_id {
                        Some(id) => raw_reply_payload(&wire[..n], id),
                        None => echo_reply_payload(&wire[..n]),
                    };
                    let Some(payload) = payload else {
                        continue;
                    };
                    let k = payload.len().min(buf.len());
                    buf[..k].copy_from_slice(&payload[..k]);
                    return Ok(Some(k));
                }
                Err(e) if timed_out(&e) && deadline.is_none() => return Ok(None),
                Err(e) if timed_out(&e) => {}
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_and_reply_framing() {
        let mut out = Vec::new();
        echo_request(0x0102, None, b"abc", &mut out);
        assert_eq!(out, [8, 0, 0, 0, 0, 0, 1, 2, b'a', b'b', b'c']);
        let reply = [0u8, 0, 0x12, 0x34, 0, 9, 1, 2, b'x'];
        assert_eq!(echo_reply_payload(&reply), Some(&b"x"[..]));
        assert_eq!(echo_reply_payload(&out), None);
        assert_eq!(echo_reply_payload(&reply[..7]), None);
    }

    #[test]
    fn raw_requests_carry_id_and_a_checksum_that_verifies() {
        let mut out = Vec::new();
        echo_request(7, Some(0xbeef), b"hello", &mut out);
        assert_eq!(&out[4..8], &[0xbe, 0xef, 0, 7]);
        // A correct checksum makes the whole message sum to 0xffff, i.e. checksum() == 0.
        assert_eq!(checksum(&out), 0);
        // RFC 1071 section 3's worked example: words 0001 f203 f4f5 f6f7 sum to ddf2.
        assert_eq!(
            checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            !0xddf2
        );
        assert_eq!(checksum(&[0xff]), !0xff00);
    }

    #[test]
    fn raw_replies_are_taken_by_id_behind_the_ip_header() {
        let mut ip = vec![0x45u8];
        ip.resize(20, 0);
        let reply = [0u8, 0, 0, 0, 0xbe, 0xef, 0, 7, b'x', b'y'];
        let packet = [ip.clone(), reply.to_vec()].concat();
        assert_eq!(raw_reply_payload(&packet, 0xbeef), Some(&b"xy"[..]));
        assert_eq!(raw_reply_payload(&packet, 0xbeee), None, "another prober's");
        let mut request = reply;
        request[0] = ECHO_REQUEST; // our own request seen on the way out (loopback)
        assert_eq!(
            raw_reply_payload(&[ip.clone(), request.to_vec()].concat(), 0xbeef),
            None
        );
        // IHL 6: 4 bytes of options before the ICMP header.
        let mut with_opts = vec![0x46u8];
        with_opts.resize(24, 1);
        assert_eq!(
            raw_reply_payload(&[with_opts, reply.to_vec()].concat(), 0xbeef),
            Some(&b"xy"[..])
        );
        assert_eq!(raw_reply_payload(&[0x41, 0, 0], 1), None, "IHL below 5");
        assert_eq!(raw_reply_payload(&[], 1), None);
    }
}
