//! What `apply`, `confirm`, `revert` and `status` show: JSON bodies (serde) and the human
//! tables rendered from them.

use nictune_apply::engine::Restored;
use nictune_apply::journal::{Phase, RevertBy, RevertNotes, Summary};
use nictune_apply::plan::Plan;
use nictune_apply::state::{self, attention, Problem};
use nictune_apply::txn::{utc, Applied, Reverted};
use nictune_host::write::setting::Object;
use serde::Serialize;
use std::fmt::Write as _;

/// A left-aligned text table.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("  {}\n", padded.join("  ").trim_end())
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    rows.iter().for_each(|r| out += &line(r.clone()));
    out
}

#[derive(Debug, Serialize)]
pub struct PlanBody<'a> {
    pub dry_run: bool,
    #[serde(flatten)]
    pub plan: &'a Plan,
}

impl<'a> PlanBody<'a> {
    pub fn new(plan: &'a Plan, dry_run: bool) -> PlanBody<'a> {
        PlanBody { dry_run, plan }
    }
}

pub fn plan_text(b: &PlanBody) -> String {
    let p = b.plan;
    if p.is_noop() {
        return format!(
            "Already in place: all {} settings have the requested values; nothing to do.",
            p.unchanged.len()
        );
    }
    let mut out = format!(
        "Plan{}: {} change(s), {} already in place, in apply order:\n",
        if b.dry_run {
            " (dry run, nothing written)"
        } else {
            ""
        },
        p.changes.len(),
        p.unchanged.len()
    );
    let rows: Vec<Vec<String>> = p
        .changes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let t = c.setting.target.to_string();
            vec![
                (i + 1).to_string(),
                t,
                c.setting.key.to_string(),
                c.old.to_string(),
                c.new.to_string(),
            ]
        })
        .collect();
    out += &table(&["#", "OBJECT", "SETTING", "NOW", "NEW"], &rows);
    out += &notes_text(p);
    out
}

fn notes_text(p: &Plan) -> String {
    let mut out = String::new();
    let mut effects: Vec<String> = p
        .changes
        .iter()
        .filter_map(|c| {
            c.setting
                .key
                .side_effect()
                .map(|e| format!("{}: {e}", c.setting.key))
        })
        .collect();
    effects.dedup();
    for e in effects {
        let _ = writeln!(out, "note: {e}");
    }
    for n in &p.notes {
        let _ = writeln!(out, "note: {}", n.message);
    }
    out
}

#[derive(Debug, Serialize)]
pub struct AppliedBody<'a> {
    #[serde(skip)]
    pub plan: &'a Plan,
    #[serde(flatten)]
    pub applied: &'a Applied,
    pub watchdog_pid: Option<u32>,
    /// Settings that promise an interrupt cap, checked against the measured interrupts.
    pub effect: &'a [nictune_bench::effect::Effect],
}

pub fn applied_text(b: &AppliedBody) -> String {
    let a = b.applied;
    let mut out = format!(
        "Applied change {}: {} setting(s) written and read back.\n",
        a.id,
        a.steps.len()
    );
    let rows: Vec<Vec<String>> = a
        .steps
        .iter()
        .map(|s| {
            let t = s.setting.target.to_string();
            let effective = if s.effective == s.new {
                s.effective.to_string()
            } else if super::not_taken(s) {
                format!("{} (NOT taken: the driver kept it)", s.effective)
            } else {
                format!("{} (driver adjusted)", s.effective)
            };
            vec![
                t,
                s.setting.key.to_string(),
                s.old.to_string(),
                s.new.to_string(),
                effective,
            ]
        })
        .collect();
    out += &table(&["OBJECT", "SETTING", "WAS", "SET", "READ BACK"], &rows);
    let kept = a.steps.iter().filter(|s| super::not_taken(s)).count();
    if kept > 0 {
        let _ = writeln!(
            out,
            "problem: {kept} setting(s) NOT taken: the driver accepted the write but reads back \
             the old value (exit 1). The rest is in place; `nictune revert` puts it back."
        );
    }
    out += &notes_text(b.plan);
    for e in b.effect {
        let _ = writeln!(out, "{}", e.line());
    }
    if let (Some(deadline), Some(pid)) = (a.confirm_deadline_unix_ms, b.watchdog_pid) {
        let _ = writeln!(
            out,
            "Run `nictune confirm` before {} or the watchdog (pid {pid}) restores the previous values.",
            utc(deadline)
        );
    } else {
        out += "Undo with `nictune revert`.\n";
    }
    out
}

