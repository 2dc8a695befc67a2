//! FreeBSD doctor rules on the Case 5 fixtures (see their PROVENANCE.md): before its fixes
//! the router shows the cluster shortage and the piled-up queue interrupts, after them
//! nothing. Smaller hand-made inputs cover the polling rule.

use nictune_host::doctor::{self, Finding, Severity};
use nictune_host::freebsd::{self, FreeBsdInputs};
use std::path::Path;

fn inputs(name: &str) -> FreeBsdInputs {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name);
    freebsd::FILES
        .iter()
        .filter_map(|f| Some((f.to_string(), std::fs::read_to_string(dir.join(f)).ok()?)))
        .collect()
}

fn findings(inputs: &FreeBsdInputs) -> Vec<Finding> {
    doctor::freebsd::run(&freebsd::snapshot(inputs).unwrap())
}

#[test]
fn case5_before_reports_the_cluster_shortage_with_the_case_value() {
    let all = findings(&inputs("freebsd-case5-before"));
    let f = all
        .iter()
        .find(|f| f.id == "mbuf-clusters")
        .expect("cluster finding");
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.fix[0], "sysctl kern.ipc.nmbclusters=204800");
    let needed = f
        .evidence
        .iter()
        .find(|e| e.what.starts_with("receive clusters needed"))
        .unwrap();
    assert_eq!(needed.value, "163840");
}

#[test]
fn case5_before_reports_the_pileup_with_one_cpuset_line_per_queue_vector() {
    let all = findings(&inputs("freebsd-case5-before"));
    let f = all
        .iter()
        .find(|f| f.id == "irq-pileup")
        .expect("pile-up finding");
    assert_eq!(f.fix.len(), 40);
    assert!(f
        .fix
        .iter()
        .all(|c| c.starts_with("cpuset -l ") && c.contains(" -x ")));
    // igb7:que 0 is irq 291 (the case's own example) and gets a CPU of its own among 24.
    assert!(f.fix.iter().any(|c| c.ends_with(" -x 291")));
    let cpus: std::collections::BTreeSet<&str> =
        f.fix.iter().filter_map(|c| c.split(' ').nth(2)).collect();
    assert_eq!(cpus.len(), 24, "every CPU gets queue vectors");
    // The busiest vectors (igb0's, the only port up) are spread first, one per CPU.
    assert!(f.fix.contains(&"cpuset -l 0 -x 256".to_string()));
}

#[test]
fn case5_before_flags_the_processing_limit_on_busy_queues_only() {
    let all = findings(&inputs("freebsd-case5-before"));
    let limited: Vec<&str> = all
        .iter()
        .filter(|f| f.id == "rx-processing-limit")
        .map(|f| f.subject.as_str())
        .collect();
    assert_eq!(limited, ["igb0 queue 0", "igb0 queue 1"]);
}

#[test]
fn case5_after_its_fixes_is_clean() {
    let all = findings(&inputs("freebsd-case5-after"));
    assert!(all.is_empty(), "{all:#?}");
}

#[test]
fn clusters_near_the_limit_or_denied_without_a_ring_shortage() {
    let mut i = FreeBsdInputs::new();
    i.insert(
        "sysctl.txt".into(),
        "kern.ipc.nmbclusters: 65536\nhw.igb.rxd: 1024\n".into(),
    );
    i.insert(
        "netstat-m.txt".into(),
        "60000/1000/61000/65536 mbuf clusters in use (current/cache/total/max)\n0/0/0 requests for mbufs denied (mbufs/clusters/mbuf+clusters)\n".into(),
    );
    i.insert(
        "vmstat-i.txt".into(),
        "irq256: igb0:que 0 10 1\nirq257: igb0:que 1 10 1\n".into(),
    );
    let f = findings(&i)
        .into_iter()
        .find(|f| f.id == "mbuf-clusters")
        .unwrap();
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.fix[0], "sysctl kern.ipc.nmbclusters=131072");
}

