//! QEMU 7.2's emulated-NIC interrupt logic, as two small state machines: the e1000
//! "mitigation" timer (`hw/net/e1000.c`) and the e1000e per-vector MSI-X throttle
//! (`hw/net/e1000e_core.c`). Only the interrupt causes a 1-connection request/response
//! raises are modelled (rx: RXT0 / RXQ0; tx write-back: TXDW / TXQ0).
//!
//! Times are absolute simulated nanoseconds (QEMU_CLOCK_VIRTUAL, which without icount follows
//! the host clock while the guest runs). A method that arms a timer returns its expiry; the
//! caller schedules it and hands it back to `timer_fired`, which ignores expiries that were
//! re-armed since (QEMU's `timer_mod` replaces a pending timer).

/// Rx timer interrupt cause, ICR bit 7 (8254x SDM §13.4.17; `E1000_ICR_RXT0`).
pub const RXT0: u32 = 1 << 7;
/// Transmit descriptor written back, ICR bit 0 (`E1000_ICR_TXDW`).
pub const TXDW: u32 = 1 << 0;
/// The causes the e1000 driver enables that this workload can raise (`IMS_ENABLE_MASK` in
/// Linux 6.1 `e1000.h` also holds RXDMT0, RXSEQ and LSC, which a 1-connection RR on a
/// 256-descriptor ring with the link up never raises).
pub const IMS_ENABLE: u32 = RXT0 | TXDW;

/// QEMU 7.2 `hw/net/e1000.c` `set_interrupt_cause`: "the Ethernet controller guarantees a
/// maximum observable interrupt rate of 7813 interrupts/sec. Thus if mit_delay < 500 then the
/// delay should be set to the minimum delay possible which is 500" (units of 256 ns: 128 µs).
/// `hw/net/e1000e_core.c` has the same floor as `E1000E_MIN_XITR` (500, "spec 10.2.4.2"),
/// applied when ITR/EITR is written and at reset.
pub const MIN_XITR: u32 = 500;
/// ITR/EITR unit (256 ns; 8254x SDM §13.4.18, QEMU `mit_delay * 256`,
/// `E1000_INTR_THROTTLING_NS_RES`).
pub const ITR_UNIT_NS: u64 = 256;
/// QEMU e1000 scales RADV/TADV (1.024 µs ticks) into ITR units by `* 4`
/// (`mit_update_delay(&mit_delay, s->mac_reg[TADV] * 4)`).
const TICKS_TO_ITR_UNITS: u32 = 4;

/// What a register access or cause did to the guest's interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcome {
    /// An interrupt reaches the guest now (INTx line rose, or an MSI-X message was sent).
    pub interrupt: bool,
    /// A mitigation / throttling timer was armed to expire at this time.
    pub armed: Option<u64>,
}

/// `hw/net/e1000.c` (QEMU 7.2; the mitigation code is unchanged since QEMU 1.4): the
/// interrupt state of an `e1000-82545em` with the `mitigation` property on (its default:
/// `DEFINE_PROP_BIT("mitigation", ..., E1000_FLAG_MIT_BIT, true)`).
#[derive(Debug, Clone, Default)]
pub struct E1000Mitigation {
    /// ITR, 256 ns units (16 bits: `set_16bit`).
    pub itr: u32,
    /// TADV, 1.024 µs ticks.
    pub tadv: u32,
    /// RADV, 1.024 µs ticks.
    pub radv: u32,
    /// RDTR, 1.024 µs ticks: QEMU only tests it for non-zero ("RDTR is only used to enable
    /// RADV; relative timers based on TIDV and RDTR are not implemented").
    pub rdtr: u32,
    icr: u32,
    ims: u32,
    /// `mit_irq_level`: the INTx line.
    level: bool,
    /// `mit_timer_on`, with its expiry.
    timer: Option<u64>,
    /// `mit_ide`: a tx descriptor with IDE was processed since the last arming.
    ide: bool,
}

impl E1000Mitigation {
    /// Registers as the driver programmed them; interrupts enabled, line low, no timer.
    pub fn new(itr: u32, tadv: u32, radv: u32, rdtr: u32) -> E1000Mitigation {
        E1000Mitigation {
            itr: itr & 0xFFFF,
            tadv: tadv & 0xFFFF,
            radv: radv & 0xFFFF,
            rdtr: rdtr & 0xFFFF,
            ims: IMS_ENABLE,
            ..E1000Mitigation::default()
        }
    }

