//! Features GET, decoded from the verbose (named-bit) bitset form into [`Features`] (or
//! every named bit, [`active`]), and the SET that changes named features ([`set`]).
//!
//! Without ETHTOOL_FLAG_COMPACT_BITSETS the kernel sends each bit as a nest with its index
//! and name. ACTIVE is sent without a mask (NOMASK): the bits listed are the bits set.
//! With a mask, listed bits are those in the mask and VALUE marks the set ones — which is
//! also how a SET names the features to change: WANTED without NOMASK, one bit per feature.

use super::attr::{bit, bitset, ACTIVE, BITS_BIT, MSG_GET, MSG_SET, WANTED};
use crate::netlink::attr::{Attr, AttrWriter, Attrs};
use crate::netlink::genl::{Family, GenlSocket, NlError};
use crate::netlink::DecodeError;
use nictune_host::snapshot::Features;
use std::collections::BTreeMap;

/// Reads the active features relevant to moderation.
pub fn get(sock: &GenlSocket, family: Family, iface: &str) -> Result<Features, NlError> {
    crate::ethtool::get_decoded(sock, family, (MSG_GET, "features"), iface, decode)
}

/// Every active feature of `iface` by name (`rx-gro`, `tx-tcp-segmentation`, ...); a
/// feature missing from the map is off.
pub fn get_active(
    sock: &GenlSocket,
    family: Family,
    iface: &str,
) -> Result<BTreeMap<String, bool>, NlError> {
    crate::ethtool::get_decoded(sock, family, (MSG_GET, "features"), iface, active)
}

/// Turns the named features of `iface` on or off (`ethtool -K`); features not listed are
/// left alone. The kernel may keep a feature as it was (one the device cannot change, or
/// one a dependency forces): read back with [`get_active`] to know.
pub fn set(
    sock: &GenlSocket,
    family: Family,
    iface: &str,
    changes: &[(&str, bool)],
) -> Result<(), NlError> {
    let list: Vec<String> = changes
        .iter()
        .map(|(name, on)| format!("{name} {}", if *on { "on" } else { "off" }))
        .collect();
    let op = format!("ethtool features set {} on {iface}", list.join(", "));
    sock.request_ack(family, MSG_SET, &encode_set(iface, changes), &op)
}

/// Decodes a FEATURES_GET reply's ACTIVE bitset, keeping [`Features::RELEVANT`] names.
pub fn decode(attrs: &[u8]) -> Result<Features, DecodeError> {
    let mut out = Features::default();
    for name in Features::RELEVANT {
        out.0.insert(name.to_string(), false);
    }
    for (name, on) in active(attrs)? {
        if let Some(slot) = out.0.get_mut(&name) {
            *slot = on;
        }
    }
    Ok(out)
}

/// Decodes a FEATURES_GET reply's ACTIVE bitset: every bit it names, with its state.
pub fn active(attrs: &[u8]) -> Result<BTreeMap<String, bool>, DecodeError> {
    let Some(active) = Attrs::new(attrs).find(ACTIVE) else {
        return Err(DecodeError::new("no ACTIVE bitset in the features reply"));
    };
    let nomask = active.nested().find(bitset::NOMASK).is_some();
    let mut out = BTreeMap::new();
    let Some(bits) = active.nested().find(bitset::BITS) else {
        return Ok(out);
    };
    for one in bits.nested() {
        let one = one?;
        if one.kind != BITS_BIT {
            continue;
        }
        if let Some((name, on)) = named_bit(&one, nomask)? {
            out.insert(name, on);
        }
    }
    Ok(out)
}

/// The attributes of a FEATURES_SET turning the named features on or off (`rx-gro`, ...);
/// features not listed are left alone.
pub fn encode_set(iface: &str, changes: &[(&str, bool)]) -> Vec<u8> {
    let mut w: AttrWriter = crate::ethtool::header_for(iface);
    w.nest(WANTED, |set| {
        set.nest(bitset::BITS, |bits| {
            for (name, on) in changes {
                bits.nest(BITS_BIT, |b| {
                    b.string(bit::NAME, name);
                    if *on {
                        b.flag(bit::VALUE);
                    }
                });
            }
        });
    });
    w.finish()
}

