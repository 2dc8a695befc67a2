//! Fault injection: every file operation of `apply` and of `revert` (the lock directory, the
//! journal's create, appends, fsyncs, the directory fsync, reads, listing) is failed in
//! turn through `FaultyFs`, with the failing write refused outright or torn half-way, against
//! the fake host. At each point:
//!
//! - the exit-code contract holds for what the call returned: success leaves every new value
//!   in place; `Left::Nothing` (exit 2) wrote nothing; `Left::AllPutBack` (exit 3) left the
//!   host as it was; `Left::SomeChanged` (exit 4) names exactly the settings still changed;
//! - afterwards `revert` with working I/O, run until nothing is left to revert, brings the
//!   host back to exactly where it was and leaves no change needing recovery
//!   (apply∘revert = identity).
//!
//! The apply walk runs twice more with a device that stops answering as soon as the fault
//! fires, so rollbacks that cannot finish (exit 4) are walked too.

mod common;

use common::{host, request, IF};
use nictune_apply::desired::parse_assignment;
use nictune_apply::engine::Left;
use nictune_apply::fake::FakeWriter;
use nictune_apply::fs::{FaultyFs, WriteFault};
use nictune_apply::journal::RevertBy;
use nictune_apply::plan::{resolve, Plan};
use nictune_apply::state::{needing_recovery, revertible, StateDir, StateError};
use nictune_apply::txn::{apply_plan, revert, Applied, Reverted, TxnError};
use nictune_host::write::setting::Setting;
use nictune_host::write::value::HostValue;
use nictune_host::write::{HostError, HostErrorKind, HostWrite, Op};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

/// Five steps in five stages, and a channel change whose RPS side effect is preserved.
const SETTINGS: [&str; 5] = [
    "channels.combined=4",
    "ring.rx=512",
    "feature.gro=off",
    "coalesce.rx-usecs=20",
    "sysctl.net.core.somaxconn=1",
];

const MODES: [WriteFault; 2] = [WriteFault::Refused, WriteFault::Torn];

fn plan() -> Plan {
    let d: Vec<_> = SETTINGS
        .iter()
        .map(|a| parse_assignment(a).unwrap())
        .collect();
    resolve(&d, Some(IF), &mut host()).unwrap()
}

/// The fake host, refusing every write once the injected file fault has fired when `breaks`
/// (the device stopped answering at the worst moment).
#[derive(Debug)]
struct Device<'a> {
    host: &'a mut FakeWriter,
    fs: FaultyFs,
    breaks: bool,
}

impl HostWrite for Device<'_> {
    fn napi_count(&mut self, iface: &str) -> Result<u32, HostError> {
        self.host.napi_count(iface)
    }
    fn queue_counts(&mut self, iface: &str) -> Result<(u32, u32), HostError> {
        self.host.queue_counts(iface)
    }
    fn read(&mut self, setting: &Setting) -> Result<HostValue, HostError> {
        self.host.read(setting)
    }
    fn limit(&mut self, setting: &Setting) -> Result<Option<u64>, HostError> {
        self.host.limit(setting)
    }
    fn write(&mut self, setting: &Setting, value: &HostValue) -> Result<(), HostError> {
        if self.breaks && self.fs.fired() {
            let why = HostErrorKind::Rejected("the device stopped answering".into());
            return Err(HostError::new(Op::Write, setting, why));
        }
        self.host.write(setting, value)
    }
}

/// `nictune apply` with its file operations going through `fs`: the lock, then the plan.
fn apply_with(
    dir: &Path,
    fs: &FaultyFs,
    device: &mut Device<'_>,
) -> Result<Option<Applied>, TxnError> {
    let state = StateDir::with_fs(dir, Arc::new(fs.clone()));
    let lock = state.try_lock()?;
    apply_plan(&state, &lock, &plan(), &request(), device)
}

/// `nictune revert` with its file operations going through `fs`.
fn revert_with(dir: &Path, fs: &FaultyFs, h: &mut FakeWriter) -> Result<Reverted, StateError> {
    let state = StateDir::with_fs(dir, Arc::new(fs.clone()));
    let lock = state.try_lock()?;
    let all = state.transactions()?;
    let txn = revertible(&all).expect("the applied change is revertible");
    revert(&state, &lock, txn, h, RevertBy::User, 2, 5_000)
}

/// `nictune revert` with working I/O until nothing is left to revert; then the host must be
/// as it was and no change may need recovery.
fn assert_revert_recovers(
    dir: &Path,
    h: &mut FakeWriter,
    before: &BTreeMap<Setting, HostValue>,
    at: &str,
) {
    let state = StateDir::new(dir);
    let lock = state.try_lock().unwrap();
    for n in 0.. {
        assert!(n < 5, "{at}: revert never ran out of changes to revert");
        let all = state.transactions().unwrap();
        let Some(txn) = revertible(&all) else { break };
        let r = revert(&state, &lock, txn, h, RevertBy::User, 3, 9_000 + n).unwrap();
        assert!(r.complete && r.unrecorded.is_none(), "{at}: {r:?}");
    }
    assert_eq!(h.state(), before, "{at}: revert did not restore the host");
    let all = state.transactions().unwrap();
    let left = needing_recovery(&all, 20_000, |_, _| false);
    assert!(left.is_empty(), "{at}: still needing recovery: {left:?}");
}

