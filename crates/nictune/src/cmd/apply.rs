//! `nictune apply`, `confirm`, `revert`, `status`: changes as journaled transactions.
//!
//! Arguments are checked first without touching the system (settings, profile, duration,
//! namespace name); then the state directory is checked for leftovers, the lock taken, the
//! namespace entered, the plan resolved against the host, and only then is anything written.

pub(crate) mod render;
pub(crate) mod watchdog;

use crate::cmd::source::{check_iface_name, check_netns_name};
use crate::output::{
    is_broken_pipe, require_root, Ctx, ExitWith, HintExt, Outcome, EXIT_ERROR,
    EXIT_PARTIAL_NOT_ROLLED_BACK, EXIT_PARTIAL_ROLLED_BACK,
};
use anyhow::{bail, Context, Result};
use nictune_apply::desired::{self, Desired};
use nictune_apply::engine::Left;
use nictune_apply::journal::{Phase, RevertBy, Summary};
use nictune_apply::plan;
use nictune_apply::state::{
    self, LiveLocks, Lock, StateDir, StateError, DEFAULT_STATE_DIR, STATE_DIR_ENV,
};
use nictune_apply::txn::{self, ApplyRequest};
use nictune_bench::cancel::Cancel;
use nictune_bench::testbed;
use nictune_core::duration;
use nictune_core::error::Hinted;
use nictune_core::units::Nanos;
use nictune_linux::netns;
use nictune_linux::write::{detach, guard, LinuxWriter};
use nictune_live::changes::{self, RevertError, Unfinished};
use std::io::Write as _;
use std::path::{Path, PathBuf};

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
// `--connections -5` reaches the flag's own check instead of reading as an unknown flag.
#[command(allow_negative_numbers = true)]
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
    /// Revert automatically unless `nictune confirm` runs within this time: seconds (30) or
    /// with a unit (30s, 2m).
    #[arg(long, value_name = "DURATION", value_parser = duration::arg)]
    pub confirm_within: Option<Nanos>,
    /// Print the plan (current → new per setting) and stop.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// Allow changing the interface that carries the default route or this SSH session.
    #[arg(long)]
    pub force: bool,
    /// Skip the check by effect: counting the interface's interrupts for 1 s against a
    /// throttle rate the settings promise (after a driver reload, once the port passes
    /// traffic again: up to 3 s more). The values are still read back. For callers that
    /// count the interrupts themselves, as `tune` on the real-driver testbed does.
    #[arg(long)]
    pub no_effect_check: bool,
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
            let text = nictune_core::input::read_file(path, nictune_core::input::PROFILE)?;
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
    refuse_reload_in_a_namespace(&settings, netns.as_deref(), netns::in_init())?;
    let iface = args.iface.clone().or(iface);
    if let Some(name) = &iface {
        check_iface_name(name)?;
    }
    let confirm_within_ms = args.confirm_within.map(check_confirm_within).transpose()?;
    Ok(Request {
        settings,
        iface,
        netns,
        confirm_within_ms,
    })
}

/// A module parameter reloads the driver for every namespace: its ports elsewhere go down
/// too, and the ports come back in the host's namespace. Refused with `--netns` or from
/// inside another namespace (`in_init`: whether this process runs in the host's own).
fn refuse_reload_in_a_namespace(
    settings: &[Desired],
    netns: Option<&str>,
    in_init: Option<bool>,
) -> Result<()> {
    let Some(module) = settings.iter().find_map(|d| match &d.key {
        nictune_host::write::setting::Key::ModuleParam { module, .. } => Some(module),
        _ => None,
    }) else {
        return Ok(());
    };
    let inside = match (netns, in_init) {
        (Some(name), _) => format!("--netns {name}"),
        (None, Some(false)) => "a network namespace other than the host's".to_string(),
        _ => return Ok(()),
    };
    Err(anyhow::Error::new(Hinted::new(
        format!(
            "{module}'s parameters reload the driver for the whole machine, not from {inside}: \
             its ports in every namespace go down and come back in the host's"
        ),
        "apply module parameters from the host's own namespace, without --netns; \
         nothing was changed",
    )))
}

