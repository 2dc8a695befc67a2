//! ipfw's in-kernel NAT: `ipfw nat show config` (one `ipfw nat N config ...` line per
//! instance) and `ipfw list` (rules such as `00100 nat 1 ip from any to any via em0`).
//!
//! Each NAT instance is one libalias state with one lock; every packet a rule sends to it
//! takes that lock, so one instance serialises NAT for all CPUs (ipfw(8) NETWORK ADDRESS
//! TRANSLATION; sys/netinet/libalias/alias.c).

use serde::Serialize;

/// One configured instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NatInstance {
    /// NAT instance number, the `N` of `ipfw nat N`.
    pub id: u32,
    /// The configuration after `config` (`if em0 same_ports reset`).
    pub config: String,
}

/// What the two outputs say about NAT.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IpfwNat {
    /// From `ipfw nat show config`; None when that output was not captured.
    pub instances: Option<Vec<NatInstance>>,
    /// The `nat` rules of `ipfw list`; None when that output was not captured.
    pub rules: Option<NatRules>,
}

/// The rules of `ipfw list` that send packets to NAT.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NatRules {
    /// Instance numbers the rules name (`nat 1`).
    pub targets: Vec<u32>,
    /// A rule uses `nat tablearg`: the instance comes from a table, so several are in use.
    pub tablearg: bool,
    /// The rules' numbers (`00500`), as `ipfw delete` takes them.
    pub numbers: Vec<u32>,
    /// Interfaces the rules match on (`via`, `xmit`, `recv`).
    pub ifaces: Vec<String>,
}

impl IpfwNat {
    /// Instances known to be in use: configured ones, else the ones rules name.
    pub fn instance_count(&self) -> Option<usize> {
        let rules = self.rules.as_ref();
        if rules.is_some_and(|r| r.tablearg) {
            return None;
        }
        match (&self.instances, rules) {
            (Some(i), _) if !i.is_empty() => Some(i.len()),
            (_, Some(r)) if !r.targets.is_empty() => Some(r.targets.len()),
            (Some(_), _) | (_, Some(_)) => Some(0),
            (None, None) => None,
        }
    }

    /// The one instance's configuration, when there is exactly one.
    pub fn single(&self) -> Option<&NatInstance> {
        match self.instances.as_deref() {
            Some([one]) => Some(one),
            _ => None,
        }
    }
}

/// Parses `ipfw nat show config` output.
pub fn parse_nat_config(text: &str) -> Vec<NatInstance> {
    let mut out: Vec<NatInstance> = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "nat");
        let Some(at) = at.filter(|a| words.get(a + 2) == Some(&"config")) else {
            continue;
        };
        let Ok(id) = words[at + 1].parse() else {
            continue;
        };
        if out.iter().all(|i| i.id != id) {
            out.push(NatInstance {
                id,
                config: words[at + 3..].join(" "),
            });
        }
    }
    out
}

fn push_new<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// Parses `ipfw list` output: the `nat N` / `nat tablearg` rules.
pub fn parse_rules(text: &str) -> NatRules {
    let mut out = NatRules::default();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        // `00100 nat 1 ...`, possibly with `set N`, `prob X` or `count` words before the action.
        let Some(at) = words.iter().position(|w| *w == "nat") else {
            continue;
        };
        match words.get(at + 1) {
            Some(&"tablearg") => out.tablearg = true,
            Some(n) => match n.parse::<u32>() {
                Ok(id) => push_new(&mut out.targets, id),
                Err(_) => continue,
            },
            None => continue,
        }
        if let Some(number) = words.first().and_then(|w| w.parse().ok()) {
            push_new(&mut out.numbers, number);
        }
        for pair in words.windows(2) {
            let valid = nictune_core::names::check_iface(pair[1]).is_ok();
            if matches!(pair[0], "via" | "xmit" | "recv") && valid {
                push_new(&mut out.ifaces, pair[1].to_string());
            }
        }
    }
    out.targets.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_instance_from_config_and_rules() {
        let config = "ipfw nat 1 config if igb0 log same_ports reset\n";
        let rules = "00100 allow ip from any to any via lo0\n\
                     00500 nat 1 ip from any to any via igb0\n\
                     00510 nat 1 ip from any to 198.51.100.1 in recv igb0\n\
                     65535 allow ip from any to any\n";
        let nat = IpfwNat {
            instances: Some(parse_nat_config(config)),
            rules: Some(parse_rules(rules)),
        };
        assert_eq!(nat.instance_count(), Some(1));
        let rules = nat.rules.as_ref().unwrap();
        assert_eq!(
            (rules.numbers.as_slice(), rules.ifaces.as_slice()),
            (&[500, 510][..], &["igb0".to_string()][..])
        );
        assert_eq!(
            nat.single().map(|i| i.config.as_str()),
            Some("if igb0 log same_ports reset")
        );
    }

    #[test]
    fn tablearg_and_several_instances_are_not_one() {
        let rules = parse_rules("01000 nat tablearg ip from table(1) to any out\n");
        assert!(rules.tablearg && rules.targets.is_empty());
        let nat = IpfwNat {
            instances: Some(parse_nat_config("ipfw nat 1 config ip 192.0.2.1\n")),
            rules: Some(rules),
        };
        assert_eq!(
            nat.instance_count(),
            None,
            "tablearg: instances from a table"
        );
        let nat = IpfwNat {
            instances: Some(parse_nat_config(
                "ipfw nat 1 config ip 192.0.2.1\nipfw nat 2 config ip 192.0.2.2\n",
            )),
            rules: None,
        };
        assert_eq!(nat.instance_count(), Some(2));
        assert!(nat.single().is_none());
        assert_eq!(IpfwNat::default().instance_count(), None);
    }
}
