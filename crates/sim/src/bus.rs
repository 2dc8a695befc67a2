//! Slow buses and small card buffers: the ISA bus and the on-card receive ring of 8390-class
//! cards (seed-cases.md Case 4).
//!
//! An 8390 card (WD80x3, 3c503, NE1000/NE2000) holds received frames in its own RAM; the host
//! copies each one across the ISA bus before the slot is free again, either as memory cycles
//! from RAM mapped into the ISA memory space (shared memory) or through the 8390's remote-DMA
//! data port ([`CardAccess`]). Every register access the driver makes on the way (the 8390's
//! command, page, boundary and remote-DMA registers, the interrupt controller) is an ISA I/O
//! cycle too. All of it runs on the bus clock ([`IsaBus::time`] of a [`BusWork`]). The card's
//! RAM is split into 256-byte pages; the driver reserves some for transmit buffers and the
//! rest is a receive ring. A frame that does not fit in the free receive pages is an overrun:
//! the 8390 sets its overwrite-warning (OVW) status and its receiver stays off, dropping every
//! later frame, until the driver runs the recovery sequence (stop, wait, clear the remote byte
//! count, restart). Sources: the DP8390 buffer-overflow procedure as Linux
//! `drivers/net/ethernet/8390/lib8390.c#ei_rx_overrun` carries it out, and NetBSD we(4) ("the
//! board must be reset to avoid a lockup problem in early revision 8390's").

use nictune_core::units::{Bytes, Nanos};
use std::collections::VecDeque;

/// Data width of an ISA card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsaWidth {
    /// 8-bit card (XT slot).
    Bits8,
    /// 16-bit card (AT slot).
    Bits16,
}

/// Bus clocks of a standard ISA cycle (IBM PC AT Technical Reference bus timing, as summarised
/// in Shanley & Anderson, "ISA System Architecture"; not checked here against the primary
/// text): every cycle is 2 clocks plus the default wait states, 4 for an 8-bit memory or I/O
/// cycle (6 clocks) and 1 for a 16-bit one (3 clocks). A card may stretch any of its own
/// cycles further through IOCHRDY.
const CLOCKS_8BIT_CYCLE: u64 = 6;
/// See [`CLOCKS_8BIT_CYCLE`].
const CLOCKS_16BIT_CYCLE: u64 = 3;

impl IsaWidth {
    /// Bytes per bus cycle.
    pub fn bytes(self) -> u64 {
        match self {
            IsaWidth::Bits8 => 1,
            IsaWidth::Bits16 => 2,
        }
    }

    /// Bus clocks per data cycle of this width (`CLOCKS_8BIT_CYCLE`, memory and I/O alike).
    pub fn clocks_per_cycle(self) -> u64 {
        match self {
            IsaWidth::Bits8 => CLOCKS_8BIT_CYCLE,
            IsaWidth::Bits16 => CLOCKS_16BIT_CYCLE,
        }
    }

    /// On-card RAM of typical cards of this width (Ethernet HOWTO: 8 kB and 16 kB).
    pub fn card_ram(self) -> Bytes {
        match self {
            IsaWidth::Bits8 => Bytes(8 * 1024),
            IsaWidth::Bits16 => Bytes(16 * 1024),
        }
    }
}

/// How the host reaches the frames in an 8390 card's packet RAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardAccess {
    /// The RAM is mapped into the ISA memory space and copied with memory cycles (WD80x3,
    /// 3c503 in shared-memory mode; Linux `wd.c`).
    SharedMemory,
    /// The 8390's remote DMA moves the RAM through one data port, read or written with string
    /// I/O (`insw`/`outsw`, or `insb`/`outsb` on 8-bit cards) after the driver programs the
    /// remote byte count and start address (NE1000/NE2000; Linux `ne.c`).
    RemoteDma,
}

/// The ISA bus accesses one step of a driver makes.
///
/// Register accesses are single 8-bit I/O cycles; the 8390's registers are 8 bits wide on
/// every card. A Linux `inb_p`/`outb_p` is the access followed by a pause, a write to the
/// unused port 0x80 (Linux 1.x `include/asm-i386/io.h`, `__SLOW_DOWN_IO`), itself an 8-bit
/// I/O cycle on the motherboard's side of the bus. Data moves in cycles of the card's width.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BusWork {
    /// 8-bit I/O cycles to the card's registers (8390 and the board's own).
    pub card_io: u64,
    /// 8-bit I/O cycles to the motherboard: the 8259A interrupt controller and the port 0x80
    /// pauses.
    pub board_io: u64,
    /// Data cycles to or from the card's packet RAM (memory cycles with shared memory, data
    /// port I/O cycles with remote DMA), each of the card's width.
    pub data_cycles: u64,
}

impl BusWork {
    /// `n` plain `inb`/`outb` accesses to the card.
    pub fn io(mut self, n: u64) -> BusWork {
        self.card_io += n;
        self
    }

