//! A bulk TCP connection as FreeBSD 7.2 runs it, in bytes: the sender's window and socket
//! buffer, the receiver's delayed ACK and window updates. No losses occur on the path this
//! model builds (the queues hold more than the windows), so there is no retransmission.
//!
//! Sender (`tcp_output.c`, `tcp_input.c`): the usable window is `min(snd_wnd, cwnd)`; a
//! segment is at most one MSS, and one shorter than the MSS goes only when nothing is in
//! flight (Nagle; iperf leaves it on unless `-N`). `cwnd` starts at 3 segments
//! (`net.inet.tcp.rfc3390`: min(4·MSS, max(2·MSS, 4380))) and grows per ACK by the bytes it
//! acknowledges, at most 2·MSS (appropriate byte counting, `net.inet.tcp.rfc3465`), in slow
//! start, and by MSS²/cwnd above `ssthresh`. The socket buffer (`net.inet.tcp.sendspace`
//! 32768) holds written and not yet acknowledged bytes; a writer blocked on it is woken when
//! its free space reaches `so_snd.sb_lowat` (2048).
//!
//! Receiver: in-order data is appended to the socket buffer (`net.inet.tcp.recvspace`
//! 65536) and ACKed every second segment (`DELAY_ACK`: the first of a pair starts the
//! delayed-ACK timer, `net.inet.tcp.delacktime` 100 ms, the second is ACKed at once); the
//! advertised window is the buffer's free space. After the application reads, `tcp_output`
//! sends a window update when the window would open by at least 2·MSS or by half the buffer.

/// Ethernet (14), IPv4 (20) and TCP with timestamps (32) headers: the frame without payload
/// (and the pure ACK's frame size as the driver counts it).
pub const HEADERS: u32 = 66;

/// TCP settings of one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpConfig {
    /// Maximum segment size: 1448 on a 1500-byte MTU with timestamps.
    pub mss: u32,
    /// `net.inet.tcp.sendspace`.
    pub sendspace: u32,
    /// `net.inet.tcp.recvspace`.
    pub recvspace: u32,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1448,
            sendspace: 32_768,
            recvspace: 65_536,
        }
    }
}

/// `so_snd.sb_lowat` (MCLBYTES).
pub const SND_LOWAT: u32 = 2048;

/// A segment on the wire: data bytes `[seq, seq + len)` or a pure ACK (`len` 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// First byte carried.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Cumulative acknowledgement of the other direction.
    pub ack: u64,
    /// Advertised window of the other direction.
    pub win: u32,
}

impl Segment {
    /// Frame bytes as the driver counts them (no FCS).
    pub fn frame_bytes(&self) -> u32 {
        HEADERS + self.len
    }
}

/// The sending side.
#[derive(Debug, Clone)]
pub struct Sender {
    cfg: TcpConfig,
    /// Oldest unacknowledged byte, next byte to send, bytes written by the application.
    pub snd_una: u64,
    snd_nxt: u64,
    written: u64,
    snd_wnd: u32,
    cwnd: u64,
    ssthresh: u64,
}

impl Sender {
    /// A connection just established; the peer advertised `wnd`.
    pub fn new(cfg: TcpConfig, wnd: u32) -> Sender {
        Sender {
            cfg,
            snd_una: 0,
            snd_nxt: 0,
            written: 0,
            snd_wnd: wnd,
            cwnd: 3 * cfg.mss as u64,
            ssthresh: u64::MAX,
        }
    }

    /// Free space of the send buffer.
    pub fn space(&self) -> u32 {
        let held = self.written - self.snd_una;
        self.cfg.sendspace.saturating_sub(held as u32)
    }

    /// The application appends up to `bytes`; returns how many fitted.
    pub fn write(&mut self, bytes: u32) -> u32 {
        let n = bytes.min(self.space());
        self.written += n as u64;
        n
    }

    /// `tcp_output`: the data segments the window allows now.
    pub fn output(&mut self) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        loop {
            let window = (self.snd_wnd as u64).min(self.cwnd);
            let in_flight = self.snd_nxt - self.snd_una;
            let avail = self.written - self.snd_nxt;
            let room = window.saturating_sub(in_flight);
            let len = avail.min(room).min(self.cfg.mss as u64);
            if len == 0 || (len < self.cfg.mss as u64 && in_flight > 0) {
                return out;
            }
            out.push((self.snd_nxt, len as u32));
            self.snd_nxt += len;
        }
    }

    /// An ACK arrived; returns the bytes it acknowledged. An older ACK than the last one
    /// changes nothing (`tcp_input` takes a window only from an ACK at least as new:
    /// `snd_wl1`/`snd_wl2`).
    pub fn on_ack(&mut self, ack: u64, win: u32) -> u64 {
        if ack < self.snd_una {
            return 0;
        }
        self.snd_wnd = win;
        if ack == self.snd_una {
            return 0;
        }
        let acked = ack - self.snd_una;
        self.snd_una = ack;
        let mss = self.cfg.mss as u64;
        self.cwnd += if self.cwnd < self.ssthresh {
            acked.min(2 * mss)
        } else {
            (mss * mss / self.cwnd).max(1)
        };
        acked
    }
}