#[derive(Debug, Serialize)]
pub struct ConfirmBody<'a> {
    pub confirmed: Option<String>,
    #[serde(skip)]
    pub last: Option<&'a Summary>,
}

pub fn confirm_text(b: &ConfirmBody) -> String {
    match (&b.confirmed, b.last) {
        (Some(id), _) => format!("Confirmed change {id}: it stays."),
        (None, Some(last)) => format!(
            "No change is waiting for confirmation; the last change {} is {}.",
            last.id,
            phase_text(&last.phase)
        ),
        (None, None) => {
            "No change is waiting for confirmation; nictune has changed nothing.".into()
        }
    }
}

#[derive(Debug, Serialize)]
pub struct RevertBody {
    /// The change reverted: the newest one in place (`null`: nothing was).
    pub reverted: Option<Reverted>,
    /// The other changes the same killed tune (or `serve` change session) left in place,
    /// reverted in the same run, newest first; empty otherwise.
    pub also_reverted: Vec<Reverted>,
    /// The pid of the killed tune (or `serve`) that left these changes in place (`null`
    /// when the change reverted was not one).
    pub killed_tune_pid: Option<u32>,
}

impl RevertBody {
    pub fn nothing() -> RevertBody {
        RevertBody {
            reverted: None,
            also_reverted: Vec::new(),
            killed_tune_pid: None,
        }
    }

    /// `done`: newest first, at least one.
    pub fn done(done: Vec<Reverted>, killed_tune_pid: Option<u32>) -> RevertBody {
        let mut all = done.into_iter();
        RevertBody {
            reverted: all.next(),
            also_reverted: all.collect(),
            killed_tune_pid,
        }
    }
}

pub fn revert_text(b: &RevertBody) -> String {
    let Some(first) = &b.reverted else {
        return "Nothing to revert: no change of nictune is in place.".into();
    };
    let mut out = String::new();
    if let Some(pid) = b.killed_tune_pid {
        let _ = writeln!(
            out,
            "Left in place by a tune (pid {pid}) that was killed: its {} change(s) still in \
             place, one candidate, reverted together.\n",
            1 + b.also_reverted.len()
        );
    }
    for (i, r) in std::iter::once(first).chain(&b.also_reverted).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out += &reverted_text(r);
    }
    out
}

fn reverted_text(r: &Reverted) -> String {
    let written = r.restored.iter().filter(|x| x.written()).count();
    let left_out: Vec<&Restored> = r.restored.iter().filter(|x| x.left_out.is_some()).collect();
    let mut out = format!(
        "Reverted change {}: {written} setting(s) restored{}{}.\n",
        r.id,
        if left_out.is_empty() {
            String::new()
        } else {
            format!(", {} left out", left_out.len())
        },
        if r.complete {
            ""
        } else {
            "; SOME COULD NOT BE RESTORED"
        }
    );
    if let (Some(note), true) = (&r.note, r.restored.is_empty()) {
        let _ = writeln!(out, "Nothing to write: {note}.");
        return out;
    }
    let rows: Vec<Vec<String>> = r.restored.iter().map(restored_row).collect();
    out += &table(
        &["OBJECT", "SETTING", "RESTORED TO", "READ BACK", "STATUS"],
        &rows,
    );
    out += &identity_text(r, &left_out);
    out
}

/// What the revert did other than write each value where the journal says: the values it
/// wrote to a renumbered IRQ, those it left out and why, those it found changed since the
/// apply, and whether it could check identities at all.
fn identity_text(r: &Reverted, left_out: &[&Restored]) -> String {
    let mut out = String::new();
    for x in r.restored.iter() {
        if let Some(to) = &x.renumbered {
            let _ = writeln!(
                out,
                "Renumbered: {} went to irq {}, which carries {} now (the line the change set, \
                 re-requested under another number since).",
                x.setting, to.irq, to.name
            );
        }
        if let Some(r) = &x.renamed {
            let _ = writeln!(
                out,
                "Renamed: {} went to {}, the name the device it was set on has now.",
                x.setting, r.to
            );
        }
    }
    if !left_out.is_empty() {
        out += "Left out, not written:\n";
        for x in left_out {
            let why = x.left_out.as_deref().unwrap_or_default();
            let _ = writeln!(out, "  {} {}: {why}", x.setting.target, x.setting.key);
        }
    }
    for x in r.restored.iter() {
        if let Some(d) = &x.drifted {
            let _ = writeln!(
                out,
                "Changed since the apply: {} {} was {}, not the {} this change left (someone or \
                 something else set it since); it is back at {} all the same.",
                x.setting.target, x.setting.key, d.found, d.left, x.wanted
            );
        }
    }
    let by_identity = |x: &&Restored| {
        x.setting.target.iface().is_some() || matches!(x.setting.target, Object::Irq { .. })
    };
    if !r.identity_recorded && r.restored.iter().any(|x| by_identity(&x)) {
        out += "Identity not recorded: this change's journal is from an older nictune, so \
                interface names and IRQ numbers were taken to mean the devices they mean now.\n";
    }
    out
}

