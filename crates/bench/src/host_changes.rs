//! What `serve --allow-changes IFACE` changes on its own host: a [`ChangeHandler`] over the
//! apply engine. Every change is a journaled transaction in the server's state directory
//! (listed by `nictune status` there, undone by `nictune revert` if the server is killed),
//! on the one interface the operator named; module parameters of its driver only with
//! `--allow-reload`, since a reload takes every port of the driver down for seconds.
//!
//! A session holds the state directory's lock from claim to end, so no `nictune apply` or
//! tune through the same state directory interleaves with the client's changes. It does not
//! take the machine-wide change lock: that would lock out a tune of the other end when both
//! ends share one kernel's mount namespace (two network namespaces of one machine), and the
//! session changes one interface only, never a host-wide setting. It marks itself like a tune (`tunes/<pid>` in the state directory): a server
//! killed with changes in place is then named by the next `nictune apply` there, which
//! refuses until `nictune revert` has run.

use crate::changes::{ChangeHandler, ChangeSession, Changed};
use crate::protocol::Grant;
use nictune_apply::desired::{parse_assignment, parse_request, Desired};
use nictune_apply::journal::RevertBy;
use nictune_apply::plan;
use nictune_apply::state::{Lock, StateDir};
use nictune_apply::txn::{self, Applied, ApplyRequest, TxnClock};
use nictune_host::write::setting::Key;
use nictune_host::write::HostWrite;
use nictune_linux::write::LinuxWriter;
use nictune_tune::readback::HostReadBack;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Changes on this host's interface `iface`, journaled in `state_dir`.
#[derive(Debug, Clone)]
pub struct HostChanges {
    /// The apply engine's state directory: its journal there lets `nictune revert` undo what a
    /// server killed outright left changed.
    pub state_dir: PathBuf,
    /// The one interface clients may change (`serve --allow-changes IFACE`).
    pub iface: String,
    /// The interface's kernel driver (its module parameters are the driver's).
    pub driver: Option<String>,
    /// Module parameters of `driver` may be changed (a driver reload).
    pub reload: bool,
    /// The network namespace the server runs in, as its journals record it (`None` for the
    /// host's own; [`nictune_linux::netns::journal_name`]): a server started with
    /// `ip netns exec NAME` changes NAME's interface, and `nictune revert` must go there.
    pub netns: Option<String>,
}

impl HostChanges {
    /// Changes on `iface` in namespace `netns` (where this process runs), its driver read
    /// from sysfs.
    pub fn new(state_dir: PathBuf, iface: &str, netns: Option<String>, reload: bool) -> Self {
        HostChanges {
            state_dir,
            iface: iface.to_string(),
            driver: nictune_linux::write::module::driver_of(iface),
            reload,
            netns,
        }
    }

