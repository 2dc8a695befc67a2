//! Linux doctor rules over a [`HostSnapshot`] and, when `--interval` sampled them, the
//! [`Rates`]. Each rule is a function returning its findings.

mod agents;
pub mod caveats;
mod drops;
mod e1000e;
mod moderation;
mod pileup;

use super::Finding;
use crate::rates::Rates;
use crate::snapshot::HostSnapshot;

/// Runs every Linux rule; `caveats` supplies driver-parameter caveats — normally
/// [`caveats::from_catalog`]; tests pass their own.
pub fn run(
    snap: &HostSnapshot,
    rates: Option<&Rates>,
    caveats: &dyn Fn(&HostSnapshot) -> Vec<Finding>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(pileup::irq_pileup(snap, rates));
    out.extend(drops::nic_drops(snap, rates));
    out.extend(drops::rx_overruns(snap, rates));
    out.extend(drops::softnet(snap, rates));
    out.extend(drops::small_rings(snap, rates));
    out.extend(moderation::fixed_rate_mismatch(snap, rates));
    out.extend(moderation::adaptive_off(snap, rates));
    out.extend(moderation::busy_poll_without_napi(snap));
    out.extend(e1000e::dynamic_itr(snap, rates));
    out.extend(agents::irqbalance_vs_pins(snap));
    out.extend(caveats(snap));
    out
}
