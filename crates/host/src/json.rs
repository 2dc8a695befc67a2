//! How the host model's pairs read in JSON: the project's JSON rules (docs/cli.md) want
//! objects with named fields, not `[cpu, count]` arrays, and units in field names. These
//! `serialize_with` helpers keep the Rust types as they are (pairs are easy to build and
//! search) and write each pair as an object.

use nictune_core::units::Nanos;
use serde::{Serialize, Serializer};

/// `[(cpu, count)]` as `[{"cpu": N, "count": N}]`.
pub(crate) fn cpu_counts<S: Serializer>(v: &[(u32, u64)], s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Row {
        cpu: u32,
        count: u64,
    }
    s.collect_seq(v.iter().map(|&(cpu, count)| Row { cpu, count }))
}

/// `[(cpu, rate)]` as `[{"cpu": N, "per_sec": X}]`.
pub(crate) fn cpu_rates<S: Serializer>(v: &[(u32, f64)], s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Row {
        cpu: u32,
        per_sec: f64,
    }
    s.collect_seq(v.iter().map(|&(cpu, per_sec)| Row { cpu, per_sec }))
}

/// `[(cpu, value)]` as `[{"cpu": N, ...value's fields}]`.
pub(crate) fn per_cpu_objects<S: Serializer, T: Serialize>(
    v: &[(u32, T)],
    s: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Row<'a, T> {
        cpu: u32,
        #[serde(flatten)]
        fields: &'a T,
    }
    s.collect_seq(v.iter().map(|(cpu, fields)| Row { cpu: *cpu, fields }))
}

/// `[(name, counts per CPU column)]` as `[{"name": "NET_RX", "per_cpu": [..]}]`.
pub(crate) fn named_rows<S: Serializer>(v: &[(String, Vec<u64>)], s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Row<'a> {
        name: &'a str,
        per_cpu: &'a [u64],
    }
    s.collect_seq(v.iter().map(|(name, per_cpu)| Row { name, per_cpu }))
}

/// A duration as seconds (for a field named `…_s`).
pub(crate) fn seconds<S: Serializer>(v: &Nanos, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(v.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Probe {
        #[serde(serialize_with = "cpu_counts")]
        counts: Vec<(u32, u64)>,
        #[serde(serialize_with = "cpu_rates")]
        rates: Vec<(u32, f64)>,
        #[serde(serialize_with = "named_rows")]
        rows: Vec<(String, Vec<u64>)>,
        #[serde(serialize_with = "seconds")]
        elapsed_s: Nanos,
    }

    #[test]
    fn pairs_become_objects_and_durations_seconds() {
        let p = Probe {
            counts: vec![(0, 5), (3, 7)],
            rates: vec![(1, 2.5)],
            rows: vec![("NET_RX".into(), vec![1, 2])],
            elapsed_s: Nanos::from_millis(1_500),
        };
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"counts":[{"cpu":0,"count":5},{"cpu":3,"count":7}],"rates":[{"cpu":1,"per_sec":2.5}],"rows":[{"name":"NET_RX","per_cpu":[1,2]}],"elapsed_s":1.5}"#
        );
    }
}
