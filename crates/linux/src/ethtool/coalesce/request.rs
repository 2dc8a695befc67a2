//! Coalesce GET (decoded into [`Coalesce`]) and the SET request encoder.

use super::attr::{self, Wire};
use crate::netlink::attr::{AttrWriter, Attrs};
use crate::netlink::genl::{Family, GenlSocket, NlError};
use crate::netlink::DecodeError;
use nictune_host::snapshot::Coalesce;

/// Reads the coalescing fields the driver supports.
pub fn get(sock: &GenlSocket, family: Family, iface: &str) -> Result<Coalesce, NlError> {
    crate::ethtool::get_decoded(sock, family, (attr::MSG_GET, "coalesce"), iface, decode)
}

/// Decodes a COALESCE_GET reply; attributes it does not know are skipped.
pub fn decode(attrs: &[u8]) -> Result<Coalesce, DecodeError> {
    let mut out = Coalesce::default();
    for a in Attrs::new(attrs) {
        let a = a?;
        if let Some((name, _)) = attr::by_number(a.kind) {
            out.0.insert(name.to_string(), a.uint()?);
        }
    }
    Ok(out)
}

/// The attributes of a COALESCE_SET changing exactly `fields` (by `ethtool -C` name) on
/// `iface`. Unknown names are returned as an error naming them.
pub fn encode_set(iface: &str, fields: &Coalesce) -> Result<Vec<u8>, DecodeError> {
    let mut w: AttrWriter = crate::ethtool::header_for(iface);
    for (name, value) in &fields.0 {
        let (num, wire) = attr::by_name(name)
            .ok_or_else(|| DecodeError::new(format!("unknown coalesce field {name:?}")))?;
        match wire {
            Wire::U8 => w.u8(num, u8::from(*value != 0)),
            Wire::U32 => w.u32(num, u32::try_from(*value).unwrap_or(u32::MAX)),
        };
    }
    Ok(w.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// COALESCE_GET reply attributes for `eth0` (virtio_net) on the build machine, kernel
    /// 6.18.44, captured with this crate's socket (genl header stripped). Little-endian.
    #[rustfmt::skip]
    const VIRTIO_REPLY: &[u8] = &[
        // HEADER nest (1|NLA_F_NESTED), 24 bytes: DEV_INDEX=4, DEV_NAME="eth0"
        24, 0, 1, 0x80,
            8, 0, 1, 0, 4, 0, 0, 0,
            9, 0, 2, 0, b'e', b't', b'h', b'0', 0, 0, 0, 0,
        // RX_USECS (2) = 0
        8, 0, 2, 0, 0, 0, 0, 0,
        // RX_MAX_FRAMES (3) = 1
        8, 0, 3, 0, 1, 0, 0, 0,
        // TX_USECS (6) = 0
        8, 0, 6, 0, 0, 0, 0, 0,
        // TX_MAX_FRAMES (7) = 1
        8, 0, 7, 0, 1, 0, 0, 0,
        // USE_ADAPTIVE_RX (11) = 0, u8 padded
        5, 0, 11, 0, 0, 0, 0, 0,
    ];

    #[test]
    fn decodes_only_what_the_driver_reported() {
        let c = decode(VIRTIO_REPLY).unwrap();
        assert_eq!(c.get("rx-usecs"), Some(0));
        assert_eq!(c.get("rx-frames"), Some(1));
        assert_eq!(c.get("adaptive-rx"), Some(0));
        assert_eq!(
            c.get("adaptive-tx"),
            None,
            "unsupported is absent, not zero"
        );
        assert_eq!(c.0.len(), 5);
    }

    #[test]
    fn set_round_trips_through_decode() {
        let mut want = Coalesce::default();
        want.0.insert("rx-usecs".into(), 50);
        want.0.insert("adaptive-rx".into(), 1);
        want.0.insert("rx-cqe-nsecs".into(), 2000);
        let bytes = encode_set("eth1", &want).unwrap();
        assert_eq!(decode(&bytes).unwrap(), want);
        // rx-usecs: attribute 2, u32 50.
        let rx = Attrs::new(&bytes).find(2).unwrap();
        assert_eq!(rx.payload, &50u32.to_ne_bytes());
    }

    #[test]
    fn set_rejects_unknown_names() {
        let mut bad = Coalesce::default();
        bad.0.insert("rx-usec".into(), 1);
        assert!(encode_set("eth0", &bad)
            .unwrap_err()
            .to_string()
            .contains("rx-usec"));
    }

    #[test]
    fn the_table_matches_the_shared_field_list() {
        let names: Vec<&str> = attr::FIELDS.iter().map(|(_, n, _)| *n).collect();
        assert_eq!(names, nictune_host::snapshot::COALESCE_FIELDS);
    }
}
