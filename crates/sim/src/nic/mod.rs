//! The NIC: on-card receive buffer, bus/DMA drain, rx and tx descriptor rings, the delay
//! timers and the interrupt throttle.
//!
//! Receive path, in time order: a frame's last bit arrives from the [`Feed`] → it waits in
//! the card buffer (dropped if the buffer is full: `ring_full` when the hardware had no free
//! descriptor, else `card_overflow`) → the DMA engine moves frames one at a time, each taking
//! `dma_latency + bytes / bus rate`, and only while a free rx descriptor exists → the
//! descriptor is written back (visible to the driver at once; WTHRESH 0) → the rx
//! [`DelayPair`] (RDTR/RADV) decides when RXT0 latches; RXDMT0 latches when the free
//! descriptors fall to half the ring. Transmit: doorbell + descriptor and data fetch, the
//! wire, a descriptor write-back at the end of transmission, then TIDV/TADV → TXDW.
//!
//! Nothing here is an event. [`Nic::advance_to`] replays everything that happened up to a
//! time in one merge loop over arrivals, DMA completions, write-backs and timer deadlines;
//! the engine calls it whenever the host touches the NIC, and asks [`Nic::next_wakeup`] for
//! the next moment a cause could latch while interrupts are enabled.

pub mod frame;
pub mod link;
pub mod ring;
pub mod throttle;
pub mod timers;

use crate::engine::clock::Oscillator;
use crate::workload::stream::Generator;
use frame::{Frame, FrameRun};
use link::Link;
use ring::{Ring, Taken};
use std::collections::VecDeque;
use throttle::{ItrReading, Throttle};
use timers::DelayPair;

/// ICR cause: transmit descriptor written back.
pub const ICR_TXDW: u32 = 0x01;
/// ICR cause: receive descriptors fell to the minimum threshold.
pub const ICR_RXDMT0: u32 = 0x10;
/// ICR cause: receive timer (packet or absolute delay expired, or RDTR = 0).
pub const ICR_RXT0: u32 = 0x80;
/// Causes the e1000 driver enables in IMS (IMS_ENABLE_MASK minus link/sequence causes,
/// which the simulator never raises).
pub const IMS_ENABLE_MASK: u32 = ICR_TXDW | ICR_RXDMT0 | ICR_RXT0;

/// Hardware coalescing registers, in real units of the NIC's own clock (nominal ns).
///
/// This is the seam between moderation policies and the NIC: a policy computes these in its
/// own register units (256 ns ITR steps, 1.024 µs delay ticks, 2 µs EITR steps, DIM
/// `(usecs, frames)` profiles) and the NIC runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Coalescing {
    /// Throttle interval; 0 = off.
    pub interval_ns: u64,
    /// Rx packet timer (RDTR); 0 = signal every packet.
    pub rx_pkt_ns: u64,
    /// Rx absolute timer (RADV); 0 = none.
    pub rx_abs_ns: u64,
    /// Rx frame-count threshold; 0 = none.
    pub rx_frames: u32,
    /// Tx packet timer (TIDV); 0 = signal every write-back.
    pub tx_pkt_ns: u64,
    /// Tx absolute timer (TADV); 0 = none.
    pub tx_abs_ns: u64,
}

/// Static properties of a NIC model and its configuration.
#[derive(Debug, Clone)]
pub struct NicConfig {
    /// How the throttle interval is read by this hardware.
    pub reading: ItrReading,
    /// Rx descriptors.
    pub rx_ring: u32,
    /// Tx descriptors.
    pub tx_ring: u32,
    /// On-card receive buffer (bytes).
    pub card_buffer: u64,
    /// Bus rate in bits per second (per direction).
    pub bus_bps: f64,
    /// Fixed DMA cost per received frame: data write + descriptor write-back (ns).
    pub rx_dma_ns: u64,
    /// Fixed cost per transmitted frame: doorbell + descriptor and data fetch + MAC/PHY (ns).
    pub tx_dma_ns: u64,
    /// Link speed the driver sees (Mb/s).
    pub link_mbps: u32,
}