    /// `set_interrupt_cause(s, 0, val)`: ICR := `val`, and the mitigation decision.
    fn set_interrupt_cause(&mut self, now: u64, val: u32) -> Outcome {
        self.icr = val;
        let pending = self.ims & self.icr;
        let mut out = Outcome::default();
        if !self.level && pending != 0 {
            // A rising edge. Inside the window it waits for the timer, line untouched.
            if self.timer.is_some() {
                return out;
            }
            let mut delay = 0;
            let mut consider = |value: u32| {
                if value != 0 && (delay == 0 || value < delay) {
                    delay = value;
                }
            };
            if self.ide && pending & TXDW != 0 {
                consider(self.tadv * TICKS_TO_ITR_UNITS);
            }
            if self.rdtr != 0 && pending & RXT0 != 0 {
                consider(self.radv * TICKS_TO_ITR_UNITS);
            }
            consider(self.itr);
            let delay = delay.max(MIN_XITR);
            let expiry = now + delay as u64 * ITR_UNIT_NS;
            self.timer = Some(expiry);
            out.armed = Some(expiry);
            self.ide = false;
        }
        let rose = !self.level && pending != 0;
        self.level = pending != 0;
        out.interrupt = rose;
        out
    }

    /// `set_ics`: causes latched (rx write-back, tx write-back). Only a rising edge of
    /// `IMS & ICR` raises the line or arms the timer: a cause that comes while the line is
    /// already high (an interrupt raised and its ICR not yet read) joins that interrupt.
    pub fn cause(&mut self, now: u64, bits: u32) -> Outcome {
        self.set_interrupt_cause(now, bits | self.icr)
    }

    /// `process_tx_desc`: `mit_ide |= txd_lower & E1000_TXD_CMD_IDE` (the driver sets IDE on
    /// every data descriptor when TxIntDelay ≠ 0, Linux 6.1 `e1000_configure_tx`).
    pub fn tx_descriptor(&mut self, ide: bool) {
        self.ide |= ide;
    }

    /// The handler's ICR read (`mac_icr_read`): returns the causes and clears them, which
    /// drops the line.
    pub fn read_icr(&mut self, now: u64) -> (u32, Outcome) {
        let icr = self.icr;
        (icr, self.set_interrupt_cause(now, 0))
    }

    /// `IMC = ~0` (`e1000_intr` before scheduling NAPI).
    pub fn mask_all(&mut self, now: u64) -> Outcome {
        self.ims = 0;
        self.cause(now, 0)
    }

    /// `IMS = IMS_ENABLE_MASK` (`e1000_irq_enable` after `napi_complete_done`).
    pub fn unmask(&mut self, now: u64) -> Outcome {
        self.ims |= IMS_ENABLE;
        self.cause(now, 0)
    }

    /// `e1000_mit_timer`: the window ends; a cause that waited raises the line now and opens
    /// the next window.
    pub fn timer_fired(&mut self, now: u64, expiry: u64) -> Outcome {
        if self.timer != Some(expiry) {
            return Outcome::default();
        }
        self.timer = None;
        self.set_interrupt_cause(now, self.icr)
    }

    /// An ITR write (16 bits kept).
    pub fn write_itr(&mut self, value: u32) {
        self.itr = value & 0xFFFF;
    }

    /// The INTx line.
    pub fn level(&self) -> bool {
        self.level
    }
}

/// The MSI-X vectors the e1000e driver requests (`e1000_request_msix`: RxQ0, TxQ0, other).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Vector {
    /// `ethX-rx-0`: RXQ0.
    Rx,
    /// `ethX-tx-0`: TXQ0.
    Tx,
    /// Link and other causes (nothing in a steady RR; see the module documentation).
    Other,
}

impl Vector {
    fn index(self) -> usize {
        self as usize
    }
}

/// One vector's throttle state in `hw/net/e1000e_core.c` (QEMU 7.2).
#[derive(Debug, Clone, Copy, Default)]
struct VectorState {
    /// `core->mac[EITR + i]`: `MAX(val & 0xffff, E1000E_MIN_XITR)` (`e1000e_set_eitr`).
    eitr: u32,
    /// `eitr[i].running`, with its expiry.
    timer: Option<u64>,
    /// `eitr_intr_pending[i]`: set when a notification is postponed and, in 7.2, never
    /// cleared (Akihiko Odaki, "e1000e: Remove pending interrupt flags", qemu-devel
    /// 2023-01-30, merged for 8.0: "the flags are not cleared when the interrupts are fired").
    sticky: bool,
    /// The queue cause is latched in ICR.
    latched: bool,
    /// The cause's IMS bit is clear (auto-masked at notification, see `notify_one`).
    masked: bool,
}

