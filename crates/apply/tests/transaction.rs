//! The transaction against the fake host: apply → revert and apply-with-a-failure both leave
//! the host exactly as it was, for any plan and any failing step (property tests), plus the
//! journal-driven recovery after a crash.

use nictune_apply::desired::{parse_assignment, Desired};
use nictune_apply::engine::{ApplyError, Drift};
use nictune_apply::fake::{FailMode, FakeWriter};
use nictune_apply::journal::{Phase, RevertBy};
use nictune_apply::plan::resolve;
use nictune_apply::state::{revertible, StateDir};
use nictune_apply::txn::{apply_plan, replace_plan, revert, ApplyRequest, TxnError};
use nictune_host::write::setting::{Key, Object, Setting};
use nictune_host::write::value::HostValue;
use nictune_host::write::HostWrite;
use proptest::prelude::*;

mod common;
use common::{host, request, IF};

/// Any mix of requests, each with a value valid for its key.
fn desired() -> impl Strategy<Value = Vec<Desired>> {
    let one = prop_oneof![
        (1u64..=8).prop_map(|n| format!("channels.combined={n}")),
        (64u64..=4096).prop_map(|n| format!("ring.rx={n}")),
        any::<bool>().prop_map(|b| format!("feature.gro={b}")),
        (0u64..=200).prop_map(|n| format!("coalesce.rx-usecs={n}")),
        any::<bool>().prop_map(|b| format!("coalesce.adaptive-rx={b}")),
        (0u64..=10).prop_map(|n| format!("napi.defer-hard-irqs={n}")),
        (0u64..=2, 0u64..=100_000)
            .prop_map(|(i, n)| format!("napi.gro-flush-timeout@{}={n}", i % 2)),
        (1u64..=65535).prop_map(|n| format!("sysctl.net.core.somaxconn={n}")),
        (0u64..=3, 0u64..=2).prop_map(|(m, q)| format!("rps.cpus@{}=0x{m:x}", q % 2)),
    ];
    proptest::collection::vec(one, 1..8).prop_map(|args| {
        let mut seen = std::collections::BTreeSet::new();
        let all: Vec<Desired> = args
            .iter()
            .map(|a| parse_assignment(a).unwrap())
            .filter(|d| seen.insert((d.key.clone(), d.instance)))
            .collect();
        // A channel change does not mix with per-NAPI or per-queue settings (the plan refuses
        // it: the queues would be renumbered under them); keep requests plannable.
        let channels = all.iter().any(|d| matches!(d.key, Key::Channels(_)));
        let per_queue = |d: &Desired| matches!(d.key, Key::Napi(_) | Key::Steering(_));
        all.into_iter()
            .filter(|d| !(channels && per_queue(d)))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn apply_then_revert_leaves_the_host_identical(d in desired()) {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::new(dir.path());
        let mut h = host();
        let before = h.state().clone();
        let plan = resolve(&d, Some(IF), &mut h).unwrap();
        let lock = state.try_lock().unwrap();
        let applied = apply_plan(&state, &lock, &plan, &request(), &mut h).unwrap();
        prop_assert_eq!(applied.is_none(), plan.is_noop());
        let all = state.transactions().unwrap();
        if let Some(txn) = revertible(&all) {
            let r = revert(&state, &lock, txn, &mut h, RevertBy::User, 1, 2_000).unwrap();
            prop_assert!(r.complete, "{:?}", r.restored);
            // Nothing touched the host in between: no setting reads as changed since, in any
            // plan (the drift check compares with each step's read-back, after every later
            // step of the apply had run).
            prop_assert!(r.restored.iter().all(|x| x.drifted.is_none()), "{:?}", r.restored);
        }
        prop_assert_eq!(h.state(), &before);
    }

    #[test]
    fn a_failure_at_any_step_leaves_the_host_identical(
        d in desired(), at in any::<prop::sample::Index>(), after in any::<bool>()
    ) {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::new(dir.path());
        let mut h = host();
        let before = h.state().clone();
        let plan = resolve(&d, Some(IF), &mut h).unwrap();
        prop_assume!(!plan.is_noop());
        let at = at.index(plan.changes.len());
        let mode = if after { FailMode::AfterChange } else { FailMode::Refused };
        h.fail_at = Some((at, mode));
        let lock = state.try_lock().unwrap();
        let err = apply_plan(&state, &lock, &plan, &request(), &mut h).unwrap_err();
        let TxnError::Apply { source: ApplyError::RolledBack { step, .. }, .. } = err else {
            panic!("expected a complete rollback, got {err}");
        };
        prop_assert_eq!(step, at);
        prop_assert_eq!(h.state(), &before);
        let all = state.transactions().unwrap();
        prop_assert_eq!(all[0].phase, Phase::RolledBack { complete: true });
    }
}

#[test]
fn effective_values_are_recorded_when_the_driver_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::new(dir.path());
    let mut h = host();
    let d = [parse_assignment("coalesce.rx-usecs=51").unwrap()];
    let plan = resolve(&d, Some(IF), &mut h).unwrap();
    let lock = state.try_lock().unwrap();
    let applied = apply_plan(&state, &lock, &plan, &request(), &mut h)
        .unwrap()
        .unwrap();
    assert_eq!(applied.steps[0].effective, HostValue::Int(50));
    assert_eq!(
        state.transactions().unwrap()[0].effective[&0],
        HostValue::Int(50)
    );
}

/// A value changed behind nictune's back since the apply (irqbalance, a script, another
/// tool) is put back all the same and named with what the change left and what was found,
/// in the revert and in its journal; one the driver rounded at the apply is not mistaken for
/// such a change, nor one found back at its old value already.
#[test]
fn a_revert_names_a_value_changed_since_the_apply_and_restores_it_all_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::new(dir.path());
    let mut h = host();
    let before = h.state().clone();
    let d = ["coalesce.rx-usecs=51", "ring.rx=1024", "feature.gro=false"];
    let d = d.map(|a| parse_assignment(a).unwrap());
    let plan = resolve(&d, Some(IF), &mut h).unwrap();
    let lock = state.try_lock().unwrap();
    apply_plan(&state, &lock, &plan, &request(), &mut h)
        .unwrap()
        .unwrap();
    let ring = plan
        .changes
        .iter()
        .find(|c| matches!(c.setting.key, Key::Ring(_)));
    let ring = ring.unwrap().setting.clone();
    h.write(&ring, &HostValue::Int(2048)).unwrap();
    // One already back at its old value (a revert killed part-way, or a person): no note.
    let gro = plan
        .changes
        .iter()
        .find(|c| matches!(c.setting.key, Key::Feature(_)));
    let gro = gro.unwrap();
    h.write(&gro.setting, &gro.old).unwrap();
    let all = state.transactions().unwrap();
    let txn = revertible(&all).unwrap();
    let r = revert(&state, &lock, txn, &mut h, RevertBy::Watchdog, 1, 2_000).unwrap();
    assert!(r.complete, "{:?}", r.restored);
    assert_eq!(h.state(), &before, "every value back, the changed one too");
    for x in &r.restored {
        let want = (x.setting == ring).then_some(Drift {
            left: HostValue::Int(1024),
            found: HostValue::Int(2048),
        });
        assert_eq!(x.drifted, want, "{}", x.setting);
    }
    let notes = &state.transactions().unwrap()[0].revert_notes;
    assert_eq!(notes.drifted, [format!("{ring}: 2048 since, not 1024")]);
}