fn restored_row(x: &Restored) -> Vec<String> {
    let back = x
        .effective
        .as_ref()
        .map_or_else(|| "-".into(), ToString::to_string);
    let status = match (&x.error, x.ok()) {
        _ if x.left_out.is_some() => "LEFT OUT (below)".to_string(),
        (_, true) => match (&x.renumbered, &x.renamed, &x.drifted) {
            (Some(to), _, _) => format!("ok, on irq {}", to.irq),
            (None, Some(r), _) => format!("ok, on {}", r.to),
            (None, None, Some(_)) => "ok (changed since: below)".to_string(),
            (None, None, None) => "ok".to_string(),
        },
        (Some(e), false) => format!("FAILED: {e}"),
        (None, false) => "FAILED: differs".to_string(),
    };
    let t = x.setting.target.to_string();
    vec![
        t,
        x.setting.key.to_string(),
        x.wanted.to_string(),
        back,
        status,
    ]
}

#[derive(Debug, Serialize)]
pub struct StatusBody {
    pub changes: Vec<StatusRow>,
    /// Closed changes (rolled back or reverted in full) left out; `status --all` lists them.
    pub hidden_closed: usize,
    /// The command that undoes the changes needing attention (one change per run), if any.
    pub undo: Option<String>,
    /// Testbed namespaces left by tunes that were killed (the next tune removes them).
    pub stale_testbeds: Vec<String>,
}

/// How many closed changes `status` shows without `--all`: the newest ones.
pub const CLOSED_SHOWN: usize = 10;

#[derive(Debug, Serialize)]
pub struct StatusRow {
    pub id: String,
    pub started_unix_ms: u64,
    pub netns: Option<String>,
    pub iface: Option<String>,
    pub settings: usize,
    #[serde(flatten)]
    pub phase: Phase,
    pub attention: Option<Problem>,
    /// The process that last worked on the change (for a killed tune: the tune).
    pub owner_pid: u32,
    /// For a change needing attention: the values that are (or may be) still in place.
    pub still_changed: Vec<StillChanged>,
    /// What its last revert left out (`<setting>: <why>`: the object gone, or now another
    /// device's), wrote to a renumbered IRQ (`<setting> → irq N (<name>)`) or under a
    /// device's new name (`<setting> → <name>`), and found changed since.
    pub revert_notes: RevertNotes,
}

/// One value a change needing attention may have left in place.
#[derive(Debug, Serialize)]
pub struct StillChanged {
    pub setting: String,
    pub value: String,
    pub was: String,
    /// A sysctl of the machine's own namespace: it affects everything on the host.
    pub machine_wide: bool,
}

/// What `status` knows besides the journals.
pub struct StatusFacts<'a> {
    pub now: u64,
    /// Changes needing a revert (interrupted, overdue, incomplete, left by a killed tune).
    pub problems: &'a [state::Attention],
    /// `nictune revert` with the state directory's flag when it is not the default.
    pub undo: String,
    /// Testbed namespaces whose tune is gone.
    pub stale_testbeds: Vec<String>,
}

impl StatusBody {
    /// Every change that is open or needs attention, and the newest [`CLOSED_SHOWN`] closed
    /// ones (all of them with `show_all`), oldest first.
    pub fn new(
        all: &[Summary],
        facts: &StatusFacts<'_>,
        alive: impl state::Alive,
        show_all: bool,
    ) -> StatusBody {
        let closed_total = all.iter().filter(|s| state::closed(s)).count();
        let hidden_closed = if show_all {
            0
        } else {
            closed_total.saturating_sub(CLOSED_SHOWN)
        };
        let mut closed_seen = 0;
        let changes = all
            .iter()
            .filter(|s| {
                if !state::closed(s) {
                    return true;
                }
                closed_seen += 1;
                closed_seen > hidden_closed
            })
            .map(|s| {
                let problem = facts.problems.iter().find(|a| a.id == s.id);
                let attention = problem
                    .map(|a| a.problem)
                    .or_else(|| attention(s, facts.now, &alive));
                StatusRow {
                    id: s.id.clone(),
                    started_unix_ms: s.started_unix_ms,
                    netns: s.netns.clone(),
                    iface: s.iface.clone(),
                    settings: s.changes.len(),
                    phase: s.phase,
                    attention,
                    owner_pid: s.owner_pid,
                    still_changed: problem.map_or_else(Vec::new, |_| still_changed(s)),
                    revert_notes: s.revert_notes.clone(),
                }
            })
            .collect();
        StatusBody {
            changes,
            hidden_closed,
            undo: (!facts.problems.is_empty()).then(|| facts.undo.clone()),
            stale_testbeds: facts.stale_testbeds.clone(),
        }
    }
}

