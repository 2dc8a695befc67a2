//! The few system calls the standard library does not wrap, each behind a small safe
//! function: CPU pinning, the current CPU, entering a network namespace, `poll`, and socket
//! options read as raw integers or bytes. Everything `unsafe` in this crate is in this file.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::time::Duration;

/// `SO_INCOMING_NAPI_ID` (asm-generic/socket.h; not exported by the libc crate).
pub const SO_INCOMING_NAPI_ID: libc::c_int = 56;

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: u32) -> io::Result<()> {
    pin_task(0, cpu)
}

/// Pins task (thread) `tid` to `cpu`, 0 meaning the calling thread: what `taskset -p -c CPU
/// TID` does. It allocates nothing, so it may run between fork and exec
/// (`CommandExt::pre_exec`) to start a program pinned, as `taskset -c CPU PROGRAM` does.
pub fn pin_task(tid: libc::pid_t, cpu: u32) -> io::Result<()> {
    if cpu as usize >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set; CPU_SET stays in bounds
    // (checked above); sched_setaffinity reads the set we pass and affects only `tid`.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        check(libc::sched_setaffinity(
            tid,
            std::mem::size_of_val(&set),
            &set,
        ))?;
    }
    Ok(())
}

/// The CPUs the calling thread may run on: its affinity mask, as `taskset -p` shows it and
/// as [`pin_task`] will accept them (a cpuset or an earlier `taskset` can leave out CPUs that
/// are online).
pub fn allowed_cpus() -> io::Result<Vec<u32>> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most the size we pass;
    // CPU_ISSET reads within the set for every index below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        check(libc::sched_getaffinity(
            0,
            std::mem::size_of_val(&set),
            &mut set,
        ))?;
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .map(|cpu| cpu as u32)
            .collect())
    }
}

/// The CPU the calling thread is running on now.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: no arguments, no memory access.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).ok()
}

/// Moves the calling thread into the network namespace at `path` (e.g. /run/netns/NAME).
/// Sockets it creates afterwards belong to that namespace; other threads are unaffected.
pub fn enter_netns(path: &Path) -> io::Result<()> {
    let file = File::open(path)?;
    // SAFETY: the fd is valid for the call; setns does not touch our memory.
    check(unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) })?;
    Ok(())
}

/// Waits until `fd` is readable (or writable) or `timeout` passes; true when ready.
pub fn poll(fd: RawFd, writable: bool, timeout: Duration) -> io::Result<bool> {
    let events = if writable {
        libc::POLLOUT
    } else {
        libc::POLLIN
    };
    let mut pfd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
    // SAFETY: one valid pollfd, count 1.
    match check(unsafe { libc::poll(&mut pfd, 1, ms) }) {
        Ok(n) => Ok(n > 0),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(false),
        Err(e) => Err(e),
    }
}

/// Reads an integer socket option.
pub fn getsockopt_int(fd: RawFd, level: libc::c_int, name: libc::c_int) -> io::Result<i32> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: v and len are valid for writes of the advertised length.
    check(unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    })?;
    Ok(v)
}

/// Reads up to `buf.len()` bytes of a socket option; returns the length the kernel wrote.
pub fn getsockopt_bytes(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    buf: &mut [u8],
) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf is valid for writes of len bytes.
    check(unsafe { libc::getsockopt(fd, level, name, buf.as_mut_ptr().cast(), &mut len) })?;
    Ok(len as usize)
}

/// An anonymous memory file (memfd_create(2)) holding `content`, for sendfile(2).
pub fn memory_file(content: &[u8]) -> io::Result<std::fs::File> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // SAFETY: memfd_create with a NUL-terminated name; on success we own the fd once.
    let fd = check(unsafe { libc::memfd_create(c"nictune-stream".as_ptr(), libc::MFD_CLOEXEC) })?;
    // SAFETY: fd is a fresh, open descriptor nobody else owns.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(content)?;
    Ok(file)
}

/// sendfile(2): up to `len` bytes of `from` (from its start) to the socket `to`, without
/// copying them through user space; the bytes sent.
pub fn sendfile(to: RawFd, from: RawFd, len: usize) -> io::Result<usize> {
    let mut offset: libc::off_t = 0;
    // SAFETY: both fds are open for the call; offset is a valid, exclusive pointer.
    let n = unsafe { libc::sendfile(to, from, &mut offset, len) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// An unprivileged ICMP echo ("ping") socket, allowed when the caller's group is inside
/// `net.ipv4.ping_group_range`; the kernel fills in the echo id and checksum.
pub fn icmp_ping_socket() -> io::Result<std::net::UdpSocket> {
    icmp_socket(libc::SOCK_DGRAM)
}

/// A raw ICMP socket (needs `CAP_NET_RAW`): the caller builds the whole echo header and
/// receives every ICMP packet of the namespace with its IPv4 header in front (raw(7)).
pub fn icmp_raw_socket() -> io::Result<std::net::UdpSocket> {
    icmp_socket(libc::SOCK_RAW)
}

fn icmp_socket(kind: libc::c_int) -> io::Result<std::net::UdpSocket> {
    use std::os::fd::{FromRawFd, OwnedFd};
    // SAFETY: plain socket(2); on success we own the returned fd exactly once.
    let fd = check(unsafe {
        libc::socket(libc::AF_INET, kind | libc::SOCK_CLOEXEC, libc::IPPROTO_ICMP)
    })?;
    // SAFETY: fd is a fresh, open descriptor nobody else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    Ok(std::net::UdpSocket::from(owned))
}

/// USER_HZ: the unit of /proc/stat CPU times (100 on every mainstream architecture).
pub fn user_hz() -> u32 {
    // SAFETY: sysconf reads a constant; no memory access.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u32::try_from(hz).ok().filter(|&h| h > 0).unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_moves_the_thread_to_that_cpu() {
        std::thread::spawn(|| {
            pin_current_thread(0).unwrap();
            assert_eq!(current_cpu(), Some(0));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_allowed_cpus_include_the_one_running_now_and_pinning_keeps_to_them() {
        let allowed = allowed_cpus().unwrap();
        assert!(allowed.contains(&current_cpu().unwrap()), "{allowed:?}");
        let last = *allowed.last().unwrap();
        std::thread::spawn(move || {
            pin_current_thread(last).unwrap();
            assert_eq!(allowed_cpus().unwrap(), [last]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn an_impossible_cpu_is_refused() {
        assert!(pin_current_thread(1 << 20).is_err());
    }
}
