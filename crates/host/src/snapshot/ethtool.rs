//! What the ethtool netlink family reports about one interface: coalescing, rings,
//! channels and the receive-offload features. Attribute presence is capability: a field the
//! driver does not support is absent, never zero.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Coalescing fields in ethtool's order, named as `ethtool -C` spells them.
pub const COALESCE_FIELDS: [&str; 29] = [
    "rx-usecs",
    "rx-frames",
    "rx-usecs-irq",
    "rx-frames-irq",
    "tx-usecs",
    "tx-frames",
    "tx-usecs-irq",
    "tx-frames-irq",
    "stats-block-usecs",
    "adaptive-rx",
    "adaptive-tx",
    "pkt-rate-low",
    "rx-usecs-low",
    "rx-frames-low",
    "tx-usecs-low",
    "tx-frames-low",
    "pkt-rate-high",
    "rx-usecs-high",
    "rx-frames-high",
    "tx-usecs-high",
    "tx-frames-high",
    "sample-interval",
    "cqe-mode-tx",
    "cqe-mode-rx",
    "tx-aggr-max-bytes",
    "tx-aggr-max-frames",
    "tx-aggr-time-usecs",
    "rx-cqe-frames",
    "rx-cqe-nsecs",
];

/// The coalescing fields the driver reported, by `ethtool -C` name (µs, frames, pkt/s,
/// booleans as 0/1 — the unit is in the name, as ethtool has it).
///
/// In JSON every field of [`COALESCE_FIELDS`] is present, snake_case (`rx_usecs`), `null`
/// where the driver does not support it, the on/off fields as booleans and the sample
/// interval with its unit (`sample_interval_s`).
/// Captures store it in the same form and read back both it and the earlier `ethtool -C`
/// names with 0/1 values.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Coalesce(pub BTreeMap<String, u64>);

/// The coalescing fields that are switches (ETHTOOL_A_COALESCE_USE_ADAPTIVE_*, *_CQE_MODE_*).
const COALESCE_SWITCHES: [&str; 4] = ["adaptive-rx", "adaptive-tx", "cqe-mode-tx", "cqe-mode-rx"];

/// The JSON name of a coalescing field: snake_case, with the unit where the name lacks one.
fn coalesce_json_name(field: &str) -> String {
    match field {
        // ETHTOOL_A_COALESCE_RATE_SAMPLE_INTERVAL is in seconds (`ethtool -C … sample-interval`).
        "sample-interval" => "sample_interval_s".into(),
        f => f.replace('-', "_"),
    }
}

impl<'de> Deserialize<'de> for Coalesce {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u64),
            Switch(bool),
        }
        let raw: BTreeMap<String, Option<Raw>> = BTreeMap::deserialize(d)?;
        let fields = raw.into_iter().filter_map(|(name, value)| {
            let field = COALESCE_FIELDS
                .iter()
                .find(|f| **f == name || coalesce_json_name(f) == name)
                .map_or(name, |f| f.to_string());
            match value? {
                Raw::Number(n) => Some((field, n)),
                Raw::Switch(b) => Some((field, u64::from(b))),
            }
        });
        Ok(Coalesce(fields.collect()))
    }
}

impl Serialize for Coalesce {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(COALESCE_FIELDS.len()))?;
        for field in COALESCE_FIELDS {
            let name = coalesce_json_name(field);
            match self.get(field) {
                None => map.serialize_entry(&name, &None::<u64>)?,
                Some(v) if COALESCE_SWITCHES.contains(&field) => {
                    map.serialize_entry(&name, &(v != 0))?
                }
                Some(v) => map.serialize_entry(&name, &v)?,
            }
        }
        map.end()
    }
}

impl Coalesce {
    /// A field's value; `None` when the driver does not support it.
    pub fn get(&self, field: &str) -> Option<u64> {
        self.0.get(field).copied()
    }

    /// The supported fields in ethtool's order.
    pub fn in_order(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        COALESCE_FIELDS
            .iter()
            .filter_map(|f| self.get(f).map(|v| (*f, v)))
    }
}

