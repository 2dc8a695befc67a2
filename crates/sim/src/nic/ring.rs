//! The receive ring's written-back descriptors: the frames the card has delivered and the
//! driver has not taken yet, in order. A run of evenly spaced frames landed in bulk
//! ([`FrameRun`]) is kept as one entry and handed out frame by frame.

use super::frame::{Frame, FrameRun};
use std::collections::VecDeque;

/// One frame, or a run of them.
#[derive(Debug, Clone, Copy)]
enum Entry {
    One(Frame),
    Run(FrameRun),
}

/// Frames taken from the ring: one, or several of a run at once.
#[derive(Debug, Clone, Copy)]
pub enum Taken<'a> {
    /// One frame.
    Frame(&'a Frame),
    /// Consecutive frames of a run (`count` ≥ 1 of them).
    Run(&'a FrameRun),
}

/// Received frames waiting for the driver, oldest first.
#[derive(Debug, Default)]
pub struct Ring {
    entries: VecDeque<Entry>,
    len: usize,
}

impl Ring {
    /// Frames waiting.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no frame waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one frame.
    #[inline]
    pub fn push(&mut self, frame: Frame) {
        self.entries.push_back(Entry::One(frame));
        self.len += 1;
    }

    /// Appends a run of frames (one entry, or none more when it continues the last run).
    pub fn push_run(&mut self, run: FrameRun) {
        self.len += run.count as usize;
        if let Some(Entry::Run(last)) = self.entries.back_mut() {
            if continues(last, &run) {
                last.count += run.count;
                return;
            }
        }
        self.entries.push_back(Entry::Run(run));
    }

    /// Removes the oldest frame.
    #[inline]
    pub fn pop(&mut self) -> Option<Frame> {
        let frame = match self.entries.front_mut()? {
            Entry::One(f) => {
                let f = *f;
                self.entries.pop_front();
                f
            }
            Entry::Run(run) => {
                let f = run.frame(0);
                run.advance(1);
                if run.count == 0 {
                    self.entries.pop_front();
                }
                f
            }
        };
        self.len -= 1;
        Some(frame)
    }

    /// Removes the oldest `k` frames (`k ≤ len`), handing them to `f` in order: one by one,
    /// or the frames of a run together.
    #[inline]
    pub fn drain(&mut self, mut k: usize, mut f: impl FnMut(Taken<'_>)) {
        self.len -= k;
        while k > 0 {
            let Some(entry) = self.entries.front_mut() else {
                return;
            };
            match entry {
                Entry::One(frame) => {
                    f(Taken::Frame(frame));
                    self.entries.pop_front();
                    k -= 1;
                }
                Entry::Run(run) => {
                    let m = (k as u64).min(run.count);
                    f(Taken::Run(&run.first(m)));
                    run.advance(m);
                    if run.count == 0 {
                        self.entries.pop_front();
                    }
                    k -= m as usize;
                }
            }
        }
    }
}

/// `next` picks up exactly where `run` ends, with the same spacing and frames.
fn continues(run: &FrameRun, next: &FrameRun) -> bool {
    next.start_ps == run.start_of(run.count)
        && FrameRun {
            start_ps: run.start_ps,
            count: run.count,
            ..*next
        } == *run
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(start_ps: u64, count: u64) -> FrameRun {
        FrameRun::ten_gig_64b(start_ps, 67_200, count)
    }

    #[test]
    fn frames_come_out_in_order_whatever_the_entries() {
        let mut ring = Ring::default();
        let single = run(0, 1).frame(0);
        ring.push(single);
        ring.push_run(run(67_200, 3));
        ring.push_run(run(4 * 67_200, 2));
        assert_eq!(
            ring.entries.len(),
            2,
            "a continuing run extends the last one"
        );
        assert_eq!(ring.len(), 6);
        let mut drained = vec![];
        ring.drain(4, |taken| match taken {
            Taken::Frame(f) => drained.push(*f),
            Taken::Run(r) => drained.extend((0..r.count).map(|j| r.frame(j))),
        });
        let expected: Vec<Frame> = (0..6).map(|j| run(0, 6).frame(j)).collect();
        assert_eq!(drained, expected[..4]);
        assert_eq!(ring.pop(), Some(expected[4]));
        assert_eq!(ring.pop(), Some(expected[5]));
        assert_eq!((ring.pop(), ring.len(), ring.is_empty()), (None, 0, true));
    }
}
