//! Fuzz tier: change journals (what `status`, `revert` and every command's leftover check
//! read from the state directory). Journals written by this crate's own serializer, mutated
//! structure-aware, and arbitrary text: parsing and replaying never panic, stay within the
//! time budget, keep output in proportion to the input, and never name a step to restore
//! that the plan does not have (a damaged `intent` line once made `revert` index past it).

use nictune_apply::fake::FakeWriter;
use nictune_apply::identity::{self, Identities, Place};
use nictune_apply::journal::{self, Record, RevertBy};
use nictune_apply::plan::Change;
use nictune_apply::state::{self, StateDir};
use nictune_fuzz::{any_text, assert_output_bounded, bounded, config, mutated};
use nictune_host::write::identity::{is_action_name, IfaceId, IrqId};
use nictune_host::write::setting::{Key, Napi, Object, Setting};
use nictune_host::write::value::HostValue;
use proptest::prelude::*;

fn change(index: u32, old: u64, new: u64) -> Change {
    let target = Object::Napi {
        iface: "v0".into(),
        index,
    };
    Change {
        setting: Setting::new(target, Key::Napi(Napi::DeferHardIrqs)),
        old: HostValue::Int(old),
        new: HostValue::Int(new),
    }
}

fn begin(id: &str) -> Record {
    Record::Begin {
        id: id.into(),
        pid: 4242,
        started_unix_ms: 1_795_241_134_910,
        netns: Some("lab".into()),
        iface: Some("v0".into()),
        changes: vec![change(0, 0, 2), change(1, 0, 2), irq_change(45)],
        preserve: Vec::new(),
        boot: None,
        identity: Some(Identities {
            ifaces: vec![IfaceId {
                iface: "v0".into(),
                perm_address: None,
                bus: Some("0000:00:03.0".into()),
                ifindex: Some(7),
            }],
            irqs: vec![IrqId {
                irq: 45,
                actions: vec!["eth1-TxRx-0".into(), "../../proc/sys".into()],
            }],
        }),
    }
}

fn irq_change(irq: u32) -> Change {
    Change {
        setting: Setting::new(Object::Irq { irq }, Key::IrqAffinity),
        old: HostValue::Cpus([0].into_iter().collect()),
        new: HostValue::Cpus([1].into_iter().collect()),
    }
}

/// A host whose IRQ 45 is another device's and whose other lines carry names a hostile
/// journal might record (`..`, paths): a recorded identity decides where each journaled
/// setting goes, and a name that cannot be an IRQ action never moves a value anywhere.
fn host() -> FakeWriter {
    let mut h = FakeWriter::default();
    for (irq, name) in [
        (45, "nvme0q1"),
        (46, ".."),
        (47, "../../proc/sys"),
        (48, "eth1-TxRx-0"),
    ] {
        h.irqs.insert(irq, vec![name.to_string()]);
    }
    let nic = IfaceId {
        iface: "lan0".into(),
        perm_address: Some("52:54:00:12:34:56".into()),
        bus: Some("0000:00:03.0".into()),
        ifindex: Some(3),
    };
    h.ifaces.insert(nic.iface.clone(), nic);
    h
}

fn check_placements(summary: &journal::Summary) {
    let mut h = host();
    for c in &summary.changes {
        match identity::locate(summary.identity.as_ref(), &c.setting, &mut h) {
            Place::Moved(to) => {
                assert!(is_action_name(&to.name), "moved by {:?}", to.name);
                assert!(h.irqs[&to.irq].contains(&to.name));
            }
            Place::Renamed(r) => {
                let then = summary.identity.as_ref().and_then(|i| i.iface(&r.from));
                assert!(then.unwrap().same_device(&h.ifaces[&r.to]), "{r:?}");
            }
            Place::Here | Place::LeftOut(_) => {}
        }
    }
}

/// Journal text of `records`, one JSON line each, as `Journal::append` writes it.
fn text(records: &[Record]) -> String {
    records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect()
}

