//! Scenarios: named, validated parameter sets, from TOML files or built in, adjusted with
//! `--set`, expanded by `--sweep`, and run.
//!
//! A scenario file is TOML whose tables flatten to dotted keys (`[client] itr = 0` is
//! `client.itr`); `description` is the one line `--list` shows and `notes` the scenario's own
//! paragraph in `--explain` (what its values rest on). Keys under `[hosts]` apply to
//! both hosts unless a host sets its own. Every key is checked against the catalog
//! ([`keys`]): an unknown key, a wrong type or an out-of-range value is an error naming the
//! key, the value and what is allowed.

pub mod build;
pub mod builtin;
pub mod error;
pub mod families;
pub mod keys;
pub mod sweep;
pub mod value;

use crate::engine::sim::{Sim, SimOutput};
use crate::metrics::collect;
use error::ScenarioError;
use nictune_core::metrics::Metrics;
use serde::Serialize;
use std::collections::BTreeMap;
use value::ParamValue;

/// A scenario ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Built-in name or file name.
    pub name: String,
    /// One line.
    pub description: String,
    /// What the scenario's values rest on, for `--explain` (may be empty).
    pub notes: String,
    set: BTreeMap<String, ParamValue>,
    /// Keys given for one host by name (not through `hosts.*`), to refuse those of a host
    /// the topology does not have.
    named_host_keys: std::collections::BTreeSet<String>,
}

/// One run's results: the `params`, `metrics` and `engine` of `nictune.sim/v2`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunResult {
    /// Every key with the value the run used.
    pub params: BTreeMap<String, ParamValue>,
    /// What was measured.
    pub metrics: Metrics,
    /// Engine figures.
    pub engine: EngineInfo,
}

/// The `engine` block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineInfo {
    /// The seed the run used.
    pub seed: u64,
    /// Events processed.
    pub events: u64,
    /// Frames that arrived at any NIC.
    pub packets: u64,
    /// Simulated seconds (JSON `sim_s` since `nictune.sim/v2`: units as `_s`, as elsewhere).
    #[serde(rename = "sim_s")]
    pub sim_seconds: f64,
    /// Wall-clock seconds, filled in by the caller (never read inside a run); JSON `wall_s`.
    #[serde(rename = "wall_s")]
    pub wall_seconds: Option<f64>,
}

impl Scenario {
    /// A scenario from TOML text.
    pub fn from_toml(name: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| ScenarioError::Toml {
                    name: name.to_string(),
                    message: e.message().to_string(),
                })?;
        let mut description = String::new();
        let mut notes = String::new();
        let mut flat = Vec::new();
        for (k, v) in table {
            if k == "description" {
                description = v.as_str().unwrap_or_default().to_string();
            } else if k == "notes" {
                notes = v.as_str().unwrap_or_default().trim().to_string();
            } else {
                flatten(&k, v, &mut flat);
            }
        }
        // `hosts.*` first so that host-specific keys override them.
        flat.sort_by_key(|(k, _)| !k.starts_with("hosts."));
        let mut s = Scenario {
            name: name.to_string(),
            description,
            notes,
            set: BTreeMap::new(),
            named_host_keys: Default::default(),
        };
        for (key, v) in flat {
            let value = toml_value(&key, v)?;
            s.put(&key, |def| def.kind.check(&def.name, value.clone()))?;
        }
        Ok(s)
    }

    /// Sets `key` from command-line text (`--set key=value`).
    pub fn set(&mut self, key: &str, text: &str) -> Result<(), ScenarioError> {
        self.put(key.trim(), |def| def.kind.parse(&def.name, text))
    }

    /// Applies `KEY=VALUE`.
    pub fn assign(&mut self, assignment: &str) -> Result<(), ScenarioError> {
        let (k, v) = assignment
            .split_once('=')
            .ok_or_else(|| ScenarioError::Assignment(assignment.to_string()))?;
        self.set(k, v)
    }

    fn put(
        &mut self,
        key: &str,
        value: impl Fn(&keys::KeyDef) -> Result<ParamValue, ScenarioError>,
    ) -> Result<(), ScenarioError> {
        let targets: Vec<String> = match key.strip_prefix("hosts.") {
            Some(rest) => keys::HOSTS.iter().map(|h| format!("{h}.{rest}")).collect(),
            None => vec![key.to_string()],
        };
        if key.starts_with("client.") {
            self.named_host_keys.insert(key.to_string());
        }
        for target in targets {
            let def = keys::find(&target).ok_or_else(|| ScenarioError::UnknownKey {
                key: key.to_string(),
                suggestion: keys::suggest(key),
            })?;
            let v = value(def)?;
            self.set.insert(target, v);
        }
        Ok(())
    }

    /// Every key with its value: defaults, then the scenario, then `--set`; the host ITR
    /// default follows the driver generation; keys of absent hosts are left out.
    pub fn resolved(&self) -> BTreeMap<String, ParamValue> {
        let mut out: BTreeMap<String, ParamValue> = keys::catalog()
            .iter()
            .map(|k| (k.name.clone(), k.default.clone()))
            .collect();
        let driver = match self.set.get("driver") {
            Some(ParamValue::Text(d)) => d.clone(),
            _ => "e1000-7.0".to_string(),
        };
        for host in keys::HOSTS {
            let itr = build::generation(&driver)
                .map(|g| g.default_itr())
                .or_else(|| families::default_itr(&driver))
                .unwrap_or(8000);
            out.insert(format!("{host}.itr"), ParamValue::Int(itr));
        }
        out.extend(self.set.clone());
        if matches!(out.get("topology"), Some(ParamValue::Text(t)) if t == "generator") {
            out.retain(|k, _| !k.starts_with("client."));
        }
        out
    }

    /// The seed this scenario runs with.
    pub fn seed(&self) -> u64 {
        match self.resolved().get("seed") {
            Some(ParamValue::Int(s)) => *s as u64,
            _ => 0,
        }
    }

    /// Every key with its value, as [`Scenario::resolved`], refusing a key set for a host
    /// the topology does not have (the generator topology has no client).
    pub fn checked(&self) -> Result<BTreeMap<String, ParamValue>, ScenarioError> {
        let params = self.resolved();
        if matches!(params.get("topology"), Some(ParamValue::Text(t)) if t == "generator") {
            if let Some(k) = self.named_host_keys.iter().next() {
                return Err(ScenarioError::Inconsistent(format!(
                    "`{k}` is set, but the generator topology has no client (its keys are \
                     server.* or hosts.*)"
                )));
            }
        }
        Ok(params)
    }

    /// Runs the scenario and returns the raw engine output.
    pub fn simulate(&self) -> Result<SimOutput, ScenarioError> {
        let spec = build::spec(&self.checked()?)?;
        Ok(Sim::new(spec).run())
    }

    /// Runs the scenario (wall time left for the caller to fill in).
    pub fn run(&self) -> Result<RunResult, ScenarioError> {
        let params = self.checked()?;
        let out = Sim::new(build::spec(&params)?).run();
        Ok(RunResult {
            metrics: collect::metrics(&out),
            engine: EngineInfo {
                seed: self.seed(),
                events: out.events,
                packets: out.packets,
                sim_seconds: out.sim_ns as f64 / 1e9,
                wall_seconds: None,
            },
            params,
        })
    }
}

