//! Tuning both ends of a link: a [`Target`] that makes each candidate's settings on this end
//! through the local target and on the far end through a [`PeerSide`] (the peer's
//! `nictune serve --allow-changes`, which journals them there and puts them back when the
//! tune releases it, disconnects or falls silent).
//!
//! The peer is changed only when its part of the candidate differs from what it has in
//! place, and put back by one request ([`PeerSide::change`] with nothing), so a candidate
//! that changes one end costs nothing on the other.

use crate::knob::{Driver, End, Knob, Setting};
use crate::readback::{fold, HostReadBack, ReadBack};
use crate::session::{Target, TargetError, TargetOp};
use nictune_core::units::Nanos;
use std::collections::BTreeMap;

/// The far end's settings, changed by its own host.
pub trait PeerSide {
    /// The current values of catalog `keys` on the peer's interface, one entry per object
    /// they expand to (`eth1 napi 8193 gro-flush-timeout` → `20000`).
    fn read(&mut self, keys: &[String]) -> Result<BTreeMap<String, String>, String>;
    /// Puts back what the peer has in place from this tune, then makes `settings`
    /// (`KEY=VALUE`); empty puts back only. Returns the values that read back other than
    /// written (kept or adjusted by the peer's driver).
    fn change(&mut self, settings: &[String]) -> Result<Vec<HostReadBack>, String>;
}

/// What both ends look like: this end's snapshot and the peer's values.
#[derive(Debug, Clone, PartialEq)]
pub struct BothSnapshot<S> {
    /// This end's snapshot, from the local target.
    pub local: S,
    /// The peer's values of the catalog keys candidates set there (`KEY` → value), as
    /// [`PeerSide::read`] returned them.
    pub peer: BTreeMap<String, String>,
}

/// This end through `local`, the far end through `peer`.
#[derive(Debug)]
pub struct BothEnds<T, P> {
    /// The target for this end's settings.
    pub local: T,
    /// The far end, through its `nictune serve --allow-changes`.
    pub peer: Served<P>,
}

impl<T: Target, P: PeerSide> BothEnds<T, P> {
    /// Both ends, for candidates that set `peer_knobs` on the peer.
    pub fn new(local: T, peer: P, peer_knobs: &[Knob]) -> BothEnds<T, P> {
        BothEnds {
            local,
            peer: Served::new(peer, peer_knobs),
        }
    }

    /// The far end's error, named as the far end's.
    fn on_peer(e: TargetError) -> TargetError {
        TargetError {
            object: format!("the peer ({})", e.object),
            ..e
        }
    }
}

impl<T: Target, P: PeerSide> Target for BothEnds<T, P> {
    type Snapshot = BothSnapshot<T::Snapshot>;

    fn snapshot(&mut self) -> Result<Self::Snapshot, TargetError> {
        let local = self.local.snapshot()?;
        let peer = self.peer.snapshot().map_err(Self::on_peer)?;
        Ok(BothSnapshot { local, peer })
    }

    fn apply(&mut self, settings: &[Setting]) -> Result<Vec<ReadBack>, TargetError> {
        let (local, peer) = by_end(settings);
        let mut read_back = Vec::new();
        if !local.is_empty() {
            read_back = self.local.apply(&local)?;
        }
        if !peer.is_empty() {
            read_back.extend(self.peer.apply(&peer).map_err(Self::on_peer)?);
        }
        Ok(read_back)
    }

    fn restore(&mut self, snapshot: &Self::Snapshot) -> Result<(), TargetError> {
        let local = self.local.restore(&snapshot.local);
        let peer = self.peer.restore(&snapshot.peer).map_err(Self::on_peer);
        local.and(peer)
    }

    /// The longer of the two ends' waits (both settle at once).
    fn settle_time(&self, settings: &[Setting]) -> Nanos {
        let (local, peer) = by_end(settings);
        self.local
            .settle_time(&local)
            .max(self.peer.settle_time(&peer))
    }

    /// The same for what went back as found on each end.
    fn settle_time_as_found(&self, snapshot: &Self::Snapshot, undone: &[Setting]) -> Nanos {
        let (local, peer) = by_end(undone);
        let here = self.local.settle_time_as_found(&snapshot.local, &local);
        here.max(self.peer.settle_time_as_found(&snapshot.peer, &peer))
    }
}

/// A candidate's settings split into this end's and the peer's.
fn by_end(settings: &[Setting]) -> (Vec<Setting>, Vec<Setting>) {
    let (peer, local) = settings.iter().partition(|s| s.end == End::Peer);
    (local, peer)
}