/// Settings whose values differ between two host states.
fn differing<'a>(
    a: &'a BTreeMap<Setting, HostValue>,
    b: &BTreeMap<Setting, HostValue>,
) -> BTreeSet<&'a Setting> {
    a.iter()
        .filter(|(s, v)| b.get(*s) != Some(*v))
        .map(|(s, _)| s)
        .collect()
}

/// The exit-code contract for one failed (or not) apply; returns its class for the tally.
fn assert_contract(
    result: &Result<Option<Applied>, TxnError>,
    h: &FakeWriter,
    (before, after): (&BTreeMap<Setting, HostValue>, &BTreeMap<Setting, HostValue>),
    at: &str,
) -> &'static str {
    let e = match result {
        Ok(applied) => {
            assert!(applied.is_some(), "{at}");
            assert_eq!(h.state(), after, "{at}: success with values missing");
            return "applied";
        }
        Err(e) => e,
    };
    match e.left() {
        Left::Nothing => {
            assert_eq!(h.writes, 0, "{at}: exit 2 after a write: {e}");
            assert_eq!(h.state(), before, "{at}: {e}");
            "nothing changed (exit 2)"
        }
        Left::AllPutBack => {
            assert_eq!(h.state(), before, "{at}: exit 3 with values changed: {e}");
            "rolled back (exit 3)"
        }
        Left::SomeChanged => {
            let TxnError::Apply { source, .. } = e else {
                panic!("{at}: only an apply leaves values changed: {e}");
            };
            let named: BTreeSet<&Setting> = source.still_changed().into_iter().collect();
            assert_eq!(named, differing(h.state(), before), "{at}: {e}");
            let text = format!("{source}");
            for s in named {
                assert!(text.contains(&s.to_string()), "{at}: {s} unnamed in {text}");
            }
            "values still changed (exit 4)"
        }
    }
}

#[test]
fn every_file_fault_during_apply_keeps_the_exit_code_contract_and_revert_recovers() {
    let (before, after) = {
        let mut h = host();
        let before = h.state().clone();
        let dir = tempfile::tempdir().unwrap();
        StateDir::new(dir.path())
            .try_lock()
            .map(|lock| {
                let state = StateDir::new(dir.path());
                apply_plan(&state, &lock, &plan(), &request(), &mut h).unwrap();
            })
            .unwrap();
        (before, h.state().clone())
    };
    let points = {
        let dir = tempfile::tempdir().unwrap();
        let fs = FaultyFs::counting();
        let mut h = host();
        let mut device = Device {
            host: &mut h,
            fs: fs.clone(),
            breaks: false,
        };
        apply_with(dir.path(), &fs, &mut device).unwrap();
        fs.seen()
    };
    assert!(points.len() > 20, "{points:?}");
    let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
    for breaks in [false, true] {
        for mode in MODES {
            for (n, op) in points.iter().enumerate() {
                let at = format!("apply, {op:?} #{n} fails ({mode:?}), device breaks: {breaks}");
                let dir = tempfile::tempdir().unwrap();
                let fs = FaultyFs::failing(Some(n), mode);
                let mut h = host();
                let mut device = Device {
                    host: &mut h,
                    fs: fs.clone(),
                    breaks,
                };
                let result = apply_with(dir.path(), &fs, &mut device);
                assert!(fs.fired(), "{at}: the fault was never reached");
                *tally
                    .entry(assert_contract(&result, &h, (&before, &after), &at))
                    .or_default() += 1;
                assert_revert_recovers(dir.path(), &mut h, &before, &at);
            }
        }
    }
    eprintln!("{} injection points of apply: {tally:?}", points.len());
    assert_eq!(tally.len(), 4, "every outcome was reached: {tally:?}");
}

#[test]
fn every_file_fault_during_revert_still_restores_or_changes_nothing_and_a_later_revert_finishes() {
    let applied = |dir: &Path, h: &mut FakeWriter| {
        let state = StateDir::new(dir);
        let lock = state.try_lock().unwrap();
        apply_plan(&state, &lock, &plan(), &request(), h).unwrap();
    };
    let before = host().state().clone();
    let points = {
        let dir = tempfile::tempdir().unwrap();
        let mut h = host();
        applied(dir.path(), &mut h);
        let fs = FaultyFs::counting();
        revert_with(dir.path(), &fs, &mut h).unwrap();
        fs.seen()
    };
    let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
    for mode in MODES {
        for (n, op) in points.iter().enumerate() {
            let at = format!("revert, {op:?} #{n} fails ({mode:?})");
            let dir = tempfile::tempdir().unwrap();
            let mut h = host();
            applied(dir.path(), &mut h);
            let after = h.state().clone();
            let fs = FaultyFs::failing(Some(n), mode);
            let outcome = match revert_with(dir.path(), &fs, &mut h) {
                Err(e) => {
                    assert_eq!(h.state(), &after, "{at}: an error after writes: {e}");
                    "refused before any write (exit 2)"
                }
                Ok(r) if r.unrecorded.is_some() => {
                    assert_eq!(h.state(), &before, "{at}: {r:?}");
                    "restored, journal not closed (exit 2)"
                }
                Ok(r) => {
                    assert!(r.complete, "{at}: {r:?}");
                    assert_eq!(h.state(), &before, "{at}: {r:?}");
                    "restored"
                }
            };
            assert!(fs.fired(), "{at}: the fault was never reached");
            *tally.entry(outcome).or_default() += 1;
            assert_revert_recovers(dir.path(), &mut h, &before, &at);
        }
    }
    eprintln!("{} injection points of revert: {tally:?}", points.len());
    assert_eq!(tally.len(), 3, "every outcome was reached: {tally:?}");
}
