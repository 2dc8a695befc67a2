//! A revert (and a rollback) writes each value to the device it was read from: an IRQ
//! renumbered since the change gets its value on its new number and the line that now has
//! another owner is left alone; an interface renamed since gets its value under its new
//! name; an IRQ whose name is nowhere and an interface re-created under the same name are
//! left out, the rest restored and the change closed; a channel change keeps its
//! interface's IRQ affinity by name. Against the fake host.

use nictune_apply::desired::{parse_assignment, Desired};
use nictune_apply::fake::{FailMode, FakeWriter};
use nictune_apply::journal::{Phase, RevertBy, Summary};
use nictune_apply::plan::{resolve, PlanError};
use nictune_apply::state::{revertible, StateDir};
use nictune_apply::txn::{apply_plan, revert, Reverted, TxnError};
use nictune_host::write::identity::IfaceId;
use nictune_host::write::setting::{Key, Napi, Object, Setting};
use nictune_host::write::value::{CpuSet, HostValue};

mod common;
use common::{request, IF};

fn parsed(args: &[&str]) -> Vec<Desired> {
    args.iter().map(|a| parse_assignment(a).unwrap()).collect()
}

fn cpus(list: &[u32]) -> HostValue {
    HostValue::Cpus(CpuSet::from_iter(list.iter().copied()))
}

fn affinity(irq: u32) -> Setting {
    Setting::new(Object::Irq { irq }, Key::IrqAffinity)
}

fn somaxconn() -> Setting {
    Setting::new(Object::Netns, Key::Sysctl("net.core.somaxconn".into()))
}

fn napi0() -> Setting {
    Setting::new(
        Object::Napi {
            iface: IF.into(),
            index: 0,
        },
        Key::Napi(Napi::DeferHardIrqs),
    )
}

/// The common device with two vectors, IRQs 40 and 41 (`v0-TxRx-0`, `-1`, pinned to CPUs 1
/// and 2), a disk's IRQ 45 on CPU 0, and v0 a virtual device (ifindex 7).
fn host() -> FakeWriter {
    let mut h = common::host()
        .with(affinity(40), cpus(&[1]))
        .with(affinity(41), cpus(&[2]))
        .with(affinity(45), cpus(&[0]));
    h.irqs.insert(40, vec!["v0-TxRx-0".into()]);
    h.irqs.insert(41, vec!["v0-TxRx-1".into()]);
    h.irqs.insert(45, vec!["nvme0q1".into()]);
    h.device_irqs.insert(IF.into(), vec![40, 41]);
    h.ifaces.insert(
        IF.into(),
        IfaceId {
            iface: IF.into(),
            perm_address: None,
            bus: None,
            ifindex: Some(7),
        },
    );
    h.irq_default = Some(cpus(&[0, 1, 2, 3]));
    h
}

/// [`host`] with v0 a NIC: a permanent and a bus address.
fn nic_host() -> FakeWriter {
    let mut h = host();
    let id = h.ifaces.get_mut(IF).unwrap();
    id.perm_address = Some("52:54:00:12:34:56".into());
    id.bus = Some("0000:00:03.0".into());
    h
}

struct Bed {
    _dir: tempfile::TempDir,
    state: StateDir,
    h: FakeWriter,
}

impl Bed {
    fn applied(args: &[&str]) -> Bed {
        Bed::applied_on(host(), args)
    }

    fn applied_on(mut h: FakeWriter, args: &[&str]) -> Bed {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::new(dir.path());
        let plan = resolve(&parsed(args), Some(IF), &mut h).unwrap();
        let lock = state.try_lock().unwrap();
        apply_plan(&state, &lock, &plan, &request(), &mut h)
            .unwrap()
            .expect("something to apply");
        Bed {
            _dir: dir,
            state,
            h,
        }
    }

    fn revert(&mut self) -> Reverted {
        let lock = self.state.try_lock().unwrap();
        let all = self.state.transactions().unwrap();
        let txn = revertible(&all).expect("a change in place").clone();
        revert(
            &self.state,
            &lock,
            &txn,
            &mut self.h,
            RevertBy::User,
            2,
            9_000,
        )
        .unwrap()
    }

    /// Gives IRQ 40 to a disk (`nvme1q2`, on CPU 2), reverts, and checks that the disk's
    /// line was not written.
    fn revert_with_irq_40_a_disks(&mut self) -> Reverted {
        self.h.irqs.insert(40, vec!["nvme1q2".into()]);
        self.h.values.insert(affinity(40), cpus(&[2]));
        let r = self.revert();
        let disk = &self.h.values[&affinity(40)];
        assert_eq!(disk, &cpus(&[2]), "never the line another device owns now");
        r
    }

