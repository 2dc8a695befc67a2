//! Settings behind generic netlink: ethtool channels, rings, features and coalescing, and
//! the netdev family's per-NAPI settings. GET decoders and SET encoders are the shared ones
//! in [`crate::ethtool`] and [`crate::netdev`]; this file maps one [`Setting`] at a time onto
//! them, and maps kernel refusals onto [`HostErrorKind`] with the extack text kept.
//!
//! Only the attribute being changed is sent, so a SET never rewrites a neighbour (the
//! kernel changes exactly the attributes present).

use crate::ethtool::{channels, coalesce, rings};
use crate::netdev::napi;
use crate::netlink::attr::AttrWriter;
use crate::netlink::genl::{Family, GenlSocket, NlError};
use nictune_host::snapshot::{Channels, Coalesce, Napi as NapiState, Rings};
use nictune_host::write::setting::{self, Channel, Key, Napi, Ring, Setting};
use nictune_host::write::value::HostValue;
use nictune_host::write::{HostError, HostErrorKind, Op};

/// The netlink side of the write path: one socket, both families.
#[derive(Debug)]
pub struct Netlink {
    sock: GenlSocket,
    ethtool: Result<Family, String>,
    netdev: Result<Family, String>,
}

impl Netlink {
    /// Opens a socket in the current network namespace and resolves both families.
    pub fn open() -> Result<Netlink, NlError> {
        let sock = GenlSocket::open()?;
        let ethtool = sock
            .family(crate::ethtool::FAMILY_NAME)
            .map_err(|e| e.to_string());
        let netdev = sock
            .family(crate::netdev::FAMILY_NAME)
            .map_err(|e| e.to_string());
        Ok(Netlink {
            sock,
            ethtool,
            netdev,
        })
    }

    fn ethtool(&self, op: Op, s: &Setting) -> Result<Family, HostError> {
        self.ethtool.clone().map_err(|e| unsupported(op, s, &e))
    }

    fn netdev(&self, op: Op, s: &Setting) -> Result<Family, HostError> {
        self.netdev.clone().map_err(|e| unsupported(op, s, &e))
    }

    /// The NAPI instances of the device with this ifindex, sorted by id.
    pub fn napis(&self, ifindex: u32, s: &Setting) -> Result<Vec<NapiState>, HostError> {
        let family = self.netdev(Op::List, s)?;
        let mut all =
            napi::request::dump(&self.sock, family).map_err(|e| nl_error(Op::List, s, &e))?;
        all.retain(|n| n.ifindex == ifindex);
        all.sort_by_key(|n| n.id);
        Ok(all)
    }

    /// Reads one device-wide ethtool setting; `Ok(None)` when the reply omits it.
    pub fn read_device(&self, iface: &str, s: &Setting) -> Result<Option<HostValue>, HostError> {
        let family = self.ethtool(Op::Read, s)?;
        let e = |err: NlError| nl_error(Op::Read, s, &err);
        Ok(match &s.key {
            Key::Channels(c) => channel_field(
                &channels::request::get(&self.sock, family, iface).map_err(e)?,
                *c,
            )
            .0
            .map(int),
            Key::Ring(r) => ring_field(
                &rings::request::get(&self.sock, family, iface).map_err(e)?,
                *r,
            )
            .0
            .map(int),
            Key::Coalesce(name) => {
                let c = coalesce::request::get(&self.sock, family, iface).map_err(e)?;
                c.get(wire_coalesce_name(name))
                    .map(|v| coalesce_value(&s.key, v))
            }
            Key::Feature(name) => {
                let f =
                    crate::ethtool::features::request::get(&self.sock, family, iface).map_err(e)?;
                f.0.get(name).copied().map(HostValue::Bool)
            }
            _ => None,
        })
    }

    /// The driver's maximum for a channel or ring setting.
    pub fn limit(&self, iface: &str, s: &Setting) -> Result<Option<u64>, HostError> {
        let family = self.ethtool(Op::Read, s)?;
        let e = |err: NlError| nl_error(Op::Read, s, &err);
        Ok(match &s.key {
            Key::Channels(c) => {
                channel_field(
                    &channels::request::get(&self.sock, family, iface).map_err(e)?,
                    *c,
                )
                .1
            }
            Key::Ring(r) => {
                ring_field(
                    &rings::request::get(&self.sock, family, iface).map_err(e)?,
                    *r,
                )
                .1
            }
            _ => None,
        }
        .map(u64::from))
    }