fn flatten(prefix: &str, v: toml::Value, out: &mut Vec<(String, toml::Value)>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        v => out.push((prefix.to_string(), v)),
    }
}

fn toml_value(key: &str, v: toml::Value) -> Result<ParamValue, ScenarioError> {
    match v {
        toml::Value::Integer(i) => Ok(ParamValue::Int(i)),
        toml::Value::Float(f) => Ok(ParamValue::Float(f)),
        toml::Value::String(s) => Ok(ParamValue::Text(s)),
        other => Err(ScenarioError::BadValue {
            key: key.to_string(),
            value: other.to_string(),
            problem: "of the wrong type",
            allowed: keys::find(key)
                .map_or("a number or a string".to_string(), |d| d.kind.allowed()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_flatten_and_hosts_apply_to_both() {
        let s = Scenario::from_toml(
            "t",
            "description = \"x\"\n[hosts]\nitr = 0\n[server]\nitr = 8000\n[client.cost]\napp_ns = 5\n",
        )
        .unwrap();
        let r = s.resolved();
        assert_eq!(r["client.itr"], ParamValue::Int(0));
        assert_eq!(r["server.itr"], ParamValue::Int(8000));
        assert_eq!(r["client.cost.app_ns"], ParamValue::Int(5));
        assert_eq!(s.description, "x");
        assert!(s.notes.is_empty());
        let noted = Scenario::from_toml("t", "notes = \"\"\"\nrests on\n\"\"\"\n").unwrap();
        assert_eq!(noted.notes, "rests on");
    }

    #[test]
    fn errors_name_key_value_and_allowed() {
        let e = Scenario::from_toml("t", "[client]\nitrr = 5\n").unwrap_err();
        assert!(matches!(e, ScenarioError::UnknownKey { ref key, .. } if key == "client.itrr"));
        assert!(e.to_string().contains("did you mean"), "{e}");
        let e = Scenario::from_toml("t", "[client]\nitr = \"fast\"\n").unwrap_err();
        assert!(e.to_string().contains("wrong type"), "{e}");
        let e = Scenario::from_toml("t", "duration = -1\n").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("duration") && msg.contains("-1") && msg.contains("out of range"),
            "{msg}"
        );
        let e = Scenario::from_toml("t", "[client]\nitr = true\n").unwrap_err();
        assert!(e.to_string().contains("wrong type"));
        let mut s = Scenario::from_toml("t", "").unwrap();
        assert!(matches!(
            s.assign("client.itr"),
            Err(ScenarioError::Assignment(_))
        ));
        assert!(
            s.assign("client.itr=70").is_ok(),
            "range is checked per driver at build"
        );
    }

    #[test]
    fn itr_default_follows_the_driver() {
        let s = Scenario::from_toml("t", "driver = \"e1000-7.3\"\n").unwrap();
        assert_eq!(s.resolved()["server.itr"], ParamValue::Int(3));
        let s = Scenario::from_toml("t", "").unwrap();
        assert_eq!(s.resolved()["server.itr"], ParamValue::Int(8000));
    }
}
