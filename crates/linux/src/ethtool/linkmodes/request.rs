//! LINKMODES GET, decoded to the speed only (the link-mode bitsets are skipped).

use super::attr::*;
use crate::ethtool::get_decoded;
use crate::netlink::attr::Attrs;
use crate::netlink::genl::{Family, GenlSocket, NlError};
use crate::netlink::DecodeError;

/// The link speed of `iface` in Mb/s; `None` when the driver reports none.
pub fn speed(sock: &GenlSocket, family: Family, iface: &str) -> Result<Option<u32>, NlError> {
    get_decoded(sock, family, (MSG_GET, "link modes"), iface, decode_speed)
}

/// The SPEED attribute of a LINKMODES_GET reply; `None` when absent, 0 or SPEED_UNKNOWN.
pub fn decode_speed(attrs: &[u8]) -> Result<Option<u32>, DecodeError> {
    for a in Attrs::new(attrs) {
        let a = a?;
        if a.kind == SPEED {
            let mbps = a.u32()?;
            return Ok((mbps != 0 && mbps != SPEED_UNKNOWN).then_some(mbps));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// LINKMODES_GET reply attributes after the header nest: AUTONEG 0 (u8, padded), a
    /// bitset nest left empty here, SPEED 10000, DUPLEX 1 (full), laid out from
    /// ethtool_netlink.h (x86-64, little-endian).
    #[rustfmt::skip]
    const VETH_REPLY: &[u8] = &[
        5, 0, 2, 0, 0, 0, 0, 0,             // AUTONEG 0
        4, 0, 3, 0x80,                      // OURS: empty nest
        8, 0, 5, 0, 0x10, 0x27, 0, 0,       // SPEED 10000
        5, 0, 6, 0, 1, 0, 0, 0,             // DUPLEX full
    ];

    #[test]
    fn decodes_the_speed_and_skips_the_rest() {
        assert_eq!(decode_speed(VETH_REPLY).unwrap(), Some(10_000));
    }

    #[test]
    fn unknown_or_missing_speed_is_none() {
        let unknown: &[u8] = &[8, 0, 5, 0, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(decode_speed(unknown).unwrap(), None);
        assert_eq!(decode_speed(&[]).unwrap(), None);
    }
}
