//! Rings GET (decoded into [`Rings`]) and the SET encoder.

use super::attr::*;
use crate::ethtool::{decode_u32s, encode_u32s, get_decoded, U32Field};
use crate::netlink::genl::{Family, GenlSocket, NlError};
use crate::netlink::DecodeError;
use nictune_host::snapshot::Rings;

/// The settable sizes.
const SIZES: [U32Field<Rings>; 6] = [
    (RX, |r| &mut r.rx),
    (RX_MINI, |r| &mut r.rx_mini),
    (RX_JUMBO, |r| &mut r.rx_jumbo),
    (TX, |r| &mut r.tx),
    (RX_BUF_LEN, |r| &mut r.rx_buf_len),
    (CQE_SIZE, |r| &mut r.cqe_size),
];

/// The read-only maximums.
const MAXIMUMS: [U32Field<Rings>; 4] = [
    (RX_MAX, |r| &mut r.rx_max),
    (RX_MINI_MAX, |r| &mut r.rx_mini_max),
    (RX_JUMBO_MAX, |r| &mut r.rx_jumbo_max),
    (TX_MAX, |r| &mut r.tx_max),
];

/// Reads ring sizes and maximums.
pub fn get(sock: &GenlSocket, family: Family, iface: &str) -> Result<Rings, NlError> {
    get_decoded(sock, family, (MSG_GET, "rings"), iface, decode)
}

/// Decodes a RINGS_GET reply.
pub fn decode(attrs: &[u8]) -> Result<Rings, DecodeError> {
    decode_u32s(attrs, &[&SIZES, &MAXIMUMS])
}

/// A RINGS_SET changing the settable sizes present in `want` (maximums are ignored).
pub fn encode_set(iface: &str, want: &Rings) -> Vec<u8> {
    encode_u32s(iface, want, &SIZES)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RINGS_GET reply attributes for `eth0` (virtio_net, kernel 6.18.44, build machine),
    /// captured with this crate's socket, header nest left out, in the kernel's order.
    #[rustfmt::skip]
    const VIRTIO_REPLY: &[u8] = &[
        8, 0, 2, 0, 0, 1, 0, 0,   // RX_MAX 256
        8, 0, 6, 0, 0, 1, 0, 0,   // RX 256
        8, 0, 5, 0, 0, 1, 0, 0,   // TX_MAX 256
        8, 0, 9, 0, 0, 1, 0, 0,   // TX 256
        5, 0, 13, 0, 0, 0, 0, 0,  // TX_PUSH 0 (u8, skipped)
        5, 0, 14, 0, 0, 0, 0, 0,  // RX_PUSH 0 (u8, skipped)
    ];

    #[test]
    fn decodes_sizes_and_maximums() {
        let r = decode(VIRTIO_REPLY).unwrap();
        assert_eq!(
            (r.rx, r.rx_max, r.tx, r.tx_max),
            (Some(256), Some(256), Some(256), Some(256))
        );
        assert_eq!(r.rx_jumbo, None);
    }

    #[test]
    fn set_round_trips_without_maximums() {
        let want = Rings {
            rx: Some(4096),
            tx: Some(1024),
            rx_max: Some(8192),
            ..Rings::default()
        };
        let back = decode(&encode_set("eth0", &want)).unwrap();
        assert_eq!(
            back,
            Rings {
                rx_max: None,
                ..want
            }
        );
    }
}