/// Ring sizes in descriptors, current and the driver's maximum.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Rings {
    /// Receive ring size (ETHTOOL_A_RINGS_RX); `None` when the driver does not report it.
    pub rx: Option<u32>,
    /// Largest receive ring the driver accepts (ETHTOOL_A_RINGS_RX_MAX).
    pub rx_max: Option<u32>,
    /// Receive mini ring size (ETHTOOL_A_RINGS_RX_MINI).
    pub rx_mini: Option<u32>,
    /// Largest receive mini ring (ETHTOOL_A_RINGS_RX_MINI_MAX).
    pub rx_mini_max: Option<u32>,
    /// Receive jumbo ring size (ETHTOOL_A_RINGS_RX_JUMBO).
    pub rx_jumbo: Option<u32>,
    /// Largest receive jumbo ring (ETHTOOL_A_RINGS_RX_JUMBO_MAX).
    pub rx_jumbo_max: Option<u32>,
    /// Transmit ring size (ETHTOOL_A_RINGS_TX).
    pub tx: Option<u32>,
    /// Largest transmit ring (ETHTOOL_A_RINGS_TX_MAX).
    pub tx_max: Option<u32>,
    /// Receive buffer size in bytes (ETHTOOL_A_RINGS_RX_BUF_LEN), not descriptors.
    pub rx_buf_len: Option<u32>,
    /// Completion queue entry size in bytes (ETHTOOL_A_RINGS_CQE_SIZE), not descriptors.
    pub cqe_size: Option<u32>,
}

/// Channel (queue) counts, current and maximum.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Channels {
    /// Receive-only channels in use (ETHTOOL_A_CHANNELS_RX_COUNT); `None` when not reported.
    pub rx: Option<u32>,
    /// Most receive-only channels the driver allows (ETHTOOL_A_CHANNELS_RX_MAX).
    pub rx_max: Option<u32>,
    /// Transmit-only channels in use (ETHTOOL_A_CHANNELS_TX_COUNT).
    pub tx: Option<u32>,
    /// Most transmit-only channels (ETHTOOL_A_CHANNELS_TX_MAX).
    pub tx_max: Option<u32>,
    /// Other channels in use, e.g. the link interrupt (ETHTOOL_A_CHANNELS_OTHER_COUNT).
    pub other: Option<u32>,
    /// Most other channels (ETHTOOL_A_CHANNELS_OTHER_MAX).
    pub other_max: Option<u32>,
    /// Combined receive/transmit channels in use (ETHTOOL_A_CHANNELS_COMBINED_COUNT).
    pub combined: Option<u32>,
    /// Most combined channels (ETHTOOL_A_CHANNELS_COMBINED_MAX).
    pub combined_max: Option<u32>,
}

impl Channels {
    /// Receive queues in use: combined plus rx-only.
    pub fn rx_queues(&self) -> u32 {
        self.combined.unwrap_or(0) + self.rx.unwrap_or(0)
    }
}

/// Offload features relevant to moderation, by kernel feature name (`rx-gro`, `rx-lro`,
/// `rx-gro-hw`, ...): `true` when active.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Features(pub BTreeMap<String, bool>);

impl Features {
    /// The names nictune reads; others are dropped when decoding.
    pub const RELEVANT: [&'static str; 7] = [
        "rx-gro",
        "rx-lro",
        "rx-gro-hw",
        "rx-gro-list",
        "rx-udp-gro-forwarding",
        "rx-ntuple-filter",
        "rx-hashing",
    ];

    /// Whether GRO is on (`None` if the reply did not list it).
    pub fn gro(&self) -> Option<bool> {
        self.0.get("rx-gro").copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #13: one case style, real booleans and `null` for what the driver lacks.
    #[test]
    fn coalesce_json_is_snake_case_with_booleans_and_nulls() {
        let c = Coalesce(BTreeMap::from([
            ("rx-usecs".to_string(), 3),
            ("adaptive-rx".to_string(), 1),
            ("sample-interval".to_string(), 2),
        ]));
        let v = serde_json::to_value(&c).unwrap();
        let obj = v.as_object().unwrap();
        assert_eq!(obj.len(), COALESCE_FIELDS.len());
        assert_eq!(v["rx_usecs"], 3);
        assert_eq!(v["adaptive_rx"], true);
        assert_eq!(v["sample_interval_s"], 2);
        assert_eq!(v["tx_usecs"], serde_json::Value::Null);
        assert!(obj.keys().all(|k| !k.contains('-')), "{obj:?}");
        // Read back (captures store this form), and the earlier form of older captures.
        assert_eq!(serde_json::from_value::<Coalesce>(v).unwrap(), c);
        let old = serde_json::json!({"rx-usecs": 3, "adaptive-rx": 1, "sample-interval": 2});
        assert_eq!(serde_json::from_value::<Coalesce>(old).unwrap(), c);
    }
}
