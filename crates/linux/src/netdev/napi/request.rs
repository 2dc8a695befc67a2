//! NAPI dump (decoded into [`Napi`]) and the NAPI_SET encoder.

use super::attr::*;
use crate::netlink::attr::{AttrWriter, Attrs};
use crate::netlink::genl::{Family, GenlSocket, NlError};
use crate::netlink::DecodeError;
use nictune_host::snapshot::Napi;

/// Dumps every NAPI instance of the namespace.
pub fn dump(sock: &GenlSocket, family: Family) -> Result<Vec<Napi>, NlError> {
    let op = "netdev napi-get dump";
    let replies = sock.request_dump(family, CMD_GET, &[], op)?;
    replies
        .iter()
        .map(|r| decode(r))
        .collect::<Result<_, _>>()
        .map_err(|source| NlError::Decode {
            op: op.into(),
            source,
        })
}

/// Decodes one napi-get reply.
pub fn decode(attrs: &[u8]) -> Result<Napi, DecodeError> {
    let mut n = Napi::default();
    for a in Attrs::new(attrs) {
        let a = a?;
        match a.kind {
            IFINDEX => n.ifindex = a.u32()?,
            ID => n.id = a.u32()?,
            IRQ => n.irq = Some(a.u32()?),
            PID => n.pid = Some(a.u32()?),
            DEFER_HARD_IRQS => n.defer_hard_irqs = Some(a.u32()?),
            GRO_FLUSH_TIMEOUT => n.gro_flush_timeout_ns = Some(a.uint()?),
            IRQ_SUSPEND_TIMEOUT => n.irq_suspend_timeout_ns = Some(a.uint()?),
            THREADED => n.threaded = Some(a.u32()?),
            _ => {}
        }
    }
    Ok(n)
}

/// The per-NAPI settings a NAPI_SET can change; `None` leaves a value alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NapiSettings {
    /// NETDEV_A_NAPI_DEFER_HARD_IRQS: consecutive empty polls that keep the IRQ masked.
    pub defer_hard_irqs: Option<u32>,
    /// NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT, nanoseconds.
    pub gro_flush_timeout_ns: Option<u64>,
    /// NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT, nanoseconds.
    pub irq_suspend_timeout_ns: Option<u64>,
    /// NETDEV_A_NAPI_THREADED: 0 disabled, 1 enabled.
    pub threaded: Option<u32>,
}

/// The attributes of a NAPI_SET for NAPI `id`.
pub fn encode_set(id: u32, s: &NapiSettings) -> Vec<u8> {
    let mut w = AttrWriter::new();
    w.u32(ID, id);
    if let Some(v) = s.defer_hard_irqs {
        w.u32(DEFER_HARD_IRQS, v);
    }
    if let Some(v) = s.gro_flush_timeout_ns {
        w.uint(GRO_FLUSH_TIMEOUT, v);
    }
    if let Some(v) = s.irq_suspend_timeout_ns {
        w.uint(IRQ_SUSPEND_TIMEOUT, v);
    }
    if let Some(v) = s.threaded {
        w.u32(THREADED, v);
    }
    w.finish()
}

/// Sends a NAPI_SET and waits for the kernel's ack.
pub fn set(sock: &GenlSocket, family: Family, id: u32, s: &NapiSettings) -> Result<(), NlError> {
    let op = format!("netdev napi-set id {id}");
    sock.request_ack(family, CMD_SET, &encode_set(id, s), &op)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// napi-get dump entry for `eth0` on the build machine (virtio_net, kernel 6.18.44),
    /// captured with this crate's socket: no IRQ linked, every per-NAPI value 0.
    #[rustfmt::skip]
    const VIRTIO_NAPI: &[u8] = &[
        8, 0, 2, 0, 1, 1, 0, 0,        // ID 257
        8, 0, 1, 0, 4, 0, 0, 0,        // IFINDEX 4
        8, 0, 8, 0, 0, 0, 0, 0,        // THREADED 0
        8, 0, 5, 0, 0, 0, 0, 0,        // DEFER_HARD_IRQS 0
        8, 0, 7, 0, 0, 0, 0, 0,        // IRQ_SUSPEND_TIMEOUT 0
        8, 0, 6, 0, 0, 0, 0, 0,        // GRO_FLUSH_TIMEOUT 0
    ];

    /// The values of the veth experiment in ecosystem.md Appendix A (`napi-set id 260
    /// defer-hard-irqs 2 gro-flush-timeout 20000 irq-suspend-timeout 1000000`), hand-encoded
    /// in the kernel's attribute layout.
    #[rustfmt::skip]
    const VETH_REPLY: &[u8] = &[
        8, 0, 2, 0, 4, 1, 0, 0,            // ID 260
        8, 0, 1, 0, 9, 0, 0, 0,            // IFINDEX 9
        8, 0, 5, 0, 2, 0, 0, 0,            // DEFER_HARD_IRQS 2
        8, 0, 6, 0, 0x20, 0x4e, 0, 0,      // GRO_FLUSH_TIMEOUT 20000 (uint, 4 bytes)
        8, 0, 7, 0, 0x40, 0x42, 0x0f, 0,   // IRQ_SUSPEND_TIMEOUT 1000000
        8, 0, 8, 0, 0, 0, 0, 0,            // THREADED 0
    ];

    #[test]
    fn decodes_the_captured_virtio_napi() {
        let n = decode(VIRTIO_NAPI).unwrap();
        assert_eq!((n.id, n.ifindex, n.irq, n.pid), (257, 4, None, None));
        assert_eq!(
            (n.defer_hard_irqs, n.gro_flush_timeout_ns),
            (Some(0), Some(0))
        );
    }

    #[test]
    fn decodes_per_napi_settings() {
        let n = decode(VETH_REPLY).unwrap();
        assert_eq!((n.id, n.ifindex, n.irq), (260, 9, None));
        assert_eq!(n.defer_hard_irqs, Some(2));
        assert_eq!(n.gro_flush_timeout_ns, Some(20_000));
        assert_eq!(n.irq_suspend_timeout_ns, Some(1_000_000));
        assert_eq!(n.threaded, Some(0));
    }

    #[test]
    fn set_encodes_only_what_changes_and_long_timeouts_as_u64() {
        let s = NapiSettings {
            gro_flush_timeout_ns: Some(5_000_000_000),
            ..NapiSettings::default()
        };
        let bytes = encode_set(260, &s);
        let back = decode(&bytes).unwrap();
        assert_eq!(back.id, 260);
        assert_eq!(back.gro_flush_timeout_ns, Some(5_000_000_000));
        assert_eq!(back.defer_hard_irqs, None);
        assert_eq!(
            Attrs::new(&bytes)
                .find(GRO_FLUSH_TIMEOUT)
                .unwrap()
                .payload
                .len(),
            8
        );
    }
}