/// Cumulative NIC statistics (like the hardware statistics registers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NicCounters {
    /// Frames whose last bit reached the NIC.
    pub arrived: u64,
    /// Frames DMA'd to host memory (good packets received).
    pub rx_packets: u64,
    /// Bytes of those frames (good octets received).
    pub rx_bytes: u64,
    /// Frames transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted (good octets transmitted).
    pub tx_bytes: u64,
    /// Dropped: card buffer full while rx descriptors were available.
    pub drop_card_overflow: u64,
    /// Dropped: card buffer full because no rx descriptor was free.
    pub drop_ring_full: u64,
    /// Frames taken from the rx ring by the driver.
    pub taken: u64,
    /// Interrupts asserted.
    pub interrupts: u64,
}

/// The arrival time of "no frame".
const NO_FRAME: u64 = u64::MAX;

/// Where frames come from, in arrival order.
trait Source {
    /// Arrival time of the next frame, [`NO_FRAME`] if none will come.
    fn next_at(&self) -> u64;
    /// Removes the next frame.
    fn pop(&mut self) -> Option<Frame>;
    /// The next frames in closed form, when they follow one ([`Generator::steady_run`]).
    #[inline]
    fn steady_run(&self) -> Option<FrameRun> {
        None
    }
    /// Removes the first `n` frames of `run` (from [`Source::steady_run`]).
    fn skip(&mut self, _run: &FrameRun, _n: u64) {}
}

impl Source for Feed {
    #[inline]
    fn next_at(&self) -> u64 {
        Feed::next_at(self)
    }
    #[inline]
    fn pop(&mut self) -> Option<Frame> {
        Feed::pop(self)
    }
}

impl Source for Generator {
    #[inline]
    fn next_at(&self) -> u64 {
        self.next_arrival()
    }
    #[inline]
    fn pop(&mut self) -> Option<Frame> {
        (self.next_arrival() != NO_FRAME).then(|| Generator::pop(self))
    }
    #[inline]
    fn steady_run(&self) -> Option<FrameRun> {
        Generator::steady_run(self)
    }
    fn skip(&mut self, run: &FrameRun, n: u64) {
        Generator::skip(self, run, n)
    }
}

/// Where a NIC's received frames come from: a link from another host and/or a generator.
#[derive(Debug, Default)]
pub struct Feed {
    /// Frames on the link, in arrival order.
    pub link: VecDeque<Frame>,
    /// A traffic generator attached to this port.
    pub generator: Option<Generator>,
}

impl Feed {
    /// Arrival time of the next frame.
    #[inline]
    pub fn peek(&self) -> Option<u64> {
        let t = self.next_at();
        (t != NO_FRAME).then_some(t)
    }

    /// Arrival time of the next frame, [`NO_FRAME`] if none will come.
    #[inline]
    fn next_at(&self) -> u64 {
        let (l, g) = self.heads();
        l.min(g)
    }

    /// Arrival times of the link's and the generator's next frames ([`NO_FRAME`]: none).
    #[inline]
    fn heads(&self) -> (u64, u64) {
        let l = self.link.front().map_or(NO_FRAME, |f| f.arrived);
        let g = self
            .generator
            .as_ref()
            .map_or(NO_FRAME, Generator::next_arrival);
        (l, g)
    }

    /// Removes the next frame; the link's goes first when both arrive together.
    #[inline]
    fn pop(&mut self) -> Option<Frame> {
        let (l, g) = self.heads();
        if g < l {
            self.generator.as_mut().map(Generator::pop)
        } else if l != NO_FRAME {
            self.link.pop_front()
        } else {
            None
        }
    }

    /// Frames still on their way (link only; a generator's future is not "in flight").
    pub fn in_flight(&self) -> u64 {
        self.link.len() as u64
    }
}

