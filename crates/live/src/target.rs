//! The live [`Target`]: candidates applied through the apply engine, journaled like any
//! `nictune apply`, on the testbed's two veth ends (per-NAPI keys, inside their namespaces)
//! and on the host (the busy-poll sysctls, which are not per namespace). For `--iface` there
//! are no ends: the interface lives in this process's namespace (the one `--netns` entered,
//! recorded in its journals) and is changed through the same writer as the host.
//!
//! Crash safety: every candidate is its own set of transactions, one per place it touches
//! (server end, client end, this namespace's interface, then the host-wide sysctls). The
//! next candidate replaces each in one step ([`txn::replace_plan`]): the new journal keeps
//! the values from before the first candidate, so only what differs is written (one driver
//! reload for a module parameter, not one back and one forward); a place the next candidate
//! leaves alone is reverted first. At any moment at most one candidate's changes are in
//! place and the open transactions hold the settings as found, so after a crash or `kill
//! -9` `nictune revert` (once per open transaction) puts those back, not a previous
//! candidate's.

use nictune_apply::desired::{parse_assignment, Desired};
use nictune_apply::journal::{RevertBy, Summary};
use nictune_apply::plan;
use nictune_apply::state::{Lock, StateDir};
use nictune_apply::txn::{self, ApplyRequest, TxnClock};
use nictune_bench::host_changes::read_back;
use nictune_core::units::Nanos;
use nictune_host::write::setting::Setting as HostSetting;
use nictune_host::write::value::HostValue;
use nictune_host::write::HostWrite;
use nictune_linux::write::ns::NsHost;
use nictune_linux::write::LinuxWriter;
use nictune_tune::knob::{Driver, Knob, Setting};
use nictune_tune::readback::{fold, HostReadBack, ReadBack};
use nictune_tune::session::{Target, TargetError, TargetOp};

/// One veth end: its namespace's host and its interface.
#[derive(Debug)]
pub struct NsEnd {
    /// The writer running inside the end's network namespace (started with `NsHost::start`);
    /// its namespace name is what the end's journals record and `revert` looks up.
    pub host: NsHost,
    /// The veth interface name inside that namespace, the object of per-interface and
    /// per-NAPI keys.
    pub iface: String,
}

/// The testbed's ends and the host, changed through journaled transactions.
#[derive(Debug)]
pub struct LiveTarget<'a> {
    state: &'a StateDir,
    lock: &'a Lock,
    ends: Vec<NsEnd>,
    /// An interface in this process's namespace, changed through `root` (`--iface`).
    local: Option<String>,
    /// The namespace this process runs in for `local` (`--netns`, or a named one it was
    /// started in), recorded in its journals so `nictune revert` from outside finds the
    /// interface.
    local_netns: Option<String>,
    root: LinuxWriter,
    /// Knobs any candidate sets: what a snapshot reads.
    knobs: Vec<Knob>,
    /// Transactions of the candidate in place, in apply order.
    open: Vec<String>,
    clock: TxnClock,
    /// The driver of `local`, when a tune knows its waits ([`Target::settle_time`]).
    driver: Option<Driver>,
}

/// Every setting a tune may touch, as `<namespace or host> <object> <key>`, with its value.
pub type Values = Vec<(String, HostValue)>;

impl<'a> LiveTarget<'a> {
    /// The target for the testbed: `ends` (server first, then client, as the binary builds
    /// them) plus the host through the live Linux writer, journaling under `state` while
    /// `lock` is held; `knobs` are the knobs any candidate may set, which snapshots read.
    pub fn new(state: &'a StateDir, lock: &'a Lock, ends: Vec<NsEnd>, knobs: Vec<Knob>) -> Self {
        LiveTarget {
            state,
            lock,
            ends,
            local: None,
            local_netns: None,
            root: LinuxWriter::live(),
            knobs,
            open: Vec::new(),
            clock: TxnClock::default(),
            driver: None,
        }
    }

    /// The same, for an interface whose driver is `driver` (its settings' waits to settle).
    pub fn on_driver(mut self, driver: Option<Driver>) -> Self {
        self.driver = driver;
        self
    }

    /// The target for `--iface`: `iface` in this process's namespace (`netns`: named, as
    /// [`nictune_linux::netns::journal_name`] gives it, or `None` for the initial one), no
    /// testbed ends.
    pub fn local(
        state: &'a StateDir,
        lock: &'a Lock,
        (iface, netns): (String, Option<String>),
        knobs: Vec<Knob>,
    ) -> Self {
        let mut target = LiveTarget::new(state, lock, Vec::new(), knobs);
        target.local = Some(iface);
        target.local_netns = netns;
        target
    }