    /// Writes one device-wide ethtool setting.
    pub fn write_device(&self, iface: &str, s: &Setting, v: &HostValue) -> Result<(), HostError> {
        let family = self.ethtool(Op::Write, s)?;
        let n = v.as_int().unwrap_or(0);
        let n32 =
            u32::try_from(n).map_err(|_| rejected(s, &format!("{n} does not fit 32 bits")))?;
        let (cmd, attrs) = match &s.key {
            Key::Channels(c) => (
                channels::attr::MSG_SET,
                channels::request::encode_set(iface, &channel_set(*c, n32)),
            ),
            Key::Ring(r) => (
                rings::attr::MSG_SET,
                rings::request::encode_set(iface, &ring_set(*r, n32)),
            ),
            Key::Coalesce(name) => {
                let mut want = Coalesce::default();
                want.0.insert(wire_coalesce_name(name).to_string(), n);
                let attrs = coalesce::request::encode_set(iface, &want)
                    .map_err(|e| rejected(s, &e.to_string()))?;
                (coalesce::attr::MSG_SET, attrs)
            }
            Key::Feature(name) => (FEATURES_SET, encode_features_set(iface, name, n != 0)),
            _ => return Err(unsupported(Op::Write, s, "not an ethtool setting")),
        };
        let op = format!("ethtool set {} on {iface}", s.key);
        self.sock
            .request_ack(family, cmd, &attrs, &op)
            .map_err(|e| nl_error(Op::Write, s, &e))
    }

    /// Writes one per-NAPI setting of NAPI `id`.
    pub fn write_napi(
        &self,
        id: u32,
        key: Napi,
        s: &Setting,
        v: &HostValue,
    ) -> Result<(), HostError> {
        let family = self.netdev(Op::Write, s)?;
        let n = v.as_int().unwrap_or(0);
        let small =
            || u32::try_from(n).map_err(|_| rejected(s, &format!("{n} does not fit 32 bits")));
        let mut want = napi::request::NapiSettings::default();
        match key {
            Napi::DeferHardIrqs => want.defer_hard_irqs = Some(small()?),
            Napi::GroFlushTimeout => want.gro_flush_timeout_ns = Some(n),
            Napi::IrqSuspendTimeout => want.irq_suspend_timeout_ns = Some(n),
            Napi::Threaded => want.threaded = Some(small()?),
        }
        napi::request::set(&self.sock, family, id, &want).map_err(|e| nl_error(Op::Write, s, &e))
    }
}

/// One per-NAPI value as read from a napi-get reply.
pub fn napi_value(n: &NapiState, key: Napi) -> Option<HostValue> {
    let v = match key {
        Napi::DeferHardIrqs => n.defer_hard_irqs.map(u64::from),
        Napi::GroFlushTimeout => n.gro_flush_timeout_ns,
        Napi::IrqSuspendTimeout => n.irq_suspend_timeout_ns,
        Napi::Threaded => n.threaded.map(u64::from),
    };
    v.map(HostValue::Int)
}

fn int(v: u32) -> HostValue {
    HostValue::Int(u64::from(v))
}

fn coalesce_value(key: &Key, v: u64) -> HostValue {
    match key.value_kind() {
        setting::ValueKind::Bool => HostValue::Bool(v != 0),
        _ => HostValue::Int(v),
    }
}

/// The catalog calls attribute 23 `rate-sample-interval`; ethtool's own name is
/// `sample-interval`, which the shared coalesce table uses.
fn wire_coalesce_name(name: &str) -> &str {
    match name {
        "rate-sample-interval" => "sample-interval",
        other => other,
    }
}

/// (current, maximum) of one channel kind.
fn channel_field(c: &Channels, which: Channel) -> (Option<u32>, Option<u32>) {
    match which {
        Channel::Rx => (c.rx, c.rx_max),
        Channel::Tx => (c.tx, c.tx_max),
        Channel::Other => (c.other, c.other_max),
        Channel::Combined => (c.combined, c.combined_max),
    }
}

fn channel_set(which: Channel, n: u32) -> Channels {
    let mut c = Channels::default();
    match which {
        Channel::Rx => c.rx = Some(n),
        Channel::Tx => c.tx = Some(n),
        Channel::Other => c.other = Some(n),
        Channel::Combined => c.combined = Some(n),
    }
    c
}