/// `--confirm-within`: from 1 ms to a day (the watchdog sleeps that long at most), in ms.
fn check_confirm_within(within: Nanos) -> Result<u64> {
    let day = Nanos::from_secs(86_400);
    duration::in_range("--confirm-within", within, Nanos::MILLI, day)
        .hint("e.g. --confirm-within 30s, or 10m for a slow check")?;
    Ok(within.0.div_ceil(1_000_000))
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    let req = check_args(&args)?;
    let state = StateDir::new(&args.state.state_dir);
    if !args.dry_run {
        require_root(
            ctx.privilege,
            "applying changes needs root (CAP_NET_ADMIN, and write access to /sys, /proc and the state directory)",
            "run it as root, or add --dry-run to see the plan",
        )?;
        refuse_if_unfinished(&state)?;
    }
    let locks = match args.dry_run {
        true => None,
        false => Some(lock_live(&state, 1)?),
    };
    if locks.is_some() {
        // Again under the lock: a change that ended pending while this one waited for it
        // would otherwise be journaled as this change's "old" values.
        refuse_if_unfinished(&state)?;
    }
    if let Some(name) = &req.netns {
        netns::enter(name).hint("create it with `ip netns add NAME`; entering needs root")?;
    }
    let mut host = nictune_linux::write::paced::paced(LinuxWriter::live());
    let plan = plan::resolve(&req.settings, req.iface.as_deref(), &mut host)
        .hint("nothing was changed; `nictune show` lists what this device supports")?;
    let Some(locks) = locks else {
        let mut plan = plan;
        plan.notes.extend(would_refuse(&state, &req, args.force));
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
        netns: journal_netns(req.netns.as_deref())?,
        iface: req.iface.clone(),
        confirm_within_ms: req.confirm_within_ms,
    };
    // From here on INT, TERM and HUP (a closed terminal or SSH session) no longer end the
    // process: the apply rolls back at its next step instead, so nothing stays half-changed.
    let cancel = Cancel::new();
    cancel.on_signals()?;
    let stop = || cancel.is_cancelled();
    // With --confirm-within the watchdog starts before the first write: if this process is
    // killed part-way (OOM, SIGKILL), it puts back what was written, as it does for a change
    // left unconfirmed. Failing to start it stops the change before any write.
    let mut watchdog = None;
    let mut begun = |id: &str| match request.confirm_within_ms {
        Some(_) => watchdog::start_before_writes(&state, id).map(|pid| watchdog = Some(pid)),
        None => Ok(()),
    };
    let applied = txn::apply_plan_begun(
        &state,
        &locks.state,
        &plan,
        &request,
        &mut host,
        &stop,
        &mut begun,
    )
    .map_err(apply_failure)?
    .expect("a non-empty plan is applied");
    // A signal until the report is out means the person is not there to see it (or to
    // confirm): the change is put back, as a signal during the steps does.
    let why = "interrupted by a signal as it finished";
    if cancel.is_cancelled() {
        return revert_unannounced(&state, &locks.state, &applied.id, why);
    }
    let effect = match args.no_effect_check {
        true => Vec::new(),
        false => changes::verify_by_effect(req.iface.as_deref(), &req.settings),
    };
    if cancel.is_cancelled() {
        return revert_unannounced(&state, &locks.state, &applied.id, why);
    }
    let body = render::AppliedBody {
        plan: &plan,
        applied: &applied,
        watchdog_pid: watchdog,
        effect: &effect,
    };
    match ctx.emit("apply", &body, render::applied_text) {
        Err(e) if !is_broken_pipe(&e) => {
            // Nobody learns that the change is in place (a full disk under a redirected
            // stdout, a terminal gone): an error exit must not leave values changed.
            let why = format!("its report could not be written ({e:#})");
            revert_unannounced(&state, &locks.state, &applied.id, &why)
        }
        _ if applied.steps.iter().any(not_taken) => Ok(Outcome::Problems),
        _ => Ok(Outcome::Success),
    }
}

