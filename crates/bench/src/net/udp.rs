//! UDP: one datagram per message on a connected socket.

use super::{timed_out, wait_readable};
use crate::cancel::POLL_SLICE;
use crate::clock::MonotonicClock;
use crate::conn::Conn;
use nictune_core::units::Nanos;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

/// A UDP socket connected to the server.
#[derive(Debug)]
pub struct UdpConn {
    socket: UdpSocket,
    clock: MonotonicClock,
}

impl UdpConn {
    /// Binds an ephemeral port of the right family and connects it to `server`.
    pub fn connect(server: SocketAddr, clock: MonotonicClock) -> io::Result<UdpConn> {
        let any: SocketAddr = if server.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        }
        .parse()
        .expect("literal address");
        let socket = UdpSocket::bind(any)?;
        socket.connect(server)?;
        socket.set_read_timeout(Some(POLL_SLICE))?;
        Ok(UdpConn { socket, clock })
    }

    /// The NAPI id of the last datagram received.
    pub fn napi_id(&self) -> io::Result<u32> {
        super::napi_id(self.socket.as_raw_fd())
    }
}

impl Conn for UdpConn {
    fn send(&mut self, msg: &[u8]) -> io::Result<()> {
        self.socket.send(msg).map(|_| ())
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Nanos>) -> io::Result<Option<usize>> {
        loop {
            if let Some(d) = deadline {
                if !wait_readable(self.socket.as_raw_fd(), &self.clock, d)? {
                    return Ok(None);
                }
            }
            match self.socket.recv(buf) {
                Ok(n) => return Ok(Some(n)),
                Err(e) if timed_out(&e) && deadline.is_none() => return Ok(None),
                Err(e) if timed_out(&e) => {}
                // An ICMP port-unreachable from an earlier datagram: the server is not (yet)
                // there. Treat as a lost reply, not a failed run.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => return Ok(None),
                Err(e) => return Err(e),
            }
        }
    }
}
