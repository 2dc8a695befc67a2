//! ETHTOOL_A_FEATURES_* and the bitset attributes (ETHTOOL_A_BITSET_*) they carry.

/// ETHTOOL_MSG_FEATURES_GET.
pub const MSG_GET: u8 = 11;
/// ETHTOOL_MSG_FEATURES_SET.
pub const MSG_SET: u8 = 12;

/// ETHTOOL_A_FEATURES_HW (bitset): the features the driver lets the user change.
pub const HW: u16 = 2;
/// ETHTOOL_A_FEATURES_WANTED (bitset): the features requested by the user (in SET, the change).
pub const WANTED: u16 = 3;
/// ETHTOOL_A_FEATURES_ACTIVE (bitset): the features currently on.
pub const ACTIVE: u16 = 4;
/// ETHTOOL_A_FEATURES_NOCHANGE (bitset): the features that can never be changed.
pub const NOCHANGE: u16 = 5;

/// ETHTOOL_A_BITSET_*: a bitset nest.
pub mod bitset {
    /// ETHTOOL_A_BITSET_NOMASK (flag): the bitset is a plain list of values, with no mask.
    pub const NOMASK: u16 = 1;
    /// ETHTOOL_A_BITSET_SIZE (u32): the number of significant bits.
    pub const SIZE: u16 = 2;
    /// ETHTOOL_A_BITSET_BITS (nest): one BITS_BIT nest per bit, by index or name.
    pub const BITS: u16 = 3;
    /// ETHTOOL_A_BITSET_VALUE (binary): the values as a compact array of u32 words.
    pub const VALUE: u16 = 4;
    /// ETHTOOL_A_BITSET_MASK (binary): which bits of VALUE are meaningful, compact form.
    pub const MASK: u16 = 5;
}

/// ETHTOOL_A_BITSET_BITS_BIT: one bit nest inside BITS.
pub const BITS_BIT: u16 = 1;

/// ETHTOOL_A_BITSET_BIT_*: fields of one bit.
pub mod bit {
    /// ETHTOOL_A_BITSET_BIT_INDEX (u32): the bit's position.
    pub const INDEX: u16 = 1;
    /// ETHTOOL_A_BITSET_BIT_NAME (string): the feature name, as in `names`.
    pub const NAME: u16 = 2;
    /// ETHTOOL_A_BITSET_BIT_VALUE (flag): present when the bit is set.
    pub const VALUE: u16 = 3;
}

/// Feature names as the kernel spells them (net/ethtool/common.c, netdev_features_strings).
pub mod names {
    /// NETIF_F_GRO_BIT: `ethtool -K DEV gro`.
    pub const GRO: &str = "rx-gro";

    /// The TCP segmentation bits `ethtool -K DEV tso` changes together: every feature named
    /// `tx-tcp*-segmentation` (tx-tcp-, tx-tcp-ecn-, tx-tcp-mangleid-, tx-tcp6-, and on newer
    /// kernels tx-tcp-accecn-segmentation).
    pub fn is_tso(name: &str) -> bool {
        name.starts_with("tx-tcp") && name.ends_with("-segmentation")
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn tso_is_every_tcp_segmentation_bit() {
            for name in [
                "tx-tcp-segmentation",
                "tx-tcp6-segmentation",
                "tx-tcp-accecn-segmentation",
            ] {
                assert!(super::is_tso(name), "{name}");
            }
            for name in ["tx-udp-segmentation", "tx-gso-partial", "rx-gro"] {
                assert!(!super::is_tso(name), "{name}");
            }
        }
    }
}
