//! Netlink attributes (TLVs): a writer that builds them, with nests, and a lenient reader.
//!
//! Wire format (include/uapi/linux/netlink.h): `u16 nla_len` (header + payload, unpadded),
//! `u16 nla_type` (the top two bits are NLA_F_NESTED and NLA_F_NET_BYTEORDER), the payload,
//! then padding to 4 bytes. All integers are host byte order.

use super::DecodeError;

/// Set on a nest's type by kernels and writers that mark nests explicitly.
pub const NLA_F_NESTED: u16 = 1 << 15;
/// Set when the payload is big-endian.
pub const NLA_F_NET_BYTEORDER: u16 = 1 << 14;
/// The attribute type without the flag bits.
pub const NLA_TYPE_MASK: u16 = !(NLA_F_NESTED | NLA_F_NET_BYTEORDER);

const HEADER: usize = 4;

/// Rounds `len` up to the 4-byte netlink alignment.
pub const fn align(len: usize) -> usize {
    (len + 3) & !3
}

/// Builds a run of attributes.
#[derive(Debug, Default, Clone)]
pub struct AttrWriter {
    buf: Vec<u8>,
}

impl AttrWriter {
    /// An empty run.
    pub fn new() -> Self {
        AttrWriter::default()
    }

    /// The encoded attributes.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }

    /// An attribute with raw payload `data`.
    pub fn bytes(&mut self, kind: u16, data: &[u8]) -> &mut Self {
        let len = HEADER + data.len();
        self.buf.extend_from_slice(&(len as u16).to_ne_bytes());
        self.buf.extend_from_slice(&kind.to_ne_bytes());
        self.buf.extend_from_slice(data);
        self.buf.resize(align(self.buf.len()), 0);
        self
    }

    /// A one-byte attribute (u8, or a boolean as 0/1).
    pub fn u8(&mut self, kind: u16, value: u8) -> &mut Self {
        self.bytes(kind, &[value])
    }

    /// A four-byte attribute, host byte order.
    pub fn u32(&mut self, kind: u16, value: u32) -> &mut Self {
        self.bytes(kind, &value.to_ne_bytes())
    }

    /// An eight-byte attribute, host byte order.
    pub fn u64(&mut self, kind: u16, value: u64) -> &mut Self {
        self.bytes(kind, &value.to_ne_bytes())
    }

    /// An NLA_UINT: 4 bytes when the value fits, else 8 (the kernel accepts both).
    pub fn uint(&mut self, kind: u16, value: u64) -> &mut Self {
        match u32::try_from(value) {
            Ok(small) => self.u32(kind, small),
            Err(_) => self.u64(kind, value),
        }
    }

    /// A NUL-terminated string.
    pub fn string(&mut self, kind: u16, value: &str) -> &mut Self {
        let mut data = value.as_bytes().to_vec();
        data.push(0);
        self.bytes(kind, &data)
    }

    /// A flag: present means true, no payload.
    pub fn flag(&mut self, kind: u16) -> &mut Self {
        self.bytes(kind, &[])
    }

    /// A nest holding whatever `fill` writes; marked with NLA_F_NESTED.
    pub fn nest(&mut self, kind: u16, fill: impl FnOnce(&mut AttrWriter)) -> &mut Self {
        let mut inner = AttrWriter::new();
        fill(&mut inner);
        self.bytes(kind | NLA_F_NESTED, &inner.buf)
    }
}

/// One attribute as read: its type (flags stripped) and payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr<'a> {
    /// The attribute type with NLA_F_NESTED and NLA_F_NET_BYTEORDER cleared.
    pub kind: u16,
    /// The payload without the header and the trailing padding.
    pub payload: &'a [u8],
}

impl<'a> Attr<'a> {
    /// The payload as one byte; fails unless the payload is exactly 1 byte.
    pub fn u8(&self) -> Result<u8, DecodeError> {
        self.fixed::<1>().map(|b| b[0])
    }

    /// The payload as a u16; fails unless the payload is exactly 2 bytes.
    pub fn u16(&self) -> Result<u16, DecodeError> {
        self.fixed::<2>().map(u16::from_ne_bytes)
    }

    /// The payload as a u32; fails unless the payload is exactly 4 bytes.
    pub fn u32(&self) -> Result<u32, DecodeError> {
        self.fixed::<4>().map(u32::from_ne_bytes)
    }

    /// The payload as a u64; fails unless the payload is exactly 8 bytes.
    pub fn u64(&self) -> Result<u64, DecodeError> {
        self.fixed::<8>().map(u64::from_ne_bytes)
    }

