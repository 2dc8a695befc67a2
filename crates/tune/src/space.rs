//! The search space: which settings to try, built from what the target supports.
//!
//! A space is a list of [`Dimension`]s whose levels are combined as a cross product. A level
//! may set several knobs at once where they only make sense together: adaptive moderation
//! and a fixed timer are one "coalescing mode" dimension (a driver ignores the timer while
//! adaptive is on), and the two busy-poll sysctls move together (tuned's network-latency
//! profile and the testbed sweep of testbed-notes §6 set both to the same value).
//!
//! A target whose driver module parameters may be tuned ([`Capabilities::module_params`])
//! gets InterruptThrottleRate × TxIntDelay in place of the coalescing axis: on e1000/e1000e
//! `rx-usecs` and InterruptThrottleRate write the same ITR register (catalog
//! `coalesce.rx-usecs`, e1000 note), so combining them would only try redundant pairs. The
//! values of both come from [`levels`](crate::levels), per driver.

use crate::candidate::{Candidate, Placement};
use crate::knob::{Driver, End, Knob, KnobValue, ModuleParam, Setting};
use crate::levels::{itr_levels, rx_usecs_levels, tx_int_delay_levels};
use nictune_core::units::Nanos;
use serde::{Deserialize, Serialize};

/// What a target can change, from the catalog and what the driver reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Fixed coalescing timers the driver accepts (`coalesce.rx-usecs`, ...).
    pub coalescing: Vec<Knob>,
    /// The driver has adaptive receive moderation.
    pub adaptive_rx: bool,
    /// Per-NAPI `defer-hard-irqs` and `gro-flush-timeout` can be set (kernel ≥ 5.7 sysfs,
    /// per-NAPI netlink ≥ 6.13).
    pub napi: bool,
    /// Per-NAPI `irq-suspend-timeout` is worth trying: the kernel has it (≥ 6.13) *and* the
    /// workload's application pledges `prefer_busy_poll` through epoll. Without the pledge the
    /// timeout never engages (ecosystem.md §3.3), so trying it would spend budget on a no-op.
    pub irq_suspend: bool,
    /// The busy-poll sysctls exist and the sockets carry a NAPI id, so busy polling engages.
    pub busy_polling: bool,
    /// The most combined channels the device allows, when channels can be changed.
    pub max_combined_channels: Option<u64>,
    /// CPUs available to client and server threads.
    pub cpus: u32,
    /// The kernel driver (`e1000`, `igb`, ...), when known: the `rx-usecs` levels are then the
    /// ones the catalog accepts for it; unknown, a set any driver's range holds.
    #[serde(default)]
    pub driver: Option<String>,
    /// Tune this driver's module parameters: InterruptThrottleRate × TxIntDelay replace the
    /// coalescing axis. Every candidate is a driver reload, which drops the link of all the
    /// driver's ports: only a caller that was told it may do that sets it.
    #[serde(default)]
    pub module_params: Option<Driver>,
}

impl Capabilities {
    /// The built-in testbed: a veth pair in NAPI mode between two namespaces. veth has no
    /// hardware coalescing or adaptive moderation (testbed-notes §6: "It cannot exercise
    /// hardware coalescing"), so the space is gro-flush-timeout × defer-hard-irqs ×
    /// busy polling × placement.
    pub fn veth_testbed(cpus: u32) -> Capabilities {
        Capabilities {
            napi: true,
            busy_polling: true,
            cpus,
            ..Capabilities::default()
        }
    }

    /// The real-driver testbed: a QEMU guest with one vCPU running `driver` (e1000 or e1000e),
    /// measured from a client on the host. The space is the driver's InterruptThrottleRate ×
    /// TxIntDelay (24 candidates: 12 × 2) at one unpinned placement — the guest has one CPU
    /// and the client is not in it. Each candidate costs a driver reload (≈3 s in the guest)
    /// plus its runs, so 24 fit a five-minute tune's first round.
    pub fn real_driver_testbed(driver: Driver) -> Capabilities {
        Capabilities::reloading(driver)
    }