/// A write the host accepted but did not take: the value read back is still the old one.
pub(crate) fn not_taken(step: &nictune_apply::engine::StepResult) -> bool {
    use nictune_core::taken::{taken, Taken};
    taken(&step.old, &step.new, &step.effective) == Some(Taken::NotTaken)
}

/// What would stop this change without `--dry-run`, as notes on the dry run's plan.
fn would_refuse(state: &StateDir, req: &Request, force: bool) -> Vec<nictune_apply::checks::Note> {
    let unfinished = refuse_if_unfinished(state).err();
    let risky = refuse_risky(req, force).err();
    [unfinished, risky]
        .into_iter()
        .flatten()
        .map(|e| nictune_apply::checks::Note {
            settings: Vec::new(),
            message: format!("without --dry-run this change would be refused: {e}"),
        })
        .collect()
}

/// Both locks of a change of the live host (`attempts` × 50 ms to wait for them), with the
/// hint that fits a failure.
pub(crate) fn lock_live(state: &StateDir, attempts: u32) -> Result<LiveLocks> {
    state
        .lock_live(attempts)
        .map_err(|e| state_error(e, state.root()))
}

/// A state-directory error with the hint that fits it.
pub(crate) fn state_error(e: StateError, dir: &Path) -> anyhow::Error {
    let hint = match &e {
        StateError::Busy { holder, .. } => format!(
            "wait for {} to finish; `nictune status` (with its --state-dir) shows its change",
            holder.map_or_else(|| "the other nictune".to_string(), |p| format!("pid {p}"))
        ),
        StateError::NotWritable { .. } => format!(
            "{} (or the lock under /run/nictune) cannot be written here (permissions or a \
             read-only file system): give a writable directory with --state-dir DIR (or \
             NICTUNE_STATE_DIR), or run as root if it belongs to root",
            dir.display()
        ),
        StateError::Untrusted { .. } => "give a directory only you (or root) can write, with \
             --state-dir DIR or NICTUNE_STATE_DIR, or remove the other users' write access"
            .to_string(),
        _ => "see `nictune status`".to_string(),
    };
    anyhow::Error::new(Hinted::new(e, hint))
}

/// Reverts change `id`, just applied, because nobody can be told it is in place (or its
/// watchdog is missing): exit 3 when every value is back, 4 when some are not.
pub(crate) fn revert_unannounced(
    state: &StateDir,
    lock: &Lock,
    id: &str,
    why: &str,
) -> Result<Outcome> {
    let all = state.transactions()?;
    let txn = all
        .iter()
        .find(|s| s.id == id)
        .with_context(|| format!("change {id} has no journal"))?;
    let reverted = revert_txn(state, lock, txn, RevertBy::User)?;
    let message = format!("change {id} was applied, but {why}; it was reverted");
    let (hint, code) = match reverted.complete && reverted.unrecorded.is_none() {
        true => (
            "every value is back as it was; `nictune status` shows the journal",
            EXIT_PARTIAL_ROLLED_BACK,
        ),
        false => (
            "some values may still be changed: run `nictune revert`",
            EXIT_PARTIAL_NOT_ROLLED_BACK,
        ),
    };
    Err(ExitWith::wrap(refusal(message, hint), code))
}

/// A failed apply as the error the user sees: its hint and its exit code.
pub(crate) fn apply_failure(e: txn::TxnError) -> anyhow::Error {
    let (hint, code) = failure_hint(&e);
    ExitWith::wrap(anyhow::Error::new(Hinted::new(e, hint)), code)
}

/// What to do after a failed apply, and the exit code: 2 when nothing was written, 3 when
/// everything written was put back, 4 when some values are still changed.
fn failure_hint(e: &txn::TxnError) -> (&'static str, u8) {
    match e.left() {
        Left::AllPutBack => (
            "every value is back as it was; `nictune status` shows the journal",
            EXIT_PARTIAL_ROLLED_BACK,
        ),
        Left::SomeChanged => (
            "some values are still changed: fix the cause, then run `nictune revert`",
            EXIT_PARTIAL_NOT_ROLLED_BACK,
        ),
        Left::Nothing => ("nothing was changed; see `nictune status`", EXIT_ERROR),
    }
}

