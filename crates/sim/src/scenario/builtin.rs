//! Built-in scenarios, embedded from `crates/sim/scenarios/*.toml`.

use super::error::ScenarioError;
use super::Scenario;

/// `(name, TOML text)` of every built-in scenario.
const BUILTIN: &[(&str, &str)] = &[
    (
        "seed-e1000-rr",
        include_str!("../../scenarios/seed-e1000-rr.toml"),
    ),
    (
        "seed-e1000-ping",
        include_str!("../../scenarios/seed-e1000-ping.toml"),
    ),
    (
        "linerate-10g-64b",
        include_str!("../../scenarios/linerate-10g-64b.toml"),
    ),
];

/// The built-in scenario `name`.
pub fn get(name: &str) -> Result<Scenario, ScenarioError> {
    let (_, text) = BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| ScenarioError::NotFound(name.to_string()))?;
    Scenario::from_toml(name, text)
}

/// Every built-in scenario (name and description), in listing order.
pub fn list() -> Vec<(String, String)> {
    BUILTIN
        .iter()
        .filter_map(|(n, t)| Scenario::from_toml(n, t).ok())
        .map(|s| (s.name, s.description))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_builds() {
        assert_eq!(list().len(), BUILTIN.len());
        for (name, _) in BUILTIN {
            let s = get(name).unwrap();
            super::super::build::spec(&s.resolved()).unwrap();
        }
        assert!(matches!(get("nope"), Err(ScenarioError::NotFound(_))));
    }
}
