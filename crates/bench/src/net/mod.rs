//! Real sockets behind the [`crate::conn`] traits, and the server side that answers them.

pub mod icmp;
pub mod server;
pub mod tcp;
pub mod udp;

use crate::cancel::POLL_SLICE;
use crate::clock::{Clock, MonotonicClock};
use nictune_core::units::Nanos;
use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

/// Waits for `fd` to become readable before `deadline` on `clock`; false when it passed.
fn wait_readable(fd: RawFd, clock: &MonotonicClock, deadline: Nanos) -> io::Result<bool> {
    let now = clock.now();
    if now >= deadline {
        return Ok(false);
    }
    let left = Duration::from_nanos((deadline - now).0).min(POLL_SLICE);
    crate::sys::poll(fd, false, left)
}

/// True for the errors a socket timeout produces.
fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// The NAPI instance that delivered the socket's last packet (0 = none: backlog path).
pub fn napi_id(fd: RawFd) -> io::Result<u32> {
    crate::sys::getsockopt_int(fd, libc::SOL_SOCKET, crate::sys::SO_INCOMING_NAPI_ID)
        .map(|v| v as u32)
}