    /// An NLA_UINT (4 or 8 bytes) or any smaller unsigned integer.
    pub fn uint(&self) -> Result<u64, DecodeError> {
        match self.payload.len() {
            1 => self.u8().map(u64::from),
            2 => self.u16().map(u64::from),
            4 => self.u32().map(u64::from),
            8 => self.u64(),
            n => Err(DecodeError::new(format!(
                "attribute {}: {n}-byte payload is not an unsigned integer",
                self.kind
            ))),
        }
    }

    /// A string, with or without its NUL terminator.
    pub fn string(&self) -> Result<String, DecodeError> {
        let text = self.payload.split(|&b| b == 0).next().unwrap_or(&[]);
        String::from_utf8(text.to_vec())
            .map_err(|_| DecodeError::new(format!("attribute {}: string is not UTF-8", self.kind)))
    }

    /// The attributes inside a nest.
    pub fn nested(&self) -> Attrs<'a> {
        Attrs::new(self.payload)
    }

    fn fixed<const N: usize>(&self) -> Result<[u8; N], DecodeError> {
        self.payload.try_into().map_err(|_| {
            DecodeError::new(format!(
                "attribute {}: {} bytes, expected {N}",
                self.kind,
                self.payload.len()
            ))
        })
    }
}

/// Iterates over a run of attributes. Decoding is lenient: a truncated tail ends the run
/// with an error item, unknown types are yielded like any other for the caller to skip.
#[derive(Debug, Clone)]
pub struct Attrs<'a> {
    rest: &'a [u8],
}

impl<'a> Attrs<'a> {
    /// Iterates over the attributes in `buf` (a message's attribute run or a nest's payload).
    pub fn new(buf: &'a [u8]) -> Self {
        Attrs { rest: buf }
    }

    /// The first attribute of type `kind`.
    pub fn find(&self, kind: u16) -> Option<Attr<'a>> {
        self.clone().filter_map(Result::ok).find(|a| a.kind == kind)
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Result<Attr<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.len() < HEADER {
            return None;
        }
        let len = u16::from_ne_bytes([self.rest[0], self.rest[1]]) as usize;
        let kind = u16::from_ne_bytes([self.rest[2], self.rest[3]]) & NLA_TYPE_MASK;
        if len < HEADER || len > self.rest.len() {
            self.rest = &[];
            let problem = format!("attribute {kind}: length {len} runs past the message");
            return Some(Err(DecodeError::new(problem)));
        }
        let payload = &self.rest[HEADER..len];
        self.rest = &self.rest[align(len).min(self.rest.len())..];
        Some(Ok(Attr { kind, payload }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_pads_and_reader_round_trips() {
        let mut w = AttrWriter::new();
        w.u8(1, 7)
            .u32(2, 0xdead_beef)
            .string(3, "eth0")
            .flag(4)
            .uint(5, 1 << 40);
        let bytes = w.finish();
        // u8: 4-byte header + 1 byte + 3 padding.
        assert_eq!(&bytes[..8], &[5, 0, 1, 0, 7, 0, 0, 0]);
        let attrs: Vec<Attr> = Attrs::new(&bytes).map(Result::unwrap).collect();
        assert_eq!(attrs.len(), 5);
        assert_eq!(attrs[1].u32().unwrap(), 0xdead_beef);
        assert_eq!(attrs[2].string().unwrap(), "eth0");
        assert!(attrs[3].payload.is_empty());
        assert_eq!(attrs[4].uint().unwrap(), 1 << 40);
    }

    #[test]
    fn nests_carry_the_nested_flag_and_strip_it_when_read() {
        let mut w = AttrWriter::new();
        w.nest(1, |n| {
            n.u32(1, 3);
        });
        let bytes = w.finish();
        assert_eq!(u16::from_ne_bytes([bytes[2], bytes[3]]), 1 | NLA_F_NESTED);
        let outer = Attrs::new(&bytes).find(1).unwrap();
        assert_eq!(outer.nested().find(1).unwrap().u32().unwrap(), 3);
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        let bytes = [8u8, 0, 1, 0, 1, 2];
        let items: Vec<_> = Attrs::new(&bytes).collect();
        assert_eq!(items.len(), 1);
        assert!(items[0].is_err());
        let short = Attr {
            kind: 9,
            payload: &[1, 2, 3],
        };
        assert!(short.u32().unwrap_err().to_string().contains("attribute 9"));
    }
}
