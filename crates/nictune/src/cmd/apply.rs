//! `nictune apply`, `confirm`, `revert`, `status`: changes as journaled transactions.
//!
//! Arguments are checked first without touching the system (settings, profile, duration,
//! namespace name); then the state directory is checked for leftovers, the lock taken, the
//! namespace entered, the plan resolved against the host, and only then is anything written.

mod paced;
pub(crate) mod render;
pub(crate) mod watchdog;

use crate::output::{
    Ctx, ExitWith, HintExt, Outcome, EXIT_ERROR, EXIT_NEEDS_ROOT, EXIT_PARTIAL_NOT_ROLLED_BACK,
    EXIT_PARTIAL_ROLLED_BACK,
};
use anyhow::{bail, Context, Result};
use nictune_apply::desired::{self, Desired};
use nictune_apply::journal::{Phase, RevertBy, Summary};
use nictune_apply::plan;
use nictune_apply::state::{self, StateDir, DEFAULT_STATE_DIR, STATE_DIR_ENV};
use nictune_apply::txn::{self, ApplyRequest};
use nictune_core::error::Hinted;
use nictune_linux::netns;
use nictune_linux::write::{detach, guard, LinuxWriter};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where journals and the lock live.
#[derive(Debug, Clone, clap::Args)]
pub struct StateArgs {
    /// State directory for journals and the change lock.
    #[arg(long, env = STATE_DIR_ENV, hide_env_values = true, default_value = DEFAULT_STATE_DIR, value_name = "DIR")]
    pub state_dir: PathBuf,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  nictune apply --iface eth1 coalesce.rx-usecs=50 --dry-run
  nictune apply --netns lab --iface v0 napi.gro-flush-timeout=20000 napi.defer-hard-irqs=2 \\
      --confirm-within 30s
  nictune confirm")]
pub struct Args {
    /// Settings as KEY=VALUE, e.g. napi.gro-flush-timeout=20000, rps.cpus@0=3.
    #[arg(value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// A TOML profile with a [settings] table (and optionally iface, netns).
    #[arg(long, value_name = "FILE", conflicts_with = "settings")]
    pub profile: Option<PathBuf>,
    /// The interface to change.
    #[arg(long, short)]
    pub iface: Option<String>,
    /// Run inside this network namespace (as `ip -n NAME`).
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
    /// Revert automatically unless `nictune confirm` runs within this time (e.g. 30s, 2m).
    #[arg(long, value_name = "DURATION")]
    pub confirm_within: Option<String>,
    /// Print the plan (current → new per setting) and stop.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// Allow changing the interface that carries the default route or this SSH session.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub state: StateArgs,
}

#[derive(Debug, clap::Args)]
pub struct ConfirmArgs {
    #[command(flatten)]
    pub state: StateArgs,
}

#[derive(Debug, clap::Args)]
pub struct RevertArgs {
    #[command(flatten)]
    pub state: StateArgs,
    /// Internal: run as the auto-revert watchdog of this change.
    #[arg(long, hide = true, value_name = "ID")]
    pub watchdog: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub state: StateArgs,
    /// Also list every older change that was rolled back or reverted in full (by default only
    /// the newest 10 of those are shown; open changes and problems always are).
    #[arg(long)]
    pub all: bool,
}

/// What was typed, checked without touching the system.
struct Request {
    settings: Vec<Desired>,
    iface: Option<String>,
    netns: Option<String>,
    confirm_within_ms: Option<u64>,
}

fn check_args(args: &Args) -> Result<Request> {
    let (settings, iface, ns) = match &args.profile {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading profile {}", path.display()))?;
            let p = desired::parse_profile(&text).hint(
                "a profile is TOML: iface = \"eth1\" and a [settings] table of KEY = VALUE",
            )?;
            (p.settings, p.iface, p.netns)
        }
        None => {
            let parsed = desired::parse_request(&args.settings)
                .hint("see `nictune explain KEY` for a setting's unit and range")?;
            (parsed, None, None)
        }
    };
    if settings.is_empty() {
        bail!("nothing to apply: give KEY=VALUE settings or --profile FILE");
    }
    desired::check_unique(&settings).hint("give each setting once")?;
    let netns = args.netns.clone().or(ns);
    if let Some(name) = &netns {
        check_netns_name(name)?;
    }
    let confirm_within_ms = args
        .confirm_within
        .as_deref()
        .map(desired::parse_duration_ms)
        .transpose()
        .hint("e.g. --confirm-within 30s")?;
    Ok(Request {
        settings,
        iface: args.iface.clone().or(iface),
        netns,
        confirm_within_ms,
    })
}