    /// `n` `inb_p`/`outb_p` accesses to the card, each followed by its port 0x80 pause.
    pub fn io_p(mut self, n: u64) -> BusWork {
        self.card_io += n;
        self.board_io += n;
        self
    }

    /// `n` accesses to the 8259A interrupt controller.
    pub fn pic(mut self, n: u64) -> BusWork {
        self.board_io += n;
        self
    }

    /// One transfer of `bytes` to or from the packet RAM on a card of `width`: whole cycles,
    /// an odd trailing byte costing a cycle of its own.
    pub fn data(mut self, width: IsaWidth, bytes: u64) -> BusWork {
        self.data_cycles += bytes.div_ceil(width.bytes());
        self
    }

    /// Both steps' accesses.
    pub fn and(self, other: BusWork) -> BusWork {
        BusWork {
            card_io: self.card_io + other.card_io,
            board_io: self.board_io + other.board_io,
            data_cycles: self.data_cycles + other.data_cycles,
        }
    }
}

/// An ISA bus at a given clock, with one card on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IsaBus {
    width: IsaWidth,
    clock_hz: u64,
    extra_wait_states: u64,
}

impl IsaBus {
    /// A bus of `width` clocked at `clock_hz`.
    pub fn new(width: IsaWidth, clock_hz: u64) -> IsaBus {
        IsaBus {
            width,
            clock_hz: clock_hz.max(1),
            extra_wait_states: 0,
        }
    }

    /// The same bus with a card that stretches every cycle to its packet RAM by `n` wait
    /// states (IOCHRDY). Its register accesses keep standard timing.
    pub fn with_extra_wait_states(self, n: u64) -> IsaBus {
        IsaBus {
            extra_wait_states: n,
            ..self
        }
    }

    fn clocks(&self, w: BusWork) -> u64 {
        let data = self.width.clocks_per_cycle() + self.extra_wait_states;
        (w.card_io + w.board_io) * CLOCKS_8BIT_CYCLE + w.data_cycles * data
    }

    /// Time the bus is busy with `work`.
    pub fn time(&self, work: BusWork) -> Nanos {
        Nanos((self.clocks(work) * 1_000_000_000).div_ceil(self.clock_hz))
    }

    /// Time to copy `bytes` between the card's packet RAM and the host in one transfer.
    pub fn transfer_time(&self, bytes: Bytes) -> Nanos {
        self.time(BusWork::default().data(self.width, bytes.0))
    }

    /// Sustained packet-RAM copy rate in bytes per second.
    pub fn bytes_per_sec(&self) -> u64 {
        self.clock_hz * self.width.bytes()
            / (self.width.clocks_per_cycle() + self.extra_wait_states)
    }

    /// The card width.
    pub fn width(&self) -> IsaWidth {
        self.width
    }
}

/// 8390 buffer page size.
pub const PAGE: u64 = 256;
/// Per-frame receive header the 8390 writes before each frame.
pub const RX_HEADER: u64 = 4;
/// Transmit reservation of most Linux 8390 drivers: two 1536-byte transmit buffers (3 kB).
pub const TX_RESERVED: Bytes = Bytes(2 * 1536);

/// Pages a received frame occupies.
pub fn pages_for(frame: Bytes) -> u64 {
    (frame.0 + RX_HEADER).div_ceil(PAGE)
}

/// The card's receive ring.
#[derive(Debug, Clone)]
pub struct CardBuffer {
    pages: u64,
    used: u64,
    frames: VecDeque<Bytes>,
    overruns: u64,
    stopped: bool,
    missed: u64,
}

impl CardBuffer {
    /// The receive ring left of `ram` after `tx_reserved` for transmit buffers.
    pub fn new(ram: Bytes, tx_reserved: Bytes) -> CardBuffer {
        let pages = ram.0.saturating_sub(tx_reserved.0) / PAGE;
        CardBuffer {
            pages,
            used: 0,
            frames: VecDeque::new(),
            overruns: 0,
            stopped: false,
            missed: 0,
        }
    }

    /// A frame arrives from the wire; false when it is lost. A frame that does not fit is an
    /// overrun and stops the receiver; while it is stopped every frame is missed.
    pub fn accept(&mut self, frame: Bytes) -> bool {
        if self.stopped {
            self.missed += 1;
            return false;
        }
        let need = pages_for(frame);
        if self.used + need > self.pages {
            self.overruns += 1;
            self.stopped = true;
            return false;
        }
        self.used += need;
        self.frames.push_back(frame);
        true
    }

    /// The oldest frame, to be copied to the host.
    pub fn front(&self) -> Option<Bytes> {
        self.frames.front().copied()
    }

    /// The host finished copying the oldest frame: its pages are free.
    pub fn release_front(&mut self) -> Option<Bytes> {
        let f = self.frames.pop_front()?;
        self.used -= pages_for(f);
        Some(f)
    }

    /// Frames waiting on the card.
    pub fn queued(&self) -> usize {
        self.frames.len()
    }