    /// Refuses settings outside the grant: host-wide sysctls, module parameters without
    /// `--allow-reload` or of another driver.
    fn check(&self, desired: &[Desired]) -> Result<(), String> {
        for d in desired {
            match &d.key {
                Key::Sysctl(name) => {
                    return Err(format!(
                        "{name} is host-wide; this server lets clients change {} only",
                        self.iface
                    ))
                }
                Key::ModuleParam { module, param } if !self.reload => {
                    return Err(format!(
                        "{module}.{param} needs a reload of the {module} driver; this server \
                         was not started with --allow-reload"
                    ))
                }
                Key::ModuleParam { module, param } if self.driver.as_deref() != Some(module) => {
                    return Err(format!(
                        "{module}.{param} is a parameter of {module}, but {} is driven by {}",
                        self.iface,
                        self.driver.as_deref().unwrap_or("no known driver")
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl ChangeHandler for HostChanges {
    fn grant(&self) -> Grant {
        Grant {
            iface: self.iface.clone(),
            driver: self.driver.clone(),
            reload: self.reload,
            idle_ms: 0,
        }
    }

    fn open(&self, _client: SocketAddr) -> Result<Box<dyn ChangeSession + '_>, String> {
        let state = StateDir::new(&self.state_dir);
        state.ensure().map_err(|e| e.to_string())?;
        let lock = state.try_lock().map_err(|e| e.to_string())?;
        state
            .mark_tune(std::process::id(), txn::now_unix_ms())
            .map_err(|e| format!("marking the session: {e}"))?;
        Ok(Box::new(HostSession {
            handler: self,
            state,
            lock,
            host: LinuxWriter::live(),
            open: Vec::new(),
            clock: TxnClock::default(),
        }))
    }
}

/// One client's session: the locks, and the transactions in place (at most one).
struct HostSession<'a> {
    handler: &'a HostChanges,
    state: StateDir,
    lock: Lock,
    host: LinuxWriter,
    open: Vec<String>,
    clock: TxnClock,
}

impl HostSession<'_> {
    /// A transaction time, strictly increasing so ids stay unique and ordered.
    fn next_ms(&mut self) -> u64 {
        self.clock.next_ms()
    }

    /// The journal's summary of change `id`.
    fn summary(&self, id: &str) -> Result<nictune_apply::journal::Summary, String> {
        let txn = self.state.transaction(id).map_err(|e| e.to_string())?;
        txn.ok_or_else(|| format!("the journal of change {id} is gone"))
    }

    /// Reverts the transactions in place, newest first; one line per setting restored.
    fn revert_open(&mut self) -> Result<Vec<String>, String> {
        let mut lines = Vec::new();
        while let Some(id) = self.open.last().cloned() {
            let summary = &self.summary(&id)?;
            let now = self.next_ms();
            let pid = std::process::id();
            let reverted = txn::revert(
                &self.state,
                &self.lock,
                summary,
                &mut self.host,
                RevertBy::User,
                pid,
                now,
            )
            .map_err(|e| e.to_string())?;
            for r in &reverted.restored {
                let got = r.effective.as_ref().map_or("?".into(), |v| v.to_string());
                lines.push(format!("{} = {got}", r.setting));
            }
            if !reverted.complete {
                return Err(format!(
                    "change {id}: some values could not be restored ({})",
                    lines.join(", ")
                ));
            }
            self.open.pop();
        }
        Ok(lines)
    }
}

impl ChangeSession for HostSession<'_> {
    fn read(&mut self, keys: &[String]) -> Result<BTreeMap<String, String>, String> {
        let desired = keys
            .iter()
            .map(|k| parse_assignment(&format!("{k}=0")).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        self.handler.check(&desired)?;
        let iface = self.handler.iface.as_str();
        let plan =
            plan::resolve(&desired, Some(iface), &mut self.host).map_err(|e| e.to_string())?;
        let mut settings: Vec<_> = plan.changes.into_iter().map(|c| c.setting).collect();
        settings.extend(plan.unchanged);
        settings
            .into_iter()
            .map(|s| {
                let v = self
                    .host
                    .read(&s)
                    .map_err(|e| format!("reading {s}: {e}"))?;
                Ok((s.to_string(), v.to_string()))
            })
            .collect()
    }

    /// Makes `settings` the session's change. The change in place, if any, is replaced in
    /// one transaction ([`txn::replace_plan`]: a module parameter costs one driver reload,
    /// not a reload back and another forward); the lines name each write with the value
    /// from before the session's changes.
    fn change(&mut self, settings: &[String]) -> Result<Changed, String> {
        let desired = parse_request(settings).map_err(|e| e.to_string())?;
        self.handler.check(&desired)?;
        if desired.is_empty() {
            self.revert_open()?;
            return Ok(Changed::default());
        }
        let open = match self.open.as_slice() {
            [id] => Some(self.summary(id)?),
            _ => {
                self.revert_open()?;
                None
            }
        };
        let iface = self.handler.iface.clone();
        let plan =
            plan::resolve(&desired, Some(&iface), &mut self.host).map_err(|e| e.to_string())?;
        let shown = match &open {
            Some(open) => plan::rebase(&plan, open),
            None => plan.clone(),
        };
        let lines: Vec<String> = shown
            .changes
            .iter()
            .map(|c| format!("{}: {} → {}", c.setting, c.old, c.new))
            .collect();
        let req = ApplyRequest {
            pid: std::process::id(),
            now_unix_ms: self.next_ms(),
            netns: self.handler.netns.clone(),
            iface: Some(iface),
            confirm_within_ms: None,
        };
        let (state, lock) = (&self.state, &self.lock);
        let applied = match &open {
            Some(open) => txn::replace_plan(state, lock, open, &plan, &req, &mut self.host),
            None => txn::apply_plan(state, lock, &plan, &req, &mut self.host),
        }
        .map_err(|e| nictune_core::error::chain(&e))?;
        let read_back = read_back(&plan, applied.as_ref());
        if let Some(a) = applied {
            self.open = vec![a.id];
        }
        Ok(Changed { lines, read_back })
    }

    fn revert(&mut self) -> Result<Vec<String>, String> {
        let lines = self.revert_open()?;
        self.state.unmark_tune_if_clean(std::process::id());
        Ok(lines)
    }
}

/// The requested changes of `plan` (resolved against the host just before the write, so a
/// change's old value is the one the write replaced, even when the transaction replaced an
/// open one) that `applied` read back other than written: kept (read back as before the
/// write) or adjusted. Values put back as found by a replacement are not requested, and not
/// listed.
pub fn read_back(plan: &plan::Plan, applied: Option<&Applied>) -> Vec<HostReadBack> {
    let Some(applied) = applied else {
        return Vec::new();
    };
    plan.changes
        .iter()
        .filter_map(|c| {
            let step = applied.steps.iter().find(|s| s.setting == c.setting)?;
            (step.effective != step.new).then(|| HostReadBack {
                object: c.setting.target.to_string(),
                key: c.setting.key.to_string(),
                before: c.old.to_string(),
                written: step.new.to_string(),
                read: step.effective.to_string(),
            })
        })
        .collect()
}

impl Drop for HostSession<'_> {
    /// Covers a session that ends without its revert (a panic in the session thread).
    fn drop(&mut self) {
        if !self.open.is_empty() {
            let _ = self.revert();
        }
    }
}
