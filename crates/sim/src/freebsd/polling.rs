//! FreeBSD DEVICE_POLLING (`kern_poll.c`, polling(4); moderation-algorithms.md §7).
//!
//! Receive interrupts are off. Every clock tick schedules the poll netisr; it hands the
//! registered interfaces chunks of at most `each_burst` packets until `burst` packets per
//! interface were offered in this tick, each chunk followed by protocol processing ("pollmore"
//! runs after the other netisrs). When the tick's work is done, `burst` moves by one: down if
//! kernel time exceeded `100 − user_frac` % of the tick, else up to `burst_max`. If ticks were
//! missed meanwhile, `burst` is cut by 1/8 and polling continues at once. Per interface at most
//! `HZ × burst_max` packets/s are taken; the rest stays in the NIC ring and is dropped there.
//!
//! The engine drives it: [`Polling::hardclock`] at every tick, then alternately
//! [`Polling::netisr_poll`] (call the handlers with the returned chunk) and
//! [`Polling::netisr_pollmore`] (after the chunk's protocol work) until it says
//! [`PollMore::Done`]. With `idle_poll`, [`Polling::idle_poll`] gives the idle thread's chunk.

use super::{check_range, TunableError};
use nictune_core::units::Nanos;

/// `kern.polling.*` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollingConfig {
    /// Kernel clock rate (`kern.hz`).
    pub hz: u32,
    /// Upper bound of `burst` (default 150, 10..1000).
    pub burst_max: u32,
    /// Chunk size (default 5, 1..burst_max).
    pub each_burst: u32,
    /// Share of each tick reserved for user level, percent (default 50, 0..99).
    pub user_frac: u32,
    /// Check status registers every `reg_frac` ticks (default 20, 1..hz).
    pub reg_frac: u32,
    /// Poll from the idle loop too (default off).
    pub idle_poll: bool,
}

impl Default for PollingConfig {
    fn default() -> Self {
        PollingConfig {
            hz: 1000,
            burst_max: 150,
            each_burst: 5,
            user_frac: 50,
            reg_frac: 20,
            idle_poll: false,
        }
    }
}

/// MIN_POLL_BURST_MAX.
pub const MIN_BURST_MAX: u32 = 10;
/// MAX_POLL_BURST_MAX.
pub const MAX_BURST_MAX: u32 = 1000;

impl PollingConfig {
    /// Builds a configuration checking every value as the sysctl handlers do.
    pub fn new(
        hz: u32,
        burst_max: i64,
        each_burst: i64,
        user_frac: i64,
        reg_frac: i64,
    ) -> Result<PollingConfig, TunableError> {
        let burst_max = check_range("kern.polling.burst_max", burst_max, 10..=1000, "10..1000")?;
        let each_burst = check_range(
            "kern.polling.each_burst",
            each_burst,
            1..=burst_max as i64,
            "1..burst_max",
        )?;
        let user_frac = check_range("kern.polling.user_frac", user_frac, 0..=99, "0..99")?;
        let reg_frac = check_range("kern.polling.reg_frac", reg_frac, 1..=hz as i64, "1..hz")?;
        Ok(PollingConfig {
            hz,
            burst_max,
            each_burst,
            user_frac,
            reg_frac,
            idle_poll: false,
        })
    }

    /// Sets `burst_max` as the sysctl does, including its quirk: if `each_burst` is now above
    /// `burst_max` it is reset to MIN_POLL_BURST_MAX (10), not to `burst_max`.
    pub fn set_burst_max(&mut self, value: i64) -> Result<(), TunableError> {
        self.burst_max = check_range("kern.polling.burst_max", value, 10..=1000, "10..1000")?;
        if self.each_burst > self.burst_max {
            self.each_burst = MIN_BURST_MAX;
        }
        Ok(())
    }

    /// Most packets per second one interface can deliver without idle polling.
    pub fn max_pps_per_interface(&self) -> u64 {
        self.hz as u64 * self.burst_max as u64
    }

    fn tick(&self) -> Nanos {
        Nanos(1_000_000_000 / self.hz as u64)
    }
}

/// What the handlers are asked to do with a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollCmd {
    /// Receive and transmit cleanup only.
    PollOnly,
    /// Also read status registers (every `reg_frac` ticks).
    PollAndCheckStatus,
}

/// One chunk: every registered interface may move `cycles` packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    /// Handler command.
    pub cmd: PollCmd,
    /// Packet budget per interface.
    pub cycles: u32,
}

/// What `netisr_pollmore` decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollMore {
    /// More of this tick's burst remains: run `netisr_poll` again now.
    NextChunk,
    /// The tick's work is done; wait for the next hardclock.
    Done,
    /// Ticks were missed: `burst` was cut by 1/8 and a new round starts now.
    Missed,
}

/// Debug counters of `kern.polling`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PollingCounters {
    /// Ticks that found the previous poll unfinished.
    pub lost_polls: u64,
    /// Ticks that found the netisr scheduled but not run.
    pub suspect: u64,
    /// Times pending_polls exceeded 100 and was reset.
    pub stalled: u64,
}