    /// A transaction start time, strictly increasing so ids stay unique and ordered.
    fn next_ms(&mut self) -> u64 {
        self.clock.next_ms()
    }

    /// The journal's summary of transaction `id`.
    fn summary(&self, op: TargetOp, id: &str) -> Result<Summary, TargetError> {
        let txn = self.state.transaction(id).map_err(|e| fail(op, id, e))?;
        txn.ok_or_else(|| fail(op, id, "its journal is gone"))
    }

    /// Reverts the open transactions, newest first.
    fn revert_open(&mut self) -> Result<(), TargetError> {
        while let Some(id) = self.open.last().cloned() {
            self.revert_one(&id)?;
            self.open.pop();
        }
        Ok(())
    }

    /// Reverts transaction `id` on the host it was made on (it stays in `open`).
    fn revert_one(&mut self, id: &str) -> Result<(), TargetError> {
        let summary = &self.summary(TargetOp::Restore, id)?;
        let (pid, now) = (std::process::id(), self.next_ms());
        let (state, lock) = (self.state, self.lock);
        // This process's own namespace: the initial one, or the one `--netns` entered.
        let here = summary.netns.is_none() || summary.netns == self.local_netns;
        let reverted = match summary.netns.as_ref().filter(|_| !here) {
            None => txn::revert(
                state,
                lock,
                summary,
                &mut self.root,
                RevertBy::User,
                pid,
                now,
            ),
            Some(ns) => {
                let end = self.ends.iter_mut().find(|e| e.host.netns() == ns);
                let end = end.ok_or_else(|| fail(TargetOp::Restore, id, "unknown namespace"))?;
                txn::revert(
                    state,
                    lock,
                    summary,
                    &mut end.host,
                    RevertBy::User,
                    pid,
                    now,
                )
            }
        }
        .map_err(|e| fail(TargetOp::Restore, id, e))?;
        if !reverted.complete {
            return Err(fail(
                TargetOp::Restore,
                id,
                "some values could not be restored",
            ));
        }
        if let Some(why) = reverted.unrecorded {
            let why = format!("restored, but the journal could not record it: {why}");
            return Err(fail(TargetOp::Restore, id, why));
        }
        Ok(())
    }

    /// Where each target's transactions are journaled: `(netns, iface)` of end `end`, or of
    /// this namespace with `iface` (`None`: the host-wide settings).
    fn place(&self, end: Option<usize>, iface: Option<&str>) -> (Option<String>, Option<String>) {
        match end {
            None => (
                iface.and(self.local_netns.clone()),
                iface.map(str::to_string),
            ),
            Some(i) => (
                Some(self.ends[i].host.netns().to_string()),
                Some(self.ends[i].iface.clone()),
            ),
        }
    }

    /// Plans `desired` on end `end` (or, for `None`, this namespace with `iface`) and makes
    /// it that place's transaction: replacing the open one there, if any, in one step
    /// ([`txn::replace_plan`]), else applying it on its own. Returns the values that read
    /// back other than written, their objects named with the end's namespace.
    fn apply_on(
        &mut self,
        end: Option<usize>,
        iface: Option<&str>,
        desired: &[Desired],
    ) -> Result<Vec<HostReadBack>, TargetError> {
        let (netns, at) = self.place(end, iface);
        let mut open = None;
        for id in &self.open {
            let s = self.summary(TargetOp::Apply, id)?;
            if s.netns == netns && s.iface == at {
                open = Some(s);
            }
        }
        let now = self.next_ms();
        let (state, lock) = (self.state, self.lock);
        let txn = Txn {
            state,
            lock,
            netns,
            iface: at.as_deref(),
            now_unix_ms: now,
            open: open.as_ref(),
        };
        let (applied, mut differs) = match end {
            None => txn.apply(&mut self.root, desired),
            Some(i) => txn.apply(&mut self.ends[i].host, desired),
        }?;
        if let Some(id) = applied {
            if let Some(old) = &open {
                self.open.retain(|o| o != &old.id);
            }
            self.open.push(id);
        }
        if let Some(i) = end {
            let ns = self.ends[i].host.netns();
            differs
                .iter_mut()
                .for_each(|d| d.object = format!("{ns} {}", d.object));
        }
        Ok(differs)
    }

