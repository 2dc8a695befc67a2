//! The settings a tune can vary, named by their canonical catalog keys, and their values.
//!
//! A [`Knob`] is one host setting (`napi.gro-flush-timeout`, `sysctl.net.core.busy_read`, ...).
//! Its [`KnobValue`] carries its unit in its type; [`Knob::render`] writes it the way the catalog
//! and `nictune apply` read it (nanoseconds for the NAPI timers, microseconds for the busy-poll
//! sysctls and coalescing timers, plain counts, `on`/`off`).
//!
//! Driver module parameters ([`Knob::Module`]: e1000/e1000e `InterruptThrottleRate` and the
//! delay timers) are knobs too, keyed as the catalog spells them
//! (`e1000.InterruptThrottleRate`) and valued as plain integers ([`KnobValue::Count`]:
//! interrupts/s, or 1.024 µs ticks for the delay timers). They take effect only when the driver
//! is loaded again ([`Knob::needs_reload`]), which drops the link of every port it drives.

use crate::levels::module_default;
use nictune_core::units::Nanos;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One host setting a candidate may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Knob {
    /// Hardware coalescing: µs to wait after a received packet before interrupting.
    RxUsecs,
    /// Hardware coalescing: received frames before interrupting.
    RxFrames,
    /// Hardware coalescing: µs to wait after a transmit completion.
    TxUsecs,
    /// Driver's adaptive receive moderation (DIM or its own algorithm).
    AdaptiveRx,
    /// Driver's adaptive transmit moderation.
    AdaptiveTx,
    /// Combined channels (queue pairs) the device uses.
    CombinedChannels,
    /// Per-NAPI: empty polls to keep device IRQs masked for (needs a non-zero flush timeout).
    DeferHardIrqs,
    /// Per-NAPI: the NAPI watchdog timer, nanoseconds.
    GroFlushTimeout,
    /// Per-NAPI: how long IRQs stay suspended while an application busy-polls, nanoseconds.
    IrqSuspendTimeout,
    /// Host-wide sysctl: µs to busy-poll in blocking reads.
    BusyRead,
    /// Host-wide sysctl: µs to busy-poll in poll/select/epoll.
    BusyPoll,
    /// A driver module parameter, one value for every port of the driver; set by reloading
    /// the driver. Serialised as `{"module": ["e1000", "interrupt-throttle-rate"]}`.
    Module(Driver, ModuleParam),
}

/// A driver whose module parameters a tune can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Driver {
    /// `e1000`: 8254x PCI/PCI-X (QEMU's default `-device e1000`, an 82540EM).
    #[serde(rename = "e1000")]
    E1000,
    /// `e1000e`: 8257x/8258x PCI Express and ICH/PCH parts (QEMU's `-device e1000e`, an 82574L).
    #[serde(rename = "e1000e")]
    E1000e,
}

impl Driver {
    /// Every driver, in declaration order.
    pub const ALL: [Driver; 2] = [Driver::E1000, Driver::E1000e];