/// (current, maximum) of one ring.
fn ring_field(r: &Rings, which: Ring) -> (Option<u32>, Option<u32>) {
    match which {
        Ring::Rx => (r.rx, r.rx_max),
        Ring::RxMini => (r.rx_mini, r.rx_mini_max),
        Ring::RxJumbo => (r.rx_jumbo, r.rx_jumbo_max),
        Ring::Tx => (r.tx, r.tx_max),
    }
}

fn ring_set(which: Ring, n: u32) -> Rings {
    let mut r = Rings::default();
    match which {
        Ring::Rx => r.rx = Some(n),
        Ring::RxMini => r.rx_mini = Some(n),
        Ring::RxJumbo => r.rx_jumbo = Some(n),
        Ring::Tx => r.tx = Some(n),
    }
    r
}

/// ETHTOOL_MSG_FEATURES_SET (include/uapi/linux/ethtool_netlink.h).
pub const FEATURES_SET: u8 = 12;

/// A FEATURES_SET changing one feature: the WANTED bitset without NOMASK lists only that
/// bit, so it is the only one in the mask; its VALUE flag present means "on"
/// (Documentation/networking/ethtool-netlink.rst, "Bit sets").
pub fn encode_features_set(iface: &str, name: &str, on: bool) -> Vec<u8> {
    use crate::ethtool::features::attr::{bit, bitset, BITS_BIT, WANTED};
    let mut w: AttrWriter = crate::ethtool::header_for(iface);
    w.nest(WANTED, |set| {
        set.nest(bitset::BITS, |bits| {
            bits.nest(BITS_BIT, |b| {
                b.string(bit::NAME, name);
                if on {
                    b.flag(bit::VALUE);
                }
            });
        });
    });
    w.finish()
}

fn unsupported(op: Op, s: &Setting, why: &str) -> HostError {
    HostError::new(op, s, HostErrorKind::Unsupported(why.to_string()))
}

fn rejected(s: &Setting, why: &str) -> HostError {
    HostError::new(Op::Write, s, HostErrorKind::Rejected(why.to_string()))
}

/// Maps a netlink failure to what the user can do about it, keeping the kernel's message.
pub fn nl_error(op: Op, s: &Setting, e: &NlError) -> HostError {
    let text = e.to_string();
    let kind = match e.errno() {
        _ if e.is_unsupported() => HostErrorKind::Unsupported(text),
        Some(libc::EPERM | libc::EACCES) => HostErrorKind::Permission(text),
        Some(libc::ENODEV) => HostErrorKind::NotFound(text),
        _ => HostErrorKind::Rejected(text),
    };
    HostError::new(op, s, kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::attr::Attrs;

    /// FEATURES_SET for `ethtool -K veth0 gro off`, laid out per ethtool-netlink.rst:
    /// HEADER{DEV_NAME "veth0"}, WANTED{BITS{BIT{NAME "rx-gro"}}} (no VALUE flag = off).
    #[rustfmt::skip]
    const GRO_OFF: &[u8] = &[
        16, 0, 1, 0x80,                                   // HEADER nest
            10, 0, 2, 0, b'v', b'e', b't', b'h', b'0', 0, 0, 0, // DEV_NAME "veth0"
        24, 0, 3, 0x80,                                   // WANTED nest
            20, 0, 3, 0x80,                               // BITSET_BITS nest
                16, 0, 1, 0x80,                           // BITS_BIT nest
                    11, 0, 2, 0, b'r', b'x', b'-', b'g', b'r', b'o', 0, 0, // BIT_NAME "rx-gro"
    ];

    #[test]
    fn features_set_carries_one_named_bit() {
        assert_eq!(encode_features_set("veth0", "rx-gro", false), GRO_OFF);
        let on = encode_features_set("veth0", "rx-gro", true);
        let wanted = Attrs::new(&on).find(3).unwrap();
        let bit = wanted.nested().find(3).unwrap().nested().find(1).unwrap();
        assert!(
            bit.nested().find(3).is_some(),
            "VALUE flag present means on"
        );
    }

    #[test]
    fn per_napi_values_come_from_the_reply_fields() {
        let n = NapiState {
            defer_hard_irqs: Some(2),
            gro_flush_timeout_ns: Some(20_000),
            ..NapiState::default()
        };
        assert_eq!(napi_value(&n, Napi::DeferHardIrqs), Some(HostValue::Int(2)));
        assert_eq!(
            napi_value(&n, Napi::GroFlushTimeout),
            Some(HostValue::Int(20_000))
        );
        assert_eq!(
            napi_value(&n, Napi::IrqSuspendTimeout),
            None,
            "absent means unsupported"
        );
    }
}
