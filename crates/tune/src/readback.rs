//! What a candidate's settings read back as after they were written.
//!
//! The apply engine reads every value back after writing it. A driver may keep the value it
//! had (it accepts the write and ignores it: the setting was *not taken*) or store another
//! one (e1000 turns `rx-usecs` above 4 into a throttle register and reads back 10⁶/ITR: the
//! value was *adjusted*). Either way the host ran at something other than the candidate it
//! was asked for, and the tune must say so: a candidate with a setting not taken was measured
//! at another point and is never recommended; an adjusted one is recommended with the value
//! that was measured.

use crate::knob::{End, KnobValue, Setting, PEER_PREFIX};
use nictune_core::taken::taken;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One host setting whose value read back after a write is not the value written, as the
/// apply engine names it; values as the catalog writes them (`20000`, `on`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostReadBack {
    /// The object written (`eth1`, `eth1 napi[8193]`, `host`).
    pub object: String,
    /// The catalog key (`coalesce.rx-usecs`, `e1000.InterruptThrottleRate`).
    pub key: String,
    /// The value just before the write.
    pub before: String,
    /// The value written.
    pub written: String,
    /// The value read back after the write.
    pub read: String,
}

/// How a setting's read-back differs from the value asked (the rule is core's, shared with
/// `apply`).
pub use nictune_core::taken::Taken;

/// One setting of a candidate whose value read back differs from the value asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadBack {
    /// The setting as the candidate asked for it.
    pub setting: Setting,
    /// Not taken, or adjusted.
    pub taken: Taken,
    /// The value read back (for a setting not taken, the value the host kept).
    pub read: KnobValue,
    /// Where it was read back so (`eth1`, `nictune-tb-s veth0 napi[8193]`).
    pub objects: Vec<String>,
}

impl ReadBack {
    /// The setting with the value that was in place while the candidate was measured.
    pub fn effective(&self) -> Setting {
        Setting {
            value: self.read,
            ..self.setting
        }
    }

    /// `peer:` before a far-end setting's key, as results name it.
    pub fn key(&self) -> String {
        match self.setting.end {
            End::Local => self.setting.knob.key().to_string(),
            End::Peer => format!("{PEER_PREFIX}{}", self.setting.knob.key()),
        }
    }
}

impl fmt::Display for ReadBack {
    /// `coalesce.rx-usecs: asked 125, the driver made it 128`, or `… asked 50, NOT taken (it
    /// kept 0)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let knob = self.setting.knob;
        let (asked, read) = (knob.render(self.setting.value), knob.render(self.read));
        match self.taken {
            Taken::Adjusted => write!(
                f,
                "{}: asked {asked}, the driver made it {read}",
                self.key()
            ),
            Taken::NotTaken => write!(
                f,
                "{}: asked {asked}, NOT taken (it kept {read})",
                self.key()
            ),
        }
    }
}

/// Whether any of `read_back` is a setting not taken.
pub fn any_not_taken(read_back: &[ReadBack]) -> bool {
    read_back.iter().any(|r| r.taken == Taken::NotTaken)
}

/// The read-backs of `settings` (one end's, as a target was asked to make them) from what the
/// host reported: each host entry goes to the setting of its key, per setting the worst
/// outcome (not taken over adjusted) with every object that differed. An entry read back as
/// written, or of a key none of `settings` has (a value put back as found), is no read-back.
pub fn fold(settings: &[Setting], host: &[HostReadBack]) -> Result<Vec<ReadBack>, String> {
    let mut out: Vec<ReadBack> = Vec::new();
    for h in host.iter() {
        let Some(taken) = taken(&h.before, &h.written, &h.read) else {
            continue;
        };
        let Some(setting) = settings.iter().find(|s| s.knob.key() == h.key) else {
            continue;
        };
        let read = setting.knob.parse_native(&h.read).ok_or_else(|| {
            format!(
                "{} {} read back as {:?}, not a value of {}",
                h.object, h.key, h.read, h.key
            )
        })?;
        let object = h.object.clone();
        match out.iter_mut().find(|r| r.setting == *setting) {
            Some(r) => {
                if taken > r.taken {
                    (r.taken, r.read) = (taken, read);
                }
                r.objects.push(object);
            }
            None => out.push(ReadBack {
                setting: *setting,
                taken,
                read,
                objects: vec![object],
            }),
        }
    }
    Ok(out)
}

/// Adds `new` (what one apply of a candidate read back) to `all` (what earlier applies of the
/// same candidate did): per setting the worse outcome stays.
pub fn merge(all: &mut Vec<ReadBack>, new: Vec<ReadBack>) {
    for r in new {
        match all.iter_mut().find(|a| a.setting == r.setting) {
            Some(a) if r.taken > a.taken => *a = r,
            Some(_) => {}
            None => all.push(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knob::Knob;
    use nictune_core::units::Nanos;

    fn entry(object: &str, key: &str, before: &str, written: &str, read: &str) -> HostReadBack {
        HostReadBack {
            object: object.into(),
            key: key.into(),
            before: before.into(),
            written: written.into(),
            read: read.into(),
        }
    }

    #[test]
    fn a_value_kept_is_not_taken_a_value_rounded_is_adjusted_and_not_taken_wins_per_setting() {
        let us = |n| KnobValue::Duration(Nanos::from_micros(n));
        let rx = Setting::new(Knob::RxUsecs, us(125));
        let gft = Setting::new(Knob::GroFlushTimeout, KnobValue::Duration(Nanos(20_000)));
        let host = [
            entry("eth0", "coalesce.rx-usecs", "3", "125", "128"),
            entry(
                "eth0 napi[1]",
                "napi.gro-flush-timeout",
                "0",
                "20000",
                "20000",
            ),
            entry(
                "eth0 napi[2]",
                "napi.gro-flush-timeout",
                "0",
                "20000",
                "19000",
            ),
            entry("eth0 napi[3]", "napi.gro-flush-timeout", "0", "20000", "0"),
            // Put back as found: no setting of the candidate.
            entry("eth0", "napi.defer-hard-irqs", "2", "0", "2"),
        ];
        let got = fold(&[rx, gft], &host).unwrap();
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!((got[0].taken, got[0].read), (Taken::Adjusted, us(128)));
        assert_eq!(got[0].effective().to_key_value(), "coalesce.rx-usecs=128");
        assert_eq!(
            got[0].to_string(),
            "coalesce.rx-usecs: asked 125, the driver made it 128"
        );
        assert_eq!(
            (got[1].taken, got[1].read),
            (Taken::NotTaken, KnobValue::Duration(Nanos(0)))
        );
        assert_eq!(got[1].objects, ["eth0 napi[2]", "eth0 napi[3]"]);
        assert!(any_not_taken(&got));
        let peer = ReadBack {
            setting: gft.on(End::Peer),
            ..got[1].clone()
        };
        assert_eq!(
            peer.to_string(),
            "peer:napi.gro-flush-timeout: asked 20000, NOT taken (it kept 0)"
        );
        let bad = [entry("eth0", "coalesce.rx-usecs", "3", "125", "fast")];
        assert!(fold(&[rx], &bad).is_err());
        let mut all = vec![got[0].clone()];
        merge(
            &mut all,
            vec![ReadBack {
                taken: Taken::NotTaken,
                ..got[0].clone()
            }],
        );
        merge(&mut all, vec![got[0].clone()]);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].taken, Taken::NotTaken);
    }
}
