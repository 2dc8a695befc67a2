//! Open-loop packet streams from a traffic generator: constant rate, Poisson, on/off bursts,
//! and frame-size mixes. The generator is a cursor, not a stream of events: the NIC pulls
//! frames from it with `peek`/`pop` when it replays time (sim-notes §2.4, technique 1).

use crate::engine::rng::Rng;
use crate::nic::frame::{Frame, FrameRun, Payload, ETH_OVERHEAD};
use crate::nic::link::Link;

/// UDP/IPv4 headers in front of a stream frame's payload.
const UDP_HEADERS: u32 = 28;

/// When frames are released.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pattern {
    /// Evenly spaced at the rate.
    Constant,
    /// Exponential gaps with the rate as mean.
    Poisson,
    /// Constant rate during `on_ns`, silent for `off_ns`, repeating.
    OnOff {
        /// Length of each sending period, ns; each cycle starts with it.
        on_ns: u64,
        /// Length of each silent period that follows, ns.
        off_ns: u64,
    },
}

/// Frame sizes drawn by weight.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeMix {
    sizes: Vec<(u32, u64)>,
    total: u64,
}

impl SizeMix {
    /// One fixed size.
    pub fn fixed(bytes: u32) -> SizeMix {
        SizeMix {
            sizes: vec![(bytes, 1)],
            total: 1,
        }
    }

    /// A mix of `(frame bytes, weight)`; weights must not all be zero.
    pub fn weighted(entries: &[(u32, u64)]) -> SizeMix {
        let mut acc = 0;
        let sizes = entries
            .iter()
            .map(|&(b, w)| {
                acc += w;
                (b, acc)
            })
            .collect();
        SizeMix { sizes, total: acc }
    }

    #[inline]
    fn draw(&self, rng: &mut Rng) -> u32 {
        if self.sizes.len() == 1 {
            return self.sizes[0].0;
        }
        let x = rng.below(self.total);
        self.sizes
            .iter()
            .find(|&&(_, upto)| x < upto)
            .map_or(self.sizes[0].0, |&(b, _)| b)
    }

    /// Mean frame size.
    pub fn mean(&self) -> f64 {
        let mut prev = 0;
        let mut sum = 0.0;
        for &(b, upto) in &self.sizes {
            sum += b as f64 * (upto - prev) as f64;
            prev = upto;
        }
        sum / self.total.max(1) as f64
    }
}

/// A traffic generator port feeding one NIC over its own link.
#[derive(Debug)]
pub struct Generator {
    pattern: Pattern,
    /// Mean gap in ps; 0 = back to back at line rate.
    gap_ps: f64,
    /// `gap_ps` rounded to whole picoseconds: the constant patterns' gap, rounded once.
    gap_whole_ps: u64,
    /// `gap_ps == 0`, decided once.
    back_to_back: bool,
    mix: SizeMix,
    link: Link,
    rng: Rng,
    release_ps: u64,
    until_ns: u64,
    /// The next frame; its arrival is [`NONE`] once the generator has stopped (kept by
    /// value, not as an `Option`, so the per-frame path moves no discriminant around).
    next: Frame,
    /// Wire start of `next` (ps).
    next_start_ps: u64,
    released: u64,
}

/// The arrival time of "no frame": the generator has stopped.
const NONE: u64 = u64::MAX;

impl Generator {
    /// A generator sending `rate_pps` frames per second (0 = line rate) until `until_ns`.
    pub fn new(
        pattern: Pattern,
        rate_pps: f64,
        mix: SizeMix,
        link: Link,
        rng: Rng,
        until_ns: u64,
    ) -> Generator {
        let gap_ps = if rate_pps > 0.0 { 1e12 / rate_pps } else { 0.0 };
        let mut g = Generator {
            pattern,
            gap_ps,
            gap_whole_ps: gap_ps.round() as u64,
            back_to_back: gap_ps == 0.0,
            mix,
            link,
            rng,
            release_ps: 0,
            until_ns,
            next: Frame::with_payload(0, 0, 0, Payload::Stream),
            next_start_ps: 0,
            released: 0,
        };
        g.next = g.make();
        g
    }

    /// Frames released so far (including the one waiting in `peek`).
    pub fn released(&self) -> u64 {
        self.released
    }

    // Always inlined: the per-frame call and the frame's copies cost more than its arithmetic.
    #[inline(always)]
    fn make(&mut self) -> Frame {
        if let Pattern::OnOff { on_ns, off_ns } = self.pattern {
            let cycle = (on_ns + off_ns) * 1000;
            if cycle > 0 && self.release_ps % cycle >= on_ns * 1000 {
                self.release_ps += cycle - self.release_ps % cycle;
            }
        }
        let bytes = self.mix.draw(&mut self.rng);
        // The frame goes on the wire when released or when the wire frees, whichever is later.
        let start_ps = self.release_ps.max(self.link.busy_until_ps());
        let end_ps = self.link.send_ps(start_ps, bytes);
        let arrived = end_ps.div_ceil(1000) + self.link.propagation();
        if arrived > self.until_ns {
            return Frame {
                arrived: NONE,
                ..self.next
            };
        }
        let sent = start_ps / 1000;
        self.next_start_ps = start_ps;
        self.release_ps = match self.pattern {
            _ if self.back_to_back => end_ps,
            Pattern::Poisson => self.release_ps + self.rng.exp(self.gap_ps).round() as u64,
            Pattern::Constant | Pattern::OnOff { .. } => self.release_ps + self.gap_whole_ps,
        };
        self.released += 1;
        Frame {
            bytes,
            payload: bytes.saturating_sub(ETH_OVERHEAD + UDP_HEADERS),
            sent,
            arrived,
            what: Payload::Stream,
        }
    }

