//! Queue dump, decoded into [`NetdevQueue`].

use super::attr::*;
use crate::netlink::attr::Attrs;
use crate::netlink::genl::{Family, GenlSocket, NlError};
use crate::netlink::DecodeError;
use nictune_host::snapshot::{NetdevQueue, QueueKind};

/// Dumps every queue of the namespace.
pub fn dump(sock: &GenlSocket, family: Family) -> Result<Vec<NetdevQueue>, NlError> {
    let op = "netdev queue-get dump";
    let replies = sock.request_dump(family, CMD_GET, &[], op)?;
    let decoded: Result<Vec<Option<NetdevQueue>>, _> = replies.iter().map(|r| decode(r)).collect();
    decoded
        .map(|qs| qs.into_iter().flatten().collect())
        .map_err(|source| NlError::Decode {
            op: op.into(),
            source,
        })
}

/// Decodes one queue-get reply; queue types other than rx/tx are skipped (`None`).
pub fn decode(attrs: &[u8]) -> Result<Option<NetdevQueue>, DecodeError> {
    let (mut id, mut ifindex, mut kind, mut napi_id) = (None, None, None, None);
    for a in Attrs::new(attrs) {
        let a = a?;
        match a.kind {
            ID => id = Some(a.u32()?),
            IFINDEX => ifindex = Some(a.u32()?),
            TYPE => kind = Some(a.u32()?),
            NAPI_ID => napi_id = Some(a.u32()?),
            _ => {}
        }
    }
    let kind = match kind {
        Some(TYPE_RX) => QueueKind::Rx,
        Some(TYPE_TX) => QueueKind::Tx,
        _ => return Ok(None),
    };
    match (id, ifindex) {
        (Some(id), Some(ifindex)) => Ok(Some(NetdevQueue {
            ifindex,
            kind,
            id,
            napi_id,
        })),
        _ => Err(DecodeError::new("queue reply without id or ifindex")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// queue-get dump entry for `eth0` rx-0 on the build machine (virtio_net, kernel
    /// 6.18.44), captured with this crate's socket, in the kernel's attribute order.
    #[rustfmt::skip]
    const VIRTIO_RX0: &[u8] = &[
        8, 0, 1, 0, 0, 0, 0, 0,        // ID 0
        8, 0, 3, 0, 0, 0, 0, 0,        // TYPE rx
        8, 0, 2, 0, 4, 0, 0, 0,        // IFINDEX 4
        8, 0, 4, 0, 1, 1, 0, 0,        // NAPI_ID 257
    ];

    /// The same dump's entry for `lo` tx-0: no NAPI serves it, so NAPI_ID is absent.
    #[rustfmt::skip]
    const LO_TX0: &[u8] = &[
        8, 0, 1, 0, 0, 0, 0, 0,        // ID 0
        8, 0, 3, 0, 1, 0, 0, 0,        // TYPE tx
        8, 0, 2, 0, 1, 0, 0, 0,        // IFINDEX 1
    ];

    #[test]
    fn decodes_the_queue_to_napi_link() {
        let q = decode(VIRTIO_RX0).unwrap().unwrap();
        assert_eq!(
            q,
            NetdevQueue {
                ifindex: 4,
                kind: QueueKind::Rx,
                id: 0,
                napi_id: Some(257)
            }
        );
        let lo = decode(LO_TX0).unwrap().unwrap();
        assert_eq!((lo.kind, lo.napi_id), (QueueKind::Tx, None));
    }

    #[test]
    fn unknown_queue_types_are_skipped_and_missing_ids_are_errors() {
        let mut odd = VIRTIO_RX0.to_vec();
        odd[12] = 7;
        assert_eq!(decode(&odd).unwrap(), None);
        assert!(decode(&VIRTIO_RX0[8..]).is_err());
    }
}