/// One NIC port with a single rx/tx queue pair and one interrupt vector.
#[derive(Debug)]
pub struct Nic {
    cfg: NicConfig,
    osc: Oscillator,
    regs: Coalescing,
    ps_per_byte_bus: u64,
    /// The last frame size DMA'd and its DMA time (frames of one size follow each other).
    dma_memo: (u32, u64),
    /// Free descriptors at which RXDMT0 latches (RDMTS = 1/2 of the ring).
    rdmt_at: u32,
    // Receive.
    fifo: VecDeque<Frame>,
    fifo_bytes: u64,
    dma_free_at: u64,
    ring: Ring,
    hw_free: u32,
    rx_timers: DelayPair,
    // Transmit.
    tx_wb: VecDeque<(u64, u32)>,
    tx_done: u32,
    tx_done_bytes: u64,
    tx_used: u32,
    tx_dma_free: u64,
    tx_timers: DelayPair,
    // Interrupts.
    icr: u32,
    ims: bool,
    throttle: Throttle,
    now: u64,
    /// Statistics.
    pub counters: NicCounters,
}

impl Nic {
    /// A NIC with `regs` programmed, on a host with oscillator `osc`; the throttle's interval
    /// clock has its first boundary at `phase` (ns).
    pub fn new(cfg: NicConfig, osc: Oscillator, regs: Coalescing, phase: u64) -> Nic {
        let ps_per_byte_bus = (8e12 / cfg.bus_bps).round() as u64;
        let mut nic = Nic {
            hw_free: cfg.rx_ring,
            // RDMTS = 1/2: the e1000 driver's default minimum-threshold size.
            rdmt_at: cfg.rx_ring / 2,
            throttle: Throttle::new(cfg.reading, regs.interval_ns, phase),
            rx_timers: DelayPair::default(),
            tx_timers: DelayPair::default(),
            cfg,
            osc,
            regs,
            ps_per_byte_bus,
            dma_memo: (u32::MAX, 0),
            fifo: VecDeque::new(),
            fifo_bytes: 0,
            dma_free_at: 0,
            ring: Ring::default(),
            tx_wb: VecDeque::new(),
            tx_done: 0,
            tx_done_bytes: 0,
            tx_used: 0,
            tx_dma_free: 0,
            icr: 0,
            ims: true,
            now: 0,
            counters: NicCounters::default(),
        };
        nic.program_timers();
        nic
    }

    /// The configuration.
    pub fn config(&self) -> &NicConfig {
        &self.cfg
    }

    /// The registers as last written.
    pub fn regs(&self) -> Coalescing {
        self.regs
    }

    /// Writes the coalescing registers at `now`; a changed or rewritten interval restarts
    /// the throttle's interval clock.
    pub fn write_regs(&mut self, regs: Coalescing, now: u64) {
        self.regs = regs;
        self.throttle.write(regs.interval_ns, now, &self.osc);
        self.program_timers();
    }

    fn program_timers(&mut self) {
        let r = self.regs;
        let o = self.osc;
        self.rx_timers
            .reprogram(o.real(r.rx_pkt_ns), o.real(r.rx_abs_ns), r.rx_frames);
        self.tx_timers
            .reprogram(o.real(r.tx_pkt_ns), o.real(r.tx_abs_ns), 0);
    }

    #[inline]
    fn dma_ns(&self, bytes: u32) -> u64 {
        self.cfg.rx_dma_ns + (bytes as u64 * self.ps_per_byte_bus).div_ceil(1000)
    }

    /// [`Nic::dma_ns`], remembered for the last frame size.
    #[inline]
    fn dma_ns_memo(&mut self, bytes: u32) -> u64 {
        if self.dma_memo.0 != bytes {
            self.dma_memo = (bytes, self.dma_ns(bytes));
        }
        self.dma_memo.1
    }

    /// Completion time of the DMA of the card buffer's head frame, if it can run.
    #[inline]
    fn head_dma_done(&self) -> Option<u64> {
        if self.hw_free == 0 {
            return None;
        }
        let f = self.fifo.front()?;
        Some(self.dma_free_at.max(f.arrived) + self.dma_ns(f.bytes))
    }

    /// The earliest running delay-timer deadline, `u64::MAX` when none runs.
    #[inline]
    fn timer_deadline(&self) -> u64 {
        self.rx_timers.earliest().min(self.tx_timers.earliest())
    }

