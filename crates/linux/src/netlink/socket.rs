//! The only place this crate calls the C library for netlink: open, bind, configure, send
//! and receive on an `AF_NETLINK` socket. Everything above works on byte slices.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// NETLINK_CAP_ACK: leave the request payload out of error messages.
const NETLINK_CAP_ACK: libc::c_int = 10;
/// NETLINK_EXT_ACK: attach the kernel's explanation to errors.
const NETLINK_EXT_ACK: libc::c_int = 11;

/// A bound netlink socket of one protocol (NETLINK_GENERIC here).
#[derive(Debug)]
pub struct RawSocket {
    fd: OwnedFd,
}

impl RawSocket {
    /// Opens and binds a socket with extended acks on and a receive timeout, so a kernel
    /// that never answers cannot hang the caller.
    pub fn open(protocol: libc::c_int, timeout: Duration) -> io::Result<RawSocket> {
        // SAFETY: plain socket(2) call; the result is checked before use.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                protocol,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor we own.
        let sock = RawSocket {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        };
        sock.bind()?;
        sock.set_int(libc::SOL_NETLINK, NETLINK_EXT_ACK, 1)?;
        sock.set_int(libc::SOL_NETLINK, NETLINK_CAP_ACK, 1)?;
        sock.set_timeout(timeout)?;
        Ok(sock)
    }

    fn bind(&self) -> io::Result<()> {
        // SAFETY: sockaddr_nl is plain data; zeroed means "kernel picks the port id".
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        let len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
        // SAFETY: addr outlives the call and len is its size.
        let rc = unsafe {
            libc::bind(
                self.fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_nl).cast(),
                len,
            )
        };
        check(rc)
    }

    fn set_int(&self, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
        let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: value outlives the call and len is its size.
        let rc = unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                (&value as *const libc::c_int).cast(),
                len,
            )
        };
        check(rc)
    }

    fn set_timeout(&self, timeout: Duration) -> io::Result<()> {
        let tv = libc::timeval {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_usec: timeout.subsec_micros() as libc::suseconds_t,
        };
        let len = std::mem::size_of::<libc::timeval>() as libc::socklen_t;
        // SAFETY: tv outlives the call and len is its size.
        let rc = unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                len,
            )
        };
        check(rc)
    }

    /// Sends one datagram to the kernel.
    pub fn send(&self, msg: &[u8]) -> io::Result<()> {
        // SAFETY: msg is a valid slice for the duration of the call.
        let rc = unsafe { libc::send(self.fd.as_raw_fd(), msg.as_ptr().cast(), msg.len(), 0) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Receives one datagram into `buf`, returning its length.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: buf is a valid, writable slice for the duration of the call.
        let rc = unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(rc as usize)
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