/// Refuses to start while an earlier change is unfinished or waiting for confirmation.
pub(crate) fn refuse_if_unfinished(state: &StateDir) -> Result<()> {
    changes::check_finished(state).map_err(unfinished_error)
}

/// An earlier change that blocks this one, with the way out.
pub(crate) fn unfinished_error(e: Unfinished) -> anyhow::Error {
    let hint = match &e {
        Unfinished::State(_) => return anyhow::Error::new(e),
        Unfinished::NeedsRevert(_) => {
            "run `nictune revert` to restore the values from before it (`nictune status` lists \
             what is still in place)"
        }
        Unfinished::Pending(_) => "run `nictune confirm` to keep it or `nictune revert` to undo it",
    };
    anyhow::Error::new(Hinted::new(e, hint))
}

/// What to do about a change [`guard`] refuses.
const RISKY_HINT: &str =
    "add --confirm-within 60s so it reverts unless confirmed, and --force to go ahead";

/// Refuses to touch the interface that carries the default route or this SSH session,
/// including every port of a driver whose module parameters would reload it.
fn refuse_risky(req: &Request, force: bool) -> Result<()> {
    let keys = req.settings.iter().map(|d| &d.key);
    let ports = nictune_linux::write::module::ports_bound;
    guard::check_change(
        &guard::risky_now(),
        req.iface.as_deref(),
        keys,
        ports,
        force,
    )
    .hint(RISKY_HINT)
}

/// Refuses `iface` when it carries the default route or this SSH session, unless `force`.
pub(crate) fn refuse_risky_iface(iface: &str, force: bool) -> Result<()> {
    guard::check_iface(&guard::risky_now(), iface, force).hint(RISKY_HINT)
}

/// A refusal with its way out.
fn refusal(message: String, hint: &str) -> anyhow::Error {
    anyhow::Error::new(Hinted::new(message, hint))
}