#[test]
fn a_crash_mid_apply_is_recovered_from_the_journal() {
    // Steps: channels (which wipes the RPS mask of rx-0), feature, coalesce, sysctl. The
    // process "dies" right after the fourth write, before journaling its result: the host
    // keeps every write and the journal ends with an intent. Simulate it by applying and
    // cutting the journal there.
    let done = four_steps_applied();
    let (state, lock, mut h) = (done.state, done.lock, done.h);
    let (before, path) = (done.before, done.path);
    let text = std::fs::read_to_string(&path).unwrap();
    let cut: Vec<&str> = text.lines().take(1 + 2 * 3 + 1).collect();
    std::fs::write(&path, cut.join("\n") + "\n").unwrap();
    drop(lock);

    let all = state.transactions().unwrap();
    assert_eq!(all[0].phase, Phase::Applying);
    let recovery = nictune_apply::state::needing_recovery(&all, 5_000, |_, _| false);
    assert_eq!(recovery.len(), 1);
    let lock = state.try_lock().unwrap();
    let txn = revertible(&all).unwrap();
    let r = revert(&state, &lock, txn, &mut h, RevertBy::User, 2, 6_000).unwrap();
    assert!(r.complete);
    assert_eq!(
        h.state(),
        &before,
        "channel restore wiped RPS; the verify pass put it back"
    );
    assert!(matches!(
        state.transactions().unwrap()[0].phase,
        Phase::Reverted { complete: true, .. }
    ));
}