    /// The kernel module's name, as `lsmod`, ethtool's driver field and the catalog spell it.
    pub fn name(self) -> &'static str {
        match self {
            Driver::E1000 => "e1000",
            Driver::E1000e => "e1000e",
        }
    }

    /// The driver with this module name (exact, as the kernel reports it), if a tune knows
    /// its module parameters.
    pub fn from_name(name: &str) -> Option<Driver> {
        Driver::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl fmt::Display for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A moderation module parameter of the e1000 family (e1000_param.c and e1000e/param.c define
/// the same five).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModuleParam {
    /// Interrupts/s, or a mode: 0 off, 1 dynamic, 3 dynamic conservative, 4 simplified.
    InterruptThrottleRate,
    /// Tx packet delay timer (TIDV), 1.024 µs ticks; 0 stops requesting delayed Tx interrupts.
    TxIntDelay,
    /// Tx absolute delay timer (TADV), 1.024 µs ticks.
    TxAbsIntDelay,
    /// Rx packet delay timer (RDTR), 1.024 µs ticks.
    RxIntDelay,
    /// Rx absolute delay timer (RADV), 1.024 µs ticks.
    RxAbsIntDelay,
}

/// Catalog keys, `[driver][parameter]` in declaration order
/// (crates/core/src/catalog/data/modparams.toml).
const MODULE_KEYS: [[&str; 5]; 2] = [
    [
        "e1000.InterruptThrottleRate",
        "e1000.TxIntDelay",
        "e1000.TxAbsIntDelay",
        "e1000.RxIntDelay",
        "e1000.RxAbsIntDelay",
    ],
    [
        "e1000e.InterruptThrottleRate",
        "e1000e.TxIntDelay",
        "e1000e.TxAbsIntDelay",
        "e1000e.RxIntDelay",
        "e1000e.RxAbsIntDelay",
    ],
];

impl ModuleParam {
    /// Every parameter, in declaration order.
    pub const ALL: [ModuleParam; 5] = [
        ModuleParam::InterruptThrottleRate,
        ModuleParam::TxIntDelay,
        ModuleParam::TxAbsIntDelay,
        ModuleParam::RxIntDelay,
        ModuleParam::RxAbsIntDelay,
    ];

    /// The parameter's name as modprobe takes it.
    pub fn name(self) -> &'static str {
        match self {
            ModuleParam::InterruptThrottleRate => "InterruptThrottleRate",
            ModuleParam::TxIntDelay => "TxIntDelay",
            ModuleParam::TxAbsIntDelay => "TxAbsIntDelay",
            ModuleParam::RxIntDelay => "RxIntDelay",
            ModuleParam::RxAbsIntDelay => "RxAbsIntDelay",
        }
    }

    /// A short label: `ITR` (the catalog's short alias) for the throttle rate, else the name.
    pub fn short(self) -> &'static str {
        match self {
            ModuleParam::InterruptThrottleRate => "ITR",
            other => other.name(),
        }
    }
}

