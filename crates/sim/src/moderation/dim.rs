//! Linux DIM, dynamic interrupt moderation (`lib/dim`; moderation-algorithms.md §5).
//!
//! DIM measures windows of 64 interrupt events. For each window it computes bytes, packets and
//! events per millisecond and compares them with the previous window (a change is significant
//! above 10 %). A small state machine walks a five-entry profile table: it keeps stepping in
//! one direction while things get BETTER, turns when they do not, parks "on top" when it found
//! a peak, and parks "tired" after ten steps. A profile change programs a (usecs, frames)
//! coalescing pair and restarts measurement.

use super::{family_policy, Coalescing, TimerStart, Traffic};
use nictune_core::units::Nanos;

/// Events per measurement window (DIM_NEVENTS).
pub const NEVENTS: u16 = 64;
/// Profiles per table.
pub const PROFILES: usize = 5;
/// Steps before DIM parks tired (NET_DIM_PARAMS_NUM_PROFILES · 2).
const TIRED_LIMIT: u32 = 2 * PROFILES as u32;

/// A (usecs, frames) profile.
pub type Profile = (u32, u32);

/// RX, EQE mode (timer starts at the event).
pub const RX_EQE: [Profile; PROFILES] = [(1, 256), (8, 256), (64, 256), (128, 256), (256, 256)];
/// RX, CQE mode (timer restarts per completion).
pub const RX_CQE: [Profile; PROFILES] = [(2, 256), (8, 128), (16, 64), (32, 64), (64, 64)];
/// TX, EQE mode.
pub const TX_EQE: [Profile; PROFILES] = [(1, 128), (8, 128), (32, 128), (64, 128), (128, 128)];
/// TX, CQE mode.
pub const TX_CQE: [Profile; PROFILES] = [(5, 128), (8, 64), (16, 32), (32, 32), (64, 32)];

/// Which direction's counters DIM samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Receive.
    Rx,
    /// Transmit.
    Tx,
}

/// Measurement state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeasureState {
    /// The next sample opens a window.
    StartMeasure,
    /// A window is open.
    InProgress,
}

/// Tuning state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuneState {
    /// Found a peak; leaves when the stats change.
    ParkingOnTop,
    /// Too many steps; waits `tired` windows.
    ParkingTired,
    /// Stepping towards more moderation.
    GoingRight,
    /// Stepping towards less moderation.
    GoingLeft,
}

/// Comparison of two windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatsComparison {
    /// Better.
    Better,
    /// No significant change.
    Same,
    /// Worse.
    Worse,
}

/// Per-millisecond stats of one window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Packets per ms.
    pub ppms: u64,
    /// Bytes per ms.
    pub bpms: u64,
    /// Events per ms.
    pub epms: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    time: Nanos,
    pkts: u64,
    bytes: u64,
    events: u16,
}

/// `100·|a−b|/b > 10`, false when `b` is 0.
fn significant(a: u64, b: u64) -> bool {
    b != 0 && 100 * a.abs_diff(b) / b > 10
}

/// `net_dim_stats_compare`: bytes first, then packets, then events (fewer is better).
pub fn compare(curr: Stats, prev: Stats) -> StatsComparison {
    let by = |better: bool| {
        if better {
            StatsComparison::Better
        } else {
            StatsComparison::Worse
        }
    };
    if prev.bpms == 0 {
        return if curr.bpms != 0 {
            StatsComparison::Better
        } else {
            StatsComparison::Same
        };
    }
    if significant(curr.bpms, prev.bpms) {
        return by(curr.bpms > prev.bpms);
    }
    if prev.ppms == 0 {
        return if curr.ppms != 0 {
            StatsComparison::Better
        } else {
            StatsComparison::Same
        };
    }
    if significant(curr.ppms, prev.ppms) {
        return by(curr.ppms > prev.ppms);
    }
    if prev.epms == 0 {
        return StatsComparison::Same;
    }
    if significant(curr.epms, prev.epms) {
        return by(curr.epms < prev.epms);
    }
    StatsComparison::Same
}

/// One DIM instance (one completion queue).
#[derive(Debug, Clone)]
pub struct Dim {
    table: [Profile; PROFILES],
    start_mode: TimerStart,
    direction: Direction,
    state: MeasureState,
    tune: TuneState,
    ix: usize,
    steps_left: u32,
    steps_right: u32,
    tired: u32,
    prev: Stats,
    start: Sample,
    now_counts: Sample,
}

#[derive(Debug, PartialEq, Eq)]
enum Step {
    Stepped,
    TooTired,
    OnEdge,
}