    /// The real-driver testbed's run-time settings: `coalesce.rx-usecs` at the levels the
    /// catalog accepts for `driver` (its modes and fixed timers: on e1000/e1000e the same ITR
    /// register InterruptThrottleRate sets, e1000_main.c#e1000_set_coalesce) × NAPI
    /// gro-flush-timeout × defer-hard-irqs (the guest's 6.1 kernel has them per device in
    /// sysfs), at one unpinned placement. Nothing here reloads the driver: this is what a
    /// user changes on a production port with ethtool. Busy polling is left out: its sysctls
    /// are host-wide, and the guest's server is the only socket they would reach.
    pub fn real_driver_runtime(driver: Driver) -> Capabilities {
        Capabilities {
            coalescing: vec![Knob::RxUsecs],
            napi: true,
            driver: Some(driver.name().to_string()),
            cpus: 1,
            ..Capabilities::default()
        }
    }

    /// Only `driver`'s module parameters, at one unpinned placement: the space of a tune that
    /// may reload the driver. The run-time knobs are left out — each candidate is a reload,
    /// so multiplying them in would cost reloads by the hundred.
    pub fn reloading(driver: Driver) -> Capabilities {
        Capabilities {
            driver: Some(driver.name().to_string()),
            module_params: Some(driver),
            cpus: 1,
            ..Capabilities::default()
        }
    }
}

/// One axis of the space: each level is a set of settings applied together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dimension {
    /// Shown in the report, e.g. `busy polling`.
    pub name: String,
    /// The settings of each level; a level never repeats a knob.
    pub levels: Vec<Vec<Setting>>,
}

/// Dimensions of settings plus the placements to try.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Space {
    /// Setting axes, combined as a cross product.
    pub dimensions: Vec<Dimension>,
    /// Placements to try every setting combination at.
    pub placements: Vec<Placement>,
    /// Each combination is tried on this end, on the peer, and on both ends
    /// ([`Space::on_both_ends`]).
    #[serde(default)]
    pub both_ends: bool,
}

/// Why a restriction of the space ([`Space::restrict`]) cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestrictError {
    /// No dimension of the space has a level that sets `key`.
    #[error("no axis of this tune sets {key} (it varies: {axes})")]
    NotVaried {
        /// The catalog key asked for (`tune --only KEY=...`).
        key: String,
        /// The space's dimension names, comma-separated.
        axes: String,
    },
    /// None of the wanted values is a level of `key`'s dimension. The dimension is left
    /// with no levels.
    #[error("{key} takes none of {wanted} in this tune (its levels: {levels})")]
    NoLevel {
        /// The catalog key asked for.
        key: String,
        /// The values asked for, comma-separated.
        wanted: String,
        /// The values the dimension offered, as the catalog writes them, comma-separated.
        levels: String,
    },
}

/// gro-flush-timeout values, ns: off and the two timeouts of testbed-notes §6.
const GRO_FLUSH_LEVELS: [u64; 3] = [0, 20_000, 100_000];
/// defer-hard-irqs values: off and the value of testbed-notes §6 / napi.rst's example.
const DEFER_LEVELS: [u64; 2] = [0, 2];
/// irq-suspend-timeout values, ns: off and 20 ms, napi.rst's order of magnitude.
const IRQ_SUSPEND_LEVELS: [u64; 2] = [0, 20_000_000];
/// Busy-poll window, µs: off and 50, what tuned's network-latency profile sets.
const BUSY_POLL_LEVELS: [u64; 2] = [0, 50];

impl Space {
    /// The space a target with `caps` supports.
    pub fn from_capabilities(caps: &Capabilities) -> Space {
        let mut dimensions = Vec::new();
        match caps.module_params {
            Some(driver) => dimensions.extend(module_param_dimensions(driver)),
            None => dimensions.extend(coalescing_dimension(caps)),
        }
        dimensions.extend(channels_dimension(caps));
        if caps.napi {
            dimensions.push(duration_dimension(
                "gro-flush-timeout",
                Knob::GroFlushTimeout,
                &GRO_FLUSH_LEVELS,
                1,
            ));
            dimensions.push(count_dimension(
                "defer-hard-irqs",
                Knob::DeferHardIrqs,
                &DEFER_LEVELS,
            ));
        }
        if caps.napi && caps.irq_suspend {
            dimensions.push(duration_dimension(
                "irq-suspend-timeout",
                Knob::IrqSuspendTimeout,
                &IRQ_SUSPEND_LEVELS,
                1,
            ));
        }
        dimensions.extend(busy_poll_dimension(caps));
        Space {
            dimensions,
            placements: placements(caps.cpus),
            both_ends: false,
        }
    }