    /// Replays everything that happens on the card up to and including time `t`.
    pub fn advance_to(&mut self, t: u64, feed: &mut Feed) {
        loop {
            let timer = self.timer_deadline();
            let wb = self.tx_wb.front().map_or(u64::MAX, |w| w.0);
            if self.fifo.is_empty() {
                self.pass_through(t, timer.min(wb), feed);
            }
            let timer = self.timer_deadline();
            let dma = self.head_dma_done().unwrap_or(u64::MAX);
            let arr = feed.next_at();
            let next = timer.min(dma).min(wb).min(arr);
            if next > t {
                break;
            }
            if timer == next {
                self.expire_timers(next);
            } else if dma == next {
                self.finish_dma(next);
            } else if wb == next {
                self.write_back(next);
            } else if let Some(frame) = feed.pop() {
                self.receive(frame);
            }
        }
        self.now = self.now.max(t);
    }

    /// The fast path while the card buffer is empty: a frame whose DMA finishes before the
    /// next frame arrives, before `other` (a timer or write-back) and by `t` never shares the
    /// buffer, so it goes straight to the ring. Anything else is left to the general merge.
    /// With nothing on the link, the generator is the only source and is read directly.
    #[inline]
    fn pass_through(&mut self, t: u64, other: u64, feed: &mut Feed) {
        match feed.generator.as_mut() {
            Some(g) if feed.link.is_empty() => self.pass_from(t, other, g),
            _ => self.pass_from(t, other, feed),
        }
    }

    #[inline]
    fn pass_from(&mut self, t: u64, mut other: u64, src: &mut impl Source) {
        self.land_steady(t, other, src);
        let mut arr = src.next_at();
        while self.hw_free > 0 {
            if arr == NO_FRAME || arr > t || arr >= other {
                break;
            }
            let Some(frame) = src.pop() else { break };
            let done = self.dma_free_at.max(arr) + self.dma_ns_memo(frame.bytes);
            arr = src.next_at();
            let overlaps = arr < done;
            if done > t || done >= other || overlaps || frame.bytes as u64 > self.cfg.card_buffer {
                self.receive(frame);
                break;
            }
            self.counters.arrived += 1;
            self.land(frame, done);
            other = other.min(self.rx_timers.earliest());
            if self.land_steady(t, other, src) {
                arr = src.next_at();
            }
        }
    }

    /// Lands the source's next frames in one step when they follow in closed form
    /// ([`FrameRun`]) and each would provably go the way [`Nic::pass_from`] sends it, frame
    /// by frame, straight to the ring:
    /// - the rx timers signal every packet (RDTR 0), so landing starts no deadline that
    ///   could come before the next arrival, and `other` stays as it is;
    /// - the DMA time is at most the smallest gap between arrivals and the first frame
    ///   arrives after the DMA engine freed, so no frame overlaps the one before: each is
    ///   done `dma` after its arrival;
    /// - a frame lands when it is done by `t` and before `other`, with a descriptor free.
    ///
    /// Returns whether any frame landed.
    #[inline]
    fn land_steady(&mut self, t: u64, other: u64, src: &mut impl Source) -> bool {
        if !self.rx_timers.signals_every_packet() || self.hw_free == 0 {
            return false;
        }
        let Some(run) = src.steady_run() else {
            return false;
        };
        let dma = self.dma_ns_memo(run.bytes);
        if run.bytes as u64 > self.cfg.card_buffer
            || dma > run.min_gap_ns()
            || run.arrived(0) < self.dma_free_at
        {
            return false;
        }
        let last_done = other.checked_sub(1).map(|o| o.min(t));
        let Some(last_arrival) = last_done.and_then(|d| d.checked_sub(dma)) else {
            return false;
        };
        let n = run.arriving_by(last_arrival).min(self.hw_free as u64);
        if n == 0 {
            return false;
        }
        src.skip(&run, n);
        self.land_run(run.first(n), dma);
        true
    }