    /// Arrival time of the next frame at the NIC.
    #[inline]
    pub fn peek(&self) -> Option<u64> {
        (self.next.arrived != NONE).then_some(self.next.arrived)
    }

    /// Arrival time of the next frame at the NIC, `u64::MAX` once the generator stopped.
    #[inline]
    pub fn next_arrival(&self) -> u64 {
        self.next.arrived
    }

    /// Takes the next frame and prepares the one after.
    #[inline]
    pub fn pop(&mut self) -> Frame {
        let f = self.next;
        if f.arrived != NONE {
            self.next = self.make();
        }
        f
    }

    /// The frames from the next one up to the end of the run, when they follow in closed
    /// form: one frame size, and wire starts evenly spaced. That holds when nothing random is
    /// drawn (one size; back to back or a constant rate, no on/off cycle) and the spacing has
    /// settled:
    /// - back to back, each frame starts when the one before ends (step = wire time);
    /// - a constant gap at least the wire time, once the next frame went out at its release
    ///   (then each release finds the wire free: step = gap);
    /// - a constant gap below the wire time, once the wire is busy past the next release
    ///   (releases fall further behind the wire at every frame: step = wire time).
    ///
    /// `None` otherwise (the frames are then made one by one).
    pub fn steady_run(&self) -> Option<FrameRun> {
        let fixed = matches!(self.pattern, Pattern::Constant) || self.back_to_back;
        let on_off = matches!(self.pattern, Pattern::OnOff { .. });
        if !fixed || on_off || self.mix.sizes.len() != 1 || self.next.arrived == NONE {
            return None;
        }
        let (s0, bytes) = (self.next_start_ps, self.next.bytes);
        let wire = self.link.frame_ps(bytes);
        let gap = self.gap_whole_ps;
        let step = if self.back_to_back {
            wire
        } else if gap >= wire && self.release_ps == s0 + gap {
            gap
        } else if gap < wire && self.release_ps <= s0 + wire {
            wire
        } else {
            return None;
        };
        let mut run = FrameRun {
            start_ps: s0,
            step_ps: step,
            wire_ps: wire,
            propagation_ns: self.link.propagation(),
            bytes,
            payload: self.next.payload,
            count: u64::MAX,
        };
        // The generator stops at the first frame that would arrive after its end.
        run.count = run.arriving_by(self.until_ns);
        (step > 0).then_some(run)
    }

    /// Takes the first `n` frames of [`Generator::steady_run`] (`1 ≤ n ≤` its count) at the
    /// cost of one: the state is set to what making frame `n - 1` leaves (the wire busy to
    /// its end, the release clock `n - 1` gaps on, or at the frame's end back to back), and
    /// that frame is popped as usual, which makes frame `n` the ordinary way.
    pub fn skip(&mut self, run: &FrameRun, n: u64) {
        if n > 1 {
            let j = n - 1;
            let start = run.start_of(j);
            // The wire is free by then (start ≥ the end of the frame before), so this sets it
            // busy to the frame's end.
            let end = self.link.send_ps(start, run.bytes);
            self.release_ps = if self.back_to_back {
                end
            } else {
                self.release_ps + j * self.gap_whole_ps
            };
            self.released += j;
            self.next = run.frame(j);
            self.next_start_ps = start;
        }
        self.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(mut g: Generator) -> u64 {
        let mut n = 0;
        while g.peek().is_some() {
            g.pop();
            n += 1;
        }
        n
    }

    #[test]
    fn line_rate_64b_at_10g() {
        let g = Generator::new(
            Pattern::Constant,
            0.0,
            SizeMix::fixed(64),
            Link::new(10e9, 0),
            Rng::new(1, 0),
            1_000_000_000,
        );
        assert_eq!(count(g), 14_880_952);
    }

    #[test]
    fn poisson_rate_and_onoff_duty_cycle() {
        let mk = |p| {
            Generator::new(
                p,
                100_000.0,
                SizeMix::fixed(64),
                Link::new(10e9, 0),
                Rng::new(3, 0),
                1_000_000_000,
            )
        };
        let poisson = count(mk(Pattern::Poisson)) as f64;
        assert!((poisson - 100_000.0).abs() < 1_500.0, "{poisson}");
        let onoff = count(mk(Pattern::OnOff {
            on_ns: 1_000_000,
            off_ns: 3_000_000,
        })) as f64;
        assert!((onoff - 25_000.0).abs() < 200.0, "{onoff}");
    }

    #[test]
    fn size_mix_mean_and_draws() {
        let mix = SizeMix::weighted(&[(64, 7), (594, 4), (1518, 1)]);
        assert!((mix.mean() - (64.0 * 7.0 + 594.0 * 4.0 + 1518.0) / 12.0).abs() < 1e-9);
        let mut rng = Rng::new(9, 0);
        let n = 120_000;
        let big = (0..n).filter(|_| mix.draw(&mut rng) == 1518).count() as f64;
        assert!((big / n as f64 - 1.0 / 12.0).abs() < 0.005);
    }
}