impl Dim {
    /// A DIM instance as drivers set it up: profile index 1, START_MEASURE, PARKING_ON_TOP.
    pub fn new(direction: Direction, start_mode: TimerStart) -> Dim {
        let table = match (direction, start_mode) {
            (Direction::Rx, TimerStart::AtFirstEvent) => RX_EQE,
            (Direction::Rx, TimerStart::PerCompletion) => RX_CQE,
            (Direction::Tx, TimerStart::AtFirstEvent) => TX_EQE,
            (Direction::Tx, TimerStart::PerCompletion) => TX_CQE,
        };
        Dim {
            table,
            start_mode,
            direction,
            state: MeasureState::StartMeasure,
            tune: TuneState::ParkingOnTop,
            ix: 1,
            steps_left: 0,
            steps_right: 0,
            tired: 0,
            prev: Stats::default(),
            start: Sample::default(),
            now_counts: Sample::default(),
        }
    }

    /// Current profile index (0 = least moderation).
    pub fn profile_ix(&self) -> usize {
        self.ix
    }

    /// Tuning state.
    pub fn tune_state(&self) -> TuneState {
        self.tune
    }

    /// Measurement state.
    pub fn measure_state(&self) -> MeasureState {
        self.state
    }

    /// The stats of the last window kept as reference.
    pub fn prev_stats(&self) -> Stats {
        self.prev
    }

    /// `dim_calc_stats`; `None` when no whole microsecond passed.
    fn stats(&self, end: &Sample) -> Option<Stats> {
        let dt_us = (end.time.0.saturating_sub(self.start.time.0)) / 1000;
        if dt_us == 0 {
            return None;
        }
        let per_ms = |n: u64| (n * 1000).div_ceil(dt_us);
        Some(Stats {
            ppms: per_ms(end.pkts - self.start.pkts),
            bpms: per_ms(end.bytes - self.start.bytes),
            epms: per_ms(NEVENTS as u64),
        })
    }

    /// `net_dim`: feed one sample; true when a new profile must be applied.
    fn net_dim(&mut self, end: Sample) -> bool {
        if self.state == MeasureState::InProgress {
            if end.events.wrapping_sub(self.start.events) < NEVENTS {
                return false;
            }
            let Some(curr) = self.stats(&end) else {
                return false;
            };
            if self.decide(curr) {
                self.state = MeasureState::StartMeasure; // the apply work restarts measuring
                return true;
            }
        }
        self.start = end;
        self.state = MeasureState::InProgress;
        false
    }

    /// `net_dim_decide`: run the tuning state machine on a window's stats.
    pub fn decide(&mut self, curr: Stats) -> bool {
        let (prev_tune, prev_ix) = (self.tune, self.ix);
        match self.tune {
            TuneState::ParkingOnTop => {
                if compare(curr, self.prev) != StatsComparison::Same {
                    self.exit_parking();
                }
            }
            TuneState::ParkingTired => {
                self.tired -= 1;
                if self.tired == 0 {
                    self.exit_parking();
                }
            }
            TuneState::GoingRight | TuneState::GoingLeft => self.go(curr),
        }
        if prev_tune != TuneState::ParkingOnTop || self.tune != TuneState::ParkingOnTop {
            self.prev = curr;
        }
        self.ix != prev_ix
    }

    fn go(&mut self, curr: Stats) {
        if compare(curr, self.prev) != StatsComparison::Better {
            self.turn();
        }
        if self.on_top() {
            self.park_on_top();
            return;
        }
        match self.step() {
            Step::OnEdge => self.park_on_top(),
            Step::TooTired => self.park_tired(),
            Step::Stepped => {}
        }
    }

    fn turn(&mut self) {
        match self.tune {
            TuneState::GoingRight => {
                self.tune = TuneState::GoingLeft;
                self.steps_left = 0;
            }
            TuneState::GoingLeft => {
                self.tune = TuneState::GoingRight;
                self.steps_right = 0;
            }
            _ => {}
        }
    }

    fn on_top(&self) -> bool {
        match self.tune {
            TuneState::ParkingOnTop | TuneState::ParkingTired => true,
            TuneState::GoingRight => self.steps_left > 1 && self.steps_right == 1,
            TuneState::GoingLeft => self.steps_right > 1 && self.steps_left == 1,
        }
    }

    fn step(&mut self) -> Step {
        if self.tired == TIRED_LIMIT {
            return Step::TooTired;
        }
        match self.tune {
            TuneState::GoingRight if self.ix == PROFILES - 1 => return Step::OnEdge,
            TuneState::GoingRight => {
                self.ix += 1;
                self.steps_right += 1;
            }
            TuneState::GoingLeft if self.ix == 0 => return Step::OnEdge,
            TuneState::GoingLeft => {
                self.ix -= 1;
                self.steps_left += 1;
            }
            _ => {}
        }
        self.tired += 1;
        Step::Stepped
    }

