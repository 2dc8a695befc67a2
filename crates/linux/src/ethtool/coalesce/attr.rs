//! ETHTOOL_A_COALESCE_* numbers and their `ethtool -C` names and wire types.

/// ETHTOOL_MSG_COALESCE_GET (user → kernel).
pub const MSG_GET: u8 = 19;
/// ETHTOOL_MSG_COALESCE_SET (user → kernel).
pub const MSG_SET: u8 = 20;

/// The payload type of a coalesce attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Counts and times (`rx-usecs` in µs, `rx-frames` in packets, `pkt-rate-*` in packets per
    /// second).
    U32,
    /// Booleans (adaptive, CQE mode).
    U8,
}

/// `(attribute number, ethtool -C name, wire type)`, in kernel order. 29 and 30
/// (RX_PROFILE / TX_PROFILE, nests of DIM profiles) are not scalar and are skipped.
pub const FIELDS: [(u16, &str, Wire); 29] = [
    (2, "rx-usecs", Wire::U32),
    (3, "rx-frames", Wire::U32),
    (4, "rx-usecs-irq", Wire::U32),
    (5, "rx-frames-irq", Wire::U32),
    (6, "tx-usecs", Wire::U32),
    (7, "tx-frames", Wire::U32),
    (8, "tx-usecs-irq", Wire::U32),
    (9, "tx-frames-irq", Wire::U32),
    (10, "stats-block-usecs", Wire::U32),
    (11, "adaptive-rx", Wire::U8),
    (12, "adaptive-tx", Wire::U8),
    (13, "pkt-rate-low", Wire::U32),
    (14, "rx-usecs-low", Wire::U32),
    (15, "rx-frames-low", Wire::U32),
    (16, "tx-usecs-low", Wire::U32),
    (17, "tx-frames-low", Wire::U32),
    (18, "pkt-rate-high", Wire::U32),
    (19, "rx-usecs-high", Wire::U32),
    (20, "rx-frames-high", Wire::U32),
    (21, "tx-usecs-high", Wire::U32),
    (22, "tx-frames-high", Wire::U32),
    (23, "sample-interval", Wire::U32),
    (24, "cqe-mode-tx", Wire::U8),
    (25, "cqe-mode-rx", Wire::U8),
    (26, "tx-aggr-max-bytes", Wire::U32),
    (27, "tx-aggr-max-frames", Wire::U32),
    (28, "tx-aggr-time-usecs", Wire::U32),
    (31, "rx-cqe-frames", Wire::U32),
    (32, "rx-cqe-nsecs", Wire::U32),
];

/// The attribute number and wire type of an `ethtool -C` name.
pub fn by_name(name: &str) -> Option<(u16, Wire)> {
    FIELDS
        .iter()
        .find(|(_, n, _)| *n == name)
        .map(|(a, _, w)| (*a, *w))
}

/// The name and wire type of an attribute number.
pub fn by_number(attr: u16) -> Option<(&'static str, Wire)> {
    FIELDS
        .iter()
        .find(|(a, _, _)| *a == attr)
        .map(|(_, n, w)| (*n, *w))
}