    /// The same space with every combination of settings tried three ways: on this end only,
    /// on the peer only, and on both ends with the same values (host-wide settings on this
    /// end only, so [`Space::size`] is an upper bound there). Both ends at once is what
    /// field case 1's sites did (the same InterruptThrottleRate on both hosts); one end alone
    /// tells which end's moderation the workload feels. Independent values per end would
    /// square the space (each point a driver reload on two hosts) for settings a symmetric
    /// request/response workload treats alike.
    pub fn on_both_ends(mut self) -> Space {
        self.both_ends = true;
        self
    }

    /// Keeps only the levels whose value for catalog key `key` (as the catalog writes it,
    /// e.g. `e1000.InterruptThrottleRate`, `coalesce.rx-usecs`) is one of `values`: a smaller
    /// search the user chose (`tune --only KEY=V1,V2`).
    pub fn restrict(&mut self, key: &str, values: &[String]) -> Result<(), RestrictError> {
        let sets = |lvl: &[Setting]| lvl.iter().find(|s| s.knob.key() == key).copied();
        let Some(dim) = self
            .dimensions
            .iter_mut()
            .find(|d| d.levels.iter().any(|l| sets(l).is_some()))
        else {
            let axes: Vec<String> = self.dimensions.iter().map(|d| d.name.clone()).collect();
            return Err(RestrictError::NotVaried {
                key: key.into(),
                axes: axes.join(", "),
            });
        };
        let render = |s: Setting| s.knob.render(s.value);
        let levels: Vec<String> = dim
            .levels
            .iter()
            .filter_map(|l| sets(l).map(render))
            .collect();
        dim.levels
            .retain(|l| sets(l).is_some_and(|s| values.contains(&render(s))));
        if dim.levels.is_empty() {
            return Err(RestrictError::NoLevel {
                key: key.into(),
                wanted: values.join(","),
                levels: levels.join(","),
            });
        }
        Ok(())
    }

    /// How many candidates the space holds.
    pub fn size(&self) -> usize {
        let settings: usize = self.dimensions.iter().map(|d| d.levels.len()).product();
        let ends = if self.both_ends { 3 } else { 1 };
        settings * ends * self.placements.len()
    }

    /// The settings as found (at the first placement) followed by every candidate; the
    /// baseline is index 0. This is the list a tune searches.
    pub fn with_baseline(&self) -> Vec<Candidate> {
        let first = self
            .placements
            .first()
            .copied()
            .unwrap_or(Placement::Unpinned);
        let mut all = vec![Candidate::baseline(first)];
        all.extend(self.candidates());
        all
    }

    /// Every candidate, in a stable order (first dimension varies slowest, placement last).
    pub fn candidates(&self) -> Vec<Candidate> {
        let mut combos: Vec<Vec<Setting>> = vec![Vec::new()];
        for dim in &self.dimensions {
            combos = combos
                .iter()
                .flat_map(|base| dim.levels.iter().map(move |lvl| concat(base, lvl)))
                .collect();
        }
        if self.both_ends {
            combos = combos.into_iter().flat_map(on_each_end).collect();
        }
        combos
            .into_iter()
            .flat_map(|s| {
                self.placements
                    .iter()
                    .map(move |&p| Candidate::new(s.clone(), p))
            })
            .collect()
    }
}

/// `settings` on this end, on the peer, and on both. Host-wide settings (the busy-poll
/// sysctls) stay on this end: a peer's `serve --allow-changes` changes one interface only.
fn on_each_end(settings: Vec<Setting>) -> Vec<Vec<Setting>> {
    let peer: Vec<Setting> = settings
        .iter()
        .filter(|s| !s.knob.is_host_wide())
        .map(|s| s.on(End::Peer))
        .collect();
    if peer.is_empty() {
        return vec![settings];
    }
    let both = concat(&settings, &peer);
    vec![settings, peer, both]
}

