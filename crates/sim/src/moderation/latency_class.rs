//! The Intel "latency class" classifier shared by e1000/e1000e, igb and FreeBSD 14 em/igb/igc
//! (moderation-algorithms.md §2.2, §3, §8 item 3).
//!
//! Three states, moved by the bytes and packets of one accounting window. The families differ
//! only in the bulk-exit threshold (6000 bytes in e1000/e1000e, 1500 in igb and FreeBSD 14) and
//! in how they fill [`Window`] (FreeBSD 14 combines Rx and Tx).

/// A latency class, ordered from least to most moderation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum LatencyClass {
    /// ~70 K interrupts/s.
    #[default]
    Lowest,
    /// ~20 K interrupts/s.
    Low,
    /// ~4 K interrupts/s.
    Bulk,
}

/// The counts the classifier looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Window {
    /// Packets in the window.
    pub packets: u64,
    /// Bytes in the window.
    pub bytes: u64,
    /// Bytes per packet (integer division; FreeBSD 14 passes max(Tx bpp, Rx bpp)).
    pub bpp: u64,
}

impl Window {
    /// A window whose bytes per packet is `bytes / packets`.
    pub fn new(packets: u64, bytes: u64) -> Window {
        Window {
            packets,
            bytes,
            bpp: per_packet(bytes, packets),
        }
    }
}

/// Bytes per packet as drivers compute it (integer division; 0 for an empty window).
pub fn per_packet(bytes: u64, packets: u64) -> u64 {
    bytes.checked_div(packets).unwrap_or(0)
}

/// Bulk-exit threshold of e1000/e1000e (bytes).
pub const E1000_BULK_EXIT: u64 = 6000;
/// Bulk-exit threshold of igb and FreeBSD 14 AIM (bytes).
pub const IGB_BULK_EXIT: u64 = 1500;

/// The next class after a window; an empty window keeps the class.
pub fn classify(state: LatencyClass, w: Window, bulk_exit: u64) -> LatencyClass {
    use LatencyClass::*;
    if w.packets == 0 {
        return state;
    }
    match state {
        Lowest if w.bpp > 8000 => Bulk,
        Lowest if w.packets < 5 && w.bytes > 512 => Low,
        Lowest => Lowest,
        Low => classify_low(w),
        Bulk if w.bytes > 25000 => {
            if w.packets > 35 {
                Low
            } else {
                Bulk
            }
        }
        Bulk if w.bytes < bulk_exit => Low,
        Bulk => Bulk,
    }
}

fn classify_low(w: Window) -> LatencyClass {
    use LatencyClass::*;
    if w.bytes > 10000 {
        if w.bpp > 8000 || w.packets < 10 || w.bpp > 1200 {
            Bulk
        } else if w.packets > 35 {
            Lowest
        } else {
            Low
        }
    } else if w.bpp > 2000 {
        Bulk
    } else if w.packets <= 2 && w.bytes < 512 {
        Lowest
    } else {
        Low
    }
}

#[cfg(test)]
mod tests {
    use super::LatencyClass::*;
    use super::*;

    #[test]
    fn empty_window_keeps_the_class() {
        for s in [Lowest, Low, Bulk] {
            assert_eq!(classify(s, Window::new(0, 0), IGB_BULK_EXIT), s);
        }
    }

    #[test]
    fn lowest_moves_on_jumbo_or_few_large_packets() {
        assert_eq!(classify(Lowest, Window::new(1, 9000), IGB_BULK_EXIT), Bulk);
        assert_eq!(classify(Lowest, Window::new(4, 600), IGB_BULK_EXIT), Low);
        assert_eq!(classify(Lowest, Window::new(5, 600), IGB_BULK_EXIT), Lowest);
        assert_eq!(classify(Lowest, Window::new(2, 400), IGB_BULK_EXIT), Lowest);
    }

    #[test]
    fn low_state_walks_each_branch() {
        // bytes > 10000: few packets → bulk; big packets → bulk; many small → lowest.
        assert_eq!(classify(Low, Window::new(8, 12000), IGB_BULK_EXIT), Bulk);
        assert_eq!(classify(Low, Window::new(10, 15000), IGB_BULK_EXIT), Bulk);
        assert_eq!(classify(Low, Window::new(40, 12000), IGB_BULK_EXIT), Lowest);
        assert_eq!(classify(Low, Window::new(20, 12000), IGB_BULK_EXIT), Low);
        // bytes ≤ 10000.
        assert_eq!(classify(Low, Window::new(3, 9000), IGB_BULK_EXIT), Bulk);
        assert_eq!(classify(Low, Window::new(2, 100), IGB_BULK_EXIT), Lowest);
        assert_eq!(classify(Low, Window::new(3, 300), IGB_BULK_EXIT), Low);
    }

    #[test]
    fn bulk_exit_threshold_is_the_family_difference() {
        let w = Window::new(3, 3000);
        assert_eq!(classify(Bulk, w, E1000_BULK_EXIT), Low);
        assert_eq!(classify(Bulk, w, IGB_BULK_EXIT), Bulk);
        assert_eq!(classify(Bulk, Window::new(40, 30000), IGB_BULK_EXIT), Low);
        assert_eq!(classify(Bulk, Window::new(20, 30000), IGB_BULK_EXIT), Bulk);
    }
}
