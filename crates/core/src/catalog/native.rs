//! A value written the way each mechanism expects it: `on`/`off` for ethtool, `1`/`0` for
//! sysctl and module parameters, enum numbers for sysfs and netlink, a hex mask for
//! `rps_cpus`, a CPU list for `smp_affinity_list`. `apply` and `export` render commands and
//! configuration lines through [`SetMethod::command`].

use super::model::{SetMethod, ValueType, Via};
use super::value::CatalogValue;

impl CatalogValue {
    /// The value as `via` expects it. `value_type` tells CPU masks from CPU lists.
    pub fn native(&self, via: Via, value_type: ValueType) -> String {
        match self {
            CatalogValue::Integer(n) => n.to_string(),
            CatalogValue::Bool(b) => native_bool(*b, via).to_string(),
            CatalogValue::Enum { name, number } => match via {
                Via::Ethtool | Via::Ynl | Via::Networkmanager | Via::SystemdLink => name.clone(),
                _ => number.to_string(),
            },
            CatalogValue::Cpus(set) => match (value_type, via) {
                (ValueType::CpuMask, Via::Sysfs) => set.to_mask(),
                _ => set.to_list(),
            },
            CatalogValue::PerPort(values) => {
                let parts: Vec<String> = values.iter().map(|v| v.native(via, value_type)).collect();
                parts.join(",")
            }
            CatalogValue::DimProfile(_) | CatalogValue::Triple(_) => self.to_string(),
        }
    }
}

fn native_bool(b: bool, via: Via) -> &'static str {
    match (via, b) {
        (Via::Ethtool, true) => "on",
        (Via::Ethtool, false) => "off",
        (Via::SystemdLink | Via::Networkmanager, true) => "yes",
        (Via::SystemdLink | Via::Networkmanager, false) => "no",
        (_, true) => "1",
        (_, false) => "0",
    }
}

impl SetMethod {
    /// The template with `{value}` (written natively for this mechanism) and `{dev}` filled
    /// in; other placeholders (`{n}`, `{queue}`, `{irq}`, `{napi_id}`) stay for the caller.
    pub fn command(&self, value: &CatalogValue, value_type: ValueType, dev: &str) -> String {
        self.render(&value.native(self.via, value_type), dev)
    }
}

#[cfg(test)]
mod tests {

    use crate::catalog::lookup;

    fn commands(key: &str, text: &str) -> Vec<String> {
        let entry = lookup(key).unwrap();
        let value = entry.parse_value(text).unwrap();
        entry
            .set
            .iter()
            .map(|m| m.command(&value, entry.value_type, "eth1"))
            .collect()
    }

    #[test]
    fn booleans_per_mechanism() {
        let gro = commands("feature.gro", "off");
        assert!(
            gro.contains(&"ethtool -K eth1 gro off".to_string()),
            "{gro:?}"
        );
        assert!(
            gro.contains(&"[Link] GenericReceiveOffload=no".to_string()),
            "{gro:?}"
        );
        let idle = commands("kern.polling.idle_poll", "on");
        assert!(
            idle.contains(&"sysctl kern.polling.idle_poll=1".to_string()),
            "{idle:?}"
        );
    }

    #[test]
    fn masks_for_rps_files_and_lists_for_irq_affinity() {
        let rps = commands("rps.cpus", "f0");
        assert_eq!(
            rps[0],
            "echo f0 > /sys/class/net/eth1/queues/rx-{queue}/rps_cpus"
        );
        assert_eq!(rps[1], "[Link] ReceivePacketSteeringCPUMask=4-7");
        let irq = commands("irq.affinity", "0-1,4");
        assert_eq!(irq[0], "echo 0-1,4 > /proc/irq/{irq}/smp_affinity_list");
        assert_eq!(irq[2], "cpuset -l 0-1,4 -x {irq}");
    }

    #[test]
    fn enums_are_numbers_in_sysfs_and_names_in_ynl() {
        let sysfs = commands("sysfs.threaded", "enabled");
        assert_eq!(sysfs[0], "echo 1 > /sys/class/net/eth1/threaded");
        let napi = commands("napi.threaded", "1");
        assert!(napi[0].contains("\"threaded\": \"enabled\""), "{}", napi[0]);
    }

    #[test]
    fn module_parameters_keep_one_value_per_port() {
        let lines = commands("e1000.InterruptThrottleRate", "8000, 3");
        assert_eq!(lines[0], "options e1000 InterruptThrottleRate=8000,3");
    }
}
