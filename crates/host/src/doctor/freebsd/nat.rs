//! `nat-lock`: kernel and interrupt time concentrated on a host whose in-kernel ipfw NAT is
//! a single instance. Every packet a `nat N` rule sends to an instance takes that instance's
//! libalias lock (ipfw(8), NETWORK ADDRESS TRANSLATION; sys/netinet/libalias/alias.c), so
//! one instance serialises translation for every CPU: interrupt threads (`intr`) and kernel
//! threads (`kernel`) spin on it and CPU time climbs while throughput stays low (field case
//! 5, docs/seed-cases.md). The fix splits translation over several instances, one per
//! external address, with `nat tablearg` rules choosing the instance from a table.

use crate::doctor::{Finding, Severity};
use crate::freebsd::{FreeBsdSnapshot, NatInstance};

/// Kernel plus interrupt time, as a share of all CPUs, from which a single NAT instance is
/// the suspect.
const BURN_SHARE: f64 = 0.4;
/// Instances the fix suggests when nothing says how many external addresses there are.
const SPLIT: u32 = 4;

/// Where the kernel and interrupt time was read, and its share of all CPUs' time.
struct Burn {
    evidence: Vec<(String, String)>,
    share: f64,
}

/// From the `intr` and `kernel` process lines of `top -SIP` (percent of one CPU each), else
/// from the per-CPU system and interrupt shares.
fn burn(snap: &FreeBsdSnapshot) -> Option<Burn> {
    let ncpu = f64::from(snap.ncpu()?);
    let wcpu = |name: &str| -> Option<f64> {
        let mut it = snap
            .processes
            .iter()
            .filter(|p| p.command == name)
            .peekable();
        it.peek()?;
        Some(it.map(|p| p.wcpu).sum())
    };
    let (intr, kernel) = (wcpu("intr"), wcpu("kernel"));
    if intr.is_some() || kernel.is_some() {
        let (i, k) = (intr.unwrap_or(0.0), kernel.unwrap_or(0.0));
        let share = (i + k) / (ncpu * 100.0);
        let evidence = vec![
            ("intr (top -SIP, % of one CPU)".into(), format!("{i:.1}")),
            ("kernel (top -SIP, % of one CPU)".into(), format!("{k:.1}")),
            (
                "kernel and interrupt time of all CPUs".into(),
                format!(
                    "{:.0} % of {:.0} % ({:.0} %)",
                    i + k,
                    ncpu * 100.0,
                    share * 100.0
                ),
            ),
        ];
        return Some(Burn { evidence, share });
    }
    let cpus = snap.cpus.as_ref().filter(|c| !c.is_empty())?;
    let total: f64 = cpus.iter().map(|c| c.system + c.interrupt).sum();
    let share = total / (cpus.len() as f64 * 100.0);
    let evidence = vec![(
        "system + interrupt time of all CPUs (top -SIP)".into(),
        format!("{:.0} %", share * 100.0),
    )];
    Some(Burn { evidence, share })
}

pub fn nat_lock(snap: &FreeBsdSnapshot) -> Vec<Finding> {
    let Some(burn) = burn(snap).filter(|b| b.share >= BURN_SHARE) else {
        return Vec::new();
    };
    let enabled = snap
        .rc_conf
        .get("firewall_nat_enable")
        .is_some_and(|v| v.eq_ignore_ascii_case("yes"));
    let (severity, count) = match snap.nat.instance_count() {
        Some(1) => (Severity::Warning, "1".to_string()),
        None if enabled && snap.nat.instances.is_none() => (
            Severity::Info,
            "unknown: capture `ipfw nat show config` (ipfw-nat.txt)".to_string(),
        ),
        _ => return Vec::new(),
    };
    let mut f = Finding::new("nat-lock", severity, "ipfw nat")
        .evidence("in-kernel NAT instances (ipfw nat show config)", count);
    if let Some(one) = snap.nat.single() {
        f = f.evidence(format!("nat {} config", one.id), &one.config);
    }
    if let Some(rules) = &snap.nat.rules {
        let numbers: Vec<String> = rules.numbers.iter().map(|n| format!("{n:05}")).collect();
        f = f.evidence(
            "rules sending packets to NAT (ipfw list)",
            numbers.join(", "),
        );
    }
    if enabled {
        f = f.evidence("rc.conf firewall_nat_enable", "YES");
    }
    for (what, value) in burn.evidence {
        f = f.evidence(what, value);
    }
    f = f.explain(format!(
        "Every packet ipfw sends to a NAT instance takes that instance's lock, so with one \
         instance the interrupt and kernel threads of all CPUs queue on a single lock: CPU \
         time climbs while throughput stays low. Split the translation over several \
         instances, one per external address, each serving a share of the internal \
         addresses, so they no longer contend. The lines below use {SPLIT} instances and \
         ipfw tables 10 and 11 (pick free table and rule numbers); fill in your addresses, \
         load them from the firewall script (rc.conf firewall_script) so they survive a \
         reboot, then remove the old rules."
    ));
    for line in split_fix(snap) {
        f = f.fix(line);
    }
    vec![f]
}

/// The split as ipfw commands: one instance per external address, a table choosing the
/// instance by internal source (outbound) and by external address (inbound), two `nat
/// tablearg` rules, and the old rules deleted.
fn split_fix(snap: &FreeBsdSnapshot) -> Vec<String> {
    let one: Option<&NatInstance> = snap.nat.single();
    let options = one.map(|i| keep_options(&i.config)).unwrap_or_default();
    let rules = snap.nat.rules.clone().unwrap_or_default();
    let iface = config_iface(one)
        .or_else(|| rules.ifaces.first().cloned())
        .unwrap_or_else(|| "<external-if>".into());
    let mut out = Vec::new();
    for n in 1..=SPLIT {
        let opts = if options.is_empty() {
            String::new()
        } else {
            format!(" {options}")
        };
        out.push(format!(
            "ipfw nat {n} config ip <external-address-{n}>{opts}"
        ));
    }
    for n in 1..=SPLIT {
        out.push(format!("ipfw table 10 add <internal-block-{n}> {n}"));
    }
    for n in 1..=SPLIT {
        out.push(format!("ipfw table 11 add <external-address-{n}> {n}"));
    }
    out.push(format!(
        "ipfw add <rule> nat tablearg ip from 'table(10)' to any out xmit {iface}"
    ));
    out.push(format!(
        "ipfw add <rule> nat tablearg ip from any to 'table(11)' in recv {iface}"
    ));
    for n in &rules.numbers {
        out.push(format!("ipfw delete {n}"));
    }
    out
}

/// The instance's options without its address (`if X` / `ip X`), which every new instance
/// replaces with its own.
fn keep_options(config: &str) -> String {
    let words: Vec<&str> = config.split_whitespace().collect();
    let mut kept = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if matches!(words[i], "if" | "ip") {
            i += 2;
            continue;
        }
        kept.push(words[i]);
        i += 1;
    }
    kept.join(" ")
}

/// `if igb0` in the instance's configuration.
fn config_iface(one: Option<&NatInstance>) -> Option<String> {
    let words: Vec<&str> = one?.config.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "if")?;
    let name = words.get(at + 1)?;
    nictune_core::names::check_iface(name).ok()?;
    Some(name.to_string())
}