#[test]
fn one_change_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::new(dir.path());
    let _held = state.try_lock().unwrap();
    let err = state.try_lock().unwrap_err().to_string();
    assert!(
        err.starts_with("another nictune change is running"),
        "{err}"
    );
}

#[test]
fn a_tune_moves_only_its_own_closed_journals() {
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::new(dir.path().join("state"));
    let archive = StateDir::new(dir.path().join("archive"));
    let mut h = host();
    let lock = state.try_lock().unwrap();
    let apply = |assignment: &str, pid: u32, h: &mut FakeWriter| {
        let d = [parse_assignment(assignment).unwrap()];
        let plan = resolve(&d, Some(IF), h).unwrap();
        let now_unix_ms = 1_000 * (state.transactions().unwrap().len() as u64 + 1);
        let req = ApplyRequest {
            pid,
            now_unix_ms,
            ..request()
        };
        apply_plan(&state, &lock, &plan, &req, h).unwrap().unwrap();
    };
    // pid 7 (a tune: it applies and reverts itself): one change reverted in full (history),
    // one left in place.
    apply("coalesce.rx-usecs=20", 7, &mut h);
    let reverted = revertible(&state.transactions().unwrap()).unwrap().clone();
    revert(&state, &lock, &reverted, &mut h, RevertBy::User, 7, 2_000).unwrap();
    apply("feature.gro=off", 7, &mut h);
    // pid 8: a closed change of another process.
    apply("coalesce.rx-usecs=30", 8, &mut h);
    let other = revertible(&state.transactions().unwrap()).unwrap().clone();
    revert(&state, &lock, &other, &mut h, RevertBy::User, 8, 4_000).unwrap();

    assert_eq!(state.move_closed(7, &archive, &lock).unwrap(), 1);
    let moved = archive.transactions().unwrap();
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].id, reverted.id);
    assert!(matches!(
        moved[0].phase,
        Phase::Reverted { complete: true, .. }
    ));
    let left: Vec<(u32, Phase)> = state
        .transactions()
        .unwrap()
        .iter()
        .map(|s| (s.owner_pid, s.phase))
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.contains(&(7, Phase::Applied)), "{left:?}");
    assert_eq!(
        state.move_closed(7, &archive, &lock).unwrap(),
        0,
        "nothing closed of pid 7 is left"
    );
}

/// The plan of `a_crash_mid_apply_is_recovered_from_the_journal`: four steps in four stages.
fn four_steps(h: &mut FakeWriter) -> nictune_apply::plan::Plan {
    let d: Vec<_> = [
        "channels.combined=4",
        "feature.gro=off",
        "coalesce.rx-usecs=20",
        "sysctl.net.core.somaxconn=1",
    ]
    .iter()
    .map(|a| parse_assignment(a).unwrap())
    .collect();
    resolve(&d, Some(IF), h).unwrap()
}

/// A finished apply of [`four_steps`], with what the tests look at afterwards.
struct Done {
    _dir: tempfile::TempDir,
    state: StateDir,
    lock: nictune_apply::state::Lock,
    h: FakeWriter,
    before: std::collections::BTreeMap<nictune_host::write::setting::Setting, HostValue>,
    /// The change's journal.
    path: std::path::PathBuf,
}

fn four_steps_applied() -> Done {
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::new(dir.path());
    let mut h = host();
    let before = h.state().clone();
    let plan = four_steps(&mut h);
    let lock = state.try_lock().unwrap();
    apply_plan(&state, &lock, &plan, &request(), &mut h).unwrap();
    let path = state.journal_path(&state.transactions().unwrap()[0].id);
    Done {
        _dir: dir,
        state,
        lock,
        h,
        before,
        path,
    }
}