#[test]
fn polling_reports_its_ceiling() {
    let mut i = FreeBsdInputs::new();
    i.insert(
        "ifconfig.txt".into(),
        "em0: flags=8843<UP> metric 0 mtu 1500\n\toptions=9b<RXCSUM,TXCSUM,POLLING>\n".into(),
    );
    i.insert(
        "sysctl.txt".into(),
        "kern.hz: 100\nkern.polling.burst_max: 150\n".into(),
    );
    let f = findings(&i)
        .into_iter()
        .find(|f| f.id == "polling-ceiling")
        .unwrap();
    assert_eq!(
        f.severity,
        Severity::Warning,
        "100 × 150 = 15000 pkt/s is low"
    );
    assert!(f.evidence.iter().any(|e| e.value == "15000"));
    i.insert(
        "ifconfig.txt".into(),
        "em0: flags=8843<UP> metric 0 mtu 1500\n\toptions=9b<RXCSUM,TXCSUM>\n".into(),
    );
    assert!(findings(&i).iter().all(|f| f.id != "polling-ceiling"));
}

#[test]
fn polling_warns_when_the_observed_rate_nears_the_ceiling() {
    let mut i = FreeBsdInputs::new();
    i.insert(
        "ifconfig.txt".into(),
        "em0: flags=8843<UP> metric 0 mtu 1500\n\toptions=9b<RXCSUM,TXCSUM,POLLING>\n".into(),
    );
    // HZ 1000 × burst_max 150 = 150000 pkt/s; the timer line says 1000 s of uptime.
    let sysctl = |packets: u64| {
        format!("kern.hz: 1000\nkern.polling.burst_max: 150\ndev.em.0.mac_stats.good_pkts_recvd: {packets}\n")
    };
    i.insert("vmstat-i.txt".into(), "cpu0:timer 1000000 1000\n".into());
    i.insert("sysctl.txt".into(), sysctl(140_000_000));
    let f = findings(&i)
        .into_iter()
        .find(|f| f.id == "polling-ceiling")
        .unwrap();
    assert_eq!(f.severity, Severity::Warning, "{f:?}");
    assert!(f.evidence.iter().any(|e| e.value == "140000"));
    i.insert("sysctl.txt".into(), sysctl(20_000_000));
    let f = findings(&i)
        .into_iter()
        .find(|f| f.id == "polling-ceiling")
        .unwrap();
    assert_eq!(f.severity, Severity::Info);
}

/// Issue #12 item 9: `hw.ncpu: -1` made the pile-up rule spread over 4 billion CPUs (8–12 GB).
#[test]
fn hw_ncpu_minus_one_is_an_error_naming_the_range_not_gigabytes() {
    for bad in ["-1", "0", "4294967295", "18446744073709551616", "8193"] {
        let mut inputs = inputs("freebsd-case5-before");
        let sysctl = inputs["sysctl.txt"].replace("hw.ncpu: 24", &format!("hw.ncpu: {bad}"));
        assert_ne!(
            sysctl, inputs["sysctl.txt"],
            "the fixture states hw.ncpu: 24"
        );
        inputs.insert("sysctl.txt".into(), sysctl);
        let err = freebsd::snapshot(&inputs).unwrap_err().to_string();
        let what = if bad.parse::<i128>().is_ok() {
            "is out of range"
        } else {
            "is not an integer"
        };
        // hw.ncpu is the fixture's fourth line: the error names it, not "line 0".
        assert_eq!(
            err,
            format!(
                "parsing sysctl.txt: line 4: hw.ncpu = \"{bad}\" {what}; \
                 allowed: an integer from 1 to 8192"
            )
        );
    }
}

