//! The real-driver testbed end to end: a QEMU guest running Linux's own e1000/e1000e driver,
//! driven through its agent. Needs root, QEMU and the guest directory
//! (`scripts/install-guest`); without them each test says why it skipped.

mod common;

use nictune_vm::{BedOptions, Nic, VmBed};
use std::path::PathBuf;
use std::time::Duration;

/// Why this machine cannot boot a testbed guest, if it cannot.
fn skip_reason() -> Option<String> {
    if unsafe_euid() != 0 {
        return Some("needs root".into());
    }
    if let Err(e) = nictune_vm::GuestDir::locate() {
        return Some(format!("{e}; run scripts/install-guest"));
    }
    if let Err(e) = nictune_vm::guest::qemu_program() {
        return Some(e.to_string());
    }
    None
}

fn unsafe_euid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(str::to_string))
        })
        .and_then(|u| u.parse().ok())
        .unwrap_or(u32::MAX)
}

fn options(nic: Nic) -> BedOptions {
    BedOptions::new(
        nic,
        PathBuf::from(env!("CARGO_BIN_EXE_nictune")),
        Duration::from_secs(300),
    )
}

#[test]
fn an_e1000_guest_boots_runs_the_real_driver_and_leaves_nothing_behind() {
    if let Some(why) = skip_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    let mut bed = VmBed::create(&options(Nic::E1000)).expect("guest boots");
    let names = bed.names().clone();
    let info = bed.boot_info().unwrap().clone();
    eprintln!(
        "boot {:.1} s with {:?} ({:?})",
        info.boot_seconds, info.accel, info.accel_note
    );
    let driver = bed
        .run_ok(
            &["readlink", "/sys/class/net/eth0/device/driver"],
            Duration::from_secs(10),
        )
        .unwrap();
    assert!(driver.trim().ends_with("/e1000"), "{driver}");
    let irqs = bed.read("/proc/interrupts").unwrap();
    assert!(
        irqs.lines().any(|l| l.trim_end().ends_with("eth0")),
        "{irqs}"
    );
    let ping = bed
        .run_ok(
            &["ping", "-c", "3", "-i", "0.2", "198.18.1.1"],
            Duration::from_secs(10),
        )
        .unwrap();
    assert!(ping.contains("3 packets received"), "{ping}");
    bed.destroy().unwrap();
    assert!(!names.dir.exists());
    assert!(common::namespaces_with_prefix(&names.netns).is_empty());
}

/// `nictune apply` of a module parameter in the guest: the driver reloads with it, the
/// port comes back addressed, the journal reverts it, and `show` reads the real driver.
#[test]
fn module_parameters_apply_by_reload_and_revert_in_the_guest() {
    if let Some(why) = skip_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    let mut bed = VmBed::create(&options(Nic::E1000)).expect("guest boots");
    let t = Duration::from_secs(60);
    let apply = bed.run(
        &[
            "nictune",
            "apply",
            "--json",
            "--state-dir",
            "/run/st",
            "e1000.InterruptThrottleRate=500",
            "e1000.TxIntDelay=0",
        ],
        t,
    );
    let apply = apply.unwrap();
    assert_eq!(apply.code, Some(0), "{}\n{}", apply.stdout, apply.stderr);
    let record = bed.read("/run/nictune/module-params/e1000").unwrap();
    assert_eq!(record, "InterruptThrottleRate=500\nTxIntDelay=0\n");
    let ping = bed
        .run_ok(&["ping", "-c", "2", "-i", "0.2", "198.18.1.1"], t)
        .expect("the port is back with its address after the reload");
    assert!(ping.contains("2 packets received"), "{ping}");
    let show = bed.run_ok(&["nictune", "show", "--json"], t).unwrap();
    let show: serde_json::Value = serde_json::from_str(&show).unwrap();
    let nic = &show["nics"].as_array().unwrap()[0];
    assert_eq!(nic["driver"]["value"], "e1000", "{nic}");
    assert_eq!(
        nic["coalesce"]["value"]["rx-usecs"], 2000,
        "ITR 500 reads back as 10^6/500 µs: {nic}"
    );
    let revert = bed
        .run(&["nictune", "revert", "--state-dir", "/run/st"], t)
        .unwrap();
    assert_eq!(revert.code, Some(0), "{}\n{}", revert.stdout, revert.stderr);
    let record = bed.read("/run/nictune/module-params/e1000").unwrap();
    assert_eq!(record, "", "reverted to the driver's defaults");
    let ping = bed
        .run_ok(&["ping", "-c", "2", "-i", "0.2", "198.18.1.1"], t)
        .unwrap();
    assert!(ping.contains("2 packets received"), "{ping}");
    bed.destroy().unwrap();
}