    /// Gives the v0 there is now (a new device under the name) its own NAPI value 5,
    /// reverts, and checks that it keeps it.
    fn revert_with_a_new_v0(&mut self) -> Reverted {
        self.h.values.insert(napi0(), HostValue::Int(5));
        let r = self.revert();
        assert_eq!(
            self.h.values[&napi0()],
            HostValue::Int(5),
            "the new device keeps its own"
        );
        r
    }

    fn last(&self) -> Summary {
        self.state.transactions().unwrap().pop().unwrap()
    }

    fn closed(&self) -> bool {
        let all = self.state.transactions().unwrap();
        revertible(&all).is_none()
            && matches!(self.last().phase, Phase::Reverted { complete: true, .. })
    }
}

#[test]
fn the_journal_records_each_irq_by_name_and_each_interface_by_what_identifies_it() {
    let bed = Bed::applied(&["irq.affinity@40=3", "napi.defer-hard-irqs=2"]);
    let ids = bed.last().identity.expect("recorded");
    assert_eq!(ids.irq(40).unwrap().actions, ["v0-TxRx-0"]);
    assert_eq!(ids.iface(IF).unwrap().ifindex, Some(7));
}

/// The bug: the revert wrote CPU 1 to IRQ 40, which a channel change had given to another
/// device, and left v0's vector (now IRQ 50) where the change put it.
#[test]
fn a_renumbered_irq_gets_its_value_on_its_new_number_and_the_new_owner_is_left_alone() {
    let mut bed = Bed::applied(&["irq.affinity@40=3"]);
    assert_eq!(bed.h.values[&affinity(40)], cpus(&[3]));
    bed.h.move_irq(40, 50);
    bed.h.values.insert(affinity(50), cpus(&[3]));
    let r = bed.revert_with_irq_40_a_disks();
    assert_eq!(
        bed.h.values[&affinity(50)],
        cpus(&[1]),
        "v0-TxRx-0's value, where it is now"
    );
    assert!(r.complete && r.identity_recorded, "{r:?}");
    let moved = r.restored[0]
        .renumbered
        .as_ref()
        .expect("says where it went");
    assert_eq!((moved.irq, moved.name.as_str()), (50, "v0-TxRx-0"));
    assert!(bed.closed());
    assert_eq!(
        bed.last().revert_notes.renumbered,
        ["irq 40 irq.affinity → irq 50 (v0-TxRx-0)"]
    );
}

#[test]
fn an_irq_whose_name_is_nowhere_is_left_out_and_the_rest_restored() {
    let mut bed = Bed::applied(&["irq.affinity@40=3", "sysctl.net.core.somaxconn=1024"]);
    let r = bed.revert_with_irq_40_a_disks();
    assert_eq!(bed.h.values[&somaxconn()], HostValue::text("4096"));
    assert!(r.complete, "{r:?}");
    let out = r.restored.iter().find(|x| x.left_out.is_some()).unwrap();
    let why = out.left_out.as_deref().unwrap();
    assert!(why.contains("now serves nvme1q2"), "{why}");
    assert!(why.contains("no IRQ carries v0-TxRx-0"), "{why}");
    assert!(bed.closed(), "the change closes");
    assert_eq!(bed.last().revert_notes.left_out.len(), 1);
}

/// A veth deleted and made again, a VF re-created: the name is another device's, whose
/// values are not the change's to set.
#[test]
fn an_interface_recreated_under_its_name_is_not_written_and_the_rest_is_restored() {
    let mut bed = Bed::applied(&["napi.defer-hard-irqs=2", "sysctl.net.core.somaxconn=1024"]);
    bed.h.ifaces.get_mut(IF).unwrap().ifindex = Some(9);
    let r = bed.revert_with_a_new_v0();
    assert_eq!(bed.h.values[&somaxconn()], HostValue::text("4096"));
    assert!(r.complete, "{r:?}");
    let why = r.restored.iter().find_map(|x| x.left_out.clone()).unwrap();
    assert!(
        why.contains("v0 is now another device (ifindex 7 then, 9 now)"),
        "{why}"
    );
    assert!(bed.closed());
}