/// A failed apply rolled back, and an applied change reverted by the watchdog.
fn seeds() -> Vec<String> {
    let rolled_back = [
        begin("1-1"),
        Record::Intent { step: 0 },
        Record::Written {
            step: 0,
            effective: HostValue::Int(2),
        },
        Record::Intent { step: 1 },
        Record::Failed {
            step: 1,
            error: "Operation not supported".into(),
        },
        Record::Undo { step: 0 },
        Record::Undone {
            step: 0,
            effective: Some(HostValue::Int(0)),
            error: None,
        },
        Record::RolledBack { complete: true },
    ];
    let reverted = [
        begin("2-2"),
        Record::Intent { step: 0 },
        Record::Written {
            step: 0,
            effective: HostValue::Int(2),
        },
        Record::Applied {
            confirm_deadline_unix_ms: Some(1_795_241_164_910),
        },
        Record::Watchdog { pid: 4243 },
        Record::RevertBegin {
            pid: 4243,
            by: RevertBy::Watchdog,
            at_unix_ms: Some(1_795_241_164_950),
        },
        Record::Undo { step: 0 },
        Record::Reverted {
            at_unix_ms: 1_795_241_165_000,
            by: RevertBy::Watchdog,
            complete: true,
            left_out: vec!["v0 napi[1] napi.defer-hard-irqs: v0 is now another device".into()],
            renumbered: vec!["irq 45 irq.affinity → irq 48 (eth1-TxRx-0)".into()],
            renamed: vec!["eth1 coalesce.rx-usecs → lan0".into()],
            drifted: vec!["irq 45 irq.affinity: 0-1 since, not 2".into()],
        },
    ];
    vec![text(&rolled_back), text(&reverted)]
}

/// Parses, replays and lists what a revert would restore.
fn replay(text: &str) {
    bounded("journal parse and replay", || {
        let records = journal::parse(text);
        assert!(records.len() <= text.lines().count());
        let Some(summary) = journal::summarize(&records) else {
            return;
        };
        assert_output_bounded("summary", &summary, text.len());
        for (step, _) in state::restore_list(&summary) {
            assert!(step < summary.changes.len(), "step {step} beyond the plan");
        }
        check_placements(&summary);
    });
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_journal_written_journals_mutated(text in mutated(seeds())) {
        replay(&text);
    }

    #[test]
    fn fuzz_journal_arbitrary_text(text in any_text()) {
        replay(&text);
    }

    /// Any recorded action name: the value goes to a line only by a name the kernel could
    /// have given it, and stays off IRQ 45, whose owner now is another device.
    #[test]
    fn fuzz_journal_recorded_irq_names(names in proptest::collection::vec(any_text(), 0..4)) {
        let ids = Identities {
            ifaces: Vec::new(),
            irqs: vec![IrqId { irq: 45, actions: names.clone() }],
        };
        let mut h = host();
        let place = identity::locate(Some(&ids), &irq_change(45).setting, &mut h);
        let same = names.iter().any(|n| n == "nvme0q1");
        prop_assert_eq!(place == Place::Here, same, "{:?}", names);
        if let Place::Moved(to) = place {
            prop_assert!(is_action_name(&to.name) && names.contains(&to.name));
        }
    }
}

/// The state directory reads every journal through the bounded reader, whatever is in it.
#[test]
fn fuzz_journal_state_dir_reads_damaged_journals() {
    let dir = tempfile::tempdir().unwrap();
    let changes = dir.path().join("changes");
    std::fs::create_dir_all(&changes).unwrap();
    let mut runner = proptest::test_runner::TestRunner::new(config());
    let strategy = mutated(seeds());
    for i in 0..32 {
        let tree = strategy.new_tree(&mut runner).unwrap();
        let text = proptest::strategy::ValueTree::current(&tree);
        std::fs::write(changes.join(format!("{i}.jsonl")), text).unwrap();
    }
    let all = bounded("listing the state directory", || {
        StateDir::new(dir.path()).transactions().unwrap()
    });
    assert!(all.len() <= 32);
}
