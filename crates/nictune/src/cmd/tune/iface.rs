//! The live tune of a real interface (`--iface IF --peer HOST[:PORT]`): the candidates are
//! what the driver reports (see `nictune_live::caps`), applied through the apply engine on
//! `IF` one journaled transaction at a time, and measured by the bench engine against a
//! `nictune serve` peer.
//!
//! Order of work: enter `--netns` while the process is still single-threaded; refuse the
//! interface that carries the default route or this SSH session (apply's guard, `--force`
//! overrides); read the snapshot and build the space (the budget is checked before anything
//! changes); take the change lock; run the loop, which restores the settings as found; then,
//! with `--apply`, apply `recommended.toml` as one more transaction with an auto-revert
//! watchdog.

use super::live::{hold, knobs, knobs_on, test_kind, workload_label, Held};
use super::{execute, tune_config, Checked, Opts, Parts, TargetArg};
use crate::cmd::apply::{now_unix_ms, refuse_risky_iface, render::utc, watchdog};
use crate::cmd::source::check_netns_name;
use crate::output::{Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use nictune_apply::desired::parse_profile;
use nictune_apply::plan;
use nictune_apply::state::{Lock, StateDir};
use nictune_apply::txn::{self, ApplyRequest};
use nictune_bench::cancel::Cancel;
use nictune_bench::changes::ChangeClient;
use nictune_bench::protocol::Grant;
use nictune_bench::{LiveMeasurer, PeerTarget, ServerSide, TestKind};
use nictune_core::error::Hinted;
use nictune_core::units::Nanos;
use nictune_host::snapshot::{self, HostSnapshot};
use nictune_linux::host::LinuxHost;
use nictune_linux::netns;
use nictune_linux::write::LinuxWriter;
use nictune_live::caps::capabilities_for;
use nictune_live::BenchMeasurer;
use nictune_live::LiveTarget;
use nictune_tune::ends::BothEnds;
use nictune_tune::knob::End;
use nictune_tune::results::{Environment, TargetKind};
use nictune_tune::session::TuneConfig;
use nictune_tune::space::Capabilities;

/// How many of the bench engine's distinct caveats the environment lists.
const MAX_BENCH_NOTES: usize = 6;

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
    let snap = snapshot::build(&LinuxHost::live(), std::slice::from_ref(iface));
    // Module parameters (a driver reload per candidate) need the explicit --reload-driver.
    let caps = match snap.nic(iface) {
        Some(nic) => capabilities_for(&snap, nic, c.reload_driver)?,
        None => return Err(no_such_iface(iface, opts.netns.as_deref())),
    };
    let config = tune_config(c, &caps)?;
    let peer_target = crate::cmd::bench::peer_target(peer, opts.token_file.as_ref())?;
    let peer_changes = match c.both_ends {
        true => Some(claim_peer(&peer_target, &caps)?),
        false => None,
    };
    let Held {
        state,
        locks,
        cancel,
    } = hold(&opts.state.state_dir)?;
    let lock = &locks.state;
    let where_ = Where {
        iface,
        netns: opts.netns.as_deref(),
        peer,
    };
    let environment = environment(&where_, &snap, test, utc(now_unix_ms()).replace(' ', "T"));
    let outcome = tune_on(
        c,
        &config,
        (&state, lock),
        (iface, opts.netns.as_deref()),
        (&peer_target, peer_changes),
        test,
        &cancel,
        environment,
        ctx,
    );
    state.unmark_tune_if_clean(std::process::id());
    let outcome = outcome?;
    if let Some(within) = c.apply {
        apply_recommended(c, (&state, lock), &where_, within)?;
    }
    Ok(outcome)
}

/// The interface, its namespace and the peer, as typed.
struct Where<'a> {
    iface: &'a str,
    netns: Option<&'a str>,
    peer: &'a str,
}

fn no_such_iface(iface: &str, netns: Option<&str>) -> anyhow::Error {
    let place = netns.map_or("this namespace".to_string(), |n| format!("namespace {n}"));
    anyhow::Error::new(Hinted::new(
        format!("--iface {iface}: no such interface in {place}; nothing was changed"),
        "`nictune show` (or `ip -n NAME link`) lists the interfaces",
    ))
}

#[allow(clippy::too_many_arguments)]
fn tune_on(
    c: &Checked,
    config: &TuneConfig,
    (state, lock): (&StateDir, &Lock),
    (iface, netns): (&str, Option<&str>),
    (peer, peer_changes): (&PeerTarget, Option<ChangeClient>),
    test: TestKind,
    cancel: &Cancel,
    mut environment: Environment,
    ctx: &Ctx,
) -> Result<Outcome> {
    let local = (iface.to_string(), netns.map(str::to_string));
    let target = LiveTarget::local(state, lock, local, knobs(config));
    let live = LiveMeasurer {
        server: ServerSide::Peer(peer),
        cancel: cancel.clone(),
    };
    // One unpinned placement (see caps): no CPUs to pick from.
    let mut measurer = BenchMeasurer::new(live, test, Vec::new());
    let stop = || cancel.is_cancelled();
    let notes = |m: &BenchMeasurer<LiveMeasurer>, env: &mut Environment| {
        env.notes
            .extend(m.warnings.iter().take(MAX_BENCH_NOTES).cloned());
    };
    if let Some(client) = &peer_changes {
        environment.notes.push(peer_note(client.grant()));
    }
    let parts = Parts {
        config,
        predictor: None,
        environment,
        cancel: &stop,
        journals: Some((state, lock)),
    };
    let Some(client) = peer_changes else {
        return execute(c, &mut { target }, &mut measurer, parts, ctx, notes);
    };
    let mut both = BothEnds::new(target, client, &knobs_on(config, End::Peer));
    let outcome = execute(c, &mut both, &mut measurer, parts, ctx, notes);
    let released = both.peer.release();
    let outcome = outcome?;
    released.context("the tune finished, but the peer did not confirm it put its settings back")?;
    Ok(outcome)
}