    fn exit_parking(&mut self) {
        self.tune = if self.ix > 0 {
            TuneState::GoingLeft
        } else {
            TuneState::GoingRight
        };
        self.step();
    }

    fn park_on_top(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tired = 0;
        self.tune = TuneState::ParkingOnTop;
    }

    fn park_tired(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tune = TuneState::ParkingTired;
    }
}

/// The driver-side steps `family_policy!` maps onto [`super::ModerationPolicy`].
impl Dim {
    fn observe(&mut self, t: Traffic) {
        let (p, b) = match self.direction {
            Direction::Rx => (t.rx_packets, t.rx_bytes),
            Direction::Tx => (t.tx_packets, t.tx_bytes),
        };
        self.now_counts.pkts += p;
        self.now_counts.bytes += b;
    }

    fn interrupt(&mut self, _now: Nanos) -> Option<Coalescing> {
        self.now_counts.events = self.now_counts.events.wrapping_add(1);
        None
    }

    fn complete(&mut self, now: Nanos) -> Option<Coalescing> {
        let sample = Sample {
            time: now,
            ..self.now_counts
        };
        self.net_dim(sample).then(|| self.current())
    }

    fn current(&self) -> Coalescing {
        let (usecs, frames) = self.table[self.ix];
        Coalescing::timer(Nanos::from_micros(usecs as u64), frames, self.start_mode)
    }
}