/// Issue #12.1: a journal write error after some values were written used to return "nothing
/// was changed" (exit 2) and leave them changed. Now the written steps are rolled back.
#[test]
fn a_journal_write_error_mid_apply_rolls_back_instead_of_claiming_nothing_changed() {
    use nictune_apply::engine::Left;
    use nictune_apply::fs::{FaultyFs, FsOp, WriteFault};
    let dir = tempfile::tempdir().unwrap();
    let mut h = host();
    let before = h.state().clone();
    let plan = four_steps(&mut h);
    // Find the write of the third step's intent: the lock, the begin record (create, sync
    // the directory, write, sync), then per step intent and written (write, sync each).
    let counting = FaultyFs::counting();
    {
        let scratch = tempfile::tempdir().unwrap();
        let state = StateDir::with_fs(scratch.path(), std::sync::Arc::new(counting.clone()));
        let lock = state.try_lock().unwrap();
        apply_plan(&state, &lock, &plan, &request(), &mut host()).unwrap();
    }
    let writes: Vec<usize> = (counting.seen().iter().enumerate())
        .filter(|(_, op)| **op == FsOp::Write)
        .map(|(i, _)| i)
        .collect();
    let third_intent = writes[1 + 2 * 2];
    let fs = FaultyFs::failing(Some(third_intent), WriteFault::Refused);
    let state = StateDir::with_fs(dir.path(), std::sync::Arc::new(fs));
    let lock = state.try_lock().unwrap();
    let err = apply_plan(&state, &lock, &plan, &request(), &mut h).unwrap_err();
    assert_eq!(err.left(), Left::AllPutBack, "{err:#}");
    let text = format!("{:#}", chain_text(&err));
    assert!(
        text.contains("journaling step 3") && text.contains("rolled back"),
        "{text}"
    );
    assert!(!text.contains("nothing was changed"), "{text}");
    assert_eq!(h.state(), &before);
    let all = state.transactions().unwrap();
    assert_eq!(all[0].phase, Phase::RolledBack { complete: true });
}

/// The error and its sources, joined as the binary prints them.
fn chain_text(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text += &format!(": {s}");
        source = s.source();
    }
    text
}

/// Issue #12.3: a journal line naming a step the change does not have made `revert` panic
/// (index out of bounds) after its `revert-begin`, so every later revert panicked too.
#[test]
fn a_journal_line_naming_a_missing_step_is_a_defect_and_revert_restores_the_valid_steps() {
    let done = four_steps_applied();
    let (state, lock, mut h) = (done.state, done.lock, done.h);
    let (before, path) = (done.before, done.path);
    let mut text = std::fs::read_to_string(&path).unwrap();
    let lines = text.lines().count();
    text += "{\"record\":\"intent\",\"step\":99}\n";
    std::fs::write(&path, text).unwrap();

    let all = state.transactions().unwrap();
    let txn = revertible(&all).unwrap();
    assert_eq!(txn.defects.len(), 1);
    assert_eq!(txn.defects[0].line, lines + 1);
    assert!(
        txn.defects[0].problem.contains("step 99"),
        "{:?}",
        txn.defects
    );
    let r = revert(&state, &lock, txn, &mut h, RevertBy::User, 2, 3_000).unwrap();
    assert!(r.complete);
    assert_eq!(h.state(), &before, "every valid step restored");
    let all = state.transactions().unwrap();
    assert!(revertible(&all).is_none(), "the change is closed");
}

/// Issue #12.4: a crash between the `begin` record and the first `intent` left a change
/// "interrupted" that `revert` would not touch ("Nothing to revert"), and apply refused
/// forever. `revert` now closes it without writing anything.
#[test]
fn a_change_that_stopped_before_its_first_write_is_closed_by_revert() {
    let done = four_steps_applied();
    let (state, lock, before, path) = (done.state, done.lock, done.before, done.path);
    let begin = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, begin.lines().next().unwrap().to_string() + "\n").unwrap();
    let mut h = host(); // the crash came before any write
    let all = state.transactions().unwrap();
    let stuck = nictune_apply::state::needing_recovery(&all, 5_000, |_, _| false);
    assert_eq!(stuck.len(), 1, "interrupted: {stuck:?}");
    let txn = revertible(&all).expect("revert picks it");
    let r = revert(&state, &lock, txn, &mut h, RevertBy::User, 2, 6_000).unwrap();
    assert!(r.complete && r.restored.is_empty(), "{r:?}");
    assert!(r.note.unwrap().contains("before its first write"));
    assert_eq!((h.writes, h.state()), (0, &before), "nothing written");
    let all = state.transactions().unwrap();
    assert!(nictune_apply::state::needing_recovery(&all, 7_000, |_, _| false).is_empty());
    assert!(revertible(&all).is_none());
}