    /// [`Nic::land`] for every frame of `run` (each done `dma` after its arrival, each
    /// signalling RXT0 at once): the counters, the ring, the DMA engine's free time and the
    /// timers end as the frame-by-frame landings leave them, and RXDMT0 latches if the free
    /// descriptors passed the threshold on the way.
    fn land_run(&mut self, run: FrameRun, dma: u64) {
        let n = run.count;
        let done = run.arrived(n - 1) + dma;
        let before = self.hw_free;
        self.counters.arrived += n;
        self.dma_free_at = done;
        self.hw_free -= n as u32;
        self.counters.rx_packets += n;
        self.counters.rx_bytes += n * run.bytes as u64;
        self.ring.push_run(run);
        if self.rx_timers.on_packet(done) {
            self.icr |= ICR_RXT0;
        }
        if (self.hw_free..before).contains(&self.rdmt_at) {
            self.icr |= ICR_RXDMT0;
        }
    }

    fn write_back(&mut self, t: u64) {
        if let Some((_, bytes)) = self.tx_wb.pop_front() {
            self.tx_done += 1;
            self.tx_done_bytes += bytes as u64;
        }
        if self.tx_timers.on_packet(t) {
            self.icr |= ICR_TXDW;
        }
    }

    fn expire_timers(&mut self, t: u64) {
        if self.rx_timers.expire(t) {
            self.icr |= ICR_RXT0;
        }
        if self.tx_timers.expire(t) {
            self.icr |= ICR_TXDW;
        }
    }

    fn finish_dma(&mut self, done: u64) {
        let Some(frame) = self.fifo.pop_front() else {
            return;
        };
        self.fifo_bytes -= frame.bytes as u64;
        self.land(frame, done);
    }

    /// A frame's DMA completed at `done`: its descriptor is written back.
    #[inline]
    fn land(&mut self, frame: Frame, done: u64) {
        self.dma_free_at = done;
        self.hw_free -= 1;
        self.counters.rx_packets += 1;
        self.counters.rx_bytes += frame.bytes as u64;
        self.ring.push(frame);
        if self.rx_timers.on_packet(done) {
            self.icr |= ICR_RXT0;
        }
        if self.hw_free == self.rdmt_at {
            self.icr |= ICR_RXDMT0;
        }
    }

    #[inline]
    fn receive(&mut self, frame: Frame) {
        self.counters.arrived += 1;
        if self.fifo_bytes + frame.bytes as u64 > self.cfg.card_buffer {
            if self.hw_free == 0 {
                self.counters.drop_ring_full += 1;
            } else {
                self.counters.drop_card_overflow += 1;
            }
            return;
        }
        self.fifo_bytes += frame.bytes as u64;
        self.fifo.push_back(frame);
    }

    /// The next time something on the card could change (a cause latch included), if any.
    pub fn next_wakeup(&self, feed: &Feed) -> Option<u64> {
        let next = self
            .timer_deadline()
            .min(self.head_dma_done().unwrap_or(u64::MAX))
            .min(self.tx_wb.front().map_or(u64::MAX, |w| w.0))
            .min(feed.next_at());
        (next != u64::MAX).then_some(next)
    }

    /// True when an enabled cause is latched and interrupts are unmasked.
    pub fn wants_interrupt(&self) -> bool {
        self.ims && self.icr & IMS_ENABLE_MASK != 0
    }

    /// The earliest time ≥ `now` the throttle lets an interrupt out.
    pub fn gate(&self, now: u64) -> u64 {
        self.throttle.gate(&self.osc, now)
    }

    /// The interrupt line is asserted at `t`.
    pub fn assert_irq(&mut self, t: u64) {
        self.throttle.asserted(t);
        self.counters.interrupts += 1;
    }

    /// The driver reads ICR (read-to-clear) and masks all causes (IMC), as e1000_intr does.
    pub fn read_icr_and_mask(&mut self) -> u32 {
        self.ims = false;
        std::mem::take(&mut self.icr)
    }

    /// The driver unmasks the causes (IMS write).
    pub fn unmask(&mut self) {
        self.ims = true;
    }

    /// True when interrupts are unmasked.
    pub fn unmasked(&self) -> bool {
        self.ims
    }