fn napi0_on(iface: &str) -> Setting {
    Setting::new(
        Object::Napi {
            iface: iface.into(),
            index: 0,
        },
        Key::Napi(Napi::DeferHardIrqs),
    )
}

/// A udev rule or `ip link set name` renamed the device since the change: its value goes
/// back under the new name, and the revert says so.
#[test]
fn a_renamed_interface_gets_its_value_back_under_its_new_name() {
    let mut bed = Bed::applied(&["napi.defer-hard-irqs=2", "sysctl.net.core.somaxconn=1024"]);
    bed.h.rename_iface(IF, "up0");
    assert_eq!(bed.h.values[&napi0_on("up0")], HostValue::Int(2));
    let r = bed.revert();
    assert!(r.complete, "{r:?}");
    assert_eq!(bed.h.values[&napi0_on("up0")], HostValue::Int(0));
    assert!(
        !bed.h.values.contains_key(&napi0()),
        "nothing made under the old name"
    );
    let moved = r.restored.iter().find_map(|x| x.renamed.clone()).unwrap();
    assert_eq!((moved.from.as_str(), moved.to.as_str()), (IF, "up0"));
    assert!(r.restored.iter().all(|x| x.written()), "{r:?}");
    let notes = bed.last().revert_notes.renamed;
    assert!(
        notes.contains(&"v0 napi[0] napi.defer-hard-irqs → up0".to_string()) && notes.len() == 2,
        "both of v0's NAPI instances: {notes:?}"
    );
    assert!(bed.closed());
}

/// Renamed, and the old name given to a new device: the value follows the device, and the
/// new one under the old name keeps its own.
#[test]
fn a_renamed_interface_is_followed_and_the_new_owner_of_its_name_left_alone() {
    let mut bed = Bed::applied(&["napi.defer-hard-irqs=2"]);
    bed.h.rename_iface(IF, "up0");
    bed.h.ifaces.insert(
        IF.into(),
        IfaceId {
            iface: IF.into(),
            perm_address: None,
            bus: None,
            ifindex: Some(9),
        },
    );
    bed.h.napis.insert(IF.into(), 1);
    let r = bed.revert_with_a_new_v0();
    assert_eq!(bed.h.values[&napi0_on("up0")], HostValue::Int(0));
    assert!(r.restored.iter().all(|x| x.written()), "{r:?}");
}

/// Two interfaces that both match what identified the device (the same permanent and bus
/// address): neither is written, and the revert says why.
#[test]
fn a_device_two_interfaces_match_is_left_out() {
    let mut bed = Bed::applied_on(nic_host(), &["napi.defer-hard-irqs=2"]);
    bed.h.rename_iface(IF, "a0");
    let mut twin = bed.h.ifaces["a0"].clone();
    twin.iface = "b0".into();
    bed.h.ifaces.insert("b0".into(), twin);
    let r = bed.revert();
    let why = r.restored.iter().find_map(|x| x.left_out.clone()).unwrap();
    assert!(why.contains("interface v0 is gone"), "{why}");
    assert!(why.contains("2 interfaces (a0, b0) match"), "{why}");
    assert_eq!(
        bed.h.values[&napi0_on("a0")],
        HostValue::Int(2),
        "not written"
    );
    assert!(bed.closed());
}

/// A driver reload changes the ifindex but not the permanent or bus address: the same
/// device, restored.
#[test]
fn a_reloaded_nic_with_its_addresses_is_the_same_device() {
    let mut bed = Bed::applied_on(nic_host(), &["napi.defer-hard-irqs=2"]);
    bed.h.ifaces.get_mut(IF).unwrap().ifindex = Some(12);
    let r = bed.revert();
    assert!(r.restored.iter().all(|x| x.written()), "{r:?}");
    assert_eq!(bed.h.values[&napi0()], HostValue::Int(0));
}

fn channel_host() -> FakeWriter {
    let mut h = host();
    h.channel_renumber = Some(10);
    h
}