/// e1000e (82574L) in MSI-X mode, one queue pair: per-vector EITR throttling. With MSI-X,
/// QEMU 7.2 never delays causes with RDTR/RADV/TIDV/TADV (`e1000e_intrmgr_delay_rx_causes`
/// and `..._tx_causes` return false when `msix_enabled`).
#[derive(Debug, Clone)]
pub struct E1000eMsix {
    vectors: [VectorState; 3],
}

impl E1000eMsix {
    /// EITR values as the driver wrote them (raw register writes; QEMU clamps).
    pub fn new(eitr_writes: [u32; 3]) -> E1000eMsix {
        let mut m = E1000eMsix {
            vectors: [VectorState::default(); 3],
        };
        for (v, w) in [Vector::Rx, Vector::Tx, Vector::Other]
            .into_iter()
            .zip(eitr_writes)
        {
            m.write_eitr(v, w);
        }
        m
    }

    /// The device after a notification was postponed on every vector, at any time since QEMU
    /// started: in 7.2 the flag stays set for good — `e1000e_intrmgr_reset` (every device
    /// reset, so every driver load) stops the EITR timers and leaves `eitr_intr_pending`
    /// alone — so from then on every expiry of a vector's timer notifies it.
    pub fn postponed_before(mut self) -> E1000eMsix {
        for s in &mut self.vectors {
            s.sticky = true;
        }
        self
    }

    /// `e1000e_set_eitr`.
    pub fn write_eitr(&mut self, v: Vector, value: u32) {
        self.vectors[v.index()].eitr = (value & 0xFFFF).max(MIN_XITR);
    }

    /// The effective EITR of `v` (256 ns units).
    pub fn eitr(&self, v: Vector) -> u32 {
        self.vectors[v.index()].eitr
    }

    /// `e1000e_msix_notify_one` for a latched, unmasked cause: postponed while the vector's
    /// timer runs, else sent now with the timer re-armed (`e1000e_postpone_interrupt`). Either
    /// way EIAC clears the ICR bit and, with CTRL_EXT.IAME clear (the driver's setting in
    /// `e1000_configure_msix`), the IMS bit.
    fn notify_one(&mut self, now: u64, v: Vector) -> Outcome {
        let s = &mut self.vectors[v.index()];
        let mut out = Outcome::default();
        if s.timer.is_some() {
            s.sticky = true;
        } else {
            if s.eitr != 0 {
                let expiry = now + s.eitr as u64 * ITR_UNIT_NS;
                s.timer = Some(expiry);
                out.armed = Some(expiry);
            }
            out.interrupt = true;
        }
        s.latched = false;
        s.masked = true;
        out
    }

    /// A queue cause (rx write-back → RXQ0, tx write-back → TXQ0).
    pub fn cause(&mut self, now: u64, v: Vector) -> Outcome {
        let s = &mut self.vectors[v.index()];
        s.latched = true;
        if s.masked {
            return Outcome::default();
        }
        self.notify_one(now, v)
    }

    /// The driver's `IMS` write for the queue (end of `e1000e_poll` for rx, end of
    /// `e1000_intr_msix_tx` for tx): a cause latched while masked is sent now.
    pub fn unmask(&mut self, now: u64, v: Vector) -> Outcome {
        let s = &mut self.vectors[v.index()];
        s.masked = false;
        if s.latched {
            return self.notify_one(now, v);
        }
        Outcome::default()
    }

