//! What the Linux 8390 driver family does on the ISA bus for each frame: the register accesses
//! and packet-RAM transfers of one receive interrupt, one received frame, one transmitted frame
//! and its transmit-done interrupt, counted from the sources of the HOWTO's era.
//!
//! Sources (read for the counts, none copied):
//! - `drivers/net/8390.c` v1.10 (Donald Becker, 9/23/94, Linux 1.2): `ei_interrupt`,
//!   `ei_receive`, `ei_tx_intr`, `ei_start_xmit`, `NS8390_trigger_send`;
//! - `drivers/net/wd.c` v1.10 (9/23/94): `wd_block_input`, `wd_block_output` — shared memory,
//!   and on 16-bit boards an `outb` to WD_CMDREG5 before and after each frame to switch the
//!   memory to 16-bit access;
//! - `drivers/net/ne.c` of the same release: `ne_block_input`, `ne_block_output` — remote DMA;
//! - Linux 1.x `include/asm-i386/irq.h`: a slow interrupt on the first 8259A is acknowledged
//!   with `ACK_FIRST` (`inb 0x21`, `outb 0x21`, `outb 0x20`) and unmasked with `UNBLK_FIRST`
//!   (`inb 0x21`, `outb 0x21`); an 8-bit card can only use IRQ 2–7, the first controller.
//!
//! `inb_p`/`outb_p` count as [`BusWork::io_p`] (the access plus the port 0x80 pause).

use crate::bus::{BusWork, CardAccess, IsaWidth, RX_HEADER};

/// A card: how its RAM is reached and how wide its bus cycles are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Card {
    /// Shared memory or remote DMA.
    pub access: CardAccess,
    /// 8- or 16-bit.
    pub width: IsaWidth,
}

/// The 8259A's acknowledge and unmask of one slow interrupt (`ACK_FIRST` + `UNBLK_FIRST`).
const PIC_ACCESSES: u64 = 5;

impl Card {
    /// One receive interrupt, apart from its frames: the interrupt controller; `ei_interrupt`
    /// selecting page 0, reading ISR, restarting (`E8390_START`) and reading ISR once more to
    /// find it clear; `ei_receive`'s final pass that reads CURPAG (page 1 and back) and
    /// BOUNDARY and finds the ring empty; its ISR acknowledge.
    pub fn rx_interrupt(&self) -> BusWork {
        BusWork::default()
            .pic(PIC_ACCESSES)
            .io_p(1 + 1 + 1 + 1 + 4 + 1)
    }

    /// One frame of `bytes` taken off the ring in `ei_receive`: CURPAG through page 1 and back
    /// and BOUNDARY (4 paused accesses), the 4-byte 8390 header and the frame read through
    /// `block_input`, and the new BOUNDARY written.
    pub fn rx_frame(&self, bytes: u64) -> BusWork {
        let ring = BusWork::default().io_p(4 + 1);
        ring.and(self.block_input(RX_HEADER))
            .and(self.block_input(bytes))
            .and(self.wd16_switch())
    }

    /// One frame of `bytes` sent by `ei_start_xmit`: mask the 8390's interrupts (plain
    /// `outb`), `block_output`, `NS8390_trigger_send` (page 0, read the command register,
    /// byte count low and high, start page, transmit: 6 paused accesses), unmask.
    pub fn tx_frame(&self, bytes: u64) -> BusWork {
        let send = BusWork::default().io(1).io_p(6 + 1);
        send.and(self.block_output(bytes)).and(self.wd16_switch())
    }

    /// The transmit-done interrupt that follows every sent frame: the interrupt controller;
    /// `ei_interrupt`'s page select, ISR reads and restart; `ei_tx_intr` reading TSR (plain
    /// `inb`) and acknowledging.
    pub fn tx_done(&self) -> BusWork {
        BusWork::default()
            .pic(PIC_ACCESSES)
            .io(1)
            .io_p(1 + 1 + 1 + 1 + 1)
    }

    /// `block_input` of `bytes`: shared memory is read directly; remote DMA programs command,
    /// byte count (2), start address (2) and the read command, moves the bytes through the
    /// data port, and acknowledges remote-DMA-complete (7 paused accesses).
    fn block_input(&self, bytes: u64) -> BusWork {
        let data = BusWork::default().data(self.width, bytes);
        match self.access {
            CardAccess::SharedMemory => data,
            CardAccess::RemoteDma => data.io_p(7),
        }
    }

    /// `block_output` of `bytes`: shared memory is written directly; remote DMA selects page
    /// 0, clears remote-DMA-complete, programs byte count and start address and the write
    /// command, moves the bytes, polls ISR once for completion and acknowledges (9 paused
    /// accesses).
    fn block_output(&self, bytes: u64) -> BusWork {
        let data = BusWork::default().data(self.width, bytes);
        match self.access {
            CardAccess::SharedMemory => data,
            CardAccess::RemoteDma => data.io_p(9),
        }
    }

    /// A 16-bit WD board switches its memory to 16-bit access before a transfer and back
    /// after it (two plain `outb` to WD_CMDREG5).
    fn wd16_switch(&self) -> BusWork {
        match (self.access, self.width) {
            (CardAccess::SharedMemory, IsaWidth::Bits16) => BusWork::default().io(2),
            _ => BusWork::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::IsaBus;

    const WD8003: Card = Card {
        access: CardAccess::SharedMemory,
        width: IsaWidth::Bits8,
    };
    const NE2000: Card = Card {
        access: CardAccess::RemoteDma,
        width: IsaWidth::Bits16,
    };

    #[test]
    fn a_received_full_frame_on_an_8_bit_wd_card_is_mostly_its_copy() {
        let w = WD8003.rx_frame(1514);
        assert_eq!(w.data_cycles, 4 + 1514);
        assert_eq!((w.card_io, w.board_io), (5, 5));
        let i = WD8003.rx_interrupt();
        assert_eq!((i.card_io, i.board_io), (9, 14));
    }

    #[test]
    fn remote_dma_adds_register_setup_to_every_transfer() {
        let shared = WD8003.rx_frame(1514);
        let ne = Card {
            width: IsaWidth::Bits8,
            ..NE2000
        }
        .rx_frame(1514);
        assert_eq!(ne.card_io - shared.card_io, 14, "two block_input calls");
        assert_eq!(NE2000.rx_frame(1514).data_cycles, 2 + 757);
    }

    #[test]
    fn every_step_takes_four_times_as_long_at_a_quarter_of_the_clock() {
        for w in [
            WD8003.rx_interrupt(),
            WD8003.tx_frame(60),
            NE2000.tx_done(),
            NE2000.rx_frame(100),
        ] {
            let fast = IsaBus::new(IsaWidth::Bits8, 26_800_000).time(w).0;
            let slow = IsaBus::new(IsaWidth::Bits8, 6_700_000).time(w).0;
            assert!(slow.abs_diff(4 * fast) <= 4, "{w:?}: {slow} vs {fast}");
        }
    }
}