/// Issue #12.6: `--confirm-within 18446744073709551615ms` wrapped to a deadline in the past.
#[test]
fn a_confirm_deadline_past_the_end_of_time_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::new(dir.path());
    let mut h = host();
    let before = h.state().clone();
    let plan = four_steps(&mut h);
    let lock = state.try_lock().unwrap();
    let req = ApplyRequest {
        confirm_within_ms: Some(u64::MAX),
        ..request()
    };
    let err = apply_plan(&state, &lock, &plan, &req, &mut h).unwrap_err();
    assert!(matches!(err, TxnError::DeadlineOutOfRange { .. }), "{err}");
    assert_eq!((h.writes, h.state()), (0, &before));
    assert!(state.transactions().unwrap().is_empty(), "no journal");
}

/// e1000's module parameter `param`.
fn e1000(param: &str) -> Setting {
    Setting::new(
        Object::Module {
            module: "e1000".into(),
        },
        Key::ModuleParam {
            module: "e1000".into(),
            param: param.into(),
        },
    )
}

/// A host whose e1000 module has two parameters and whose device has one coalescing key.
fn with_module(h: FakeWriter) -> (FakeWriter, Vec<Desired>) {
    let param = e1000;
    let h = h
        .with(param("InterruptThrottleRate"), HostValue::text(""))
        .with(param("TxIntDelay"), HostValue::text(""));
    let d = [
        "e1000.InterruptThrottleRate=2000",
        "e1000.TxIntDelay=0",
        "coalesce.rx-usecs=20",
    ]
    .map(|a| parse_assignment(a).unwrap())
    .to_vec();
    (h, d)
}

/// The parameters of one module go in one reload, applying and reverting: two parameters
/// cost one reload each way, not two.
#[test]
fn parameters_of_one_module_are_written_by_one_reload_each_way() {
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::new(dir.path());
    let (mut h, d) = with_module(host());
    let before = h.state().clone();
    let plan = resolve(&d, Some(IF), &mut h).unwrap();
    assert_eq!(plan.changes.len(), 3, "{plan:?}");
    let lock = state.try_lock().unwrap();
    let applied = apply_plan(&state, &lock, &plan, &request(), &mut h)
        .unwrap()
        .unwrap();
    assert_eq!(applied.steps.len(), 3);
    assert_eq!(
        (h.reloads, h.writes),
        (1, 2),
        "one reload and the coalescing write"
    );
    let all = state.transactions().unwrap();
    let r = revert(&state, &lock, &all[0], &mut h, RevertBy::User, 2, 6_000).unwrap();
    assert!(r.complete, "{r:?}");
    assert_eq!((h.reloads, h.writes), (2, 4), "one more reload to revert");
    assert_eq!(h.state(), &before);
}

/// A reload that fails, before or after it took effect (the module came back with the new
/// parameters and then the call erred), is rolled back whole, and so is a reload followed
/// by a failing write: every parameter in it goes back, by one reload.
#[test]
fn a_failed_reload_or_a_failure_after_it_rolls_back_every_parameter_in_it() {
    for (at, mode) in [
        (0, FailMode::Refused),
        (0, FailMode::AfterChange),
        (1, FailMode::Refused),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::new(dir.path());
        let (mut h, d) = with_module(host());
        let before = h.state().clone();
        let plan = resolve(&d, Some(IF), &mut h).unwrap();
        let order: Vec<String> = plan.changes.iter().map(|c| c.setting.to_string()).collect();
        assert!(
            order[2].contains("rx-usecs"),
            "module stage first: {order:?}"
        );
        h.fail_at = Some((at, mode));
        let lock = state.try_lock().unwrap();
        let err = apply_plan(&state, &lock, &plan, &request(), &mut h).unwrap_err();
        let text = chain_text(&err);
        let failed = if at == 0 { "TxIntDelay" } else { "rx-usecs" };
        assert!(text.contains(failed), "{at} {mode:?}: {text}");
        assert_eq!(h.state(), &before, "{at} {mode:?}: every value back");
        let txn = &state.transactions().unwrap()[0];
        let n = if at == 0 { 2 } else { 3 };
        assert_eq!(txn.attempted.len(), n, "{at} {mode:?}: intents journaled");
        assert_eq!(h.reloads, 2, "{at} {mode:?}: one reload there, one back");
    }
}

/// `d` as assignments.
fn assignments(d: &[&str]) -> Vec<Desired> {
    d.iter().map(|a| parse_assignment(a).unwrap()).collect()
}

