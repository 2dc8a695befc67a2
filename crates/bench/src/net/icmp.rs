//! ICMP echo probes over an unprivileged ping socket (`SOCK_DGRAM`/`IPPROTO_ICMP`), used by
//! the ping test when the kernel permits it (`net.ipv4.ping_group_range`). The reply comes
//! from the peer's kernel, so no server process is involved.

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
}

impl IcmpConn {
    /// Opens a ping socket towards `host`; fails with `PermissionDenied` when not allowed.
    pub fn connect(host: Ipv4Addr, clock: MonotonicClock) -> io::Result<IcmpConn> {
        let socket = crate::sys::icmp_ping_socket()?;
        socket.connect(SocketAddr::from((host, 0)))?;
        socket.set_read_timeout(Some(POLL_SLICE))?;
        Ok(IcmpConn {
            socket,
            clock,
            seq: 0,
            wire: Vec::new(),
        })
    }
}

/// Builds an echo request around `payload` (id and checksum are the kernel's job).
pub fn echo_request(seq: u16, payload: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&[ECHO_REQUEST, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(payload);
}

/// The payload of an echo reply, or `None` for anything else.
pub fn echo_reply_payload(wire: &[u8]) -> Option<&[u8]> {
    (wire.len() >= HEADER && wire[0] == ECHO_REPLY).then(|| &wire[HEADER..])
}

impl Conn for IcmpConn {
    fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        echo_request(self.seq, msg, &mut self.wire);
        self.seq = self.seq.wrapping_add(1);
        self.socket.send(&self.wire).map(|_| ())
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Nanos>) -> io::Result<Option<usize>> {
        let mut wire = vec![0u8; buf.len() + HEADER];
        loop {
            if let Some(d) = deadline {
                if !wait_readable(self.socket.as_raw_fd(), &self.clock, d)? {
                    return Ok(None);
                }
            }
            match self.socket.recv(&mut wire) {
                Ok(n) => {
                    let Some(payload) = echo_reply_payload(&wire[..n]) else {
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
        echo_request(0x0102, b"abc", &mut out);
        assert_eq!(out, [8, 0, 0, 0, 0, 0, 1, 2, b'a', b'b', b'c']);
        let reply = [0u8, 0, 0x12, 0x34, 0, 9, 1, 2, b'x'];
        assert_eq!(echo_reply_payload(&reply), Some(&b"x"[..]));
        assert_eq!(echo_reply_payload(&out), None);
        assert_eq!(echo_reply_payload(&reply[..7]), None);
    }
}