    /// Overruns: frames that found the ring full (each one stopped the receiver).
    pub fn overruns(&self) -> u64 {
        self.overruns
    }

    /// Frames that arrived while the receiver was stopped after an overrun.
    pub fn missed(&self) -> u64 {
        self.missed
    }

    /// True between an overrun and the driver's [`CardBuffer::restart`].
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The driver's overrun recovery is complete: the receiver accepts frames again. Frames
    /// still on the ring stay (Linux drains them before leaving loopback mode).
    pub fn restart(&mut self) {
        self.stopped = false;
    }

    /// Receive ring size in bytes.
    pub fn capacity(&self) -> Bytes {
        Bytes(self.pages * PAGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_bit_bus_at_8_mhz_moves_a_full_frame_in_about_1_1_ms() {
        let bus = IsaBus::new(IsaWidth::Bits8, 8_000_000);
        // 1514 bytes × 6 clocks / 8 MHz = 1.1355 ms.
        assert_eq!(bus.transfer_time(Bytes(1514)), Nanos(1_135_500));
        assert_eq!(bus.bytes_per_sec(), 1_333_333);
    }

    #[test]
    fn sixteen_bit_bus_is_four_times_faster_per_byte() {
        let b8 = IsaBus::new(IsaWidth::Bits8, 8_000_000);
        let b16 = IsaBus::new(IsaWidth::Bits16, 8_000_000);
        assert_eq!(b16.bytes_per_sec() * 1000 / b8.bytes_per_sec(), 4000);
        assert_eq!(
            b16.transfer_time(Bytes(3)),
            Nanos(750),
            "odd byte costs a whole cycle"
        );
    }

    #[test]
    fn extra_wait_states_stretch_every_cycle() {
        let bus = IsaBus::new(IsaWidth::Bits8, 8_000_000).with_extra_wait_states(2);
        assert_eq!(bus.transfer_time(Bytes(1000)), Nanos(1_000_000));
    }

    #[test]
    fn register_accesses_follow_the_bus_clock_and_ignore_the_cards_wait_states() {
        // One outb_p = the access and its port 0x80 pause: two 6-clock 8-bit I/O cycles.
        let slow = IsaBus::new(IsaWidth::Bits8, 6_000_000).with_extra_wait_states(2);
        let fast = IsaBus::new(IsaWidth::Bits8, 24_000_000);
        let step = BusWork::default().io_p(1);
        assert_eq!(slow.time(step), Nanos(2_000));
        assert_eq!(fast.time(step), Nanos(500));
        assert_eq!(slow.time(BusWork::default().pic(3)), Nanos(3_000));
        // Data cycles do pay the card's wait states: 8 clocks per byte.
        assert_eq!(
            slow.time(BusWork::default().data(IsaWidth::Bits8, 3)),
            Nanos(4_000)
        );
    }

    #[test]
    fn eight_kb_card_keeps_room_for_three_full_frames() {
        let mut card = CardBuffer::new(IsaWidth::Bits8.card_ram(), TX_RESERVED);
        assert_eq!(card.capacity(), Bytes(5120));
        assert_eq!(pages_for(Bytes(1514)), 6);
        assert!((0..3).all(|_| card.accept(Bytes(1514))));
        assert!(
            card.accept(Bytes(60)),
            "a small frame fits in the last 2 pages"
        );
        assert!(!card.accept(Bytes(1514)), "the next full frame overruns");
        assert_eq!(card.overruns(), 1);
        assert_eq!(card.queued(), 4);
    }

    #[test]
    fn an_overrun_stops_the_receiver_until_the_driver_restarts_it() {
        let mut card = CardBuffer::new(IsaWidth::Bits8.card_ram(), TX_RESERVED);
        assert!((0..3).all(|_| card.accept(Bytes(1514))));
        assert!(!card.accept(Bytes(1514)));
        assert!(card.stopped());
        // Room is free again, but the receiver is off: even a small frame is missed.
        assert_eq!(card.release_front(), Some(Bytes(1514)));
        assert!(!card.accept(Bytes(60)));
        assert_eq!((card.overruns(), card.missed()), (1, 1));
        card.restart();
        assert!(card.accept(Bytes(1514)));
        assert_eq!(card.queued(), 3, "frames on the ring survive the recovery");
    }

    #[test]
    fn sixteen_kb_card_absorbs_a_4k_nfs_reply() {
        // A 4 kB NFS read reply is three back-to-back frames (2 full + 1 partial).
        let burst = [Bytes(1514), Bytes(1514), Bytes(1182)];
        let mut small = CardBuffer::new(IsaWidth::Bits8.card_ram(), TX_RESERVED);
        let mut big = CardBuffer::new(IsaWidth::Bits16.card_ram(), TX_RESERVED);
        assert!(burst.iter().all(|&f| big.accept(f)));
        assert!(
            burst.iter().all(|&f| small.accept(f)),
            "fits only with an empty ring"
        );
        assert!(!small.accept(Bytes(1514)));
    }
}
