//! The `ethtool` generic-netlink family (Documentation/networking/ethtool-netlink.rst):
//! one folder per message group, each with `attr.rs` (the `ETHTOOL_A_*` numbers, named as
//! in `include/uapi/linux/ethtool_netlink.h`) and `request.rs` (building requests, decoding
//! replies into `nictune_host` types). Unknown attributes in replies are skipped, so newer
//! kernels decode fine.

pub mod channels;
pub mod coalesce;
pub mod features;
pub mod linkmodes;
pub mod rings;

use crate::netlink::attr::{AttrWriter, Attrs};
use crate::netlink::genl::{Family, GenlSocket, NlError};
use crate::netlink::DecodeError;
use nictune_host::read::EthtoolInfo;
use nictune_host::snapshot::Readable;

/// The family name to resolve.
pub const FAMILY_NAME: &str = "ethtool";

/// ETHTOOL_A_HEADER_*: the request header nest selecting the device.
pub mod header {
    /// u32: the device's ifindex.
    pub const DEV_INDEX: u16 = 1;
    /// String: the device's name; either this or DEV_INDEX selects the device.
    pub const DEV_NAME: u16 = 2;
    /// u32: ETHTOOL_FLAG_* request flags (compact bitsets, omit reply, stats).
    pub const FLAGS: u16 = 3;
}

/// Every `ETHTOOL_A_<MSG>_HEADER` attribute is number 1.
pub const A_HEADER: u16 = 1;

/// Request attributes: the header nest naming the device.
pub fn header_for(iface: &str) -> AttrWriter {
    let mut w = AttrWriter::new();
    w.nest(A_HEADER, |h| {
        h.string(header::DEV_NAME, iface);
    });
    w
}

/// Reads coalesce, rings, channels and features of `iface`; each part fails on its own.
pub fn read_all(sock: &GenlSocket, family: Family, iface: &str) -> EthtoolInfo {
    EthtoolInfo {
        coalesce: readable(coalesce::request::get(sock, family, iface)),
        rings: readable(rings::request::get(sock, family, iface)),
        channels: readable(channels::request::get(sock, family, iface)),
        features: readable(features::request::get(sock, family, iface)),
    }
}

/// EOPNOTSUPP is "the driver does not offer this", anything else "could not read".
pub fn readable<T>(r: Result<T, NlError>) -> Readable<T> {
    match r {
        Ok(v) => Readable::Value(v),
        Err(e) if e.is_unsupported() => Readable::Unsupported(e.to_string()),
        Err(e) => Readable::Unreadable(e.to_string()),
    }
}

/// Sends a GET for one device and decodes the reply with `decode`.
fn get_decoded<T>(
    sock: &GenlSocket,
    family: Family,
    (cmd, what): (u8, &str),
    iface: &str,
    decode: fn(&[u8]) -> Result<T, DecodeError>,
) -> Result<T, NlError> {
    let op = format!("ethtool {what} of {iface}");
    let attrs = header_for(iface).finish();
    let reply = sock
        .request_do(family, cmd, &attrs, &op)?
        .pop()
        .unwrap_or_default();
    decode(&reply).map_err(|source| NlError::Decode { op, source })
}

/// One `u32` attribute and the `Option<u32>` field of `T` it fills.
type U32Field<T> = (u16, fn(&mut T) -> &mut Option<u32>);

/// Decodes a reply of `u32` attributes into `T`: each attribute in one of the `tables` fills
/// its field, the others are skipped.
fn decode_u32s<T: Default>(attrs: &[u8], tables: &[&[U32Field<T>]]) -> Result<T, DecodeError> {
    let mut out = T::default();
    for a in Attrs::new(attrs) {
        let a = a?;
        let mut fields = tables.iter().flat_map(|table| table.iter());
        if let Some((_, field)) = fields.find(|(kind, _)| *kind == a.kind) {
            *field(&mut out) = Some(a.u32()?);
        }
    }
    Ok(out)
}

/// The attributes of a SET for `iface` carrying each of `fields` that is present in `want`.
fn encode_u32s<T: Clone>(iface: &str, want: &T, fields: &[U32Field<T>]) -> Vec<u8> {
    let mut want = want.clone();
    let mut w = header_for(iface);
    for (attr, field) in fields {
        if let Some(v) = *field(&mut want) {
            w.u32(*attr, v);
        }
    }
    w.finish()
}