/// A host with e1000's two parameters, `first` applied as one change, and its journal.
struct Replacing {
    _dir: tempfile::TempDir,
    state: StateDir,
    h: FakeWriter,
    before: std::collections::BTreeMap<Setting, HostValue>,
}

fn replacing(first: &[&str]) -> Replacing {
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::new(dir.path());
    let (mut h, _) = with_module(host());
    let before = h.state().clone();
    let plan = resolve(&assignments(first), Some(IF), &mut h).unwrap();
    let lock = state.try_lock().unwrap();
    apply_plan(&state, &lock, &plan, &request(), &mut h)
        .unwrap()
        .unwrap();
    Replacing {
        _dir: dir,
        state,
        h,
        before,
    }
}

impl Replacing {
    /// Replaces the open change by `next`; the new change's id, if any.
    fn replace(&mut self, next: &[&str]) -> Result<Option<String>, TxnError> {
        let lock = self.state.try_lock().unwrap();
        let open = revertible(&self.state.transactions().unwrap())
            .unwrap()
            .clone();
        let plan = resolve(&assignments(next), Some(IF), &mut self.h).unwrap();
        let mut req = request();
        req.now_unix_ms = open.started_unix_ms + 1;
        replace_plan(&self.state, &lock, &open, &plan, &req, &mut self.h).map(|a| a.map(|a| a.id))
    }

    /// Reverts every change still in place, newest first; true when all were complete.
    fn revert_all(&mut self) -> bool {
        let lock = self.state.try_lock().unwrap();
        let mut complete = true;
        while let Some(t) = revertible(&self.state.transactions().unwrap()).cloned() {
            let r = revert(
                &self.state,
                &lock,
                &t,
                &mut self.h,
                RevertBy::User,
                2,
                9_000,
            );
            complete &= r.unwrap().complete;
        }
        complete
    }

    fn open(&self) -> Vec<String> {
        let all = self.state.transactions().unwrap();
        let open = all.iter().filter(|t| matches!(t.phase, Phase::Applied));
        open.map(|t| t.id.clone()).collect()
    }
}

const FIRST: [&str; 3] = [
    "e1000.InterruptThrottleRate=2000",
    "e1000.TxIntDelay=0",
    "coalesce.rx-usecs=20",
];

/// A tune's next candidate replaces the last in one change: only what differs is written
/// (one reload for the one parameter that changed), the last change is closed, and
/// reverting the new one restores the host as found before both.
#[test]
fn a_replacement_writes_only_what_differs_and_its_revert_restores_the_host_as_found() {
    let mut r = replacing(&FIRST);
    let (reloads, writes) = (r.h.reloads, r.h.writes);
    let next = [
        "e1000.InterruptThrottleRate=300",
        "e1000.TxIntDelay=0",
        "coalesce.rx-usecs=20",
    ];
    let id = r.replace(&next).unwrap().expect("something differs");
    assert_eq!((r.h.reloads - reloads, r.h.writes - writes), (1, 1));
    assert_eq!(r.open(), vec![id.clone()], "the first change is closed");
    let first = &r.state.transactions().unwrap()[0];
    assert!(
        matches!(
            first.phase,
            Phase::Reverted {
                by: RevertBy::Replacement,
                complete: true
            }
        ),
        "{:?}",
        first.phase
    );
    let txn = r.state.transactions().unwrap();
    let new = txn.iter().find(|t| t.id == id).unwrap();
    assert_eq!(new.changes.len(), 1, "{new:?}");
    assert_eq!(
        new.changes[0].old,
        HostValue::text(""),
        "the value from before both"
    );
    assert_eq!(
        new.preserve.len(),
        2,
        "TxIntDelay and rx-usecs checked on revert"
    );
    assert!(r.revert_all());
    assert_eq!(r.h.state(), &r.before);
}

/// A setting the last change wrote and the next one does not name goes back in the same
/// change; an identical candidate replaces nothing and leaves the change in place.
#[test]
fn a_replacement_puts_back_what_the_next_candidate_leaves_out_and_an_equal_one_is_kept() {
    let mut r = replacing(&FIRST);
    let first = r.open();
    assert_eq!(r.replace(&FIRST).unwrap(), None);
    assert_eq!(r.open(), first, "nothing differed: the change stays");
    let id = r.replace(&["coalesce.rx-usecs=30"]).unwrap().unwrap();
    assert_eq!(
        r.h.state()[&e1000("TxIntDelay")],
        HostValue::text(""),
        "back in the same change"
    );
    assert_eq!(r.open(), vec![id]);
    assert!(r.revert_all());
    assert_eq!(r.h.state(), &r.before);
}