/// The polling controller (global in the kernel: one per host).
#[derive(Debug, Clone)]
pub struct Polling {
    cfg: PollingConfig,
    burst: u32,
    residual: u32,
    pending_polls: u32,
    phase: u32,
    reg_frac_count: u32,
    poll_scheduled: bool,
    t0: Nanos,
    counters: PollingCounters,
}

impl Polling {
    /// A controller with the initial `burst` of 5.
    pub fn new(cfg: PollingConfig) -> Polling {
        Polling {
            cfg,
            burst: 5,
            residual: 0,
            pending_polls: 0,
            phase: 0,
            reg_frac_count: 0,
            poll_scheduled: false,
            t0: Nanos::ZERO,
            counters: PollingCounters::default(),
        }
    }

    /// Current `kern.polling.burst`.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// Ticks whose poll has not finished.
    pub fn pending_polls(&self) -> u32 {
        self.pending_polls
    }

    /// Debug counters.
    pub fn counters(&self) -> PollingCounters {
        self.counters
    }

    /// The configuration.
    pub fn config(&self) -> &PollingConfig {
        &self.cfg
    }

    /// `hardclock_device_poll`; true when it scheduled the poll netisr.
    pub fn hardclock(&mut self) -> bool {
        if self.pending_polls > 100 {
            self.counters.stalled += 1;
            self.pending_polls = 0;
            self.phase = 0;
        }
        let scheduled = self.phase <= 2;
        if scheduled {
            if self.phase != 0 {
                self.counters.suspect += 1;
            }
            self.poll_scheduled = true;
            self.phase = 2;
        }
        if self.pending_polls > 0 {
            self.counters.lost_polls += 1;
        }
        self.pending_polls += 1;
        scheduled
    }

    /// `netisr_poll`: the next chunk, or `None` if no poll is scheduled.
    pub fn netisr_poll(&mut self, now: Nanos) -> Option<Chunk> {
        if !std::mem::take(&mut self.poll_scheduled) {
            return None;
        }
        self.phase = 3;
        let mut cmd = PollCmd::PollOnly;
        if self.residual == 0 {
            self.t0 = now;
            self.reg_frac_count += 1;
            if self.reg_frac_count == self.cfg.reg_frac {
                cmd = PollCmd::PollAndCheckStatus;
                self.reg_frac_count = 0;
            }
            self.residual = self.burst;
        }
        let cycles = self.residual.min(self.cfg.each_burst);
        self.residual -= cycles;
        self.phase = 4;
        Some(Chunk { cmd, cycles })
    }

    /// `netisr_pollmore`, run after the chunk's protocol processing finished at `now`.
    pub fn netisr_pollmore(&mut self, now: Nanos) -> PollMore {
        self.phase = 5;
        if self.residual > 0 {
            self.poll_scheduled = true;
            return PollMore::NextChunk;
        }
        // Kernel time of this tick's round in percent of a tick (µs · hz / 10000).
        let load = (now - self.t0).0 / 1000 * self.cfg.hz as u64 / 10_000;
        if load > (100 - self.cfg.user_frac) as u64 {
            self.burst = self.burst.saturating_sub(1).max(1);
        } else if self.burst < self.cfg.burst_max {
            self.burst += 1;
        }
        self.pending_polls = self.pending_polls.saturating_sub(1);
        if self.pending_polls == 0 {
            self.phase = 0;
            return PollMore::Done;
        }
        self.burst = (self.burst - self.burst / 8).max(1);
        self.poll_scheduled = true;
        self.phase = 6;
        PollMore::Missed
    }

    /// The idle thread's chunk (`each_burst`, POLL_ONLY) when idle polling is on.
    pub fn idle_poll(&self) -> Option<Chunk> {
        self.cfg.idle_poll.then_some(Chunk {
            cmd: PollCmd::PollOnly,
            cycles: self.cfg.each_burst,
        })
    }