fn concat(a: &[Setting], b: &[Setting]) -> Vec<Setting> {
    a.iter().chain(b).copied().collect()
}

/// Placements to try: both pinnings when there are two CPUs, else whatever the scheduler does.
fn placements(cpus: u32) -> Vec<Placement> {
    if cpus >= 2 {
        vec![Placement::Cross, Placement::Same]
    } else {
        vec![Placement::Unpinned]
    }
}

/// Adaptive on, or adaptive off with each fixed timer value: one axis, no redundant pairs.
fn coalescing_dimension(caps: &Capabilities) -> Option<Dimension> {
    let timer = caps.coalescing.contains(&Knob::RxUsecs);
    if !timer && !caps.adaptive_rx {
        return None;
    }
    let mut levels = Vec::new();
    if caps.adaptive_rx {
        levels.push(vec![Setting::new(
            Knob::AdaptiveRx,
            KnobValue::Switch(true),
        )]);
    }
    let timers = if timer {
        rx_usecs_levels(caps.driver.as_deref())
    } else {
        Vec::new()
    };
    for us in timers {
        let mut level = vec![Setting::new(
            Knob::RxUsecs,
            KnobValue::Duration(Nanos::from_micros(us)),
        )];
        if caps.adaptive_rx {
            level.push(Setting::new(Knob::AdaptiveRx, KnobValue::Switch(false)));
        }
        levels.push(level);
    }
    Some(Dimension {
        name: "coalescing".into(),
        levels,
    })
}

/// InterruptThrottleRate, then TxIntDelay, each over the driver's levels; an axis the catalog
/// gives no levels for is left out.
fn module_param_dimensions(driver: Driver) -> Vec<Dimension> {
    let axes = [
        (ModuleParam::InterruptThrottleRate, itr_levels(driver)),
        (ModuleParam::TxIntDelay, tx_int_delay_levels(driver)),
    ];
    axes.into_iter()
        .filter(|(_, values)| !values.is_empty())
        .map(|(param, values)| count_dimension(param.name(), Knob::Module(driver, param), &values))
        .collect()
}

/// One channel, half the maximum and the maximum (deduplicated).
fn channels_dimension(caps: &Capabilities) -> Option<Dimension> {
    let max = caps.max_combined_channels.filter(|&m| m > 1)?;
    let mut values = vec![1, (max / 2).max(1), max];
    values.dedup();
    Some(count_dimension("channels", Knob::CombinedChannels, &values))
}

fn busy_poll_dimension(caps: &Capabilities) -> Option<Dimension> {
    if !caps.busy_polling {
        return None;
    }
    let levels = BUSY_POLL_LEVELS
        .iter()
        .map(|&us| {
            let v = KnobValue::Duration(Nanos::from_micros(us));
            vec![
                Setting::new(Knob::BusyPoll, v),
                Setting::new(Knob::BusyRead, v),
            ]
        })
        .collect();
    Some(Dimension {
        name: "busy polling".into(),
        levels,
    })
}

/// A dimension over one time knob; `scale` converts the table's unit to nanoseconds.
fn duration_dimension(name: &str, knob: Knob, values: &[u64], scale: u64) -> Dimension {
    let levels = values
        .iter()
        .map(|&v| vec![Setting::new(knob, KnobValue::Duration(Nanos(v * scale)))])
        .collect();
    Dimension {
        name: name.into(),
        levels,
    }
}

