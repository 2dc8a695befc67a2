//! Verify by effect: a moderation setting that promises a most interrupts per second per
//! vector (a fixed InterruptThrottleRate; `rx-usecs` on drivers where it sets the same ITR
//! register) is checked against the interrupts the interface's vectors actually fire, not
//! only against what the driver reads back. On e1000e, `rx-usecs` applied from the default
//! dynamic mode throttles the TX vector only: read-back says it worked, the interrupt rate
//! says it did not.
//!
//! The check needs traffic: a vector that did not fire proves nothing, and says so.

use crate::accounting::{self, read_live, Sample, Work};
use crate::error::Result;
use nictune_apply::desired::Desired;
use nictune_core::units::Nanos;
use nictune_host::write::setting::Key;
use nictune_host::write::value::HostValue;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How far a measured vector may exceed the promised rate before the setting counts as not
/// in effect: timer granularity and counting at the window's edges stay well inside this; a
/// vector the setting does not throttle runs at several times the rate.
pub const TOLERANCE: f64 = 1.3;
/// Below this many interrupts per second on every vector there is too little traffic to
/// tell anything.
pub const MIN_RATE: f64 = 20.0;
/// Drivers whose `rx-usecs` sets an interrupt throttle register: at most 10⁶ / µs
/// interrupts per second per vector (catalog `coalesce.rx-usecs`, e1000 note; igb and ixgbe
/// EITR likewise).
const ITR_USECS_DRIVERS: [&str; 4] = ["e1000", "e1000e", "igb", "ixgbe"];

/// The most interrupts per second per vector a set of settings promises on a port of
/// `driver`, and the setting that promises it; `None` when none promises a fixed cap (modes,
/// adaptive moderation, other keys).
pub fn promised_cap(desired: &[Desired], driver: Option<&str>) -> Option<(f64, String)> {
    desired.iter().find_map(|d| match (&d.key, &d.value) {
        (Key::ModuleParam { module, param }, HostValue::Text(text))
            if param == "InterruptThrottleRate" && driver == Some(module.as_str()) =>
        {
            let n = one_rate(text).filter(|&n| n >= 100)?;
            Some((n as f64, format!("{module}.{param}={n}")))
        }
        (Key::Coalesce(name), HostValue::Int(us))
            if name == "rx-usecs"
                && *us > 0
                && driver.is_some_and(|dr| ITR_USECS_DRIVERS.contains(&dr)) =>
        {
            Some((1e6 / *us as f64, format!("coalesce.rx-usecs={us}")))
        }
        _ => None,
    })
}

/// A module parameter's value as one number: `2000`, or a per-port list whose entries are
/// all the same (`2000,2000`); `None` for differing per-port values (which port is which
/// is the driver's probe order) or anything else.
fn one_rate(text: &str) -> Option<u64> {
    let mut values = text.split(',').map(|v| v.trim().parse::<u64>().ok());
    let first = values.next()??;
    values.all(|v| v == Some(first)).then_some(first)
}

/// What the check found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum EffectVerdict {
    /// Every vector that fired stayed within the cap.
    InEffect,
    /// These vectors fired faster than the cap allows.
    NotInEffect {
        /// `<irq>:<name> <rate>/s` for each vector above the cap (with the tolerance).
        over: Vec<String>,
    },
    /// Too little traffic to tell.
    NoTraffic,
}

/// One interface's check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effect {
    /// The interface checked.
    pub iface: String,
    /// The setting that promises the cap.
    pub setting: String,
    /// The promised ceiling per vector, interrupts per second (e.g. from
    /// `InterruptThrottleRate`).
    pub cap_per_sec: f64,
    /// The interface's vectors (`"<irq>:<name>"`) and their measured interrupts per second.
    pub vectors_per_sec: BTreeMap<String, f64>,
    /// Length of the measured window the rates come from, seconds.
    pub window_s: f64,
    /// The verdict, flattened into this object's JSON (`"verdict": "in_effect"`, ...).
    #[serde(flatten)]
    pub verdict: EffectVerdict,
}

impl Effect {
    /// Judges measured `vectors` against `cap`.
    pub fn judge(
        iface: &str,
        (cap, setting): (f64, String),
        vectors: BTreeMap<String, f64>,
        window: Duration,
    ) -> Effect {
        let over: Vec<String> = vectors
            .iter()
            .filter(|(_, &rate)| rate > cap * TOLERANCE)
            .map(|(v, rate)| format!("{v} {rate:.0}/s"))
            .collect();
        let verdict = if !over.is_empty() {
            EffectVerdict::NotInEffect { over }
        } else if vectors.values().all(|&r| r < MIN_RATE) {
            EffectVerdict::NoTraffic
        } else {
            EffectVerdict::InEffect
        };
        Effect {
            iface: iface.to_string(),
            setting,
            cap_per_sec: cap,
            vectors_per_sec: vectors,
            window_s: window.as_secs_f64(),
            verdict,
        }
    }