impl Knob {
    /// The canonical catalog key, as `nictune apply` and profiles spell it.
    pub fn key(self) -> &'static str {
        match self {
            Knob::RxUsecs => "coalesce.rx-usecs",
            Knob::RxFrames => "coalesce.rx-frames",
            Knob::TxUsecs => "coalesce.tx-usecs",
            Knob::AdaptiveRx => "coalesce.adaptive-rx",
            Knob::AdaptiveTx => "coalesce.adaptive-tx",
            Knob::CombinedChannels => "channel.combined",
            Knob::DeferHardIrqs => "napi.defer-hard-irqs",
            Knob::GroFlushTimeout => "napi.gro-flush-timeout",
            Knob::IrqSuspendTimeout => "napi.irq-suspend-timeout",
            Knob::BusyRead => "sysctl.net.core.busy_read",
            Knob::BusyPoll => "sysctl.net.core.busy_poll",
            Knob::Module(driver, param) => MODULE_KEYS[driver as usize][param as usize],
        }
    }

    /// A short name for labels in tables and plots.
    pub fn short(self) -> &'static str {
        match self {
            Knob::RxUsecs => "rx-usecs",
            Knob::RxFrames => "rx-frames",
            Knob::TxUsecs => "tx-usecs",
            Knob::AdaptiveRx => "adaptive-rx",
            Knob::AdaptiveTx => "adaptive-tx",
            Knob::CombinedChannels => "channels",
            Knob::DeferHardIrqs => "defer",
            Knob::GroFlushTimeout => "gro-flush",
            Knob::IrqSuspendTimeout => "irq-suspend",
            Knob::BusyRead => "busy_read",
            Knob::BusyPoll => "busy_poll",
            Knob::Module(_, param) => param.short(),
        }
    }

    /// Whether the setting is host-wide rather than per interface (journaled all the same).
    /// A module parameter is neither: it applies to every port of its driver (see
    /// [`Knob::needs_reload`] and [`Knob::driver`]).
    pub fn is_host_wide(self) -> bool {
        matches!(self, Knob::BusyRead | Knob::BusyPoll)
    }

    /// Whether the setting takes effect only by unloading and loading the driver again (a
    /// module parameter), which drops the link of every port the driver has.
    pub fn needs_reload(self) -> bool {
        matches!(self, Knob::Module(..))
    }

    /// The driver whose module parameter this is.
    pub fn driver(self) -> Option<Driver> {
        match self {
            Knob::Module(driver, _) => Some(driver),
            _ => None,
        }
    }

    /// Whether `value` changes something from the simplest state: a non-zero time or count or
    /// a switch on; for a module parameter, any value but the driver's default (the catalog's),
    /// since 0 there is a choice too (InterruptThrottleRate 0 turns throttling off).
    pub fn is_active(self, value: KnobValue) -> bool {
        match (self, value) {
            (Knob::Module(driver, param), KnobValue::Count(n)) => {
                module_default(driver, param) != Some(n)
            }
            (_, KnobValue::Duration(d)) => d.0 > 0,
            (_, KnobValue::Count(n)) => n > 0,
            (_, KnobValue::Switch(on)) => on,
        }
    }

    /// The value as the catalog writes it: the knob's native unit, no unit suffix.
    pub fn render(self, value: KnobValue) -> String {
        match (self, value) {
            (Knob::GroFlushTimeout | Knob::IrqSuspendTimeout, KnobValue::Duration(d)) => {
                d.0.to_string()
            }
            (_, KnobValue::Duration(d)) => (d.0 / 1_000).to_string(),
            (_, KnobValue::Count(n)) => n.to_string(),
            (_, KnobValue::Switch(true)) => "on".to_string(),
            (_, KnobValue::Switch(false)) => "off".to_string(),
        }
    }

    /// The inverse of [`Knob::render`]: `text` in the knob's native unit (`4` µs for
    /// `rx-usecs`, `20000` ns for `gro-flush-timeout`, `on`/`off` for a switch) as a value;
    /// `None` when it is not one.
    pub fn parse_native(self, text: &str) -> Option<KnobValue> {
        let text = text.trim();
        match self {
            Knob::AdaptiveRx | Knob::AdaptiveTx => match text {
                "on" | "true" | "1" => Some(KnobValue::Switch(true)),
                "off" | "false" | "0" => Some(KnobValue::Switch(false)),
                _ => None,
            },
            Knob::GroFlushTimeout | Knob::IrqSuspendTimeout => {
                Some(KnobValue::Duration(Nanos(text.parse().ok()?)))
            }
            Knob::RxUsecs | Knob::TxUsecs | Knob::BusyRead | Knob::BusyPoll => {
                Some(KnobValue::Duration(Nanos::from_micros(text.parse().ok()?)))
            }
            Knob::RxFrames | Knob::CombinedChannels | Knob::DeferHardIrqs | Knob::Module(..) => {
                Some(KnobValue::Count(text.parse().ok()?))
            }
        }
    }
}

/// The settings as found of `knobs`, from a snapshot's entries: each entry is named as the
/// apply engine names a host setting, the key last (`eth0 coalesce.rx-usecs`, `nictune-tb-s
/// eth0 napi[8193] napi.defer-hard-irqs`), its value in the key's native unit. An entry whose
/// value does not parse is left out.
pub fn found_settings<'a>(
    entries: impl IntoIterator<Item = (&'a str, String)>,
    knobs: &[Knob],
) -> Vec<Setting> {
    let mut found = Vec::new();
    for (name, value) in entries {
        let key = name.rsplit(' ').next().unwrap_or(name);
        let Some(knob) = knobs.iter().copied().find(|k| k.key() == key) else {
            continue;
        };
        if let Some(v) = knob.parse_native(&value) {
            found.push(Setting::new(knob, v));
        }
    }
    found
}

/// The longest wait after `undone` (a previous candidate's settings) went back to their
/// values in a snapshot's `entries`, read as [`found_settings`] reads them: the
/// [`crate::session::Target::settle_time_as_found`] of a target whose snapshot names its
/// settings so, on a port of `driver`.
pub fn settle_time_as_found<'a>(
    driver: Option<Driver>,
    entries: impl IntoIterator<Item = (&'a str, String)>,
    undone: &[Setting],
) -> Nanos {
    let knobs: Vec<Knob> = undone.iter().map(|s| s.knob).collect();
    settle_time(driver, &found_settings(entries, &knobs))
}

impl fmt::Display for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A setting's value, with its unit in its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KnobValue {
    /// A time: timers, timeouts, busy-poll windows.
    Duration(Nanos),
    /// A count: frames, empty polls, channels.
    Count(u64),
    /// On or off.
    Switch(bool),
}