/// A replacement that fails rolls its writes back to the values from before both and leaves
/// the last change listed; a crash between the new journal and the closing of the old
/// leaves both listed. Either way reverting what is listed restores the host as found.
#[test]
fn a_failed_or_interrupted_replacement_still_reverts_to_the_host_as_found() {
    let mut r = replacing(&FIRST);
    let first = r.open();
    r.h.fail_at = Some((r.h.writes + 1, FailMode::AfterChange));
    let next = [
        "e1000.InterruptThrottleRate=300",
        "e1000.TxIntDelay=default",
        "coalesce.rx-usecs=40",
    ];
    assert!(r.replace(&next).is_err());
    assert_eq!(r.open(), first, "the last change is still in place");
    assert!(r.revert_all());
    assert_eq!(r.h.state(), &r.before, "after a failed replacement");

    let mut r = replacing(&FIRST);
    let lock = r.state.try_lock().unwrap();
    let open = revertible(&r.state.transactions().unwrap())
        .unwrap()
        .clone();
    let plan = resolve(&assignments(&next), Some(IF), &mut r.h).unwrap();
    let rebased = nictune_apply::plan::rebase(&plan, &open);
    let mut req = request();
    req.now_unix_ms = open.started_unix_ms + 1;
    apply_plan(&r.state, &lock, &rebased, &req, &mut r.h).unwrap();
    drop(lock);
    assert_eq!(r.open().len(), 2, "killed before the old change was closed");
    assert!(r.revert_all());
    assert_eq!(r.h.state(), &r.before, "after an interrupted replacement");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any chain of candidates, each naming any of three settings (two parameters of one
    /// module and a coalescing key) and replacing the last in one change, reverts to the
    /// host as found — and each replacement writes only what differs from the last.
    #[test]
    fn any_chain_of_replacements_reverts_to_the_host_as_found(
        chain in proptest::collection::vec(
            (
                proptest::option::of(prop_oneof![Just("default"), Just("300"), Just("2000")]),
                proptest::option::of(prop_oneof![Just("default"), Just("0"), Just("8")]),
                proptest::option::of(prop_oneof![Just(8u32), Just(20), Just(40)]),
            ),
            1..6,
        )
    ) {
        let mut r = replacing(&FIRST);
        for (itr, tid, rx) in chain {
            let mut next = Vec::new();
            if let Some(v) = itr { next.push(format!("e1000.InterruptThrottleRate={v}")); }
            if let Some(v) = tid { next.push(format!("e1000.TxIntDelay={v}")); }
            if let Some(v) = rx { next.push(format!("coalesce.rx-usecs={v}")); }
            if next.is_empty() {
                continue;
            }
            let next: Vec<&str> = next.iter().map(String::as_str).collect();
            let writes = r.h.writes;
            let wanted = r.h.clone();
            r.replace(&next).unwrap();
            prop_assert_eq!(r.open().len(), 1);
            // Every named setting has its value; the rest are back as found.
            let mut expected = r.before.clone();
            let mut probe = wanted;
            let plan = resolve(&assignments(&next), Some(IF), &mut probe).unwrap();
            for c in plan.changes.iter().chain(std::iter::empty()) {
                expected.insert(c.setting.clone(), c.new.clone());
            }
            for s in &plan.unchanged {
                expected.insert(s.clone(), probe.state()[s].clone());
            }
            prop_assert_eq!(r.h.state(), &expected);
            prop_assert!(r.h.writes - writes <= 2, "one reload and one write at most");
        }
        prop_assert!(r.revert_all());
        prop_assert_eq!(r.h.state(), &r.before);
    }
}

/// One transaction read from its own journal is the one the whole listing has.
#[test]
fn one_transaction_reads_as_in_the_listing() {
    let r = replacing(&FIRST);
    let all = r.state.transactions().unwrap();
    assert_eq!(
        r.state.transaction(&all[0].id).unwrap().as_ref(),
        Some(&all[0])
    );
    assert_eq!(r.state.transaction("0000000000001-1").unwrap(), None);
}