/// The values of `s` that are (or may be) in place: steps started and not restored.
fn still_changed(s: &Summary) -> Vec<StillChanged> {
    state::restore_list(s)
        .into_iter()
        .rev()
        .map(|(_, c)| StillChanged {
            setting: match c.setting.target {
                Object::Netns => c.setting.key.to_string(),
                _ => format!("{} {}", c.setting.target, c.setting.key),
            },
            value: c.new.to_string(),
            was: c.old.to_string(),
            machine_wide: s.netns.is_none() && c.setting.target == Object::Netns,
        })
        .collect()
}

pub fn status_text(b: &StatusBody) -> String {
    let mut text = changes_text(b);
    if !b.stale_testbeds.is_empty() {
        let _ = write!(
            text,
            "\nTestbed namespaces of a tune that was killed are still there: {}; the next \
             `nictune tune` removes them (or `ip netns del NAME`).",
            b.stale_testbeds.join(", ")
        );
    }
    text
}

fn changes_text(b: &StatusBody) -> String {
    if b.changes.is_empty() {
        return "No changes recorded.".into();
    }
    let rows: Vec<Vec<String>> = b
        .changes
        .iter()
        .map(|r| {
            let left = r.revert_notes.left_out.len();
            let state = match r.attention {
                Some(Problem::Pending) | None if left > 0 => {
                    format!("{} ({left} left out)", phase_text(&r.phase))
                }
                Some(Problem::Pending) | None => phase_text(&r.phase),
                Some(p) => format!("{} — run `nictune revert`", problem_text(p)),
            };
            vec![
                r.id.clone(),
                utc(r.started_unix_ms),
                r.netns.clone().unwrap_or_else(|| "-".into()),
                r.iface.clone().unwrap_or_else(|| "-".into()),
                r.settings.to_string(),
                state,
            ]
        })
        .collect();
    let mut text = table(
        &["CHANGE", "STARTED", "NETNS", "IFACE", "SETTINGS", "STATE"],
        &rows,
    );
    if b.hidden_closed > 0 {
        text.push_str(&format!(
            "\n{} older changes, rolled back or reverted in full, not shown; \
             `nictune status --all` lists them.",
            b.hidden_closed
        ));
    }
    text + &revert_notes_text(b) + &attention_text(b)
}

/// Under the table, for each change listed whose revert left settings out or wrote an IRQ's
/// value to its new number: which, and why.
fn revert_notes_text(b: &StatusBody) -> String {
    let mut out = String::new();
    for r in &b.changes {
        let n = &r.revert_notes;
        if n.left_out.is_empty()
            && n.renumbered.is_empty()
            && n.renamed.is_empty()
            && n.drifted.is_empty()
        {
            continue;
        }
        let _ = write!(out, "\nchange {}, when it was reverted:", r.id);
        for l in &n.left_out {
            let _ = write!(out, "\n  left out (not written): {l}");
        }
        for m in &n.renumbered {
            let _ = write!(out, "\n  renumbered IRQ: {m}");
        }
        for m in &n.renamed {
            let _ = write!(out, "\n  renamed interface: {m}");
        }
        for d in &n.drifted {
            let _ = write!(
                out,
                "\n  changed since the apply (put back all the same): {d}"
            );
        }
    }
    out
}