    /// Reads every setting the knobs expand to, on both ends and the host.
    fn read_all(&mut self) -> Result<Values, TargetError> {
        let knobs = self.knobs.clone();
        let mut values = Values::new();
        for i in 0..self.ends.len() {
            let per_end: Vec<Knob> = knobs
                .iter()
                .copied()
                .filter(|k| !k.is_host_wide())
                .collect();
            let ns = self.ends[i].host.netns().to_string();
            let iface = self.ends[i].iface.clone();
            for (s, v) in read_knobs(&mut self.ends[i].host, Some(&iface), &per_end)? {
                values.push((format!("{ns} {s}"), v));
            }
        }
        if let Some(iface) = self.local.clone() {
            let per_iface: Vec<Knob> = knobs
                .iter()
                .copied()
                .filter(|k| !k.is_host_wide())
                .collect();
            for (s, v) in read_knobs(&mut self.root, Some(&iface), &per_iface)? {
                values.push((format!("local {s}"), v));
            }
        }
        let host_wide: Vec<Knob> = knobs.iter().copied().filter(|k| k.is_host_wide()).collect();
        for (s, v) in read_knobs(&mut self.root, None, &host_wide)? {
            values.push((format!("host {s}"), v));
        }
        Ok(values)
    }
}

/// The settings `knobs` expand to on one host (every NAPI instance of `iface`, say), read.
fn read_knobs(
    host: &mut impl HostWrite,
    iface: Option<&str>,
    knobs: &[Knob],
) -> Result<Vec<(HostSetting, HostValue)>, TargetError> {
    let desired = knobs
        .iter()
        .map(|k| parse_assignment(&format!("{}=0", k.key())))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(TargetOp::Snapshot, "settings", e))?;
    let plan = plan::resolve(&desired, iface, host)
        .map_err(|e| fail(TargetOp::Snapshot, iface.unwrap_or("host"), e))?;
    let mut settings: Vec<HostSetting> = plan.changes.into_iter().map(|c| c.setting).collect();
    settings.extend(plan.unchanged);
    settings.sort();
    settings
        .into_iter()
        .map(|s| {
            let v = host
                .read(&s)
                .map_err(|e| fail(TargetOp::Snapshot, &s.to_string(), e))?;
            Ok((s, v))
        })
        .collect()
}

impl Target for LiveTarget<'_> {
    type Snapshot = Values;

    fn snapshot(&mut self) -> Result<Values, TargetError> {
        self.read_all()
    }

    /// Makes `settings` the candidate in place. Each place (a testbed end, this namespace's
    /// interface, the host-wide settings) keeps one transaction: the last candidate's there
    /// is replaced by this one's in one step, and reverted where this one sets nothing.
    /// Every value written is read back by the apply engine: those that differ from the
    /// value asked (kept as they were, or adjusted) are returned.
    fn apply(&mut self, settings: &[Setting]) -> Result<Vec<ReadBack>, TargetError> {
        let desired = |host_wide: bool| -> Result<Vec<Desired>, TargetError> {
            settings
                .iter()
                .filter(|s| s.knob.is_host_wide() == host_wide)
                .map(|s| {
                    parse_assignment(&s.to_key_value())
                        .map_err(|e| fail(TargetOp::Apply, s.knob.key(), e))
                })
                .collect()
        };
        let per_end = desired(false)?;
        let host_wide = desired(true)?;
        let mut places = Vec::new();
        if !per_end.is_empty() {
            places.extend((0..self.ends.len()).map(|i| self.place(Some(i), None)));
            if let Some(iface) = self.local.clone() {
                places.push(self.place(None, Some(&iface)));
            }
        }
        if !host_wide.is_empty() {
            places.push(self.place(None, None));
        }
        // The last candidate's transactions where this one sets nothing go back first.
        let mut left = Vec::new();
        for id in &self.open {
            let s = self.summary(TargetOp::Apply, id)?;
            if !places.contains(&(s.netns.clone(), s.iface.clone())) {
                left.push(s.id);
            }
        }
        for id in left.iter().rev() {
            self.revert_one(id)?;
            self.open.retain(|o| o != id);
        }
        let mut differs = Vec::new();
        if !per_end.is_empty() {
            for i in 0..self.ends.len() {
                differs.extend(self.apply_on(Some(i), None, &per_end)?);
            }
            if let Some(iface) = self.local.clone() {
                differs.extend(self.apply_on(None, Some(&iface), &per_end)?);
            }
        }
        if !host_wide.is_empty() {
            differs.extend(self.apply_on(None, None, &host_wide)?);
        }
        fold(settings, &differs).map_err(|e| fail(TargetOp::Apply, "the values read back", e))
    }

    fn restore(&mut self, _snapshot: &Values) -> Result<(), TargetError> {
        self.revert_open()
    }

    fn settle_time(&self, settings: &[Setting]) -> Nanos {
        nictune_tune::knob::settle_time(self.driver, settings)
    }

    /// The settle time of `--iface`'s values as found (`local eth0 coalesce.rx-usecs` → 4)
    /// of the knobs `undone` had set; the driver is known for that interface only.
    fn settle_time_as_found(&self, snapshot: &Values, undone: &[Setting]) -> Nanos {
        nictune_tune::knob::settle_time_as_found(self.driver, local_entries(snapshot), undone)
    }
}