/// One end whose settings are made by its own host through a change session
/// ([`PeerSide`]), as the far end of [`BothEnds`] is: the session journals each change there,
/// puts the previous one back before the next, and puts everything back when it ends. A
/// real-driver guest's run-time settings are made this way (its `nictune serve
/// --allow-changes eth0`), so they need no reload and a dropped session restores them.
#[derive(Debug)]
pub struct Served<P> {
    /// The change session.
    pub session: P,
    /// Catalog keys some candidate sets: what the snapshot reads.
    keys: Vec<String>,
    /// The settings in place (`KEY=VALUE`), as far as this target made them.
    now: Vec<String>,
    /// What they read back as where it differs from what was asked (made again for the next
    /// candidate when it asks the same, they still read back so).
    now_read_back: Vec<HostReadBack>,
    /// The driver of the port the session changes, when known: what settles after a change.
    driver: Option<Driver>,
}

impl<P: PeerSide> Served<P> {
    /// The end behind `session`, for candidates that set `knobs`.
    pub fn new(session: P, knobs: &[Knob]) -> Served<P> {
        let mut keys: Vec<String> = knobs.iter().map(|k| k.key().to_string()).collect();
        keys.sort();
        keys.dedup();
        Served {
            session,
            keys,
            now: Vec::new(),
            now_read_back: Vec::new(),
            driver: None,
        }
    }

    /// The same, for a port of `driver` ([`Target::settle_time`] then knows its waits).
    pub fn on_driver(self, driver: Driver) -> Served<P> {
        Served {
            driver: Some(driver),
            ..self
        }
    }

    /// Makes `settings` (`KEY=VALUE`) the change in place, unless they are already; what
    /// they read back as where it differs from what was written.
    fn set(&mut self, op: TargetOp, settings: Vec<String>) -> Result<&[HostReadBack], TargetError> {
        if settings != self.now {
            // Unknown until the host confirms: a failed change was rolled back there.
            self.now = Vec::new();
            let read_back = self
                .session
                .change(&settings)
                .map_err(|reason| TargetError {
                    op,
                    object: match settings.is_empty() {
                        true => "the settings as found".into(),
                        false => settings.join(" "),
                    },
                    reason,
                })?;
            self.now = settings;
            self.now_read_back = read_back;
        }
        Ok(&self.now_read_back)
    }
}

impl<P: PeerSide> Target for Served<P> {
    type Snapshot = BTreeMap<String, String>;

    fn snapshot(&mut self) -> Result<Self::Snapshot, TargetError> {
        self.session.read(&self.keys).map_err(|reason| TargetError {
            op: TargetOp::Snapshot,
            object: self.keys.join(", "),
            reason,
        })
    }

    /// Makes `settings` over the settings as found (the session puts the previous change
    /// back first).
    fn apply(&mut self, settings: &[Setting]) -> Result<Vec<ReadBack>, TargetError> {
        let asked = settings.iter().map(Setting::to_key_value).collect();
        let read_back = self.set(TargetOp::Apply, asked)?;
        fold(settings, read_back).map_err(|reason| TargetError {
            op: TargetOp::Apply,
            object: "the values read back".into(),
            reason,
        })
    }

    /// The session puts back everything it changed; the snapshot is what it found.
    fn restore(&mut self, _: &Self::Snapshot) -> Result<(), TargetError> {
        self.set(TargetOp::Restore, Vec::new()).map(drop)
    }

    fn settle_time(&self, settings: &[Setting]) -> Nanos {
        crate::knob::settle_time(self.driver, settings)
    }