/// The loud part: what each change needing attention may have left in place, machine-wide
/// values first among them, and the exact command that undoes it.
fn attention_text(b: &StatusBody) -> String {
    let Some(undo) = &b.undo else {
        return String::new();
    };
    let needing: Vec<&StatusRow> = b
        .changes
        .iter()
        .filter(|r| !matches!(r.attention, None | Some(Problem::Pending)))
        .collect();
    let mut out = format!(
        "\nATTENTION: {} change(s) may still be in place and need `nictune revert`:\n",
        needing.len()
    );
    for r in needing.iter().rev() {
        let why = match r.attention {
            Some(Problem::LeftByKilledTune) => {
                format!(
                    "left in place by tune pid {}, which was killed",
                    r.owner_pid
                )
            }
            Some(p) => problem_text(p).to_string(),
            None => String::new(),
        };
        let place = r
            .netns
            .as_ref()
            .map_or_else(|| "on this host".to_string(), |n| format!("in netns {n}"));
        let _ = writeln!(out, "  change {} ({place}): {why}", r.id);
        let mut values: Vec<&StillChanged> = r.still_changed.iter().collect();
        values.sort_by_key(|v| !v.machine_wide);
        for v in values {
            let scope = if v.machine_wide {
                "MACHINE-WIDE CHANGE STILL IN PLACE: "
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "    {scope}{} = {} (was {})",
                v.setting, v.value, v.was
            );
        }
    }
    let _ = write!(
        out,
        "Undo with: {undo}   (once per change above; each run restores the newest)"
    );
    out
}

fn problem_text(p: Problem) -> &'static str {
    match p {
        Problem::Interrupted => "INTERRUPTED (nictune stopped mid-change)",
        Problem::Overdue => "OVERDUE (not confirmed and no watchdog alive)",
        Problem::Incomplete => "INCOMPLETE (some values could not be restored)",
        Problem::Pending => "pending",
        Problem::LeftByKilledTune => "LEFT BY A KILLED TUNE (its candidate was never reverted)",
        Problem::MadeBeforeReboot => {
            "MADE BEFORE THE LAST REBOOT (nothing of it is in place; `nictune revert` closes it)"
        }
    }
}