    /// One line for a person.
    pub fn line(&self) -> String {
        let cap = format!(
            "{} caps each vector at {:.0}/s",
            self.setting, self.cap_per_sec
        );
        match &self.verdict {
            EffectVerdict::InEffect => {
                let max = self.vectors_per_sec.values().fold(0.0f64, |a, &b| a.max(b));
                format!(
                    "verified by effect on {}: {cap}; its busiest vector fired {max:.0}/s over {:.1} s",
                    self.iface, self.window_s
                )
            }
            EffectVerdict::NotInEffect { over } => format!(
                "warning: NOT in effect on {}: {cap}, but {} fired faster over {:.1} s (read-back \
                 is not proof: on e1000e, rx-usecs from the dynamic mode throttles only the TX \
                 vector; set the module's InterruptThrottleRate instead)",
                self.iface,
                over.join(", "),
                self.window_s
            ),
            EffectVerdict::NoTraffic => format!(
                "not verified by effect on {}: {cap}, but its vectors fired under {MIN_RATE:.0}/s \
                 in {:.1} s (no traffic to tell by); check again under load with \
                 `nictune bench` or `nictune show --interval 1`",
                self.iface, self.window_s
            ),
        }
    }
}

/// Measures `iface`'s vectors for `window` in this process's namespace and judges them
/// against `cap`.
pub fn check(iface: &str, cap: (f64, String), window: Duration) -> Result<Effect> {
    let before = Sample::parse(&read_live(None)?)?;
    let t0 = Instant::now();
    std::thread::sleep(window);
    let after = Sample::parse(&read_live(None)?)?;
    let elapsed = Nanos(t0.elapsed().as_nanos() as u64);
    let names = [iface.to_string()];
    let acc = accounting::account(
        &before,
        &after,
        elapsed,
        crate::sys::user_hz(),
        Work::default(),
        Some(&names),
    );
    Ok(Effect::judge(
        iface,
        cap,
        crate::accounting::rates_by_label(&acc.nic_vectors),
        window,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_apply::desired::parse_request;

    fn desired(args: &[&str]) -> Vec<Desired> {
        parse_request(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn fixed_rates_promise_a_cap_and_modes_do_not() {
        let itr = desired(&["e1000e.InterruptThrottleRate=2000"]);
        assert_eq!(
            promised_cap(&itr, Some("e1000e")),
            Some((2000.0, "e1000e.InterruptThrottleRate=2000".into()))
        );
        assert_eq!(
            promised_cap(&itr, Some("igb")),
            None,
            "another driver's parameter"
        );
        assert_eq!(
            promised_cap(&desired(&["e1000.InterruptThrottleRate=3"]), Some("e1000")),
            None
        );
        let usecs = desired(&["coalesce.rx-usecs=500"]);
        assert_eq!(promised_cap(&usecs, Some("e1000e")).unwrap().0, 2000.0);
        assert_eq!(
            promised_cap(&usecs, Some("mlx5_core")),
            None,
            "a timer, not a rate"
        );
        assert_eq!(
            promised_cap(&desired(&["coalesce.rx-usecs=0"]), Some("igb")),
            None
        );
    }

    #[test]
    fn a_vector_over_the_cap_is_named_and_silence_proves_nothing() {
        let cap = || (500.0, "e1000e.InterruptThrottleRate=500".to_string());
        let w = Duration::from_secs(1);
        let v = |pairs: &[(&str, f64)]| {
            pairs
                .iter()
                .map(|(k, r)| (k.to_string(), *r))
                .collect::<BTreeMap<_, _>>()
        };
        let trap = Effect::judge(
            "eth0",
            cap(),
            v(&[("26:eth0-rx-0", 2100.0), ("27:eth0-tx-0", 480.0)]),
            w,
        );
        assert_eq!(
            trap.verdict,
            EffectVerdict::NotInEffect {
                over: vec!["26:eth0-rx-0 2100/s".into()]
            }
        );
        assert!(
            trap.line().starts_with("warning: NOT in effect on eth0"),
            "{}",
            trap.line()
        );
        let ok = Effect::judge("eth0", cap(), v(&[("26:eth0-rx-0", 498.0)]), w);
        assert_eq!(ok.verdict, EffectVerdict::InEffect);
        assert!(
            ok.line().contains("busiest vector fired 498/s"),
            "{}",
            ok.line()
        );
        let idle = Effect::judge("eth0", cap(), v(&[("26:eth0-rx-0", 3.0)]), w);
        assert_eq!(idle.verdict, EffectVerdict::NoTraffic);
        assert_eq!(
            Effect::judge("eth0", cap(), BTreeMap::new(), w).verdict,
            EffectVerdict::NoTraffic
        );
    }
}
