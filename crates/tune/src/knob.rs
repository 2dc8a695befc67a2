//! The settings a tune can vary, named by their canonical catalog keys, and their values.
//!
//! A [`Knob`] is one host setting (`napi.gro-flush-timeout`, `sysctl.net.core.busy_read`, ...).
//! Its [`Value`] carries its unit in its type; [`Knob::render`] writes it the way the catalog
//! and `nictune apply` read it (nanoseconds for the NAPI timers, microseconds for the busy-poll
//! sysctls and coalescing timers, plain counts, `on`/`off`).

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
            Knob::CombinedChannels => "channels.combined",
            Knob::DeferHardIrqs => "napi.defer-hard-irqs",
            Knob::GroFlushTimeout => "napi.gro-flush-timeout",
            Knob::IrqSuspendTimeout => "napi.irq-suspend-timeout",
            Knob::BusyRead => "sysctl.net.core.busy_read",
            Knob::BusyPoll => "sysctl.net.core.busy_poll",
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
        }
    }

    /// Whether the setting is host-wide rather than per interface (journaled all the same).
    pub fn is_host_wide(self) -> bool {
        matches!(self, Knob::BusyRead | Knob::BusyPoll)
    }

    /// The value as the catalog writes it: the knob's native unit, no unit suffix.
    pub fn render(self, value: Value) -> String {
        match (self, value) {
            (Knob::GroFlushTimeout | Knob::IrqSuspendTimeout, Value::Duration(d)) => {
                d.0.to_string()
            }
            (_, Value::Duration(d)) => (d.0 / 1_000).to_string(),
            (_, Value::Count(n)) => n.to_string(),
            (_, Value::Switch(true)) => "on".to_string(),
            (_, Value::Switch(false)) => "off".to_string(),
        }
    }
}

impl fmt::Display for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A setting's value, with its unit in its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Value {
    /// A time: timers, timeouts, busy-poll windows.
    Duration(Nanos),
    /// A count: frames, empty polls, channels.
    Count(u64),
    /// On or off.
    Switch(bool),
}

impl fmt::Display for Value {
    /// A compact human form for labels: `20µs`, `2`, `on`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Duration(d) if d.0 % 1_000 == 0 => write!(f, "{}µs", d.0 / 1_000),
            Value::Duration(d) => write!(f, "{}ns", d.0),
            Value::Count(n) => write!(f, "{n}"),
            Value::Switch(on) => f.write_str(if on { "on" } else { "off" }),
        }
    }
}

/// One setting of one knob.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Setting {
    /// What is set.
    pub knob: Knob,
    /// To what.
    pub value: Value,
}

impl Setting {
    /// `knob` set to `value`.
    pub fn new(knob: Knob, value: Value) -> Setting {
        Setting { knob, value }
    }

    /// `KEY=VALUE` as `nictune apply` takes it.
    pub fn to_key_value(&self) -> String {
        format!("{}={}", self.knob.key(), self.knob.render(self.value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn napi_timers_render_in_nanoseconds_and_sysctls_in_microseconds() {
        let gft = Setting::new(
            Knob::GroFlushTimeout,
            Value::Duration(Nanos::from_micros(20)),
        );
        let busy = Setting::new(Knob::BusyRead, Value::Duration(Nanos::from_micros(50)));
        let adaptive = Setting::new(Knob::AdaptiveRx, Value::Switch(true));
        assert_eq!(gft.to_key_value(), "napi.gro-flush-timeout=20000");
        assert_eq!(busy.to_key_value(), "sysctl.net.core.busy_read=50");
        assert_eq!(adaptive.to_key_value(), "coalesce.adaptive-rx=on");
    }

    #[test]
    fn labels_are_compact() {
        assert_eq!(
            Value::Duration(Nanos::from_micros(100)).to_string(),
            "100µs"
        );
        assert_eq!(Value::Duration(Nanos(1_500)).to_string(), "1500ns");
        assert_eq!(Value::Count(2).to_string(), "2");
    }

    #[test]
    fn only_sysctls_are_host_wide() {
        assert!(Knob::BusyPoll.is_host_wide());
        assert!(!Knob::GroFlushTimeout.is_host_wide());
    }
}