family_policy!(Dim, interrupt);

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(bpms: u64, ppms: u64, epms: u64) -> Stats {
        Stats { ppms, bpms, epms }
    }

    #[test]
    fn compare_orders_bytes_packets_events() {
        assert_eq!(
            compare(stats(5, 0, 0), stats(0, 0, 0)),
            StatsComparison::Better
        );
        assert_eq!(
            compare(stats(0, 0, 0), stats(0, 0, 0)),
            StatsComparison::Same
        );
        assert_eq!(
            compare(stats(112, 0, 0), stats(100, 0, 0)),
            StatsComparison::Better
        );
        assert_eq!(
            compare(stats(110, 0, 0), stats(100, 0, 0)),
            StatsComparison::Same,
            "10 % is not > 10 %"
        );
        assert_eq!(
            compare(stats(80, 0, 0), stats(100, 0, 0)),
            StatsComparison::Worse
        );
        assert_eq!(
            compare(stats(100, 50, 1), stats(100, 100, 1)),
            StatsComparison::Worse
        );
        // Equal bytes and packets: fewer events per ms is better.
        assert_eq!(
            compare(stats(100, 100, 5), stats(100, 100, 10)),
            StatsComparison::Better
        );
        assert_eq!(
            compare(stats(100, 100, 20), stats(100, 100, 10)),
            StatsComparison::Worse
        );
        assert_eq!(
            compare(stats(100, 100, 20), stats(100, 100, 0)),
            StatsComparison::Same
        );
    }

    #[test]
    fn first_window_with_traffic_moves_left_to_index_zero() {
        let mut d = Dim::new(Direction::Rx, TimerStart::AtFirstEvent);
        assert!(d.decide(stats(1000, 10, 5)));
        assert_eq!((d.profile_ix(), d.tune_state()), (0, TuneState::GoingLeft));
        assert_eq!(d.prev_stats(), stats(1000, 10, 5));
        // Same stats at the left edge: not better → turn right, then step right to 1.
        assert!(d.decide(stats(1000, 10, 5)));
        assert_eq!((d.profile_ix(), d.tune_state()), (1, TuneState::GoingRight));
    }

    #[test]
    fn keeps_going_right_while_better_then_parks_on_top() {
        let mut d = Dim::new(Direction::Rx, TimerStart::AtFirstEvent);
        d.decide(stats(1000, 10, 5)); // → ix 0, LEFT, steps_left 1
        d.decide(stats(1000, 10, 5)); // turn → RIGHT, steps_right 0 → step → ix 1, sr 1
                                      // on_top for RIGHT needs steps_left > 1; keep improving.
        assert!(d.decide(stats(1200, 10, 5)));
        assert_eq!(d.profile_ix(), 2);
        assert!(d.decide(stats(1400, 10, 5)));
        assert_eq!(d.profile_ix(), 3);
        // Worse: turn LEFT (steps_left reset to 0), step → ix 2, steps_left 1, steps_right 3.
        assert!(d.decide(stats(1000, 10, 5)));
        assert_eq!((d.profile_ix(), d.tune_state()), (2, TuneState::GoingLeft));
        // Worse again: turn RIGHT (steps_right 0), on_top? steps_left 1 > 1 is false → step → 3.
        assert!(d.decide(stats(800, 10, 5)));
        assert_eq!((d.profile_ix(), d.tune_state()), (3, TuneState::GoingRight));
        // Not better: turn LEFT → steps_left 0 … on_top(LEFT) needs steps_right>1 && sl==1: no.
        assert!(d.decide(stats(800, 10, 5)));
        assert_eq!(d.profile_ix(), 2);
    }

    #[test]
    fn parks_on_top_at_a_peak_and_keeps_reference_until_change() {
        let mut d = Dim::new(Direction::Rx, TimerStart::AtFirstEvent);
        d.tune = TuneState::GoingLeft;
        d.ix = 2;
        d.steps_right = 2;
        d.steps_left = 0;
        d.prev = stats(1000, 10, 5);
        // Better while going left: step → ix 1, steps_left 1 … then on_top next time.
        assert!(d.decide(stats(1200, 10, 5)));
        assert_eq!(d.profile_ix(), 1);
        assert!(!d.decide(stats(1400, 10, 5)));
        assert_eq!(d.tune_state(), TuneState::ParkingOnTop);
        let reference = d.prev_stats();
        // Parked and SAME: nothing changes and the reference is kept.
        assert!(!d.decide(stats(1410, 10, 5)));
        assert_eq!(d.prev_stats(), reference);
        // A significant change exits parking (ix 1 > 0 → LEFT).
        assert!(d.decide(stats(3000, 10, 5)));
        assert_eq!((d.profile_ix(), d.tune_state()), (0, TuneState::GoingLeft));
    }

    #[test]
    fn right_edge_parks_on_top() {
        let mut d = Dim::new(Direction::Rx, TimerStart::AtFirstEvent);
        d.tune = TuneState::GoingRight;
        d.ix = PROFILES - 1;
        d.prev = stats(100, 1, 1);
        assert!(!d.decide(stats(200, 1, 1)));
        assert_eq!(d.tune_state(), TuneState::ParkingOnTop);
    }

    #[test]
    fn too_tired_parks_and_waits_tired_windows() {
        let mut d = Dim::new(Direction::Rx, TimerStart::AtFirstEvent);
        d.tune = TuneState::GoingRight;
        d.ix = 1;
        d.tired = TIRED_LIMIT;
        d.prev = stats(100, 1, 1);
        assert!(!d.decide(stats(200, 1, 1)));
        assert_eq!(d.tune_state(), TuneState::ParkingTired);
        for _ in 0..TIRED_LIMIT - 1 {
            assert!(!d.decide(stats(200, 1, 1)));
            assert_eq!(d.tune_state(), TuneState::ParkingTired);
        }
        // The tenth window exits parking (ix 1 → LEFT → 0).
        assert!(d.decide(stats(200, 1, 1)));
        assert_eq!(d.profile_ix(), 0);
    }

    #[test]
    fn sixty_four_events_make_a_window_and_a_change_programs_the_nic() {
        let mut d = Dim::new(Direction::Rx, TimerStart::PerCompletion);
        assert_eq!(
            d.current(),
            Coalescing::timer(Nanos(8_000), 128, TimerStart::PerCompletion)
        );
        let mut t = Nanos::ZERO;
        let event = |d: &mut Dim, t: &mut Nanos| {
            *t += Nanos::from_micros(10);
            d.interrupt(*t);
            d.observe(Traffic::rx(4, 6000));
            d.complete(*t)
        };
        assert_eq!(event(&mut d, &mut t), None); // opens the window
        assert_eq!(d.measure_state(), MeasureState::InProgress);
        for _ in 0..63 {
            assert_eq!(event(&mut d, &mut t), None);
        }
        // 64th event after the start: first window with traffic → BETTER → index 0.
        let w = event(&mut d, &mut t);
        assert_eq!(
            w,
            Some(Coalescing::timer(
                Nanos(2_000),
                256,
                TimerStart::PerCompletion
            ))
        );
        assert_eq!(d.measure_state(), MeasureState::StartMeasure);
        // 64 events × 24 packets... over 640 µs: 24000·1000/640 bytes/ms.
        assert_eq!(d.prev_stats().bpms, (64 * 6000 * 1000u64).div_ceil(640));
        assert_eq!(d.prev_stats().epms, 100);
    }

    #[test]
    fn event_counter_wraps_like_a_u16() {
        let mut d = Dim::new(Direction::Rx, TimerStart::AtFirstEvent);
        d.now_counts.events = u16::MAX - 10;
        d.complete(Nanos(1_000));
        for _ in 0..63 {
            d.interrupt(Nanos(0));
        }
        d.observe(Traffic::rx(100, 100_000));
        assert_eq!(
            d.complete(Nanos(100_000)),
            None,
            "63 events are not a window"
        );
        d.interrupt(Nanos(0));
        assert!(d.complete(Nanos(100_000)).is_some());
    }
}