    /// The settle time of the values found (the session's reading, `eth0
    /// coalesce.rx-usecs` → `4`) of the knobs `undone` had set.
    fn settle_time_as_found(&self, snapshot: &Self::Snapshot, undone: &[Setting]) -> Nanos {
        let entries = snapshot.iter().map(|(k, v)| (k.as_str(), v.clone()));
        crate::knob::settle_time_as_found(self.driver, entries, undone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knob::{KnobValue, ModuleParam};

    /// A host as a map of key → value, logging every call.
    #[derive(Debug, Default)]
    struct Host {
        values: BTreeMap<String, String>,
        found: BTreeMap<String, String>,
        calls: Vec<String>,
        /// A key whose writes the peer's driver ignores (it keeps its value).
        keeps: Option<String>,
    }

    impl Host {
        fn with(key: &str, value: &str) -> Host {
            let values = BTreeMap::from([(key.to_string(), value.to_string())]);
            Host {
                found: values.clone(),
                values,
                calls: Vec::new(),
                keeps: None,
            }
        }
    }

    impl Target for Host {
        type Snapshot = BTreeMap<String, String>;
        fn snapshot(&mut self) -> Result<Self::Snapshot, TargetError> {
            Ok(self.values.clone())
        }
        fn apply(&mut self, settings: &[Setting]) -> Result<Vec<ReadBack>, TargetError> {
            for s in settings {
                assert_eq!(
                    s.end,
                    End::Local,
                    "the local target sees this end's settings only"
                );
                self.values
                    .insert(s.knob.key().into(), s.knob.render(s.value));
            }
            self.calls.push(format!("apply {}", settings.len()));
            Ok(Vec::new())
        }
        fn restore(&mut self, snapshot: &Self::Snapshot) -> Result<(), TargetError> {
            self.values = snapshot.clone();
            self.calls.push("restore".into());
            Ok(())
        }
    }

    impl PeerSide for Host {
        /// Each value whose name is the key or ends with it (`eth0 coalesce.rx-usecs`, as a
        /// real session names the objects a key expands to).
        fn read(&mut self, keys: &[String]) -> Result<BTreeMap<String, String>, String> {
            let wanted = |name: &str| keys.iter().any(|k| name.rsplit(' ').next() == Some(k));
            Ok(self
                .values
                .iter()
                .filter(|(name, _)| wanted(name))
                .map(|(name, v)| (name.clone(), v.clone()))
                .collect())
        }
        fn change(&mut self, settings: &[String]) -> Result<Vec<HostReadBack>, String> {
            self.values = self.found.clone();
            let mut read_back = Vec::new();
            for kv in settings {
                let (k, v) = kv.split_once('=').unwrap();
                if v == "bad" {
                    return Err("refused".into());
                }
                let before = self.values.get(k).cloned().unwrap_or_default();
                if self.keeps.as_deref() == Some(k) {
                    read_back.push(HostReadBack {
                        object: "eth0".into(),
                        key: k.into(),
                        written: v.into(),
                        read: before.clone(),
                        before,
                    });
                    continue;
                }
                self.values.insert(k.into(), v.into());
            }
            self.calls.push(format!("change {}", settings.join(" ")));
            Ok(read_back)
        }
    }

    const ITR: Knob = Knob::Module(Driver::E1000, ModuleParam::InterruptThrottleRate);

    #[test]
    fn each_end_gets_its_own_settings_and_the_peer_is_changed_only_when_its_part_differs() {
        let key = ITR.key();
        let mut both = BothEnds::new(Host::with(key, "3"), Host::with(key, "3"), &[ITR]);
        let snap = both.snapshot().unwrap();
        assert_eq!(snap.peer[key], "3");
        let here = Setting::new(ITR, KnobValue::Count(2000));
        let there = here.on(End::Peer);
        both.apply(&[here, there]).unwrap();
        assert_eq!(
            (
                both.local.values[key].as_str(),
                both.peer.session.values[key].as_str()
            ),
            ("2000", "2000")
        );
        // The same peer part again: no request to the peer.
        both.apply(&[Setting::new(ITR, KnobValue::Count(100)), there])
            .unwrap();
        assert_eq!(both.peer.session.calls, [format!("change {key}=2000")]);
        assert_eq!(both.local.values[key], "100");
        both.restore(&snap).unwrap();
        assert_eq!(both.snapshot().unwrap(), snap);
        assert_eq!(both.peer.session.calls.last().unwrap(), "change ");
        // Only the peer: this end is not called.
        let calls = both.local.calls.len();
        both.apply(&[there]).unwrap();
        assert_eq!(both.local.calls.len(), calls);
    }

    #[test]
    fn a_peer_value_its_driver_kept_comes_back_as_not_taken_on_the_peer_end_for_as_long_as_it_is_in_place(
    ) {
        use crate::readback::Taken;
        let key = ITR.key();
        let mut peer = Host::with(key, "3");
        peer.keeps = Some(key.to_string());
        let mut both = BothEnds::new(Host::with(key, "3"), peer, &[ITR]);
        both.snapshot().unwrap();
        let here = Setting::new(ITR, KnobValue::Count(2000));
        let there = here.on(End::Peer);
        let got = both.apply(&[here, there]).unwrap();
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((got[0].setting, got[0].taken), (there, Taken::NotTaken));
        assert_eq!(got[0].read, KnobValue::Count(3));
        assert_eq!(
            got[0].to_string(),
            format!("peer:{key}: asked 2000, NOT taken (it kept 3)")
        );
        // The next candidate leaves the peer's part as it is: no request, the same answer.
        let again = both
            .apply(&[Setting::new(ITR, KnobValue::Count(100)), there])
            .unwrap();
        assert_eq!(both.peer.session.calls.len(), 1);
        assert_eq!(again, got);
        // This end took its value: nothing to say about it.
        assert!(both.apply(&[here]).unwrap().is_empty());
    }

    #[test]
    fn a_refused_peer_change_names_the_peer_and_the_next_change_is_sent_whatever_it_is() {
        let key = ITR.key();
        let mut both = BothEnds::new(Host::with(key, "3"), Host::with(key, "3"), &[ITR]);
        both.snapshot().unwrap();
        let off = Setting::new(ITR, KnobValue::Count(0)).on(End::Peer);
        both.apply(&[off]).unwrap();
        let err = both
            .peer
            .set(TargetOp::Apply, vec![format!("{key}=bad")])
            .map_err(BothEnds::<Host, Host>::on_peer)
            .unwrap_err();
        assert_eq!(err.op, TargetOp::Apply);
        assert!(
            err.object.starts_with("the peer") && err.reason == "refused",
            "{err}"
        );
        // The peer's state is unknown after a failure: the same change as before is sent.
        both.apply(&[off]).unwrap();
        assert_eq!(both.peer.session.calls.len(), 2);
        assert_eq!(both.peer.session.values[key], "0");
    }

    #[test]
    fn a_served_end_reads_its_snapshot_and_is_put_back_by_its_session() {
        let key = ITR.key();
        let mut end = Served::new(Host::with(key, "3"), &[ITR, ITR]);
        let snap = end.snapshot().unwrap();
        assert_eq!(snap, BTreeMap::from([(key.to_string(), "3".to_string())]));
        let rate = Setting::new(ITR, KnobValue::Count(500));
        end.apply(&[rate]).unwrap();
        end.apply(&[rate]).unwrap();
        assert_eq!(end.session.values[key], "500");
        end.restore(&snap).unwrap();
        assert_eq!(end.snapshot().unwrap(), snap);
        // One change per distinct state: the repeat cost nothing, the restore is one request.
        assert_eq!(
            end.session.calls,
            [format!("change {key}=500"), "change ".to_string()]
        );
    }

    #[test]
    fn a_served_end_of_a_known_driver_waits_for_its_settings_to_settle_and_both_ends_the_longer() {
        use crate::knob::WATCHDOG_SETTLE;
        let key = Knob::RxUsecs.key();
        let mode4 = Setting::new(Knob::RxUsecs, KnobValue::Duration(Nanos::from_micros(4)));
        let fixed = Setting::new(Knob::RxUsecs, KnobValue::Duration(Nanos::from_micros(125)));
        let unknown = Served::new(Host::with(key, "3"), &[Knob::RxUsecs]);
        assert_eq!(unknown.settle_time(&[mode4]), Nanos::ZERO);
        let e1000e = unknown.on_driver(Driver::E1000e);
        assert_eq!(e1000e.settle_time(&[fixed, mode4]), WATCHDOG_SETTLE);
        assert_eq!(e1000e.settle_time(&[fixed]), Nanos::ZERO);
        // This end knows no driver; the peer is an e1000 guest.
        let mut both = BothEnds::new(Host::with(key, "3"), Host::with(key, "3"), &[Knob::RxUsecs]);
        both.peer = both.peer.on_driver(Driver::E1000);
        assert_eq!(both.settle_time(&[mode4]), Nanos::ZERO);
        assert_eq!(both.settle_time(&[mode4.on(End::Peer)]), WATCHDOG_SETTLE);
    }

    #[test]
    fn rx_usecs_4_as_found_waits_again_when_a_candidate_that_changed_it_is_undone() {
        use crate::knob::WATCHDOG_SETTLE;
        let fixed = Setting::new(Knob::RxUsecs, KnobValue::Duration(Nanos::from_micros(125)));
        let defer = Setting::new(Knob::DeferHardIrqs, KnobValue::Count(2));
        // As the session reads it: the object, then the key.
        let found = |v: &str| Host::with(&format!("eth0 {}", Knob::RxUsecs.key()), v);
        let mut end = Served::new(found("4"), &[Knob::RxUsecs]).on_driver(Driver::E1000);
        let snap = end.snapshot().unwrap();
        assert_eq!(end.settle_time_as_found(&snap, &[fixed]), WATCHDOG_SETTLE);
        // Nothing that touched rx-usecs was undone, or it was found at a value that does not
        // stall.
        assert_eq!(end.settle_time_as_found(&snap, &[defer]), Nanos::ZERO);
        let mut other = Served::new(found("3"), &[Knob::RxUsecs]).on_driver(Driver::E1000);
        let three = other.snapshot().unwrap();
        assert_eq!(other.settle_time_as_found(&three, &[fixed]), Nanos::ZERO);
        // Both ends: the peer's undone setting is looked up in the peer's values.
        let mut both = BothEnds::new(found("3"), found("4"), &[Knob::RxUsecs]);
        both.peer = both.peer.on_driver(Driver::E1000e);
        let snap = both.snapshot().unwrap();
        assert_eq!(both.settle_time_as_found(&snap, &[fixed]), Nanos::ZERO);
        let undone = [fixed.on(End::Peer)];
        assert_eq!(both.settle_time_as_found(&snap, &undone), WATCHDOG_SETTLE);
    }
}