/// A namespace is a plain file name under /run/netns.
pub(crate) fn check_netns_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        let msg = format!(
            "--netns {name:?} is not a namespace name; allowed: a name listed by `ip netns list`"
        );
        return Err(refusal(msg, "create one with `ip netns add NAME`"));
    }
    Ok(())
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    let req = check_args(&args)?;
    let state = StateDir::new(&args.state.state_dir);
    if !args.dry_run {
        if !nictune_linux::write::is_root() {
            let msg = "applying changes needs root (CAP_NET_ADMIN, and write access to /sys, /proc and the state directory)".to_string();
            return Err(ExitWith::wrap(
                refusal(msg, "run it as root, or add --dry-run to see the plan"),
                EXIT_NEEDS_ROOT,
            ));
        }
        refuse_if_unfinished(&state)?;
    }
    let lock = match args.dry_run {
        true => None,
        false => Some(
            state
                .try_lock()
                .hint("wait for it to finish, or see `nictune status`")?,
        ),
    };
    if let Some(name) = &req.netns {
        netns::enter(name).hint("create it with `ip netns add NAME`; entering needs root")?;
    }
    let mut host = paced::paced(LinuxWriter::live());
    let plan = plan::resolve(&req.settings, req.iface.as_deref(), &mut host)
        .hint("nothing was changed; `nictune show` lists what this device supports")?;
    let Some(lock) = lock else {
        ctx.emit(
            "apply",
            &render::PlanBody::new(&plan, true),
            render::plan_text,
        )?;
        return Ok(Outcome::Success);
    };
    if plan.is_noop() {
        ctx.emit(
            "apply",
            &render::PlanBody::new(&plan, false),
            render::plan_text,
        )?;
        return Ok(Outcome::Success);
    }
    refuse_risky(&req, args.force)?;
    let request = ApplyRequest {
        pid: std::process::id(),
        now_unix_ms: now_unix_ms(),
        netns: req.netns.clone(),
        iface: req.iface.clone(),
        confirm_within_ms: req.confirm_within_ms,
    };
    let applied = txn::apply_plan(&state, &lock, &plan, &request, &mut host)
        .map_err(apply_failure)?
        .expect("a non-empty plan is applied");
    let watchdog = match applied.confirm_deadline_unix_ms {
        Some(_) => Some(watchdog::start(&state, &applied.id)?),
        None => None,
    };
    let body = render::AppliedBody {
        plan: &plan,
        applied: &applied,
        watchdog_pid: watchdog,
    };
    ctx.emit("apply", &body, render::applied_text)?;
    Ok(Outcome::Success)
}

/// A failed apply as the error the user sees: its hint and its exit code.
pub(crate) fn apply_failure(e: txn::TxnError) -> anyhow::Error {
    let (hint, code) = failure_hint(&e);
    ExitWith::wrap(anyhow::Error::new(Hinted::new(e, hint)), code)
}

/// What to do after a failed apply, and the exit code: nothing when it rolled back (3),
/// revert when it could not (4).
fn failure_hint(e: &txn::TxnError) -> (&'static str, u8) {
    use nictune_apply::engine::ApplyError;
    match e {
        txn::TxnError::Apply {
            source: ApplyError::RolledBack { .. },
            ..
        } => (
            "every value is back as it was; `nictune status` shows the journal",
            EXIT_PARTIAL_ROLLED_BACK,
        ),
        txn::TxnError::Apply {
            source: ApplyError::RollbackIncomplete { .. },
            ..
        } => (
            "some values are still changed: fix the cause, then run `nictune revert`",
            EXIT_PARTIAL_NOT_ROLLED_BACK,
        ),
        _ => ("see `nictune status`", EXIT_ERROR),
    }
}