impl fmt::Display for KnobValue {
    /// A compact human form for labels: `20µs`, `2`, `on`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            KnobValue::Duration(d) if d.0 % 1_000 == 0 => write!(f, "{}µs", d.0 / 1_000),
            KnobValue::Duration(d) => write!(f, "{}ns", d.0),
            KnobValue::Count(n) => write!(f, "{n}"),
            KnobValue::Switch(on) => f.write_str(if on { "on" } else { "off" }),
        }
    }
}

/// What stands before a far-end setting's key in ids, result files and labels
/// (`peer:e1000.InterruptThrottleRate`, `peer:ITR=300`).
pub const PEER_PREFIX: &str = "peer:";

/// Which end of the link a setting is made on.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum End {
    /// The host (or testbed end) the tune runs against directly: `--iface`, the guest.
    #[default]
    Local,
    /// The far end, changed through its `nictune serve --allow-changes` (`--both-ends`).
    Peer,
}

impl End {
    /// Whether this is [`End::Local`] (serialised settings leave the end out then).
    pub fn is_local(&self) -> bool {
        *self == End::Local
    }

    /// How reports name the end.
    pub fn label(self) -> &'static str {
        match self {
            End::Local => "this end",
            End::Peer => "peer",
        }
    }
}

/// One setting of one knob, on one end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Setting {
    /// Where it is made; first, so a candidate lists this end's settings before the peer's.
    #[serde(default, skip_serializing_if = "End::is_local")]
    pub end: End,
    /// What is set.
    pub knob: Knob,
    /// To what.
    pub value: KnobValue,
}

impl Setting {
    /// `knob` set to `value` on this end.
    pub fn new(knob: Knob, value: KnobValue) -> Setting {
        Setting {
            end: End::Local,
            knob,
            value,
        }
    }

    /// The same setting on `end`.
    pub fn on(self, end: End) -> Setting {
        Setting { end, ..self }
    }

    /// `KEY=VALUE` as `nictune apply` takes it.
    pub fn to_key_value(&self) -> String {
        format!("{}={}", self.knob.key(), self.knob.render(self.value))
    }

    /// How long after this setting is made at run time on a port of `driver` the port takes
    /// to run as it then stays, with traffic flowing; zero for most.
    ///
    /// e1000 and e1000e `rx-usecs 4` (simplified balancing): `e1000_set_coalesce` writes
    /// 10⁹/(4·256) into the throttle register, whose 16-bit interval field keeps 59,058 units,
    /// ≈15 ms between interrupts, until the watchdog's next pass writes
    /// 2000 + 6000·|tx − rx|/(tx + rx) from the last period's good octets (Linux 6.1
    /// `e1000_ethtool.c`, `e1000e/ethtool.c`; `e1000_watchdog`, `e1000_watchdog_task`). That
    /// pass comes 2 s after the previous one on e1000 (`schedule_delayed_work(..., 2 * HZ)`)
    /// and at the whole second after 2 s on e1000e (`round_jiffies(jiffies + 2 * HZ)`): at
    /// most [`WATCHDOG_SETTLE`] after the change.
    ///
    /// The module parameter `InterruptThrottleRate=4` waits as long after its reload: the
    /// watchdog pass that brings the carrier up sees an idle link and writes 8,000/s, and the
    /// rate for the traffic comes with the next pass, 2 s later (`e1000_check_options` keeps
    /// `itr` 4, so `e1000_configure_rx` first writes the same 16-bit cut; Linux 6.1).
    pub fn settle_time(&self, driver: Driver) -> Nanos {
        let mode_4 = match (self.knob, self.value) {
            (Knob::RxUsecs, KnobValue::Duration(d)) => d == Nanos::from_micros(4),
            (Knob::Module(_, ModuleParam::InterruptThrottleRate), KnobValue::Count(n)) => n == 4,
            _ => false,
        };
        match (mode_4, driver) {
            (true, Driver::E1000 | Driver::E1000e) => WATCHDOG_SETTLE,
            (false, _) => Nanos::ZERO,
        }
    }
}