    /// Length of one tick.
    pub fn tick(&self) -> Nanos {
        self.cfg.tick()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_tick(p: &mut Polling, start: Nanos, per_chunk: Nanos) -> (Vec<Chunk>, PollMore) {
        p.hardclock();
        let mut now = start;
        let mut chunks = vec![];
        loop {
            let c = p.netisr_poll(now).expect("scheduled");
            chunks.push(c);
            now += per_chunk;
            match p.netisr_pollmore(now) {
                PollMore::NextChunk => continue,
                other => return (chunks, other),
            }
        }
    }

    #[test]
    fn a_tick_is_split_into_each_burst_chunks_and_burst_grows_when_cheap() {
        let mut p = Polling::new(PollingConfig::default());
        let (chunks, more) = run_tick(&mut p, Nanos::ZERO, Nanos(1_000));
        assert_eq!(more, PollMore::Done);
        assert_eq!(chunks.iter().map(|c| c.cycles).collect::<Vec<_>>(), vec![5]);
        assert_eq!(p.burst(), 6);
        let (chunks, _) = run_tick(&mut p, Nanos::MILLI, Nanos(1_000));
        assert_eq!(
            chunks.iter().map(|c| c.cycles).collect::<Vec<_>>(),
            vec![5, 1]
        );
        assert_eq!(p.burst(), 7);
    }

    #[test]
    fn burst_shrinks_when_kernel_time_exceeds_the_kernel_share() {
        let mut p = Polling::new(PollingConfig::default());
        p.burst = 20;
        // 4 chunks × 150 µs = 600 µs of a 1 ms tick = 60 % > 100 − 50.
        run_tick(&mut p, Nanos::ZERO, Nanos::from_micros(150));
        assert_eq!(p.burst(), 19);
        // Exactly 50 % is still allowed: +1.
        p.burst = 10;
        run_tick(&mut p, Nanos::MILLI, Nanos::from_micros(250));
        assert_eq!(p.burst(), 11);
    }

    #[test]
    fn missed_ticks_cut_burst_by_an_eighth_and_continue() {
        let mut p = Polling::new(PollingConfig::default());
        p.burst = 80;
        assert!(p.hardclock());
        let c = p.netisr_poll(Nanos::ZERO).unwrap();
        assert_eq!(c.cycles, 5);
        // A second tick arrives before the round finishes: not rescheduled, counted lost.
        assert!(!p.hardclock());
        assert_eq!(p.counters().lost_polls, 1);
        assert_eq!(p.pending_polls(), 2);
        let mut now = Nanos::ZERO;
        loop {
            now += Nanos::from_micros(1);
            match p.netisr_pollmore(now) {
                PollMore::NextChunk => {
                    p.netisr_poll(now).unwrap();
                }
                PollMore::Missed => break,
                PollMore::Done => panic!("a tick was missed"),
            }
        }
        // Load was low → 81, then 81 − 81/8 = 71.
        assert_eq!(p.burst(), 71);
        assert_eq!(p.pending_polls(), 1);
        let c = p.netisr_poll(now).unwrap();
        assert_eq!(c.cycles, 5, "a new round starts at once");
    }

    #[test]
    fn status_is_checked_every_reg_frac_ticks() {
        let cfg = PollingConfig {
            reg_frac: 3,
            ..PollingConfig::default()
        };
        let mut p = Polling::new(cfg);
        let cmds: Vec<PollCmd> = (0..6)
            .map(|i| run_tick(&mut p, Nanos::from_millis(i), Nanos(10)).0[0].cmd)
            .collect();
        use PollCmd::*;
        assert_eq!(
            cmds,
            vec![
                PollOnly,
                PollOnly,
                PollAndCheckStatus,
                PollOnly,
                PollOnly,
                PollAndCheckStatus
            ]
        );
    }

    #[test]
    fn cheap_polling_converges_to_hz_times_burst_max() {
        let mut p = Polling::new(PollingConfig::default());
        let mut per_second = 0u64;
        for tick in 0..2000u64 {
            let (chunks, _) = run_tick(&mut p, Nanos::from_millis(tick), Nanos(100));
            if tick >= 1000 {
                per_second += chunks.iter().map(|c| c.cycles as u64).sum::<u64>();
            }
        }
        assert_eq!(p.burst(), 150);
        assert_eq!(per_second, p.config().max_pps_per_interface());
    }

    #[test]
    fn kernel_share_settles_near_the_user_frac_boundary() {
        // 10 µs per packet of protocol work: 50 packets fill 50 % of a 1 ms tick.
        let mut p = Polling::new(PollingConfig::default());
        for tick in 0..3000u64 {
            p.hardclock();
            let mut now = Nanos::from_millis(tick);
            loop {
                let c = p.netisr_poll(now).unwrap();
                now += Nanos::from_micros(10 * c.cycles as u64);
                if p.netisr_pollmore(now) != PollMore::NextChunk {
                    break;
                }
            }
        }
        assert!((49..=52).contains(&p.burst()), "burst {}", p.burst());
    }

    #[test]
    fn sysctl_ranges_and_the_burst_max_quirk() {
        assert!(PollingConfig::new(1000, 9, 5, 50, 20).is_err());
        assert!(PollingConfig::new(1000, 150, 151, 50, 20).is_err());
        let e = PollingConfig::new(1000, 150, 5, 100, 20).unwrap_err();
        assert_eq!((e.name, e.allowed), ("kern.polling.user_frac", "0..99"));
        let mut c = PollingConfig::new(1000, 150, 100, 50, 20).unwrap();
        c.set_burst_max(50).unwrap();
        assert_eq!(c.each_burst, MIN_BURST_MAX);
    }

    #[test]
    fn idle_poll_offers_each_burst() {
        let p = Polling::new(PollingConfig {
            idle_poll: true,
            ..PollingConfig::default()
        });
        assert_eq!(
            p.idle_poll(),
            Some(Chunk {
                cmd: PollCmd::PollOnly,
                cycles: 5
            })
        );
        assert_eq!(Polling::new(PollingConfig::default()).idle_poll(), None);
    }
}