/// Refuses to start while an earlier change is unfinished or waiting for confirmation.
pub(crate) fn refuse_if_unfinished(state: &StateDir) -> Result<()> {
    let all = state.transactions()?;
    let attention = state::needing_recovery(&all, now_unix_ms(), detach::alive);
    if let Some(a) = attention.first() {
        let msg = format!(
            "change {} is {} and must be reverted first",
            a.id, a.problem
        );
        return Err(refusal(
            msg,
            "run `nictune revert` to restore the values from before it",
        ));
    }
    if let Some(p) = all
        .iter()
        .find(|s| matches!(s.phase, Phase::Pending { .. }))
    {
        let msg = format!("change {} is waiting for confirmation", p.id);
        return Err(refusal(
            msg,
            "run `nictune confirm` to keep it or `nictune revert` to undo it",
        ));
    }
    Ok(())
}

/// Refuses to touch the interface that carries the default route or this SSH session,
/// including every port of a driver whose module parameters would reload it.
fn refuse_risky(req: &Request, force: bool) -> Result<()> {
    if let Some(iface) = &req.iface {
        refuse_risky_iface(iface, force)?;
    }
    for d in &req.settings {
        if let nictune_apply::setting::Key::ModuleParam { module, .. } = &d.key {
            for port in nictune_linux::write::module::ports_bound(module) {
                refuse_risky_iface(&port, force)
                    .with_context(|| format!("reloading {module} takes {port} down"))?;
            }
        }
    }
    Ok(())
}

/// Refuses `iface` when it carries the default route or this SSH session, unless `force`.
pub(crate) fn refuse_risky_iface(iface: &str, force: bool) -> Result<()> {
    let route4 = std::fs::read_to_string("/proc/net/route").unwrap_or_default();
    let route6 = std::fs::read_to_string("/proc/net/ipv6_route").unwrap_or_default();
    let ssh = std::env::var("SSH_CONNECTION").ok();
    if force || !guard::risky_ifaces(&route4, &route6, ssh.as_deref()).contains(iface) {
        return Ok(());
    }
    let msg = format!(
        "{iface} carries the default route or this SSH session; a bad change could cut you off"
    );
    Err(refusal(
        msg,
        "add --confirm-within 60s so it reverts unless confirmed, and --force to go ahead",
    ))
}

/// A refusal with its way out.
fn refusal(message: String, hint: &str) -> anyhow::Error {
    anyhow::Error::new(Hinted::new(message, hint))
}

pub fn confirm(args: ConfirmArgs, ctx: &Ctx) -> Result<Outcome> {
    let state = StateDir::new(&args.state.state_dir);
    let lock = state.lock_waiting(100).hint("see `nictune status`")?;
    let confirmed = txn::confirm(&state, &lock, now_unix_ms())?;
    let last = state.transactions()?.pop();
    let body = render::ConfirmBody {
        confirmed: confirmed.clone(),
        last: last.as_ref(),
    };
    ctx.emit("confirm", &body, render::confirm_text)?;
    Ok(if confirmed.is_some() {
        Outcome::Success
    } else {
        Outcome::Problems
    })
}