    /// Frames waiting in the rx ring.
    pub fn rx_ready(&self) -> usize {
        self.ring.len()
    }

    /// Takes the next `k` received frames from the ring (fewer if fewer are there), handing
    /// them to `f` in order, one by one or the frames of a run together.
    #[inline]
    pub fn take_rx_batch(&mut self, k: usize, f: impl FnMut(Taken<'_>)) {
        let k = k.min(self.ring.len());
        self.counters.taken += k as u64;
        self.ring.drain(k, f);
    }

    /// Takes the next received frame from the ring.
    #[inline]
    pub fn take_rx(&mut self) -> Option<Frame> {
        let f = self.ring.pop()?;
        self.counters.taken += 1;
        Some(f)
    }

    /// Gives `n` cleaned descriptors back to the hardware at `now`.
    pub fn refill(&mut self, n: u32, now: u64) {
        if self.hw_free == 0 && n > 0 {
            // A stalled DMA engine resumes only now.
            self.dma_free_at = self.dma_free_at.max(now);
        }
        self.hw_free = (self.hw_free + n).min(self.cfg.rx_ring - self.ring.len() as u32);
    }

    /// Transmits `frame` handed to the driver at `at` over `link`; returns it stamped with
    /// its arrival time at the far end. The tx ring is counted but never blocks a send: the
    /// workloads here stay far below it (a full ring would hold frames in the qdisc).
    pub fn transmit(&mut self, mut frame: Frame, at: u64, link: &mut Link) -> Frame {
        self.tx_used += 1;
        let fetch = (at + self.cfg.tx_dma_ns).max(self.tx_dma_free);
        let fetched = fetch + (frame.bytes as u64 * self.ps_per_byte_bus).div_ceil(1000);
        self.tx_dma_free = fetched;
        let arrived = link.send(fetched, frame.bytes);
        // Write-back when the last bit left; the link's propagation is after that.
        let last = self.tx_wb.back().map_or(0, |w| w.0);
        let wb = (arrived - link.propagation()).max(last);
        self.tx_wb.push_back((wb, frame.bytes));
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += frame.bytes as u64;
        frame.arrived = arrived;
        frame
    }

    /// Cleans completed tx descriptors; returns how many and their bytes.
    pub fn clean_tx(&mut self) -> (u32, u64) {
        let n = std::mem::take(&mut self.tx_done);
        self.tx_used -= n;
        (n, std::mem::take(&mut self.tx_done_bytes))
    }

    /// Frames on the card (buffer + ring), for the conservation check.
    pub fn holding(&self) -> u64 {
        (self.fifo.len() + self.ring.len()) as u64
    }

    /// Tx descriptors in use.
    pub fn tx_in_use(&self) -> u32 {
        self.tx_used
    }
}

#[cfg(test)]
mod tests {
    use super::frame::Payload;
    use super::*;

    fn cfg(ring: u32, buffer: u64, bus_bps: f64) -> NicConfig {
        NicConfig {
            reading: ItrReading::IntervalClock,
            rx_ring: ring,
            tx_ring: 256,
            card_buffer: buffer,
            bus_bps,
            rx_dma_ns: 0,
            tx_dma_ns: 0,
            link_mbps: 1000,
        }
    }

    fn frame(bytes: u32, arrived: u64) -> Frame {
        Frame {
            bytes,
            payload: 0,
            sent: arrived,
            arrived,
            what: Payload::Stream,
        }
    }

    fn feed(frames: impl IntoIterator<Item = Frame>) -> Feed {
        Feed {
            link: frames.into_iter().collect(),
            generator: None,
        }
    }

    #[test]
    fn full_ring_backs_up_into_the_card_buffer_then_drops() {
        // 4 descriptors, room for 2 more frames on the card: 6 kept, the rest dropped.
        let mut nic = Nic::new(
            cfg(4, 2 * 1000, 8e9),
            Oscillator::default(),
            Coalescing::default(),
            0,
        );
        let mut f = feed((0..10).map(|i| frame(1000, i * 2_000)));
        nic.advance_to(100_000, &mut f);
        let c = nic.counters;
        assert_eq!((c.arrived, c.rx_packets, c.drop_ring_full), (10, 4, 4));
        assert_eq!(nic.holding(), 6);
        // Refilling lets the waiting frames through.
        for _ in 0..4 {
            nic.take_rx();
        }
        nic.refill(4, 100_000);
        nic.advance_to(200_000, &mut f);
        assert_eq!(nic.counters.rx_packets, 6);
        assert_eq!(
            c.arrived,
            nic.counters.taken + c.drop_ring_full + nic.holding()
        );
    }