pub fn confirm(args: ConfirmArgs, ctx: &Ctx) -> Result<Outcome> {
    let state = StateDir::new(&args.state.state_dir);
    let pending = state
        .transactions()?
        .iter()
        .any(|s| matches!(s.phase, Phase::Pending { .. }));
    let confirmed = match pending {
        true => {
            require_root(
                ctx.privilege,
                "confirming a change needs root (it takes the machine-wide change lock and writes the journal)",
                "run it as root (sudo nictune confirm)",
            )?;
            let locks = lock_live(&state, 100)?;
            txn::confirm(&state, &locks.state, now_unix_ms()).map_err(|e| {
                anyhow::Error::new(Hinted::new(
                    e,
                    "the change is still pending: free space in the state directory and run \
                     `nictune confirm` again before its deadline, or the watchdog reverts it",
                ))
            })?
        }
        false => None,
    };
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
    if state::revertible(&state.transactions()?).is_none() {
        return nothing_to_revert(ctx);
    }
    require_root(
        ctx.privilege,
        "reverting a change needs root (CAP_NET_ADMIN, write access to /sys, /proc and the state directory)",
        "run it as root (sudo nictune revert)",
    )?;
    let locks = lock_live(&state, 1)?;
    // Read again under the locks: what to revert is decided by what nobody else is changing.
    let all = state.transactions()?;
    let Some(newest) = state::revertible(&all) else {
        return nothing_to_revert(ctx);
    };
    // The newest change's process, if that was a tune that no longer runs.
    let owner = newest.owner_pid;
    let killed = state
        .tune_marks()
        .into_iter()
        .find(|m| m.pid == owner && !m.alive(detach::alive_at));
    let group = state::revert_group(&all, killed);
    let killed_tune = killed
        .filter(|m| m.started_unix_ms.is_some())
        .map(|m| m.pid);
    let mut done = Vec::new();
    let mut failed = None;
    for target in &group {
        match revert_txn(&state, &locks.state, target, RevertBy::User) {
            Ok(r) => done.push(r),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let complete = done.iter().all(|r| r.complete);
    let unrecorded: Vec<(String, String)> = done
        .iter()
        .filter_map(|r| Some((r.id.clone(), r.unrecorded.clone()?)))
        .collect();
    let left = group.len() - done.len();
    if !done.is_empty() {
        ctx.emit(
            "revert",
            &render::RevertBody::done(done, killed_tune),
            render::revert_text,
        )?;
    }
    if let Some(e) = failed {
        if group.len() == 1 {
            return Err(e);
        }
        return Err(e.context(format!(
            "{left} of the {} changes the killed tune left in place are not reverted",
            group.len()
        )));
    }
    if let Some((id, why)) = unrecorded.first() {
        let message = format!(
            "change {id}: the values were restored, but the journal could not record it: {why}"
        );
        return Err(refusal(
            message,
            "free space in the state directory and run `nictune revert` again: it writes the \
             same old values and records the revert",
        ));
    }
    if let Some(damage) = group.iter().find_map(|t| state.damage(t)) {
        let hint = "every valid step of the change was restored (the table above) and the \
                    change is closed; nictune never writes such a line, so the file was edited \
                    or damaged: keep it to find out how";
        return Err(ExitWith::wrap(
            anyhow::Error::new(Hinted::new(damage, hint)),
            1,
        ));
    }
    Ok(if complete {
        Outcome::Success
    } else {
        Outcome::Problems
    })
}

fn nothing_to_revert(ctx: &Ctx) -> Result<Outcome> {
    ctx.emit(
        "revert",
        &render::RevertBody::nothing(),
        render::revert_text,
    )?;
    Ok(Outcome::Success)
}

/// The namespace a change is journaled under ([`netns::journal_name`]): `explicit`
/// (`--netns`, already entered), else the one this process runs in.
pub(crate) fn journal_netns(explicit: Option<&str>) -> Result<Option<String>> {
    netns::journal_name(explicit).hint(
        "run it in a named namespace (`ip netns add NAME`, then `ip netns exec NAME nictune …` \
         or --netns NAME), so that `nictune revert` can find it",
    )
}

/// Reverts `target` on the live host ([`changes::revert`]), with the hint for a namespace
/// that cannot be entered.
pub(crate) fn revert_txn(
    state: &StateDir,
    lock: &state::Lock,
    target: &Summary,
    by: RevertBy,
) -> Result<txn::Reverted> {
    changes::revert(state, lock, target, by).map_err(|e| match e {
        RevertError::Enter(e) => {
            anyhow::Error::new(Hinted::new(e, "entering a namespace needs root"))
        }
        RevertError::State(e) => anyhow::Error::new(e),
    })
}

pub fn status(args: StatusArgs, ctx: &Ctx) -> Result<Outcome> {
    let state = StateDir::new(&args.state.state_dir);
    let all = state.transactions()?;
    let problems = changes::problems(&state, &all);
    let facts = render::StatusFacts {
        now: now_unix_ms(),
        problems: &problems,
        undo: undo_command(&args.state.state_dir),
        stale_testbeds: stale_testbeds(),
    };
    let body = render::StatusBody::new(&all, &facts, detach::alive_at, args.all);
    ctx.emit("status", &body, render::status_text)?;
    Ok(if problems.is_empty() {
        Outcome::Success
    } else {
        Outcome::Problems
    })
}

/// Testbed namespaces whose tune is gone (killed: it could not remove them).
fn stale_testbeds() -> Vec<String> {
    testbed::list()
        .into_iter()
        .filter(|n| testbed::is_stale(n))
        .collect()
}

/// `nictune revert`, with `--state-dir` when the directory is not the default (quoted for
/// a POSIX shell when it needs to be).
fn undo_command(state_dir: &Path) -> String {
    if state_dir == Path::new(DEFAULT_STATE_DIR) {
        return "nictune revert".into();
    }
    let dir = state_dir.display().to_string();
    let plain = dir
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:,@".contains(c));
    match plain {
        true => format!("nictune revert --state-dir {dir}"),
        false => format!(
            "nictune revert --state-dir '{}'",
            dir.replace('\'', "'\\''")
        ),
    }
}

/// Every command calls this first: a journal left by a crash (or a killed tune) is reported
/// on stderr with the way out. Silent when the state directory does not exist or cannot be
/// read.
pub fn warn_on_leftover_journal() {
    let dir =
        std::env::var_os(STATE_DIR_ENV).map_or_else(|| DEFAULT_STATE_DIR.into(), PathBuf::from);
    let state = StateDir::new(dir);
    let Ok(all) = state.transactions() else {
        return;
    };
    for a in changes::problems(&state, &all) {
        // Not eprintln!: a closed stderr (the terminal is gone) must not panic here.
        let _ = writeln!(
            std::io::stderr(),
            "warning: nictune change {} is {}: some settings may still be changed; run \
             `nictune revert` to restore the values from before it (`nictune status` for details)",
            a.id,
            a.problem
        );
    }
}

pub(crate) use nictune_apply::txn::now_unix_ms;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_parameters_are_refused_inside_a_namespace_only() {
        let itr = [desired::parse_assignment("e1000.InterruptThrottleRate=2000").unwrap()];
        let napi = [desired::parse_assignment("napi.defer-hard-irqs=2").unwrap()];
        let e = refuse_reload_in_a_namespace(&itr, Some("lab"), Some(true)).unwrap_err();
        assert!(format!("{e}").contains("not from --netns lab"), "{e}");
        let e = refuse_reload_in_a_namespace(&itr, None, Some(false)).unwrap_err();
        assert!(format!("{e}").contains("other than the host's"), "{e}");
        assert!(refuse_reload_in_a_namespace(&itr, None, Some(true)).is_ok());
        assert!(
            refuse_reload_in_a_namespace(&itr, None, None).is_ok(),
            "unknown: allowed"
        );
        assert!(refuse_reload_in_a_namespace(&napi, Some("lab"), Some(false)).is_ok());
    }
    use nictune_apply::engine::ApplyError;
    use nictune_apply::lock::MACHINE_LOCK;

    fn failed(source: ApplyError) -> txn::TxnError {
        txn::TxnError::Apply {
            id: "1795239660000-7".into(),
            source,
        }
    }

    /// Issue #13: `--confirm-within 30` and `30s` mean the same; the window is 1 ms to a day.
    #[test]
    fn confirm_within_reads_bare_seconds_and_units() {
        use clap::Parser;
        #[derive(Debug, Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        for text in ["30", "30s", "0.5m"] {
            let cli = Cli::try_parse_from(["apply", "--confirm-within", text]).unwrap();
            let within = cli.args.confirm_within.unwrap();
            assert_eq!(check_confirm_within(within).unwrap(), 30_000, "{text}");
        }
        assert!(check_confirm_within(Nanos::from_secs(86_401)).is_err());
        assert!(check_confirm_within(Nanos::ZERO).is_err());
        assert_eq!(
            check_confirm_within(Nanos(1_500_000)).unwrap(),
            2,
            "rounds up"
        );
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
        let nothing = failed(ApplyError::NothingChanged {
            cause: "journaling step 1 failed before its write: disk full".into(),
        });
        assert_eq!(failure_hint(&nothing).1, EXIT_ERROR, "nothing was changed");
    }

    #[test]
    fn a_read_only_state_dir_is_named_with_state_dir_and_root_as_the_ways_out() {
        let e = StateError::NotWritable {
            op: "creating",
            path: "/var/lib/nictune/changes".into(),
            source: std::io::Error::from(std::io::ErrorKind::ReadOnlyFilesystem),
        };
        let err = state_error(e, Path::new("/var/lib/nictune"));
        let text = format!("{err:#}");
        assert!(
            text.contains("the state directory is not writable"),
            "{text}"
        );
        let hint = err.downcast_ref::<Hinted>().unwrap().hint();
        assert!(
            hint.contains("--state-dir") && hint.contains("root") && !hint.contains("wait"),
            "{hint}"
        );
        let busy = StateError::Busy {
            path: MACHINE_LOCK.into(),
            holder: Some(4242),
        };
        let err = state_error(busy, Path::new("/var/lib/nictune"));
        assert!(format!("{err:#}").contains("held by pid 4242"), "{err:#}");
        let hint = err.downcast_ref::<Hinted>().unwrap().hint();
        assert!(hint.contains("wait for pid 4242"), "{hint}");
    }
}