pub fn revert(args: RevertArgs, ctx: &Ctx) -> Result<Outcome> {
    let state = StateDir::new(&args.state.state_dir);
    if let Some(id) = &args.watchdog {
        return watchdog::run(&state, id);
    }
    let all = state.transactions()?;
    let Some(target) = state::revertible(&all) else {
        ctx.emit(
            "revert",
            &render::RevertBody::nothing(),
            render::revert_text,
        )?;
        return Ok(Outcome::Success);
    };
    let lock = state
        .try_lock()
        .hint("another nictune change is running; see `nictune status`")?;
    let reverted = revert_txn(&state, &lock, target, RevertBy::User)?;
    let complete = reverted.complete;
    ctx.emit(
        "revert",
        &render::RevertBody::done(reverted),
        render::revert_text,
    )?;
    Ok(if complete {
        Outcome::Success
    } else {
        Outcome::Problems
    })
}

/// Enters the change's namespace and restores its values.
fn revert_txn(
    state: &StateDir,
    lock: &state::Lock,
    target: &Summary,
    by: RevertBy,
) -> Result<txn::Reverted> {
    let pid = std::process::id();
    if let Some(name) = &target.netns {
        if !Path::new(netns::NETNS_RUN_DIR).join(name).exists() {
            let why = format!("network namespace {name} is gone, and its settings with it");
            return Ok(txn::close_vanished(
                state,
                lock,
                target,
                &why,
                (by, pid, now_unix_ms()),
            )?);
        }
        netns::enter(name).hint("entering a namespace needs root")?;
    }
    let mut host = LinuxWriter::live();
    Ok(txn::revert(
        state,
        lock,
        target,
        &mut host,
        by,
        pid,
        now_unix_ms(),
    )?)
}

pub fn status(args: StatusArgs, ctx: &Ctx) -> Result<Outcome> {
    let state = StateDir::new(&args.state.state_dir);
    let all = state.transactions()?;
    let now = now_unix_ms();
    let body = render::StatusBody::new(&all, now, detach::alive, args.all);
    let problems = !state::needing_recovery(&all, now, detach::alive).is_empty();
    ctx.emit("status", &body, render::status_text)?;
    Ok(if problems {
        Outcome::Problems
    } else {
        Outcome::Success
    })
}

/// Every command calls this first: a journal left by a crash is reported on stderr with the
/// way out. Silent when the state directory does not exist or cannot be read.
pub fn warn_on_leftover_journal() {
    let dir =
        std::env::var_os(STATE_DIR_ENV).map_or_else(|| DEFAULT_STATE_DIR.into(), PathBuf::from);
    let Ok(all) = StateDir::new(dir).transactions() else {
        return;
    };
    for a in state::needing_recovery(&all, now_unix_ms(), detach::alive) {
        eprintln!(
            "warning: nictune change {} is {}: some settings may be half-changed; run \
             `nictune revert` to restore the values from before it (`nictune status` for details)",
            a.id, a.problem
        );
    }
}

pub(crate) fn now_unix_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_apply::engine::ApplyError;

    fn failed(source: ApplyError) -> txn::TxnError {
        txn::TxnError::Apply {
            id: "1795239660000-7".into(),
            source,
        }
    }

    #[test]
    fn a_partial_apply_exits_3_when_rolled_back_and_4_when_not() {
        let rolled_back = failed(ApplyError::RolledBack {
            step: 1,
            cause: "EINVAL".into(),
            restored: Vec::new(),
        });
        let (hint, code) = failure_hint(&rolled_back);
        assert_eq!(code, EXIT_PARTIAL_ROLLED_BACK);
        assert!(hint.contains("back as it was"), "{hint}");
        let stuck = failed(ApplyError::RollbackIncomplete {
            step: 1,
            cause: "EINVAL".into(),
            restored: Vec::new(),
        });
        let (hint, code) = failure_hint(&stuck);
        assert_eq!(code, EXIT_PARTIAL_NOT_ROLLED_BACK);
        assert!(hint.contains("nictune revert"), "{hint}");
        let journal = std::io::Error::other("disk full");
        let nothing = failed(ApplyError::Journal(nictune_apply::journal::JournalError {
            op: "writing",
            path: "/var/lib/nictune/changes/x.jsonl".into(),
            source: journal,
        }));
        assert_eq!(failure_hint(&nothing).1, EXIT_ERROR, "nothing was changed");
    }
}