    #[test]
    fn a_slow_bus_overflows_the_card_with_descriptors_free() {
        // 1518-byte frames every 1.23 µs (1 Gb/s) drained at 0.5 Gb/s into a 16 KB buffer.
        let mut nic = Nic::new(
            cfg(256, 16 * 1024, 0.5e9),
            Oscillator::default(),
            Coalescing::default(),
            0,
        );
        let mut f = feed((0..200).map(|i| frame(1518, i * 12_304)));
        nic.advance_to(10_000_000, &mut f);
        let c = nic.counters;
        assert!(c.drop_card_overflow > 50, "{c:?}");
        assert_eq!(c.drop_ring_full, 0);
        assert_eq!(
            c.arrived,
            c.rx_packets + c.drop_card_overflow + nic.fifo.len() as u64
        );
    }

    #[test]
    fn causes_latch_by_the_timer_rules_and_icr_read_clears_them() {
        let regs = Coalescing {
            rx_pkt_ns: 10_240,
            ..Coalescing::default()
        };
        let mut nic = Nic::new(cfg(256, 64 * 1024, 8e9), Oscillator::default(), regs, 0);
        let mut f = feed([frame(64, 1_000)]);
        nic.advance_to(5_000, &mut f);
        assert!(!nic.wants_interrupt(), "RDTR still counting");
        assert_eq!(nic.next_wakeup(&f), Some(1_064 + 10_240));
        nic.advance_to(20_000, &mut f);
        assert!(nic.wants_interrupt());
        assert_eq!(nic.read_icr_and_mask(), ICR_RXT0);
        assert!(!nic.wants_interrupt());
    }

    #[test]
    fn transmit_write_back_raises_txdw_after_tidv() {
        let regs = Coalescing {
            tx_pkt_ns: 8 * 1024,
            tx_abs_ns: 32 * 1024,
            ..Coalescing::default()
        };
        let mut nic = Nic::new(cfg(256, 64 * 1024, 8e9), Oscillator::default(), regs, 0);
        let mut link = Link::new(1e9, 10);
        let sent = nic.transmit(frame(64, 0), 0, &mut link);
        assert_eq!(sent.arrived, 64 + 672 + 10);
        let mut idle = Feed::default();
        nic.advance_to(736 + 8 * 1024 - 1, &mut idle);
        assert!(!nic.wants_interrupt());
        nic.advance_to(736 + 8 * 1024, &mut idle);
        assert_eq!(nic.read_icr_and_mask(), ICR_TXDW);
        assert_eq!(nic.clean_tx(), (1, 64));
    }
}

/// The closed-form landing ([`Nic::land_steady`], [`ring::Ring`] runs) against the frame-by-
/// frame path, on the same frames: one card reads a steady generator directly, the other the
/// same frames from a link queue (no closed form there).
#[cfg(test)]
mod closed_form {
    use super::*;
    use crate::engine::rng::Rng;
    use crate::workload::stream::{Pattern, SizeMix};

    /// A generator of `rate_pps` (0 = line rate) `bytes`-byte frames on a `gbps` link for
    /// `until_ns`.
    fn generator(gbps: f64, rate_pps: f64, bytes: u32, until_ns: u64) -> Generator {
        let link = Link::new(gbps * 1e9, 10);
        let mix = SizeMix::fixed(bytes);
        Generator::new(
            Pattern::Constant,
            rate_pps,
            mix,
            link,
            Rng::new(1, 0),
            until_ns,
        )
    }