/// The longest [`Setting::settle_time`] of `settings` on a port of `driver` (a module
/// parameter's own driver for it); zero for a setting whose driver is not known.
pub fn settle_time(driver: Option<Driver>, settings: &[Setting]) -> Nanos {
    let waits = settings
        .iter()
        .filter_map(|s| Some(s.settle_time(s.knob.driver().or(driver)?)));
    waits.max().unwrap_or(Nanos::ZERO)
}

/// The longest wait for an e1000 or e1000e watchdog pass: e1000e's 2 s rounded up to the
/// next whole second ([`Setting::settle_time`]).
pub const WATCHDOG_SETTLE: Nanos = Nanos::from_secs(3);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_simplified_balancing_on_the_e1000_family_waits_for_a_watchdog_pass() {
        let us = |n| Setting::new(Knob::RxUsecs, KnobValue::Duration(Nanos::from_micros(n)));
        for d in Driver::ALL {
            assert_eq!(us(4).settle_time(d), WATCHDOG_SETTLE);
            for n in [0, 1, 3, 10, 125, 500] {
                assert_eq!(us(n).settle_time(d), Nanos::ZERO, "{n} on {d}");
            }
        }
        let defer = Setting::new(Knob::DeferHardIrqs, KnobValue::Count(4));
        assert_eq!(defer.settle_time(Driver::E1000), Nanos::ZERO);
        // The module parameter, by its own driver even where the port's is not known.
        for d in Driver::ALL {
            let itr = |n| {
                let knob = Knob::Module(d, ModuleParam::InterruptThrottleRate);
                Setting::new(knob, KnobValue::Count(n))
            };
            assert_eq!(settle_time(None, &[itr(4)]), WATCHDOG_SETTLE);
            for n in [0, 1, 3, 2000, 8000] {
                assert_eq!(settle_time(None, &[itr(n)]), Nanos::ZERO, "{n} on {d}");
            }
            let delay = Setting::new(
                Knob::Module(d, ModuleParam::TxIntDelay),
                KnobValue::Count(4),
            );
            assert_eq!(settle_time(None, &[delay]), Nanos::ZERO);
        }
        assert_eq!(settle_time(None, &[us(4)]), Nanos::ZERO);
    }

    #[test]
    fn napi_timers_render_in_nanoseconds_and_sysctls_in_microseconds() {
        let gft = Setting::new(
            Knob::GroFlushTimeout,
            KnobValue::Duration(Nanos::from_micros(20)),
        );
        let busy = Setting::new(Knob::BusyRead, KnobValue::Duration(Nanos::from_micros(50)));
        let adaptive = Setting::new(Knob::AdaptiveRx, KnobValue::Switch(true));
        assert_eq!(gft.to_key_value(), "napi.gro-flush-timeout=20000");
        assert_eq!(busy.to_key_value(), "sysctl.net.core.busy_read=50");
        assert_eq!(adaptive.to_key_value(), "coalesce.adaptive-rx=on");
    }

    #[test]
    fn every_knobs_native_text_reads_back_as_its_value() {
        let knobs = [
            Knob::RxUsecs,
            Knob::RxFrames,
            Knob::TxUsecs,
            Knob::AdaptiveRx,
            Knob::AdaptiveTx,
            Knob::CombinedChannels,
            Knob::DeferHardIrqs,
            Knob::GroFlushTimeout,
            Knob::IrqSuspendTimeout,
            Knob::BusyRead,
            Knob::BusyPoll,
            Knob::Module(Driver::E1000, ModuleParam::InterruptThrottleRate),
        ];
        for knob in knobs {
            let values = match knob.parse_native("0").unwrap() {
                KnobValue::Duration(_) => {
                    [0, 4, 20_000].map(|us| KnobValue::Duration(Nanos::from_micros(us)))
                }
                KnobValue::Count(_) => [0, 2, 8000].map(KnobValue::Count),
                KnobValue::Switch(_) => [false, true, true].map(KnobValue::Switch),
            };
            for v in values {
                assert_eq!(knob.parse_native(&knob.render(v)), Some(v), "{knob} {v}");
            }
            assert_eq!(knob.parse_native("fast"), None, "{knob}");
        }
    }

    #[test]
    fn found_settings_pick_the_knobs_asked_for_by_the_key_their_entry_ends_with() {
        let entries = [
            ("local eth0 coalesce.rx-usecs", "4".to_string()),
            (
                "local eth0 napi[8193] napi.defer-hard-irqs",
                "2".to_string(),
            ),
            ("host netns sysctl.net.core.busy_read", "50".to_string()),
            ("eth0 coalesce.rx-frames", "many".to_string()),
        ];
        let found = found_settings(entries.clone(), &[Knob::RxUsecs, Knob::RxFrames]);
        let us = |n| KnobValue::Duration(Nanos::from_micros(n));
        assert_eq!(found, [Setting::new(Knob::RxUsecs, us(4))]);
        let all = found_settings(entries, &[Knob::DeferHardIrqs, Knob::BusyRead]);
        assert_eq!(
            all,
            [
                Setting::new(Knob::DeferHardIrqs, KnobValue::Count(2)),
                Setting::new(Knob::BusyRead, us(50)),
            ]
        );
    }

    #[test]
    fn labels_are_compact() {
        assert_eq!(
            KnobValue::Duration(Nanos::from_micros(100)).to_string(),
            "100µs"
        );
        assert_eq!(KnobValue::Duration(Nanos(1_500)).to_string(), "1500ns");
        assert_eq!(KnobValue::Count(2).to_string(), "2");
    }

    #[test]
    fn module_params_are_keyed_driver_dot_name_and_render_as_integers() {
        for driver in Driver::ALL {
            assert_eq!(Driver::from_name(driver.name()), Some(driver));
            for param in ModuleParam::ALL {
                let knob = Knob::Module(driver, param);
                assert_eq!(knob.key(), format!("{driver}.{}", param.name()));
                assert!(knob.needs_reload() && !knob.is_host_wide());
                assert_eq!(knob.driver(), Some(driver));
            }
        }
        let itr = Knob::Module(Driver::E1000e, ModuleParam::InterruptThrottleRate);
        let tidv = Knob::Module(Driver::E1000, ModuleParam::TxIntDelay);
        assert_eq!(
            Setting::new(itr, KnobValue::Count(2000)).to_key_value(),
            "e1000e.InterruptThrottleRate=2000"
        );
        assert_eq!(
            Setting::new(tidv, KnobValue::Count(0)).to_key_value(),
            "e1000.TxIntDelay=0"
        );
        assert_eq!((itr.short(), tidv.short()), ("ITR", "TxIntDelay"));
        assert_eq!(Driver::from_name("igb"), None);
        assert!(!Knob::RxUsecs.needs_reload());
    }

    #[test]
    fn serde_names_are_kebab_case_and_stable() {
        let knobs = [
            Knob::RxUsecs,
            Knob::BusyPoll,
            Knob::Module(Driver::E1000, ModuleParam::InterruptThrottleRate),
            Knob::Module(Driver::E1000e, ModuleParam::TxAbsIntDelay),
        ];
        let json = serde_json::to_string(&knobs).unwrap();
        assert_eq!(
            json,
            r#"["rx-usecs","busy-poll",{"module":["e1000","interrupt-throttle-rate"]},{"module":["e1000e","tx-abs-int-delay"]}]"#
        );
        let back: Vec<Knob> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, knobs);
    }

    #[test]
    fn a_module_param_at_its_driver_default_turns_nothing_on() {
        let itr = Knob::Module(Driver::E1000, ModuleParam::InterruptThrottleRate);
        let tidv = Knob::Module(Driver::E1000, ModuleParam::TxIntDelay);
        assert!(
            !itr.is_active(KnobValue::Count(3)),
            "dynamic conservative is the default"
        );
        assert!(
            itr.is_active(KnobValue::Count(0)),
            "throttling off is a change"
        );
        assert!(!tidv.is_active(KnobValue::Count(8)));
        assert!(tidv.is_active(KnobValue::Count(0)));
        assert!(!Knob::DeferHardIrqs.is_active(KnobValue::Count(0)));
    }

    #[test]
    fn only_sysctls_are_host_wide() {
        assert!(Knob::BusyPoll.is_host_wide());
        assert!(!Knob::GroFlushTimeout.is_host_wide());
    }
}