/// A value the doctor reads as a number that is not one (or too large for its sysctl) is an
/// error naming file, line and key, never read as unset: `hw.igb.rxd: 2⁶⁴` and
/// `hw.igb.rxd=abc` once fell back to the default 1024 descriptors and sized the
/// nmbclusters fix at 51200 instead of Case 5's 204800.
#[test]
fn an_unreadable_number_is_an_error_naming_file_line_and_key_not_a_default() {
    let cases = [
        (
            "sysctl.txt",
            "hw.igb.rxd: 4096",
            "hw.igb.rxd: 18446744073709551616",
        ),
        ("sysctl.txt", "hw.igb.rxd: 4096", "hw.igb.rxd: -5"),
        ("loader.conf", "hw.igb.rxd=4096", "hw.igb.rxd=abc"),
        (
            "sysctl.txt",
            "kern.ipc.nmbclusters: 25600",
            "kern.ipc.nmbclusters: 25k",
        ),
        (
            "loader.conf",
            "hw.igb.num_queues=4",
            "hw.igb.num_queues=4096",
        ),
    ];
    for (file, good, bad) in cases {
        let mut inputs = inputs("freebsd-case5-before");
        let text = inputs[file].replace(good, bad);
        assert_ne!(text, inputs[file], "{file} states {good}");
        let line = text.lines().position(|l| l == bad).unwrap() + 1;
        inputs.insert(file.into(), text);
        let err = freebsd::snapshot(&inputs).unwrap_err();
        assert_eq!((err.input, err.line), (file, line), "{err}");
        let (key, value) = bad.split_once([':', '=']).unwrap();
        assert!(
            err.problem
                .starts_with(&format!("{key} = {:?} ", value.trim())),
            "{err}"
        );
        assert!(err.problem.contains("allowed: an integer from "), "{err}");
    }
    // A bad line a later one overrides is not the value the system ends up with.
    let mut inputs = inputs("freebsd-case5-before");
    let text = format!("hw.igb.rxd=abc\n{}", inputs["loader.conf"]);
    inputs.insert("loader.conf".into(), text);
    assert_eq!(
        findings(&inputs).len(),
        findings(&self::inputs("freebsd-case5-before")).len()
    );
}

#[test]
fn cpu_numbers_outside_the_cpu_range_are_refused_or_ignored() {
    let mut inputs = FreeBsdInputs::new();
    inputs.insert(
        "top.txt".into(),
        "CPU 4294967295:  0.0% user,  0.0% nice,  5.1% system, 61.4% interrupt, 33.5% idle\n"
            .into(),
    );
    let err = freebsd::snapshot(&inputs).unwrap_err().to_string();
    assert!(
        err.contains("CPU 4294967295 is out of range; allowed: 0..=8191"),
        "{err}"
    );
    let dmesg = freebsd::parse_dmesg(
        "igb0: Bound queue 0 to cpu 4294967295\nigb0: Bound queue 1 to cpu 1\n",
    );
    assert_eq!(dmesg.bound_queues, vec![("igb0".to_string(), 1, 1)]);
}

/// Interface names come from captured text; one outside the name rule never reaches a fix
/// command (`sysctl dev.igb0;reboot.0.rx_processing_limit=-1`).
#[test]
fn interface_names_with_shell_characters_never_reach_fix_commands() {
    let mut inputs = FreeBsdInputs::new();
    inputs.insert(
        "vmstat-i.txt".into(),
        "interrupt total rate\nirq264: igb0;reboot:que 0 999999 9999\n\
         irq265: igb1:que 0 999999 9999\n"
            .into(),
    );
    inputs.insert(
        "sysctl.txt".into(),
        "hw.igb.rx_process_limit: 100\nhw.ncpu: 4\n".into(),
    );
    inputs.insert(
        "ifconfig.txt".into(),
        "igb0;reboot: flags=8843<UP> mtu 1500\n\toptions=8<POLLING>\n".into(),
    );
    inputs.insert(
        "dmesg.txt".into(),
        "igb0`id`: could not setup receive structures\n".into(),
    );
    let snap = freebsd::snapshot(&inputs).unwrap();
    assert!(snap.interfaces.as_ref().unwrap().is_empty());
    assert!(snap.dmesg.rx_setup_failed.is_empty());
    let all = doctor::freebsd::run(&snap);
    let text = serde_json::to_string(&all).unwrap();
    assert!(!text.contains("reboot") && !text.contains("`id`"), "{text}");
    assert!(
        text.contains("igb1 queue 0"),
        "the valid vector is still examined: {text}"
    );
}

