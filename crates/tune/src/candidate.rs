//! A candidate: the settings to apply plus where client and server threads run.
//!
//! Placement is part of a candidate because on small and virtual machines it matters more
//! than any moderation knob (testbed-notes §0: 9.5 k vs 54 k trans/s for the same settings),
//! and busy polling flips from the best setting to the worst with it (§6). It is not a host
//! setting: the measurer pins the threads, the target never sees it, and a profile records it
//! only as advice.

use crate::knob::{End, Knob, KnobValue, Setting, PEER_PREFIX};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Where the benchmark's client and server threads run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Wherever the scheduler puts them.
    Unpinned,
    /// Pinned to two different CPUs.
    Cross,
    /// Both pinned to one CPU.
    Same,
}

impl Placement {
    /// The label used in tables and JSON.
    pub fn label(self) -> &'static str {
        match self {
            Placement::Unpinned => "unpinned",
            Placement::Cross => "cross-cpu",
            Placement::Same => "same-cpu",
        }
    }
}

impl Placement {
    /// The (client, server) CPUs for this placement, chosen from `cpus` (the CPUs the
    /// measurement may use, in order): different CPUs, one shared CPU, or no pinning. `None`
    /// for a placement the CPUs cannot give (cross-CPU with fewer than two).
    pub fn cpus(self, cpus: &[u32]) -> Option<(Option<u32>, Option<u32>)> {
        match (self, cpus) {
            (Placement::Unpinned, _) => Some((None, None)),
            (Placement::Same, [first, ..]) => Some((Some(*first), Some(*first))),
            (Placement::Cross, [first, second, ..]) => Some((Some(*first), Some(*second))),
            _ => None,
        }
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One point of the search space.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Candidate {
    /// Settings to apply, sorted by knob. Empty for the baseline: the host as found.
    pub settings: Vec<Setting>,
    /// Where client and server run.
    pub placement: Placement,
}

impl Candidate {
    /// A candidate from settings in any order.
    pub fn new(mut settings: Vec<Setting>, placement: Placement) -> Candidate {
        settings.sort();
        Candidate {
            settings,
            placement,
        }
    }

    /// The host's settings as found, at `placement`.
    pub fn baseline(placement: Placement) -> Candidate {
        Candidate {
            settings: Vec::new(),
            placement,
        }
    }

    /// Whether this is the host as found (nothing to apply).
    pub fn is_baseline(&self) -> bool {
        self.settings.is_empty()
    }

    /// The value this candidate gives `knob` on this end, if it sets it.
    pub fn value_of(&self, knob: Knob) -> Option<KnobValue> {
        self.value_on(End::Local, knob)
    }

    /// The value this candidate gives `knob` on `end`, if it sets it.
    pub fn value_on(&self, end: End, knob: Knob) -> Option<KnobValue> {
        self.settings
            .iter()
            .find(|s| s.end == end && s.knob == knob)
            .map(|s| s.value)
    }

    /// The settings made on `end`.
    pub fn settings_on(&self, end: End) -> Vec<Setting> {
        self.settings
            .iter()
            .filter(|s| s.end == end)
            .copied()
            .collect()
    }

    /// How many settings turn something on ([`Knob::is_active`]: a non-zero time or count, a
    /// switch on, a module parameter off its driver default): the measure of how big a change
    /// the candidate is, for preferring the simpler of equals.
    pub fn active_settings(&self) -> usize {
        self.settings
            .iter()
            .filter(|s| s.knob.is_active(s.value))
            .count()
    }

    /// A stable identifier, e.g. `gro-flush=20µs defer=2 busy_read=50µs busy_poll=50µs @cross-cpu`;
    /// settings on the peer carry `peer:` (`ITR=2000 peer:ITR=2000 @unpinned`).
    pub fn id(&self) -> String {
        if self.is_baseline() {
            return format!("as found @{}", self.placement);
        }
        let parts: Vec<String> = self
            .settings
            .iter()
            .map(|s| match s.end {
                End::Local => format!("{}={}", s.knob.short(), shown(s)),
                End::Peer => format!("{PEER_PREFIX}{}={}", s.knob.short(), shown(s)),
            })
            .collect();
        format!("{} @{}", parts.join(" "), self.placement)
    }
}

/// A setting's value as an id shows it. `rx-usecs` 1–4 are not microseconds on the drivers
/// whose levels include them (e1000, e1000e, igb, ixgbe: 1 dynamic, 3 dynamic conservative,
/// 4 simplified; crate::levels::ITR_MODES), so they show as the bare value ethtool takes.
fn shown(s: &Setting) -> String {
    match (s.knob, s.value) {
        (Knob::RxUsecs, KnobValue::Duration(d))
            if d.0 % 1_000 == 0 && (1..=4).contains(&(d.0 / 1_000)) =>
        {
            (d.0 / 1_000).to_string()
        }
        _ => s.value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_core::units::Nanos;

    #[test]
    fn id_is_independent_of_setting_order() {
        let a = Setting::new(Knob::DeferHardIrqs, KnobValue::Count(2));
        let b = Setting::new(
            Knob::GroFlushTimeout,
            KnobValue::Duration(Nanos::from_micros(20)),
        );
        let x = Candidate::new(vec![a, b], Placement::Cross);
        let y = Candidate::new(vec![b, a], Placement::Cross);
        assert_eq!(x, y);
        assert_eq!(x.id(), "defer=2 gro-flush=20µs @cross-cpu");
        assert_eq!(x.active_settings(), 2);
        let off = Candidate::new(
            vec![Setting::new(Knob::DeferHardIrqs, KnobValue::Count(0))],
            Placement::Cross,
        );
        assert_eq!(off.active_settings(), 0);
    }

    #[test]
    fn placements_pick_cpus() {
        assert_eq!(Placement::Cross.cpus(&[2, 3]), Some((Some(2), Some(3))));
        assert_eq!(Placement::Same.cpus(&[2, 3]), Some((Some(2), Some(2))));
        assert_eq!(Placement::Unpinned.cpus(&[]), Some((None, None)));
        assert_eq!(Placement::Cross.cpus(&[0]), None);
    }

    #[test]
    fn rx_usecs_modes_show_as_the_value_ethtool_takes_and_timers_in_microseconds() {
        let us = |n| Setting::new(Knob::RxUsecs, KnobValue::Duration(Nanos::from_micros(n)));
        let id = |n| Candidate::new(vec![us(n)], Placement::Unpinned).id();
        assert_eq!(id(3), "rx-usecs=3 @unpinned");
        assert_eq!(id(0), "rx-usecs=0µs @unpinned");
        assert_eq!(id(500), "rx-usecs=500µs @unpinned");
        let peer = Candidate::new(vec![us(1).on(End::Peer)], Placement::Unpinned);
        assert_eq!(peer.id(), "peer:rx-usecs=1 @unpinned");
    }

    #[test]
    fn baseline_applies_nothing() {
        let base = Candidate::baseline(Placement::Same);
        assert!(base.is_baseline());
        assert_eq!(base.id(), "as found @same-cpu");
        assert_eq!(base.value_of(Knob::BusyRead), None);
    }
}