fn named_bit(one: &Attr<'_>, nomask: bool) -> Result<Option<(String, bool)>, DecodeError> {
    let fields = one.nested();
    let Some(name) = fields.find(bit::NAME) else {
        return Ok(None);
    };
    let on = nomask || fields.find(bit::VALUE).is_some();
    Ok(Some((name.string()?, on)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::attr::AttrWriter;

    fn bit_nest(w: &mut AttrWriter, index: u32, name: &str, value: bool) {
        w.nest(BITS_BIT, |b| {
            b.u32(bit::INDEX, index).string(bit::NAME, name);
            if value {
                b.flag(bit::VALUE);
            }
        });
    }

    #[test]
    fn nomask_lists_only_active_bits() {
        let mut w = AttrWriter::new();
        w.nest(ACTIVE, |set| {
            set.flag(bitset::NOMASK)
                .u32(bitset::SIZE, 64)
                .nest(bitset::BITS, |bits| {
                    bit_nest(bits, 14, "rx-gro", false);
                    bit_nest(bits, 41, "rx-hashing", false);
                });
        });
        let f = decode(&w.finish()).unwrap();
        assert_eq!(f.gro(), Some(true));
        assert!(f.0["rx-hashing"]);
        assert!(!f.0["rx-lro"]);
    }

    #[test]
    fn with_a_mask_value_marks_set_bits() {
        let mut w = AttrWriter::new();
        w.nest(ACTIVE, |set| {
            set.u32(bitset::SIZE, 64).nest(bitset::BITS, |bits| {
                bit_nest(bits, 14, "rx-gro", false);
                bit_nest(bits, 15, "rx-lro", true);
            });
        });
        let f = decode(&w.finish()).unwrap();
        assert_eq!((f.gro(), f.0["rx-lro"]), (Some(false), true));
    }

    #[test]
    fn set_lists_each_changed_feature_in_a_masked_wanted_bitset() {
        let bytes = encode_set("v0", &[("rx-gro", true), ("rx-lro", false)]);
        let wanted = Attrs::new(&bytes).find(WANTED).unwrap();
        assert!(
            wanted.nested().find(bitset::NOMASK).is_none(),
            "a mask: only listed bits change"
        );
        // Read back with the reply decoder's rules by relabelling WANTED as ACTIVE.
        let mut as_reply = AttrWriter::new();
        as_reply.bytes(ACTIVE, wanted.payload);
        let f = decode(&as_reply.finish()).unwrap();
        assert_eq!((f.gro(), f.0["rx-lro"]), (Some(true), false));
    }

    #[test]
    fn active_names_every_bit_not_only_the_relevant_ones() {
        let mut w = AttrWriter::new();
        w.nest(ACTIVE, |set| {
            set.flag(bitset::NOMASK).nest(bitset::BITS, |bits| {
                bit_nest(bits, 14, "rx-gro", false);
                bit_nest(bits, 16, "tx-tcp-segmentation", false);
            });
        });
        let all = active(&w.finish()).unwrap();
        assert_eq!(all.len(), 2);
        assert!(all["rx-gro"] && all["tx-tcp-segmentation"]);
    }

    /// FEATURES_SET for `ethtool -K nt1s gro on tso off` (first of tso's four bits only),
    /// laid out per ethtool-netlink.rst: HEADER{DEV_NAME}, WANTED{BITS{BIT{NAME, VALUE},
    /// BIT{NAME}}}: listed bits form the mask, VALUE present means on.
    #[rustfmt::skip]
    const GRO_ON_TSO_OFF: &[u8] = &[
        16, 0, 1, 0x80,                                   // HEADER nest
            9, 0, 2, 0, b'n', b't', b'1', b's', 0, 0, 0, 0, // DEV_NAME "nt1s"
        56, 0, 3, 0x80,                                   // WANTED nest
            52, 0, 3, 0x80,                               // BITSET_BITS nest
                20, 0, 1, 0x80,                           // BITS_BIT nest
                    11, 0, 2, 0, b'r', b'x', b'-', b'g', b'r', b'o', 0, 0, // NAME "rx-gro"
                    4, 0, 3, 0,                           // VALUE (flag): on
                28, 0, 1, 0x80,                           // BITS_BIT nest
                    24, 0, 2, 0,                          // NAME "tx-tcp-segmentation"
                        b't', b'x', b'-', b't', b'c', b'p', b'-', b's', b'e', b'g',
                        b'm', b'e', b'n', b't', b'a', b't', b'i', b'o', b'n', 0,
    ];

    #[test]
    fn set_bytes_list_each_feature_with_value_only_when_on() {
        let changes = [("rx-gro", true), ("tx-tcp-segmentation", false)];
        assert_eq!(encode_set("nt1s", &changes), GRO_ON_TSO_OFF);
    }

    #[test]
    fn a_reply_without_active_is_an_error() {
        assert!(decode(&[]).is_err());
    }
}
