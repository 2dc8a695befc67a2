//! `driver-caveat` and `default-mismatch`: what the settings catalog
//! (`nictune_core::catalog`) knows about the values a NIC's driver runs with — caveats that
//! fire for the coalescing values read and the module options set (e.g. e1000 82547 with
//! InterruptThrottleRate above 75000 or 0), and defaults whose documentation and code
//! disagree for module parameters left at their default.

use crate::doctor::{Finding, Severity};
use crate::snapshot::{HostSnapshot, Nic};
use nictune_core::catalog::{self, Context, Entry, SourceKind};

/// PCI device ids of the models the catalog's caveats name (Intel 8254x datasheets).
const MODELS: [(&str, &str); 3] = [
    ("0x1019", "82547"),
    ("0x101a", "82547"),
    ("0x1075", "82547"),
];

/// Every catalog finding for every NIC.
pub fn from_catalog(snap: &HostSnapshot) -> Vec<Finding> {
    let mut out = Vec::new();
    for nic in &snap.nics {
        let Some(driver) = nic.driver.value() else {
            continue;
        };
        let context = Context {
            driver: Some(driver.clone()),
            device: model_of(nic),
            generation: None,
        };
        if let Some(c) = nic.coalesce.value() {
            for (field, value) in c.in_order() {
                let key = format!("coalesce.{field}");
                out.extend(caveats(nic, &key, &value.to_string(), &context));
            }
        }
        let options = snap.module_options.get(driver);
        for (param, value) in options.into_iter().flatten() {
            for one in value.split(',') {
                out.extend(caveats(nic, &format!("{driver}.{param}"), one, &context));
            }
        }
        out.extend(default_mismatches(nic, driver, options));
    }
    out
}

fn model_of(nic: &Nic) -> Option<String> {
    let (_, device) = nic.pci_id.as_ref()?;
    MODELS
        .iter()
        .find(|(id, _)| id.eq_ignore_ascii_case(device))
        .map(|(_, m)| m.to_string())
}

/// Warnings the catalog raises for `key = value` in `context`.
fn caveats(nic: &Nic, key: &str, value: &str, context: &Context) -> Vec<Finding> {
    let driver = context.driver.as_deref();
    let Ok(entry) = catalog::catalog().lookup(key, driver) else {
        return Vec::new();
    };
    let Ok(parsed) = entry.parse_value(value) else {
        return Vec::new();
    };
    let Ok(report) = catalog::check(entry, &parsed, context) else {
        return Vec::new();
    };
    report
        .warnings
        .iter()
        .map(|w| {
            let mut f = Finding::new(
                "driver-caveat",
                Severity::Warning,
                format!("{} {}", nic.name, entry.key),
            )
            .evidence(entry.key.clone(), value)
            .evidence("driver", driver.unwrap_or("?"))
            .explain(w.message.clone());
            if let Some(model) = &context.device {
                f = f.evidence("device", model);
            }
            if let Some(source) = &w.source {
                f = f.evidence("source", source);
            }
            f.fix(format!("nictune explain {}", entry.key))
        })
        .collect()
}

/// Module parameters of `driver` left at their default whose documented default differs
/// from the one in the code.
fn default_mismatches(
    nic: &Nic,
    driver: &str,
    options: Option<&std::collections::BTreeMap<String, String>>,
) -> Vec<Finding> {
    catalog::catalog()
        .entries()
        .iter()
        .filter(|e| e.driver.as_deref() == Some(driver) && e.key.starts_with(&format!("{driver}.")))
        .filter(|e| {
            let param = &e.key[driver.len() + 1..];
            options.is_none_or(|o| !o.contains_key(param))
        })
        .filter_map(|e| mismatch(nic, e))
        .collect()
}

fn mismatch(nic: &Nic, entry: &Entry) -> Option<Finding> {
    let conflict = entry.conflicts.iter().find(|c| c.topic == "default")?;
    let by = |kind: SourceKind| conflict.claims.iter().find(|c| c.kind == kind);
    let (doc, code) = (by(SourceKind::Doc)?, by(SourceKind::Code)?);
    if doc.value == code.value {
        return None;
    }
    let mut f = Finding::new(
        "default-mismatch",
        Severity::Info,
        format!("{} {}", nic.name, entry.key),
    )
    .evidence(
        "documented default",
        format!("{} ({})", doc.value, doc.source),
    )
    .evidence(
        "default in the code",
        format!("{} ({})", code.value, code.source),
    )
    .explain(format!(
        "{} is not set, so the driver runs with the default its code uses, not the one \
             its documentation states.",
        entry.key
    ));
    if let Some(r) = &conflict.resolution {
        f = f.evidence("resolution", r);
    }
    Some(f.fix(format!("nictune explain {}", entry.key)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::FakeHost;
    use crate::snapshot;

    /// An e1000 port on an 82547 (PCI 8086:1019) with `options` in modprobe.d.
    fn e1000(options: &str) -> HostSnapshot {
        let host = FakeHost::new()
            .with_link(
                "/sys/class/net/eth0",
                "../../devices/pci0000:00/0000:00:02.0/net/eth0",
            )
            .with_link("/sys/class/net/eth0/device", "../../../0000:00:02.0")
            .with_link(
                "/sys/class/net/eth0/device/driver",
                "../../../bus/pci/drivers/e1000",
            )
            .with_file("/sys/devices/pci0000:00/0000:00:02.0/vendor", "0x8086\n")
            .with_file("/sys/devices/pci0000:00/0000:00:02.0/device", "0x1019\n")
            .with_file("/etc/modprobe.d/e1000.conf", options);
        snapshot::build(&host, &[])
    }

    fn ids(snap: &HostSnapshot, id: &str) -> Vec<String> {
        from_catalog(snap)
            .into_iter()
            .filter(|f| f.id == id)
            .map(|f| f.subject)
            .collect()
    }

    #[test]
    fn itr_above_75000_on_an_82547_is_a_caveat() {
        let snap = e1000("options e1000 InterruptThrottleRate=80000\n");
        assert_eq!(snap.nics[0].pci_id.as_ref().unwrap().1, "0x1019");
        assert_eq!(
            ids(&snap, "driver-caveat"),
            ["eth0 e1000.InterruptThrottleRate"]
        );
        let calm = e1000("options e1000 InterruptThrottleRate=20000\n");
        assert!(ids(&calm, "driver-caveat").is_empty());
    }

    #[test]
    fn unset_parameters_with_disagreeing_default_docs_are_noted() {
        let unset = ids(&e1000(""), "default-mismatch");
        assert!(
            unset.contains(&"eth0 e1000.RxAbsIntDelay".to_string()),
            "{unset:?}"
        );
        let set = ids(
            &e1000("options e1000 RxAbsIntDelay=8\n"),
            "default-mismatch",
        );
        assert!(
            !set.contains(&"eth0 e1000.RxAbsIntDelay".to_string()),
            "{set:?}"
        );
    }
}
