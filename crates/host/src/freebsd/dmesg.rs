//! `dmesg` lines the doctor uses: receive-structure failures (cluster shortage at init) and
//! the driver's queue → CPU binding (`igb0: Bound queue 2 to cpu 2`).

use nictune_core::input::{MAX_CPUS, MAX_QUEUES};
use serde::Serialize;

/// What dmesg says about the NICs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct DmesgFacts {
    /// Interfaces that printed `could not setup receive structures`.
    pub rx_setup_failed: Vec<String>,
    /// `(interface, queue, cpu)` from `Bound queue Q to cpu C`.
    pub bound_queues: Vec<(String, u32, u32)>,
}

/// Extracts the facts from dmesg text.
pub fn parse_dmesg(text: &str) -> DmesgFacts {
    let mut f = DmesgFacts::default();
    for line in text.lines() {
        let Some((dev, msg)) = line.split_once(": ") else {
            continue;
        };
        // Names outside the interface-name rule would end up in the doctor's fix commands.
        if nictune_core::names::check_iface(dev).is_err() {
            continue;
        }
        let msg = msg.trim();
        if msg.contains("could not setup receive structures")
            && !f.rx_setup_failed.iter().any(|d| d == dev)
        {
            f.rx_setup_failed.push(dev.to_string());
        }
        if let Some(rest) = msg.strip_prefix("Bound queue ") {
            let mut words = rest.split_whitespace();
            let queue = words.next().and_then(|q| q.parse().ok());
            let cpu = words.nth(2).and_then(|c| c.parse().ok());
            // Out-of-range numbers are not a binding the doctor could act on.
            let sane = |q: u32, c: u32| u64::from(q) < MAX_QUEUES && u64::from(c) < MAX_CPUS;
            if let (Some(q), Some(c)) = (queue, cpu) {
                if sane(q, c) {
                    f.bound_queues.push((dev.to_string(), q, c));
                }
            }
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_and_bindings() {
        let text = "igb0: could not setup receive structures\n\
                    igb0: could not setup receive structures\n\
                    igb1: Bound queue 3 to cpu 3\n\
                    kernel: something else\n";
        let f = parse_dmesg(text);
        assert_eq!(f.rx_setup_failed, ["igb0"]);
        assert_eq!(f.bound_queues, [("igb1".to_string(), 3, 3)]);
    }
}