#[test]
fn one_nat_instance_with_the_kernel_and_interrupt_burn_is_a_nat_lock() {
    let all = findings(&inputs("freebsd-case5-nat"));
    let ids: Vec<&str> = all.iter().map(|f| f.id).collect();
    assert_eq!(ids, ["nat-lock"], "{all:#?}");
    let f = &all[0];
    assert_eq!(f.severity, Severity::Warning);
    let value = |what: &str| {
        f.evidence
            .iter()
            .find(|e| e.what == what)
            .map(|e| e.value.as_str())
    };
    assert_eq!(
        value("in-kernel NAT instances (ipfw nat show config)"),
        Some("1")
    );
    assert_eq!(value("intr (top -SIP, % of one CPU)"), Some("683.0"));
    assert_eq!(
        value("kernel and interrupt time of all CPUs"),
        Some("1250 % of 2400 % (52 %)")
    );
    // One instance per external address, keeping the instance's options; tablearg rules on
    // the interface the old rules used; the old rules removed.
    assert!(f
        .fix
        .contains(&"ipfw nat 2 config ip <external-address-2> log same_ports reset".to_string()));
    assert!(f.fix.contains(
        &"ipfw add <rule> nat tablearg ip from 'table(10)' to any out xmit igb0".to_string()
    ));
    assert_eq!(
        &f.fix[f.fix.len() - 2..],
        ["ipfw delete 500", "ipfw delete 510"]
    );
}

#[test]
fn nat_lock_needs_one_instance_and_the_burn() {
    let base = inputs("freebsd-case5-nat");
    let nat_lock = |i: &FreeBsdInputs| findings(i).into_iter().find(|f| f.id == "nat-lock");
    // Two instances: no single lock.
    let mut two = base.clone();
    two.insert(
        "ipfw-nat.txt".into(),
        "ipfw nat 1 config ip 198.51.100.1\nipfw nat 2 config ip 198.51.100.2\n".into(),
    );
    two.insert(
        "ipfw.txt".into(),
        "00500 nat 1 ip from 10.0.0.0/9 to any out\n00501 nat 2 ip from 10.128.0.0/9 to any out\n"
            .into(),
    );
    assert!(nat_lock(&two).is_none());
    // Already split with tablearg.
    let mut table = base.clone();
    table.insert(
        "ipfw.txt".into(),
        "01000 nat tablearg ip from table(10) to any out xmit igb0\n".into(),
    );
    assert!(nat_lock(&table).is_none());
    // The after-fix load (idle ≈ 85 %): no burn, no finding.
    let mut calm = base.clone();
    calm.insert(
        "top.txt".into(),
        inputs("freebsd-case5-after")["top.txt"].clone(),
    );
    assert!(nat_lock(&calm).is_none());
    // NAT enabled in rc.conf but the instances not captured: information, asking for them.
    let mut unknown = base.clone();
    unknown.remove("ipfw-nat.txt");
    unknown.remove("ipfw.txt");
    let f = nat_lock(&unknown).expect("info finding");
    assert_eq!(f.severity, Severity::Info);
    assert!(f.evidence[0].value.contains("ipfw-nat.txt"), "{f:?}");
}

#[test]
fn polling_warns_when_the_burst_has_reached_burst_max() {
    let mut i = FreeBsdInputs::new();
    i.insert(
        "ifconfig.txt".into(),
        "em0: flags=8843<UP> metric 0 mtu 1500\n\toptions=9b<RXCSUM,TXCSUM,POLLING>\n".into(),
    );
    let sysctl = |burst: u32| {
        format!(
            "kern.hz: 1000\nkern.polling.burst_max: 150\nkern.polling.burst: {burst}\n\
             kern.polling.idle_poll: 0\nkern.polling.lost_polls: 12\n"
        )
    };
    i.insert("sysctl.txt".into(), sysctl(150));
    let f = findings(&i)
        .into_iter()
        .find(|f| f.id == "polling-ceiling")
        .unwrap();
    assert_eq!(f.severity, Severity::Warning, "{f:?}");
    assert!(f.explanation.contains("raised the per-tick burst to 150"));
    assert!(f
        .evidence
        .iter()
        .any(|e| e.what == "kern.polling.lost_polls" && e.value == "12"));
    assert_eq!(
        f.fix,
        [
            "sysctl kern.polling.burst_max=300",
            "sysctl kern.polling.idle_poll=1"
        ]
    );
    i.insert("sysctl.txt".into(), sysctl(40));
    let f = findings(&i)
        .into_iter()
        .find(|f| f.id == "polling-ceiling")
        .unwrap();
    assert_eq!(f.severity, Severity::Info, "burst well below its limit");
    assert_eq!(f.fix.len(), 1);
}