/// The snapshot's entries of `--iface`'s interface (`local …`), the one whose driver is known,
/// as [`nictune_tune::knob::found_settings`] reads them.
fn local_entries(snapshot: &Values) -> impl Iterator<Item = (&str, String)> {
    snapshot
        .iter()
        .filter(|(name, _)| name.starts_with("local "))
        .map(|(name, v)| (name.as_str(), v.to_string()))
}

impl Drop for LiveTarget<'_> {
    /// Covers an early return between an apply and the loop's restore.
    fn drop(&mut self) {
        let _ = self.revert_open();
    }
}

/// One journaled transaction on one host, replacing `open` (that place's transaction in
/// place) when there is one.
struct Txn<'a> {
    state: &'a StateDir,
    lock: &'a Lock,
    netns: Option<String>,
    iface: Option<&'a str>,
    now_unix_ms: u64,
    open: Option<&'a Summary>,
}

impl Txn<'_> {
    /// Plans `desired` on `host` and journals it; the new transaction's id, or `None` when
    /// nothing differed (a replaced transaction then stays in place), and the values asked
    /// for that read back other than written.
    fn apply(
        self,
        host: &mut impl HostWrite,
        desired: &[Desired],
    ) -> Result<(Option<String>, Vec<HostReadBack>), TargetError> {
        let object = self.netns.clone().unwrap_or_else(|| "host".into());
        let plan = plan::resolve(desired, self.iface, host)
            .map_err(|e| fail(TargetOp::Apply, &object, e))?;
        let req = ApplyRequest {
            pid: std::process::id(),
            now_unix_ms: self.now_unix_ms,
            netns: self.netns,
            iface: self.iface.map(str::to_string),
            confirm_within_ms: None,
        };
        let applied = match self.open {
            Some(open) => txn::replace_plan(self.state, self.lock, open, &plan, &req, host),
            None => txn::apply_plan(self.state, self.lock, &plan, &req, host),
        }
        .map_err(|e| fail(TargetOp::Apply, &object, nictune_core::error::chain(&e)))?;
        // Against the plan as resolved, not as replaced: its old values are the ones each
        // write replaced (the previous candidate's), so a value kept reads back as one.
        let differs = read_back(&plan, applied.as_ref());
        Ok((applied.map(|a| a.id), differs))
    }
}

fn fail(op: TargetOp, object: &str, reason: impl std::fmt::Display) -> TargetError {
    TargetError {
        op,
        object: object.to_string(),
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_tune::knob::KnobValue;

    #[test]
    fn the_interfaces_values_as_found_are_read_from_its_own_entries_only() {
        let snapshot: Values = vec![
            (
                "nictune-tb-s eth0 coalesce.rx-usecs".into(),
                HostValue::Int(3),
            ),
            ("local eth0 coalesce.rx-usecs".into(), HostValue::Int(4)),
            (
                "local eth0 coalesce.adaptive-rx".into(),
                HostValue::Bool(true),
            ),
            (
                "host netns sysctl.net.core.busy_read".into(),
                HostValue::Int(50),
            ),
        ];
        let knobs = [Knob::RxUsecs, Knob::AdaptiveRx, Knob::BusyRead];
        assert_eq!(
            nictune_tune::knob::found_settings(local_entries(&snapshot), &knobs),
            [
                Setting::new(Knob::RxUsecs, KnobValue::Duration(Nanos::from_micros(4))),
                Setting::new(Knob::AdaptiveRx, KnobValue::Switch(true)),
            ]
        );
    }
}
