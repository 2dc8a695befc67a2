//! Channels GET (decoded into [`Channels`]) and the SET encoder.

use super::attr::*;
use crate::ethtool::{decode_u32s, encode_u32s, get_decoded, U32Field};
use crate::netlink::genl::{Family, GenlSocket, NlError};
use crate::netlink::DecodeError;
use nictune_host::snapshot::Channels;

/// The settable counts.
const COUNTS: [U32Field<Channels>; 4] = [
    (RX_COUNT, |c| &mut c.rx),
    (TX_COUNT, |c| &mut c.tx),
    (OTHER_COUNT, |c| &mut c.other),
    (COMBINED_COUNT, |c| &mut c.combined),
];

/// The read-only maximums.
const MAXIMUMS: [U32Field<Channels>; 4] = [
    (RX_MAX, |c| &mut c.rx_max),
    (TX_MAX, |c| &mut c.tx_max),
    (OTHER_MAX, |c| &mut c.other_max),
    (COMBINED_MAX, |c| &mut c.combined_max),
];

/// Reads channel counts and maximums.
pub fn get(sock: &GenlSocket, family: Family, iface: &str) -> Result<Channels, NlError> {
    get_decoded(sock, family, (MSG_GET, "channels"), iface, decode)
}

/// Decodes a CHANNELS_GET reply.
pub fn decode(attrs: &[u8]) -> Result<Channels, DecodeError> {
    decode_u32s(attrs, &[&COUNTS, &MAXIMUMS])
}

/// A CHANNELS_SET changing the counts present in `want` (maximums are ignored).
pub fn encode_set(iface: &str, want: &Channels) -> Vec<u8> {
    encode_u32s(iface, want, &COUNTS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CHANNELS_GET reply attributes for `eth0` (virtio_net, kernel 6.18.44, build machine),
    /// captured with this crate's socket, header nest left out: COMBINED_MAX=1, COMBINED_COUNT=1.
    #[rustfmt::skip]
    const VIRTIO_REPLY: &[u8] = &[
        8, 0, 5, 0, 1, 0, 0, 0,   // COMBINED_MAX 1
        8, 0, 9, 0, 1, 0, 0, 0,   // COMBINED_COUNT 1
    ];

    #[test]
    fn decodes_counts_and_maximums() {
        let c = decode(VIRTIO_REPLY).unwrap();
        assert_eq!((c.combined, c.combined_max, c.rx), (Some(1), Some(1), None));
        assert_eq!(c.rx_queues(), 1);
    }

    #[test]
    fn set_round_trips_without_maximums() {
        let want = Channels {
            rx: Some(2),
            tx: Some(3),
            ..Channels::default()
        };
        assert_eq!(decode(&encode_set("veth0", &want)).unwrap(), want);
    }
}
