//! `nictune tune --iface IF --peer HOST[:PORT]`: a real interface's tune. The binary enters
//! `--netns` while the process is still single-threaded and refuses the interface that
//! carries the default route or this SSH session (apply's guard, `--force` overrides); then
//! [`nictune_live::tune::iface`] reads the snapshot and the capabilities (the budget is
//! checked against them before anything changes), claims the peer for `--both-ends`, takes
//! the change lock and runs the loop, which restores the settings as found. The results are
//! written and shown, and with `--apply` `recommended.toml` is applied as one more
//! transaction with an auto-revert watchdog started before its first write, as `nictune
//! apply --confirm-within` does; a value the driver did not take exits 1.

use super::live::test_kind;
use super::{finish, hold_error, session_error, tune_config, Checked, Opts, TargetArg};
use crate::cmd::apply::{not_taken, now_unix_ms, refuse_risky_iface, watchdog};
use crate::cmd::source::check_netns_name;
use crate::output::{Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use nictune_apply::desired::parse_profile;
use nictune_apply::plan;
use nictune_apply::state::{Lock, StateDir};
use nictune_apply::txn::{self, ApplyRequest};
use nictune_core::error::Hinted;
use nictune_core::units::Nanos;
use nictune_linux::netns;
use nictune_linux::write::LinuxWriter;
use nictune_live::tune::iface::{
    capabilities, claim_peer, tune_interface, IfaceError, IfaceTune, Where,
};
use std::path::Path;

/// `--apply` without `--confirm-within`: the recommendation reverts after this long unless
/// `nictune confirm` keeps it.
const DEFAULT_CONFIRM_WITHIN: Nanos = Nanos::from_secs(300);

/// Tunes `--iface` against `--peer`; journals under `--state-dir`.
pub fn run_interface(c: &Checked, opts: &Opts, ctx: &Ctx) -> Result<Outcome> {
    let TargetArg::Interface { iface, peer } = &c.target else {
        unreachable!("run_interface is called for --iface only");
    };
    let test = test_kind(&c.workload)?;
    if let Some(name) = &opts.netns {
        check_netns_name(name)?;
        netns::enter(name).hint("create it with `ip netns add NAME`; entering needs root")?;
    }
    refuse_risky_iface(iface, opts.force)?;
    // Where the changes are journaled: `--netns`, or the namespace `ip netns exec` put us in.
    let netns_name = crate::cmd::apply::journal_netns(opts.netns.as_deref())?;
    let state_dir = opts.state.state_dir.as_path();
    let fail = |e| iface_error(e, state_dir);
    let at = Where {
        iface,
        netns: netns_name.as_deref(),
        peer,
    };
    // Module parameters (a driver reload per candidate) need the explicit --reload-driver.
    let (snapshot, caps) = capabilities(&at, c.reload_driver).map_err(fail)?;
    let config = tune_config(c, &caps)?;
    let peer_target = crate::cmd::bench::peer_target(peer, opts.token_file.as_ref())?;
    let peer_changes = match c.both_ends {
        true => Some(claim_peer(&peer_target, &caps).map_err(fail)?),
        false => None,
    };
    let t = IfaceTune {
        config: &config,
        test,
        at,
        snapshot: &snapshot,
        peer: &peer_target,
        peer_changes,
        state_dir,
        out: &c.out,
    };
    let progress = ctx.progress();
    let end = tune_interface(t, progress.as_ref()).map_err(fail)?;
    let shown = finish(c, &end.outcome.map_err(fail)?, ctx)?;
    if let Some(released) = end.released {
        released
            .context("the tune finished, but the peer did not confirm it put its settings back")?;
    }
    if let Some(within) = c.apply {
        let held = &end.held;
        let applied = apply_recommended(c, (&held.state, &held.locks.state), &at, within)?;
        if applied == Outcome::Problems {
            return Ok(Outcome::Problems);
        }
    }
    Ok(shown)
}

/// A failed interface tune with what to do next.
fn iface_error(e: IfaceError, state_dir: &Path) -> anyhow::Error {
    let hint = match e {
        IfaceError::Hold(e) => return hold_error(e, state_dir),
        IfaceError::Session(e) => return session_error(e),
        IfaceError::Capabilities(e) => return anyhow::Error::new(e),
        IfaceError::Claim(e) => {
            let hint = "start the peer with `nictune serve --allow-changes IFACE` (and \
                        --allow-reload for module parameters), as root";
            return anyhow::Error::new(Hinted::new(e, hint))
                .context("--both-ends: claiming the peer's change session");
        }
        IfaceError::NoSuchIface { .. } => {
            "`nictune show` (or `ip -n NAME link`) lists the interfaces"
        }
        IfaceError::PeerCannotReload { .. } => {
            "tune two ends with the same driver, with the peer started with --allow-reload"
        }
    };
    anyhow::Error::new(Hinted::new(e, hint))
}

/// Applies `<out>/recommended.toml` to the interface as one journaled transaction that the
/// watchdog reverts unless `nictune confirm` runs within `within` (default five minutes), as
/// `nictune apply --confirm-within` does: the watchdog starts once the change's begin record
/// is on disk and before the first write (a kill part-way leaves it to put back what was
/// written; a watchdog that cannot start stops the change before any write). A value read
/// back unchanged from before the write was not taken: said on stderr, and the outcome is
/// [`Outcome::Problems`] (exit 1), the rest staying in place as `apply` leaves it.
fn apply_recommended(
    c: &Checked,
    (state, lock): (&StateDir, &Lock),
    at: &Where<'_>,
    within: Option<Nanos>,
) -> Result<Outcome> {
    let path = c.out.join("recommended.toml");
    let text = nictune_core::input::read_file(&path, nictune_core::input::PROFILE)?;
    let profile = parse_profile(&text).with_context(|| format!("parsing {}", path.display()))?;
    if profile.settings.is_empty() {
        eprintln!("--apply: nothing to apply, the recommendation is to keep the settings as found");
        return Ok(Outcome::Success);
    }
    let mut host = LinuxWriter::live();
    let plan = plan::resolve(&profile.settings, Some(at.iface), &mut host)
        .hint("nothing was changed; the tune's settings were restored")?;
    let within = within.unwrap_or(DEFAULT_CONFIRM_WITHIN);
    let request = ApplyRequest {
        pid: std::process::id(),
        now_unix_ms: now_unix_ms(),
        netns: at.netns.map(str::to_string),
        iface: Some(at.iface.to_string()),
        confirm_within_ms: Some((within.as_secs_f64() * 1000.0).round() as u64),
    };
    let mut begun = |id: &str| watchdog::start_before_writes(state, id).map(drop);
    let applied = txn::apply_plan_begun(
        state,
        lock,
        &plan,
        &request,
        &mut host,
        &|| false,
        &mut begun,
    )
    .map_err(crate::cmd::apply::apply_failure)?;
    let Some(applied) = applied else {
        eprintln!("--apply: the recommendation is already in place");
        return Ok(Outcome::Success);
    };
    // On stderr: with --json, stdout holds only the results envelope.
    eprintln!(
        "--apply: applied {} as change {}; it reverts in {:.0} s unless `nictune confirm` runs",
        path.display(),
        applied.id,
        within.as_secs_f64()
    );
    let kept: Vec<_> = applied.steps.iter().filter(|s| not_taken(s)).collect();
    for s in &kept {
        eprintln!(
            "--apply: {} set to {}: NOT taken, the driver kept {}",
            s.setting, s.new, s.effective
        );
    }
    if kept.is_empty() {
        return Ok(Outcome::Success);
    }
    eprintln!(
        "problem: {} setting(s) NOT taken: the driver accepted the write but reads back the old \
         value (exit 1). The rest is in place until the watchdog reverts it or `nictune confirm` \
         keeps it; `nictune revert` puts it back now.",
        kept.len()
    );
    Ok(Outcome::Problems)
}
