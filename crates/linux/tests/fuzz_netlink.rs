//! Fuzz tier: the netlink reply decoders (message splitting, attribute iteration, the ethtool
//! and netdev decoders, the rtnetlink link and address decoders) on arbitrary bytes and on
//! well-formed replies built with the crate's own encoder, then mutated: bytes flipped,
//! length fields set to extremes, cut and repeated. No panic, bounded time, decoded sizes in
//! proportion to the input.

use nictune_fuzz::{any_bytes, assert_ok_bounded, assert_size_bounded, bounded, config};
use nictune_linux::netlink::attr::{AttrWriter, Attrs};
use nictune_linux::netlink::message::{self, parse_replies, Reply, NLMSG_DONE, NLMSG_ERROR};
use nictune_linux::{ethtool, netdev, rtnetlink};
use proptest::prelude::*;

/// A tree of attributes, as the encoder writes it.
#[derive(Debug, Clone)]
enum Tree {
    Leaf(u16, Vec<u8>),
    Nest(u16, Vec<Tree>),
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = (0u16..48, proptest::collection::vec(any::<u8>(), 0..12))
        .prop_map(|(k, p)| Tree::Leaf(k, p));
    leaf.prop_recursive(4, 64, 8, |inner| {
        (0u16..48, proptest::collection::vec(inner, 0..8)).prop_map(|(k, c)| Tree::Nest(k, c))
    })
}

fn write(w: &mut AttrWriter, t: &Tree) {
    match t {
        Tree::Leaf(k, p) => {
            w.bytes(*k, p);
        }
        Tree::Nest(k, children) => {
            w.nest(*k, |n| children.iter().for_each(|c| write(n, c)));
        }
    }
}

/// Attribute bytes of `trees`.
fn encode(trees: &[Tree]) -> Vec<u8> {
    let mut w = AttrWriter::new();
    trees.iter().for_each(|t| write(&mut w, t));
    w.finish()
}

/// A byte-level change of an encoded reply.
#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    U16(usize, u16),
    U32(usize, u32),
    Cut(usize),
    Repeat(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let u16s = proptest::sample::select(vec![0u16, 3, 4, 5, 0x7fff, 0x8000, 0xffff]);
    let u32s = proptest::sample::select(vec![0u32, 15, 16, 20, 0x7fff_ffff, 0x8000_0000, u32::MAX]);
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(a, b)| Edit::Flip(a, b)),
        (any::<usize>(), u16s).prop_map(|(a, v)| Edit::U16(a, v)),
        (any::<usize>(), u32s).prop_map(|(a, v)| Edit::U32(a, v)),
        any::<usize>().prop_map(Edit::Cut),
        (any::<usize>(), 1usize..16).prop_map(|(a, n)| Edit::Repeat(a, n)),
    ]
}

fn apply(mut buf: Vec<u8>, e: &Edit) -> Vec<u8> {
    if buf.is_empty() {
        return buf;
    }
    let at = |a: usize, width: usize| (a % buf.len()).min(buf.len().saturating_sub(width));
    match *e {
        Edit::Flip(a, b) => {
            let i = at(a, 1);
            buf[i] ^= 1 << b;
        }
        Edit::U16(a, v) if buf.len() >= 2 => {
            let i = at(a, 2);
            buf[i..i + 2].copy_from_slice(&v.to_ne_bytes());
        }
        Edit::U32(a, v) if buf.len() >= 4 => {
            let i = at(a, 4);
            buf[i..i + 4].copy_from_slice(&v.to_ne_bytes());
        }
        Edit::Cut(a) => buf.truncate(a % (buf.len() + 1)),
        Edit::Repeat(a, n) => {
            let i = at(a, 1);
            let tail = buf[i..].to_vec();
            (0..n).for_each(|_| buf.extend_from_slice(&tail));
        }
        _ => {}
    }
    buf
}

/// One or more replies as the kernel sends them: genl data messages, an error or done.
fn replies() -> impl Strategy<Value = Vec<u8>> {
    let one = (
        proptest::collection::vec(tree(), 0..6),
        0u16..4,
        any::<u32>(),
    )
        .prop_map(|(trees, kind, seq)| {
            let mut msg = message::genl_request(0x20, 0, seq, 1, 1, &encode(&trees));
            let kind = match kind {
                0 => NLMSG_ERROR,
                1 => NLMSG_DONE,
                _ => 0x20,
            };
            msg[4..6].copy_from_slice(&kind.to_ne_bytes());
            msg
        });
    (
        proptest::collection::vec(one, 1..4),
        proptest::collection::vec(edit(), 0..6),
    )
        .prop_map(|(msgs, edits)| edits.iter().fold(msgs.concat(), apply))
}

/// Every decoder on `attrs`, each result bounded by the input.
fn decode_all(attrs: &[u8]) {
    let n = attrs.len();
    assert!(
        Attrs::new(attrs).count() <= n / 4 + 1,
        "more attributes than headers"
    );
    assert_ok_bounded("coalesce", ethtool::coalesce::request::decode(attrs), n);
    assert_ok_bounded("rings", ethtool::rings::request::decode(attrs), n);
    assert_ok_bounded("channels", ethtool::channels::request::decode(attrs), n);
    assert_ok_bounded("features", ethtool::features::request::decode(attrs), n);
    assert_ok_bounded("napi", netdev::napi::request::decode(attrs), n);
    assert_ok_bounded("queue", netdev::queue::request::decode(attrs), n);
}

/// The rtnetlink decoders (links and addresses) on a message body; their results print
/// (Debug) in proportion to the body.
fn decode_rtnetlink(body: &[u8]) {
    let n = body.len();
    if let Ok(link) = rtnetlink::link::request::decode(body) {
        assert_size_bounded("link", format!("{link:?}").len(), n);
    }
    if let Ok(addr) = rtnetlink::addr::request::decode(body) {
        assert_size_bounded("address", format!("{addr:?}").len(), n);
    }
}

/// Splits `buf` into messages and decodes every data message's attributes.
fn exercise(buf: &[u8]) {
    bounded("netlink decoders", || {
        decode_all(buf);
        let Ok(msgs) = parse_replies(buf) else {
            return;
        };
        assert!(msgs.len() <= buf.len() / message::NLMSG_HDRLEN);
        for m in msgs {
            if let Reply::Data { body, .. } = m {
                decode_rtnetlink(body);
                if let Ok((_, attrs)) = message::genl_body(body) {
                    decode_all(attrs);
                }
            }
        }
    });
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_netlink_arbitrary_bytes(buf in any_bytes()) {
        exercise(&buf);
    }

    #[test]
    fn fuzz_netlink_encoded_replies_mutated(buf in replies()) {
        exercise(&buf);
    }
}