    fn nic(ring: u32, buffer: u64, dma_ns: u64, regs: Coalescing) -> Nic {
        let cfg = NicConfig {
            reading: ItrReading::IntervalClock,
            rx_ring: ring,
            tx_ring: 256,
            card_buffer: buffer,
            bus_bps: 32e9,
            rx_dma_ns: dma_ns,
            tx_dma_ns: 0,
            link_mbps: 10_000,
        };
        Nic::new(cfg, Oscillator::default(), regs, 0)
    }

    /// Drives both cards through the same pseudo-random replays, takes and refills, and
    /// compares everything observable after each step. Returns how many frames came out of
    /// the ring as parts of runs.
    fn same_as_frame_by_frame(gen: impl Fn() -> Generator, mk: impl Fn() -> Nic, seed: u64) -> u64 {
        let mut direct = Feed {
            generator: Some(gen()),
            ..Feed::default()
        };
        let mut g = gen();
        let mut queued = Feed::default();
        while g.peek().is_some() {
            queued.link.push_back(g.pop());
        }
        let (mut a, mut b) = (mk(), mk());
        let mut rng = Rng::new(seed, 0);
        let (mut t, mut in_runs) = (0, 0);
        for step in 0..400 {
            t += rng.next_u64() % 40_000;
            a.advance_to(t, &mut direct);
            b.advance_to(t, &mut queued);
            assert_eq!(a.counters, b.counters, "step {step} at {t}");
            assert_eq!(
                a.next_wakeup(&direct),
                b.next_wakeup(&queued),
                "step {step}"
            );
            assert_eq!(a.wants_interrupt(), b.wants_interrupt(), "step {step}");
            assert_eq!(a.holding(), b.holding(), "step {step}");
            let k = (rng.next_u64() % (a.rx_ready() as u64 + 2)) as usize;
            let mut from_a = vec![];
            a.take_rx_batch(k, |taken| match taken {
                Taken::Frame(f) => from_a.push(*f),
                Taken::Run(r) => {
                    in_runs += r.count;
                    from_a.extend((0..r.count).map(|j| r.frame(j)))
                }
            });
            let from_b: Vec<Frame> = (0..k).map_while(|_| b.take_rx()).collect();
            assert_eq!(from_a, from_b, "step {step}: frames taken");
            a.refill(k as u32, t);
            b.refill(k as u32, t);
            if step % 3 == 0 {
                assert_eq!(a.read_icr_and_mask(), b.read_icr_and_mask(), "step {step}");
                a.unmask();
                b.unmask();
            }
        }
        assert!(a.counters.arrived > 0);
        in_runs
    }

    #[test]
    fn line_rate_and_constant_rates_land_as_frame_by_frame() {
        let signal_each = Coalescing::default();
        // Line rate; a gap above the wire time; a gap below it (the wire sets the pace); a
        // size whose DMA outlasts the gap (never in closed form); 1518-byte frames.
        let cases = [
            (10.0, 0.0, 64),
            (10.0, 5e6, 64),
            (10.0, 333_333.3, 64),
            (10.0, 20e6, 64),
            (40.0, 0.0, 65),
            (10.0, 0.0, 1518),
        ];
        for (i, (gbps, rate, bytes)) in cases.into_iter().enumerate() {
            for (ring, dma) in [(4096, 0), (4096, 20), (48, 20), (256, 67), (256, 68)] {
                let in_runs = same_as_frame_by_frame(
                    || generator(gbps, rate, bytes, 3_000_000),
                    || nic(ring, 512 * 1024, dma, signal_each),
                    i as u64,
                );
                if dma == 0 {
                    assert!(in_runs > 0, "case {i}: the closed form was never used");
                }
            }
        }
    }

    #[test]
    fn delay_timers_and_a_small_card_buffer_land_as_frame_by_frame() {
        let delayed = Coalescing {
            rx_pkt_ns: 2_048,
            rx_abs_ns: 8_192,
            ..Coalescing::default()
        };
        for regs in [delayed, Coalescing::default()] {
            same_as_frame_by_frame(
                || generator(10.0, 0.0, 64, 2_000_000),
                || nic(64, 1024, 20, regs),
                7,
            );
        }
    }
}