/// Claims the peer's change session for `--both-ends`, and checks that it can take what the
/// search will try there: the same driver's module parameters need `--allow-reload` and the
/// same driver on the peer.
fn claim_peer(peer: &PeerTarget, caps: &Capabilities) -> Result<ChangeClient> {
    let client = ChangeClient::open(peer)
        .hint(
            "start the peer with `nictune serve --allow-changes IFACE` (and --allow-reload \
             for module parameters), as root",
        )
        .context("--both-ends: claiming the peer's change session")?;
    let grant = client.grant();
    if let Some(driver) = caps.module_params {
        if !grant.reload || grant.driver.as_deref() != Some(driver.name()) {
            let msg = format!(
                "--both-ends with --reload-driver tries {driver} module parameters on the peer, but \
                 the peer's {} is driven by {} and it {} reloads",
                grant.iface,
                grant.driver.as_deref().unwrap_or("an unknown driver"),
                if grant.reload { "allows" } else { "does not allow" }
            );
            return Err(anyhow::Error::new(Hinted::new(
                msg,
                "tune two ends with the same driver, with the peer started with --allow-reload",
            )));
        }
    }
    Ok(client)
}

/// What the report says about the peer's end.
pub(super) fn peer_note(grant: &Grant) -> String {
    format!(
        "Both ends were tuned: settings marked `peer:` were made on the peer's {} ({}) by its \
         `nictune serve --allow-changes`, journaled there and put back when the tune ended; \
         recommended-peer.toml holds what to apply there.",
        grant.iface,
        grant.driver.as_deref().unwrap_or("driver unknown")
    )
}

/// Applies `<out>/recommended.toml` to the interface as one journaled transaction that the
/// watchdog reverts unless `nictune confirm` runs within `within` (default five minutes).
fn apply_recommended(
    c: &Checked,
    (state, lock): (&StateDir, &Lock),
    at: &Where<'_>,
    within: Option<Nanos>,
) -> Result<()> {
    let path = c.out.join("recommended.toml");
    let text = nictune_core::input::read_file(&path, nictune_core::input::PROFILE)?;
    let profile = parse_profile(&text).with_context(|| format!("parsing {}", path.display()))?;
    if profile.settings.is_empty() {
        eprintln!("--apply: nothing to apply, the recommendation is to keep the settings as found");
        return Ok(());
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
    let applied = txn::apply_plan(state, lock, &plan, &request, &mut host)
        .map_err(crate::cmd::apply::apply_failure)?;
    let Some(applied) = applied else {
        eprintln!("--apply: the recommendation is already in place");
        return Ok(());
    };
    watchdog::start(state, &applied.id)?;
    // On stderr: with --json, stdout holds only the results envelope.
    eprintln!(
        "--apply: applied {} as change {}; it reverts in {:.0} s unless `nictune confirm` runs",
        path.display(),
        applied.id,
        within.as_secs_f64()
    );
    Ok(())
}

/// What the report says about where and how it was measured.
fn environment(
    at: &Where<'_>,
    snap: &HostSnapshot,
    test: TestKind,
    started: String,
) -> Environment {
    let driver = snap
        .nic(at.iface)
        .and_then(|n| n.driver.value().cloned())
        .unwrap_or_else(|| "driver unknown".into());
    let place = at
        .netns
        .map_or(String::new(), |n| format!(" in namespace {n}"));
    let mut notes = vec![
        "CPU figures are this host's busy time per unit of work (the client side); the \
         peer's CPU is not counted."
            .to_string(),
        "Candidates come from what the driver reported; each was applied as a journaled \
         transaction and reverted before the next."
            .to_string(),
    ];
    if snap.sysctl_u64("net.core.busy_read").is_none() {
        notes.push(
            "busy polling was not tried: the busy_read/busy_poll sysctls are host-wide and \
             not visible in this namespace."
                .into(),
        );
    }
    Environment {
        target: TargetKind::Interface,
        target_name: format!("{} ({driver}){place} → peer {}", at.iface, at.peer),
        workload: workload_label(test),
        kernel: snap.kernel.value().map(|k| k.trim().to_string()),
        cpus: Some(snap.cpus.len() as u32),
        nictune_version: env!("CARGO_PKG_VERSION").into(),
        started_at: Some(started),
        notes,
    }
}