fn count_dimension(name: &str, knob: Knob, values: &[u64]) -> Dimension {
    let levels = values
        .iter()
        .map(|&v| vec![Setting::new(knob, KnobValue::Count(v))])
        .collect();
    Dimension {
        name: name.into(),
        levels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn testbed_space_is_gro_flush_by_defer_by_busy_poll_by_placement() {
        let space = Space::from_capabilities(&Capabilities::veth_testbed(2));
        let names: Vec<&str> = space.dimensions.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            ["gro-flush-timeout", "defer-hard-irqs", "busy polling"]
        );
        assert_eq!(space.size(), 3 * 2 * 2 * 2);
        let all = space.candidates();
        assert_eq!(all.len(), 24);
        let unique: std::collections::BTreeSet<_> = all.iter().collect();
        assert_eq!(unique.len(), 24);
        // Every candidate sets all four knobs, so applying one overwrites the previous one.
        assert!(all.iter().all(|c| c.settings.len() == 4));
        let searched = space.with_baseline();
        assert_eq!(searched.len(), 25);
        assert_eq!(searched[0], Candidate::baseline(Placement::Cross));
    }

    #[test]
    fn adaptive_and_fixed_timers_share_one_axis() {
        let caps = Capabilities {
            coalescing: vec![Knob::RxUsecs],
            adaptive_rx: true,
            cpus: 1,
            ..Capabilities::default()
        };
        let space = Space::from_capabilities(&caps);
        assert_eq!(space.dimensions.len(), 1);
        // adaptive on, plus adaptive off at each of the four timer values.
        assert_eq!(space.size(), 5);
        assert_eq!(space.placements, [Placement::Unpinned]);
        let on = &space.candidates()[0];
        assert_eq!(on.value_of(Knob::AdaptiveRx), Some(KnobValue::Switch(true)));
        assert_eq!(on.value_of(Knob::RxUsecs), None);
    }

    #[test]
    fn channels_irq_suspend_and_busy_poll_appear_only_when_supported() {
        let caps = Capabilities {
            napi: true,
            irq_suspend: true,
            max_combined_channels: Some(8),
            cpus: 4,
            ..Capabilities::default()
        };
        let space = Space::from_capabilities(&caps);
        let names: Vec<&str> = space.dimensions.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "channels",
                "gro-flush-timeout",
                "defer-hard-irqs",
                "irq-suspend-timeout"
            ]
        );
        assert_eq!(space.dimensions[0].levels.len(), 3);
    }

    #[test]
    fn both_ends_tries_each_combination_here_there_and_on_both() {
        let mut space = Space::from_capabilities(&Capabilities::real_driver_testbed(Driver::E1000));
        let itr = "e1000.InterruptThrottleRate";
        space.restrict(itr, &["100".into(), "2000".into()]).unwrap();
        space.restrict("e1000.TxIntDelay", &["0".into()]).unwrap();
        assert_eq!(space.size(), 2);
        let space = space.on_both_ends();
        let all = space.candidates();
        assert_eq!((space.size(), all.len()), (6, 6));
        let ids: Vec<String> = all.iter().map(Candidate::id).collect();
        assert!(
            ids.contains(&"ITR=100 TxIntDelay=0 @unpinned".to_string()),
            "{ids:?}"
        );
        assert!(ids.contains(&"peer:ITR=2000 peer:TxIntDelay=0 @unpinned".to_string()));
        assert!(ids.contains(
            &"ITR=2000 TxIntDelay=0 peer:ITR=2000 peer:TxIntDelay=0 @unpinned".to_string()
        ));
        let both = &all[2];
        assert_eq!(both.settings_on(End::Local).len(), 2);
        assert_eq!(both.settings_on(End::Peer).len(), 2);
        assert_eq!(
            both.value_on(
                End::Peer,
                Knob::Module(Driver::E1000, ModuleParam::InterruptThrottleRate)
            ),
            Some(KnobValue::Count(100))
        );
    }

    #[test]
    fn a_restriction_names_what_the_tune_varies_and_the_levels_it_has() {
        let mut space = Space::from_capabilities(&Capabilities::real_driver_testbed(Driver::E1000));
        let err = space
            .restrict("coalesce.rx-usecs", &["50".into()])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no axis of this tune sets coalesce.rx-usecs (it varies: InterruptThrottleRate, TxIntDelay)"
        );
        let err = space
            .restrict("e1000.InterruptThrottleRate", &["7".into()])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("e1000.InterruptThrottleRate takes none of 7 in this tune (its levels: 0,1,3,4,100,"), "{err}");
    }

    #[test]
    fn real_driver_runtime_is_rx_usecs_by_napi_with_levels_the_driver_accepts() {
        for driver in Driver::ALL {
            let space = Space::from_capabilities(&Capabilities::real_driver_runtime(driver));
            let names: Vec<&str> = space.dimensions.iter().map(|d| d.name.as_str()).collect();
            assert_eq!(
                names,
                ["coalescing", "gro-flush-timeout", "defer-hard-irqs"],
                "{driver}"
            );
            assert_eq!(space.placements, [Placement::Unpinned]);
            // The driver's modes (0, 1, 3, 4) and four fixed timers, none a module parameter.
            let coalescing = &space.dimensions[0].levels;
            let us: Vec<String> = coalescing
                .iter()
                .map(|l| {
                    assert_eq!(l.len(), 1, "no adaptive-rx switch on {driver}");
                    l[0].knob.render(l[0].value)
                })
                .collect();
            assert_eq!(
                us,
                ["0", "1", "3", "4", "10", "50", "125", "500"],
                "{driver}"
            );
            let all = space.candidates();
            assert_eq!(all.len(), 8 * 3 * 2);
            assert!(all
                .iter()
                .flat_map(|c| &c.settings)
                .all(|s| !matches!(s.knob, Knob::Module(..))));
            assert_eq!(
                us,
                rx_usecs_levels(Some(driver.name()))
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn real_driver_testbed_is_itr_by_tx_int_delay_unpinned() {
        for driver in Driver::ALL {
            let space = Space::from_capabilities(&Capabilities::real_driver_testbed(driver));
            let names: Vec<&str> = space.dimensions.iter().map(|d| d.name.as_str()).collect();
            assert_eq!(names, ["InterruptThrottleRate", "TxIntDelay"], "{driver}");
            assert_eq!(space.placements, [Placement::Unpinned]);
            assert_eq!(space.size(), 12 * 2);
            let all = space.candidates();
            let unique: std::collections::BTreeSet<_> = all.iter().map(Candidate::id).collect();
            assert_eq!(unique.len(), 24, "{driver}: ids are distinct");
            assert!(all.iter().all(|c| c.settings.len() == 2));
            assert!(all
                .iter()
                .all(|c| c.settings.iter().all(|s| s.knob.needs_reload())));
        }
    }

    #[test]
    fn module_params_replace_the_coalescing_axis() {
        let caps = Capabilities {
            coalescing: vec![Knob::RxUsecs],
            napi: true,
            ..Capabilities::reloading(Driver::E1000)
        };
        let space = Space::from_capabilities(&caps);
        assert!(space
            .candidates()
            .iter()
            .all(|c| c.value_of(Knob::RxUsecs).is_none()));
        let names: Vec<&str> = space.dimensions.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "InterruptThrottleRate",
                "TxIntDelay",
                "gro-flush-timeout",
                "defer-hard-irqs"
            ]
        );
    }

    #[test]
    fn rx_usecs_levels_follow_the_driver() {
        let caps = |driver: Option<&str>| Capabilities {
            coalescing: vec![Knob::RxUsecs],
            driver: driver.map(str::to_string),
            cpus: 1,
            ..Capabilities::default()
        };
        let timers = |driver| {
            let space = Space::from_capabilities(&caps(driver));
            space
                .candidates()
                .iter()
                .filter_map(|c| match c.value_of(Knob::RxUsecs) {
                    Some(KnobValue::Duration(d)) => Some(d.0 / 1_000),
                    _ => None,
                })
                .collect::<Vec<u64>>()
        };
        assert_eq!(timers(Some("e1000")), [0, 1, 3, 4, 10, 50, 125, 500]);
        assert_eq!(timers(None), [0, 10, 50, 200]);
    }

    #[test]
    fn a_target_that_supports_nothing_has_only_placements() {
        let space = Space::from_capabilities(&Capabilities {
            cpus: 2,
            ..Capabilities::default()
        });
        assert_eq!(space.size(), 2);
        assert!(space.candidates().iter().all(Candidate::is_baseline));
    }
}