    /// `e1000e_intrmgr_on_msix_throttling_timer`: the timer stops; if a notification was ever
    /// postponed on this vector (the sticky 7.2 flag), the vector fires, without re-arming.
    pub fn timer_fired(&mut self, v: Vector, expiry: u64) -> Outcome {
        let s = &mut self.vectors[v.index()];
        if s.timer != Some(expiry) {
            return Outcome::default();
        }
        s.timer = None;
        Outcome {
            interrupt: s.sticky,
            armed: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;
    const FLOOR: u64 = MIN_XITR as u64 * ITR_UNIT_NS;

    #[test]
    fn e1000_raises_at_once_then_holds_the_next_edge_for_the_128us_floor() {
        // ITR 0, no delays: the window is the floor alone.
        let mut d = E1000Mitigation::new(0, 0, 0, 0);
        let out = d.cause(0, RXT0);
        assert!(out.interrupt, "the first edge is not delayed");
        assert_eq!(out.armed, Some(FLOOR));
        assert_eq!(FLOOR, 128_000);
        d.read_icr(5 * US);
        assert!(!d.level());
        // A second cause inside the window: no interrupt, the line stays low.
        let out = d.cause(50 * US, TXDW);
        assert!(!out.interrupt && out.armed.is_none() && !d.level());
        // At the window's end it is raised, and a new window opens.
        let out = d.timer_fired(FLOOR, FLOOR);
        assert!(out.interrupt && d.level());
        assert_eq!(out.armed, Some(2 * FLOOR));
    }

    #[test]
    fn e1000_window_is_the_smallest_armed_delay() {
        // ITR 1953 (2000/s, 500 µs), TADV 200 ticks (204.8 µs), RADV 150 (153.6 µs).
        let itr = 1953;
        // Rx only, RDTR 0: RADV is not armed; ITR alone.
        let mut d = E1000Mitigation::new(itr, 200, 150, 0);
        assert_eq!(d.cause(0, RXT0).armed, Some(itr as u64 * 256));
        // Rx with RDTR ≠ 0: RADV·4 = 600 units.
        let mut d = E1000Mitigation::new(itr, 200, 150, 1);
        assert_eq!(d.cause(0, RXT0).armed, Some(600 * 256));
        // Tx write-back with IDE: TADV·4 = 800 units.
        let mut d = E1000Mitigation::new(itr, 200, 150, 0);
        d.tx_descriptor(true);
        assert_eq!(d.cause(0, TXDW).armed, Some(800 * 256));
        // Tx without IDE (TxIntDelay 0): TADV is not armed.
        let mut d = E1000Mitigation::new(itr, 200, 150, 0);
        d.tx_descriptor(false);
        assert_eq!(d.cause(0, TXDW).armed, Some(itr as u64 * 256));
        // Both pending with both armed: the smaller (RADV).
        let mut d = E1000Mitigation::new(itr, 200, 150, 1);
        d.tx_descriptor(true);
        assert_eq!(d.cause(0, TXDW | RXT0).armed, Some(600 * 256));
        // Everything below the floor is raised to 128 µs: TADV 32 (the default) → 128 units.
        let mut d = E1000Mitigation::new(195, 32, 8, 0);
        d.tx_descriptor(true);
        assert_eq!(d.cause(0, TXDW).armed, Some(FLOOR));
    }

    #[test]
    fn e1000_ide_is_consumed_by_the_window_it_shortens() {
        // ITR 100/s (39062 units ≈ 10 ms), TADV 32: a tx edge with IDE opens a 128 µs window,
        // the next rx edge (IDE consumed) a 10 ms one.
        let mut d = E1000Mitigation::new(39_062, 32, 8, 0);
        d.tx_descriptor(true);
        assert_eq!(d.cause(0, TXDW).armed, Some(FLOOR));
        d.read_icr(US);
        d.timer_fired(FLOOR, FLOOR);
        let out = d.cause(200 * US, RXT0);
        assert!(out.interrupt);
        assert_eq!(out.armed, Some(200 * US + 39_062 * 256));
    }

    #[test]
    fn e1000_itr_spaces_interrupts_by_its_interval() {
        // ITR 100/s: a cause every 1 ms gives an interrupt every 10 ms (one window each).
        let mut d = E1000Mitigation::new(39_062, 0, 0, 0);
        let mut raised = vec![];
        let mut timer = None;
        for ms in 0..50u64 {
            let now = ms * 1_000_000;
            if let Some(t) = timer.filter(|t| *t <= now) {
                let out = d.timer_fired(t, t);
                timer = out.armed;
                if out.interrupt {
                    raised.push(t);
                    d.read_icr(t);
                }
            }
            let out = d.cause(now, RXT0);
            if out.interrupt {
                raised.push(now);
                d.read_icr(now);
            }
            timer = out.armed.or(timer);
        }
        let gaps: Vec<u64> = raised.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|g| *g == 39_062 * 256), "{gaps:?}");
    }