/// A channel change re-requests v0's vectors under new numbers with the default affinity:
/// the revert puts each one's affinity back on the line that carries its name.
#[test]
fn a_channel_change_keeps_its_interfaces_irq_affinity_by_name() {
    let mut bed = Bed::applied_on(channel_host(), &["channels.combined=4"]);
    assert_eq!(bed.h.irqs[&50], ["v0-TxRx-0"]);
    assert_eq!(bed.h.values[&affinity(50)], cpus(&[0, 1, 2, 3]));
    bed.h.irqs.insert(40, vec!["nvme1q2".into()]);
    bed.h.values.insert(affinity(40), cpus(&[3]));
    let r = bed.revert();
    assert!(r.complete, "{r:?}");
    // Restoring the count re-requested them once more, as 60 and 61.
    assert_eq!(bed.h.irqs[&60], ["v0-TxRx-0"]);
    assert_eq!(bed.h.values[&affinity(60)], cpus(&[1]));
    assert_eq!(bed.h.values[&affinity(61)], cpus(&[2]));
    assert_eq!(bed.h.values[&affinity(40)], cpus(&[3]), "the new owner's");
    assert!(bed.closed());
}

#[test]
fn a_rolled_back_channel_change_puts_the_irq_affinity_back_on_the_recreated_lines() {
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::new(dir.path());
    let mut h = channel_host();
    let desired = parsed(&["channels.combined=4", "sysctl.net.core.somaxconn=1024"]);
    let plan = resolve(&desired, Some(IF), &mut h).unwrap();
    h.fail_at = Some((1, FailMode::Refused));
    let lock = state.try_lock().unwrap();
    let err = apply_plan(&state, &lock, &plan, &request(), &mut h).unwrap_err();
    assert!(
        matches!(&err, TxnError::Apply { .. })
            && err.left() == nictune_apply::engine::Left::AllPutBack,
        "{err:?}"
    );
    assert_eq!(h.irqs[&60], ["v0-TxRx-0"]);
    assert_eq!(h.values[&affinity(60)], cpus(&[1]));
    assert_eq!(h.values[&affinity(61)], cpus(&[2]));
}

#[test]
fn an_irq_affinity_of_an_interface_whose_channels_change_is_refused_in_the_same_plan() {
    let mut h = host();
    let desired = parsed(&["channels.combined=4", "irq.affinity@41=3"]);
    let err = resolve(&desired, Some(IF), &mut h).unwrap_err();
    assert!(
        matches!(&err, PlanError::ChannelsWithPerQueue { key, .. } if key == "irq.affinity@41"),
        "{err}"
    );
    let other = parsed(&["channels.combined=4", "irq.affinity@45=3"]);
    assert!(
        resolve(&other, Some(IF), &mut h).is_ok(),
        "another device's IRQ"
    );
}

/// A journal from before identities were recorded reverts by name and number, as it did,
/// and the report says identity was not recorded.
#[test]
fn a_journal_without_identities_reverts_as_before_and_says_so() {
    let mut bed = Bed::applied(&["irq.affinity@40=3"]);
    let path = bed.state.journal_path(&bed.last().id);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines[0].as_object_mut().unwrap().remove("identity");
    let old: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, old).unwrap();
    assert!(bed.last().identity.is_none());
    bed.h.move_irq(40, 50);
    let r = bed.revert();
    assert!(!r.identity_recorded);
    assert_eq!(
        bed.h.values[&affinity(40)],
        cpus(&[1]),
        "by number, as before"
    );
    assert!(bed.closed());
}

/// A change that replaces one in place keeps the identities that change recorded for the
/// objects it takes over: IRQ 40 had lost its vector to the first change's channel change
/// by then, and read afresh it would be recorded as the handlerless line it had become.
#[test]
fn a_replacing_change_keeps_the_identities_of_the_change_it_replaces() {
    let mut bed = Bed::applied_on(channel_host(), &["channels.combined=4"]);
    let open = bed.last();
    let plan = resolve(
        &parsed(&["sysctl.net.core.somaxconn=1024"]),
        Some(IF),
        &mut bed.h,
    )
    .unwrap();
    let lock = bed.state.try_lock().unwrap();
    let req = nictune_apply::txn::ApplyRequest {
        now_unix_ms: 5_000,
        ..request()
    };
    nictune_apply::txn::replace_plan(&bed.state, &lock, &open, &plan, &req, &mut bed.h)
        .unwrap()
        .expect("a replacement");
    drop(lock);
    let ids = bed.last().identity.unwrap();
    assert_eq!(ids.irq(40).unwrap().actions, ["v0-TxRx-0"]);
    let r = bed.revert();
    assert!(r.complete, "{r:?}");
    let (irq, names) = bed.h.irqs.iter().next_back().unwrap();
    assert_eq!(names, &["v0-TxRx-1"], "on {irq}");
    assert_eq!(bed.h.values[&affinity(*irq)], cpus(&[2]));
    assert_eq!(bed.h.values[&somaxconn()], HostValue::text("4096"));
}