/// What the receiver does with a data segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnData {
    /// ACK now (the second of a pair).
    AckNow,
    /// Start the delayed-ACK timer.
    Delay,
}

/// The receiving side.
#[derive(Debug, Clone)]
pub struct Receiver {
    cfg: TcpConfig,
    /// Next byte expected.
    pub rcv_nxt: u64,
    /// Bytes in the socket buffer not yet read.
    pub unread: u32,
    /// Right edge last advertised.
    rcv_adv: u64,
    /// A segment is waiting for its ACK (delayed-ACK timer running).
    pub delack: bool,
}

impl Receiver {
    /// A connection just established.
    pub fn new(cfg: TcpConfig) -> Receiver {
        Receiver {
            cfg,
            rcv_nxt: 0,
            unread: 0,
            rcv_adv: cfg.recvspace as u64,
            delack: false,
        }
    }

    /// The window the receiver advertises now.
    pub fn window(&self) -> u32 {
        self.cfg.recvspace - self.unread
    }

    /// In-order data of `len` bytes.
    pub fn on_data(&mut self, len: u32) -> OnData {
        self.rcv_nxt += len as u64;
        self.unread += len;
        if std::mem::take(&mut self.delack) {
            OnData::AckNow
        } else {
            self.delack = true;
            OnData::Delay
        }
    }

    /// The ACK to send now (clears a pending delayed ACK).
    pub fn ack(&mut self) -> Segment {
        self.delack = false;
        let win = self.window();
        self.rcv_adv = self.rcv_nxt + win as u64;
        Segment {
            seq: 0,
            len: 0,
            ack: self.rcv_nxt,
            win,
        }
    }

    /// The application read up to `bytes`; returns how many, and whether `tcp_output` sends
    /// a window update.
    pub fn read(&mut self, bytes: u32) -> (u32, bool) {
        let n = bytes.min(self.unread);
        self.unread -= n;
        let adv = (self.rcv_nxt + self.window() as u64).saturating_sub(self.rcv_adv);
        let update = adv >= 2 * self.cfg.mss as u64 || 2 * adv >= self.cfg.recvspace as u64;
        (n, n > 0 && update)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_opens_from_three_segments_and_the_send_buffer_bounds_the_flight() {
        let cfg = TcpConfig::default();
        let mut s = Sender::new(cfg, 65_536);
        assert_eq!(s.write(100_000), 32_768);
        let first = s.output();
        assert_eq!(first.len(), 3, "initial window 4380 bytes: 3 segments");
        assert_eq!(s.on_ack(2 * 1448, 65_536), 2 * 1448);
        // cwnd 3·1448 + 2·1448: 5 segments in flight allowed, 1 still out.
        assert_eq!(s.output().len(), 4);
        assert_eq!(
            s.space(),
            2 * 1448,
            "the buffer freed what was acknowledged"
        );
        for _ in 0..20 {
            let una = s.snd_una;
            s.on_ack(una + 1448, 65_536);
            s.write(10_000);
            s.output();
        }
        assert!(s.snd_nxt - s.snd_una <= 32_768);
    }

    #[test]
    fn nagle_holds_a_short_segment_while_data_is_in_flight() {
        let mut s = Sender::new(TcpConfig::default(), 65_536);
        s.write(1448 + 100);
        assert_eq!(s.output(), vec![(0, 1448)]);
        s.on_ack(1448, 65_536);
        assert_eq!(s.output(), vec![(1448, 100)], "nothing in flight: it goes");
    }

    #[test]
    fn every_second_segment_is_acked_and_reading_sends_window_updates() {
        let mut r = Receiver::new(TcpConfig::default());
        assert_eq!(r.on_data(1448), OnData::Delay);
        assert_eq!(r.on_data(1448), OnData::AckNow);
        let a = r.ack();
        assert_eq!((a.ack, a.win), (2896, 65_536 - 2896));
        // Reading 1 segment opens the window by 1448 < 2·MSS: no update; reading both does.
        assert_eq!(r.read(1448), (1448, false));
        assert_eq!(r.read(8192), (1448, true));
    }
}