    #[test]
    fn e1000_a_cause_while_the_line_is_high_joins_the_raised_interrupt() {
        // A reply's write-back with IDE raises the line and opens TADV's window (floored).
        let mut d = E1000Mitigation::new(0, 32, 8, 0);
        d.tx_descriptor(true);
        let out = d.cause(0, TXDW);
        assert!(out.interrupt);
        assert_eq!(out.armed, Some(FLOOR));
        // The next request arrives before the handler reads ICR: no second interrupt, no new
        // window, the line stays high.
        assert_eq!(d.cause(40 * US, RXT0), Outcome::default());
        assert!(d.level());
        // The handler's one ICR read takes both causes and drops the line.
        let (icr, out) = d.read_icr(45 * US);
        assert_eq!(icr, TXDW | RXT0);
        assert!(!out.interrupt && !d.level());
    }

    #[test]
    fn e1000_masked_causes_wait_for_the_unmask() {
        let mut d = E1000Mitigation::new(0, 0, 0, 0);
        assert!(d.cause(0, RXT0).interrupt);
        d.read_icr(US);
        d.mask_all(US);
        // The window ends while masked: nothing pending, the timer just stops.
        assert!(!d.timer_fired(FLOOR, FLOOR).interrupt);
        // A cause while masked latches; the unmask raises it at once (no window open).
        assert!(!d.cause(FLOOR + US, RXT0).interrupt);
        let out = d.unmask(FLOOR + 2 * US);
        assert!(out.interrupt);
        assert_eq!(out.armed, Some(FLOOR + 2 * US + FLOOR));
    }

    #[test]
    fn e1000e_clamps_eitr_and_throttles_each_vector_alone() {
        // The driver writes 1 for "off" (e1000_configure_msix); QEMU keeps 500.
        let mut m = E1000eMsix::new([1, 1, 1]);
        assert_eq!(m.eitr(Vector::Rx), MIN_XITR);
        let rx = m.cause(0, Vector::Rx);
        assert!(rx.interrupt);
        assert_eq!(rx.armed, Some(FLOOR));
        // Tx has its own window: not held by rx's.
        let tx = m.cause(10 * US, Vector::Tx);
        assert!(tx.interrupt);
        assert_eq!(tx.armed, Some(10 * US + FLOOR));
        // The rx cause auto-masked the vector: a second rx cause waits for the IMS write,
        // which then finds the timer running and postpones it.
        assert!(!m.cause(20 * US, Vector::Rx).interrupt);
        assert!(!m.unmask(30 * US, Vector::Rx).interrupt);
        // The expiry sends it, without opening a new window.
        let out = m.timer_fired(Vector::Rx, FLOOR);
        assert!(out.interrupt && out.armed.is_none());
        m.unmask(FLOOR + US, Vector::Rx);
        let out = m.cause(FLOOR + 2 * US, Vector::Rx);
        assert!(
            out.interrupt,
            "no window after an expiry: the next cause goes at once"
        );
    }

    #[test]
    fn e1000e_72_keeps_firing_at_every_expiry_after_one_postponement() {
        let mut m = E1000eMsix::new([1953, 1953, 1953]);
        let w = 1953 * ITR_UNIT_NS;
        // First window: nothing postponed, the expiry is silent.
        let out = m.cause(0, Vector::Rx);
        m.unmask(US, Vector::Rx);
        assert!(!m.timer_fired(Vector::Rx, out.armed.unwrap()).interrupt);
        // Second window: one postponement.
        let out = m.cause(w + US, Vector::Rx);
        m.unmask(w + 2 * US, Vector::Rx);
        assert!(!m.cause(w + 3 * US, Vector::Rx).interrupt);
        assert!(m.timer_fired(Vector::Rx, out.armed.unwrap()).interrupt);
        m.unmask(2 * w + 2 * US, Vector::Rx);
        // Third window: no cause waits, yet the expiry fires (the flag was never cleared).
        let out = m.cause(3 * w, Vector::Rx);
        m.unmask(3 * w + US, Vector::Rx);
        assert!(m.timer_fired(Vector::Rx, out.armed.unwrap()).interrupt);
        // A stale expiry (re-armed since) does nothing.
        assert!(!m.timer_fired(Vector::Rx, 1).interrupt);
    }
}
