//! The transport seam: engines talk to a connection only through [`Conn`] (messages) or
//! [`StreamConn`] (bulk bytes), so the same loops run over real sockets and over the
//! deterministic fakes in [`crate::fake`].

use nictune_core::units::Nanos;
use std::io;

/// A message-oriented connection (a TCP socket with fixed-size messages, or a connected UDP
/// socket with one datagram per message).
pub trait Conn: Send {
    /// Sends one whole message.
    fn send(&mut self, msg: &[u8]) -> io::Result<()>;

    /// Receives one message into `buf`.
    ///
    /// With `deadline` (on the engine's clock) it returns `Ok(None)` once the deadline has
    /// passed without a whole message; without one it waits at most
    /// [`crate::cancel::POLL_SLICE`] and then returns `Ok(None)` so the caller can check its
    /// caps. A TCP message read in part is kept and completed by the next call. Returns the
    /// length received (always `buf.len()` for TCP, the datagram length for UDP).
    fn recv(&mut self, buf: &mut [u8], deadline: Option<Nanos>) -> io::Result<Option<usize>>;
}

/// Kernel TCP counters of the sending socket (`TCP_INFO`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpCounters {
    /// Bytes the peer acknowledged (`tcpi_bytes_acked`): what really arrived.
    pub bytes_acked: u64,
    /// Segments retransmitted over the connection's life (`tcpi_total_retrans`).
    pub total_retrans: u64,
}

/// What shapes a bulk transfer besides the write size: path MTU, segment size and the
/// congestion control algorithm (BBR's pacing, for one, shows up as timer interrupts).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TcpPath {
    /// `tcpi_pmtu`, bytes.
    pub pmtu: u32,
    /// `tcpi_snd_mss`, bytes.
    pub snd_mss: u32,
    /// `TCP_CONGESTION`, e.g. `cubic` or `bbr`.
    pub congestion_control: String,
}

/// A bulk sender.
pub trait StreamConn: Send {
    /// Writes part or all of `buf`; `Ok(0)` when the socket stayed full for a poll slice.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize>;
    /// The socket's counters now.
    fn counters(&self) -> io::Result<TcpCounters>;
    /// The path the socket uses (unknown by default).
    fn path(&self) -> io::Result<TcpPath> {
        Ok(TcpPath::default())
    }
}