fn phase_text(p: &Phase) -> String {
    match p {
        Phase::Applying => "applying".into(),
        Phase::Applied => "applied".into(),
        Phase::Pending { deadline_unix_ms } => {
            format!("pending: confirm before {}", utc(*deadline_unix_ms))
        }
        Phase::Confirmed => "confirmed".into(),
        Phase::RolledBack { complete: true } => "failed and rolled back".into(),
        Phase::RolledBack { complete: false } => "failed, rollback incomplete".into(),
        Phase::Reverting => "reverting".into(),
        Phase::Reverted {
            by: RevertBy::Replacement,
            ..
        } => "replaced by the next change".into(),
        Phase::Reverted { by, complete } => format!(
            "reverted by {}{}",
            if *by == RevertBy::Watchdog {
                "the watchdog"
            } else {
                "the user"
            },
            if *complete { "" } else { " (incomplete)" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use nictune_apply::desired::parse_assignment;
    use nictune_apply::fake::FakeWriter;
    use nictune_apply::journal::{summarize, Record};
    use nictune_host::write::setting::{Key, Napi, Object, Setting};
    use nictune_host::write::value::HostValue;

    /// A killed tune's changes reverted in one run: one line says why they went together,
    /// then each is listed, newest first; the JSON keeps `reverted` as the newest.
    #[test]
    fn a_killed_tunes_changes_reverted_together_are_each_listed_under_one_line() {
        let closed = |id: &str| Reverted {
            id: id.into(),
            by: RevertBy::User,
            restored: Vec::new(),
            complete: true,
            note: Some(format!("{id} never wrote")),
            unrecorded: None,
            identity_recorded: true,
        };
        let one = revert_text(&RevertBody::done(vec![closed("3-20")], None));
        assert!(one.starts_with("Reverted change 3-20"), "{one}");
        let group = RevertBody::done(vec![closed("3-20"), closed("2-20")], Some(20));
        let text = revert_text(&group);
        assert!(
            text.starts_with("Left in place by a tune (pid 20) that was killed: its 2 change(s)"),
            "{text}"
        );
        let at = |id: &str| text.find(&format!("Reverted change {id}")).unwrap();
        assert!(at("3-20") < at("2-20"), "newest first: {text}");
        let json = serde_json::to_value(&group).unwrap();
        assert_eq!(json["reverted"]["id"], "3-20");
        assert_eq!(json["also_reverted"][0]["id"], "2-20");
        assert_eq!(json["killed_tune_pid"], 20);
        let nothing = serde_json::to_value(RevertBody::nothing()).unwrap();
        assert_eq!(
            nothing,
            serde_json::json!({"reverted": null, "also_reverted": [], "killed_tune_pid": null})
        );
    }

    /// A change a tune's next candidate took over reads as replaced, not as reverted by
    /// someone: nothing was written back for it.
    #[test]
    fn a_replaced_change_says_so() {
        let phase = |by| Phase::Reverted { by, complete: true };
        assert_eq!(
            phase_text(&phase(RevertBy::Replacement)),
            "replaced by the next change"
        );
        assert_eq!(phase_text(&phase(RevertBy::User)), "reverted by the user");
    }

    fn plan() -> Plan {
        let napi = |index| {
            let target = Object::Napi {
                iface: "v0".into(),
                index,
            };
            Setting::new(target, Key::Napi(Napi::GroFlushTimeout))
        };
        let dev = Object::Device { iface: "v0".into() };
        let mut host = FakeWriter::default()
            .with(napi(0), HostValue::Int(0))
            .with(napi(1), HostValue::Int(20000))
            .with(
                Setting::new(dev, Key::Coalesce("rx-usecs".into())),
                HostValue::Int(8),
            );
        host.napis.insert("v0".into(), 2);
        let desired: Vec<_> = ["napi.gro-flush-timeout=20000", "coalesce.rx-usecs=50"]
            .iter()
            .map(|a| parse_assignment(a).unwrap())
            .collect();
        nictune_apply::plan::resolve(&desired, Some("v0"), &mut host).unwrap()
    }

    /// A write the driver accepted and ignored reads back the old value: that row says NOT
    /// taken and a problem line follows; a value the driver rounded stays "adjusted".
    #[test]
    fn a_write_the_driver_kept_is_not_taken_and_a_rounded_one_is_adjusted() {
        let p = plan();
        let step = |i: usize, effective: HostValue| nictune_apply::engine::StepResult {
            setting: p.changes[i].setting.clone(),
            old: p.changes[i].old.clone(),
            new: p.changes[i].new.clone(),
            effective,
        };
        let rounded = step(1, HostValue::Int(48));
        let kept = step(1, p.changes[1].old.clone());
        assert!(!super::super::not_taken(&rounded) && super::super::not_taken(&kept));
        let text = |steps| {
            let applied = nictune_apply::txn::Applied {
                id: "1-1".into(),
                steps,
                confirm_deadline_unix_ms: None,
            };
            applied_text(&AppliedBody {
                plan: &p,
                applied: &applied,
                watchdog_pid: None,
                effect: &[],
            })
        };
        let fine = text(vec![step(0, p.changes[0].new.clone()), rounded]);
        assert!(
            fine.contains("48 (driver adjusted)") && !fine.contains("NOT taken"),
            "{fine}"
        );
        let bad = text(vec![step(0, p.changes[0].new.clone()), kept]);
        assert!(bad.contains("  0 (NOT taken: the driver kept it)"), "{bad}");
        assert!(bad.contains("problem: 1 setting(s) NOT taken"), "{bad}");
    }

    #[test]
    fn plan_table_snapshot() {
        insta::assert_snapshot!(plan_text(&PlanBody::new(&plan(), true)));
    }

    fn restored(setting: Setting, ok: bool) -> Restored {
        Restored {
            setting,
            wanted: HostValue::Int(0),
            effective: ok.then_some(HostValue::Int(0)),
            error: None,
            renumbered: None,
            renamed: None,
            left_out: None,
            drifted: None,
        }
    }

    /// A setting found changed since the apply is named under the table with both values,
    /// and still counts as restored.
    #[test]
    fn a_revert_names_a_setting_changed_since_the_apply() {
        let irq = Setting::new(Object::Irq { irq: 40 }, Key::IrqAffinity);
        let mut x = restored(irq, true);
        x.drifted = Some(nictune_apply::engine::Drift {
            left: HostValue::Int(2),
            found: HostValue::Int(3),
        });
        let r = Reverted {
            id: "1-1".into(),
            by: RevertBy::Watchdog,
            restored: vec![x],
            complete: true,
            note: None,
            unrecorded: None,
            identity_recorded: true,
        };
        let text = revert_text(&RevertBody::done(vec![r], None));
        assert!(
            text.starts_with("Reverted change 1-1: 1 setting(s) restored."),
            "{text}"
        );
        assert!(text.contains("ok (changed since: below)"), "{text}");
        assert!(
            text.contains(
                "Changed since the apply: irq 40 irq.affinity was 3, not the 2 this change left"
            ),
            "{text}"
        );
    }

    /// A revert that wrote an IRQ's value to its new number, another under its device's new
    /// name, and left out an interface that is now another device says each, under the
    /// table; an older journal says it could not check.
    #[test]
    fn a_revert_names_what_it_renumbered_and_left_out_and_why() {
        let irq = Setting::new(Object::Irq { irq: 40 }, Key::IrqAffinity);
        let napi = Setting::new(
            Object::Napi {
                iface: "v0".into(),
                index: 0,
            },
            Key::Napi(Napi::DeferHardIrqs),
        );
        let mut moved = restored(irq, true);
        moved.renumbered = Some(nictune_apply::identity::Renumbered {
            irq: 50,
            name: "v0-TxRx-0".into(),
        });
        let mut follow = restored(napi.clone(), true);
        follow.renamed = Some(nictune_apply::identity::Renamed {
            from: "v0".into(),
            to: "up0".into(),
        });
        let mut out = restored(napi, false);
        out.left_out = Some("v0 is now another device (ifindex 7 then, 9 now)".into());
        let r = Reverted {
            id: "1-1".into(),
            by: RevertBy::User,
            restored: vec![out, moved, follow],
            complete: true,
            note: None,
            unrecorded: None,
            identity_recorded: true,
        };
        let text = revert_text(&RevertBody::done(vec![r.clone()], None));
        assert!(
            text.starts_with("Reverted change 1-1: 2 setting(s) restored, 1 left out."),
            "{text}"
        );
        assert!(text.contains("ok, on irq 50"), "{text}");
        assert!(text.contains("ok, on up0"), "{text}");
        assert!(
            text.contains(
                "Renamed: v0 napi[0] napi.defer-hard-irqs went to up0, the name the device it \
                 was set on has now."
            ),
            "{text}"
        );
        assert!(text.contains("LEFT OUT (below)"), "{text}");
        assert!(
            text.contains(
                "Renumbered: irq 40 irq.affinity went to irq 50, which carries v0-TxRx-0 now"
            ),
            "{text}"
        );
        assert!(
            text.contains("  v0 napi[0] napi.defer-hard-irqs: v0 is now another device (ifindex 7 then, 9 now)"),
            "{text}"
        );
        assert!(!text.contains("Identity not recorded"), "{text}");
        let old = Reverted {
            identity_recorded: false,
            ..r
        };
        let text = revert_text(&RevertBody::done(vec![old], None));
        assert!(text.contains("Identity not recorded"), "{text}");
    }

    #[test]
    fn status_table_snapshot() {
        let p = plan();
        let begin = |id: &str, at| Record::Begin {
            id: id.into(),
            pid: 4_194_305,
            started_unix_ms: at,
            netns: Some("lab".into()),
            iface: Some("v0".into()),
            changes: p.changes.clone(),
            preserve: Vec::new(),
            boot: None,
            identity: None,
        };
        let txns = [
            vec![
                begin("1795239660000-1", 1_795_239_660_000),
                Record::Intent { step: 0 },
                Record::Applied {
                    confirm_deadline_unix_ms: None,
                },
                Record::Confirmed { at_unix_ms: 1 },
            ],
            vec![
                begin("1795239720000-2", 1_795_239_720_000),
                Record::Intent { step: 0 },
                Record::Applied {
                    confirm_deadline_unix_ms: Some(1_795_239_750_000),
                },
            ],
            vec![
                begin("1795239780000-3", 1_795_239_780_000),
                Record::Intent { step: 0 },
            ],
        ];
        let all: Vec<Summary> = txns.iter().map(|r| summarize(r).unwrap()).collect();
        let now = 1_795_239_800_000;
        let problems = state::needing_recovery(&all, now, |_, _| false);
        let body = StatusBody::new(&all, &facts(now, &problems), |_, _| false, false);
        insta::assert_snapshot!(status_text(&body));
    }

    #[test]
    fn status_hides_older_closed_changes_unless_all() {
        let p = plan();
        let txn = |i: u64, reverted: bool| {
            let mut records = vec![
                Record::Begin {
                    id: format!("{}-{i}", 1_795_239_660_000 + i),
                    pid: 7,
                    started_unix_ms: 1_795_239_660_000 + i,
                    netns: None,
                    iface: Some("v0".into()),
                    changes: p.changes.clone(),
                    preserve: Vec::new(),
                    boot: None,
                    identity: None,
                },
                Record::Intent { step: 0 },
                Record::Applied {
                    confirm_deadline_unix_ms: None,
                },
            ];
            if reverted {
                records.push(Record::RevertBegin {
                    pid: 7,
                    by: RevertBy::User,
                    at_unix_ms: None,
                });
                records.push(Record::Reverted {
                    at_unix_ms: 1,
                    by: RevertBy::User,
                    complete: true,
                    left_out: if i == 14 {
                        vec!["v0 napi[0] napi.defer-hard-irqs: v0 is now another device".into()]
                    } else {
                        Vec::new()
                    },
                    renumbered: Vec::new(),
                    renamed: if i == 14 {
                        vec!["v0 napi[1] napi.defer-hard-irqs → up0".into()]
                    } else {
                        Vec::new()
                    },
                    drifted: Vec::new(),
                });
            }
            summarize(&records).unwrap()
        };
        // The oldest change is still applied; 14 reverted ones follow.
        let all: Vec<Summary> = (0..15).map(|i| txn(i, i > 0)).collect();
        let body = StatusBody::new(&all, &facts(1_795_239_800_000, &[]), |_, _| false, false);
        assert_eq!(body.hidden_closed, 4);
        assert_eq!(body.changes.len(), 1 + CLOSED_SHOWN);
        assert_eq!(body.changes[0].id, all[0].id, "open changes always show");
        assert_eq!(body.changes[1].id, all[5].id, "then the newest closed ones");
        let text = status_text(&body);
        assert!(
            text.contains("4 older changes") && text.contains("--all"),
            "{text}"
        );
        // What the newest one's revert left out: in its STATE, and why under the table.
        assert!(text.contains("reverted by the user (1 left out)"), "{text}");
        assert!(
            text.contains(&format!(
                "change {}, when it was reverted:\n  left out (not written): v0 napi[0] \
                 napi.defer-hard-irqs: v0 is now another device\n  renamed interface: v0 \
                 napi[1] napi.defer-hard-irqs → up0",
                all[14].id
            )),
            "{text}"
        );
        let every = StatusBody::new(&all, &facts(1_795_239_800_000, &[]), |_, _| false, true);
        assert_eq!((every.changes.len(), every.hidden_closed), (15, 0));
        assert!(!status_text(&every).contains("older changes"));
    }

    fn facts(now: u64, problems: &[state::Attention]) -> StatusFacts<'_> {
        StatusFacts {
            now,
            problems,
            undo: "nictune revert --state-dir /tmp/s".into(),
            stale_testbeds: vec!["nictune-tb-77-0-s".into()],
        }
    }

    /// Issue #12.2: after `kill -9` of a tune, `status` said a plain "applied" (exit 0) while
    /// busy_poll stayed at 50 for the whole machine.
    #[test]
    fn a_killed_tunes_machine_wide_change_is_named_loudly_with_the_undo_command() {
        let sysctl = |name: &str| Setting::new(Object::Netns, Key::Sysctl(name.into()));
        let change = |name: &str| nictune_apply::plan::Change {
            setting: sysctl(name),
            old: HostValue::text("0"),
            new: HostValue::text("50"),
        };
        let records = [
            Record::Begin {
                id: "1795239660000-77".into(),
                pid: 77,
                started_unix_ms: 1_795_239_660_000,
                netns: None,
                iface: None,
                changes: vec![change("net.core.busy_read"), change("net.core.busy_poll")],
                preserve: Vec::new(),
                boot: None,
                identity: None,
            },
            Record::Intent { step: 0 },
            Record::Intent { step: 1 },
            Record::Applied {
                confirm_deadline_unix_ms: None,
            },
        ];
        let all = [summarize(&records).unwrap()];
        let mark_77 = state::TuneMark {
            pid: 77,
            started_unix_ms: None,
        };
        let problems = state::left_by_killed_tunes(&all, &[mark_77], 0, |_, _| false);
        let body = StatusBody::new(
            &all,
            &facts(1_795_239_800_000, &problems),
            |_, _| false,
            false,
        );
        let text = status_text(&body);
        assert!(text.contains("LEFT BY A KILLED TUNE"), "{text}");
        assert!(
            text.contains(
                "MACHINE-WIDE CHANGE STILL IN PLACE: sysctl.net.core.busy_poll = 50 (was 0)"
            ),
            "{text}"
        );
        assert!(text.contains("tune pid 77, which was killed"), "{text}");
        assert!(text.contains("still there: nictune-tb-77-0-s"), "{text}");
        assert!(
            text.contains("Undo with: nictune revert --state-dir /tmp/s"),
            "{text}"
        );
        let json = serde_json::to_value(&body).unwrap();
        assert_eq!(json["undo"], "nictune revert --state-dir /tmp/s");
        assert_eq!(json["changes"][0]["attention"], "left-by-killed-tune");
        assert_eq!(json["changes"][0]["still_changed"][0]["machine_wide"], true);
    }
}
