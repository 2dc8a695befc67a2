//! What the transaction tests share: a fake device with every stage represented, and an
//! apply request for it.
#![allow(dead_code)]

use nictune_apply::fake::FakeWriter;
use nictune_apply::txn::ApplyRequest;
use nictune_host::write::setting::{Channel, Key, Napi, Object, Ring, Setting, Steering};
use nictune_host::write::value::{CpuSet, HostValue};

pub const IF: &str = "v0";

pub fn dev() -> Object {
    Object::Device { iface: IF.into() }
}

/// A device with every stage represented: channels (whose change wipes RPS masks), rings,
/// a feature, coalescing with 2 µs granularity, two NAPIs, a sysctl and RPS on two queues.
pub fn host() -> FakeWriter {
    let s = Setting::new;
    let rps = |queue| {
        s(
            Object::RxQueue {
                iface: IF.into(),
                queue,
            },
            Key::Steering(Steering::RpsCpus),
        )
    };
    let napi = |index, n| {
        s(
            Object::Napi {
                iface: IF.into(),
                index,
            },
            Key::Napi(n),
        )
    };
    let mut h = FakeWriter::default()
        .with(
            s(dev(), Key::Channels(Channel::Combined)),
            HostValue::Int(2),
        )
        .with(s(dev(), Key::Ring(Ring::Rx)), HostValue::Int(256))
        .with(
            s(dev(), Key::Feature("rx-gro".into())),
            HostValue::Bool(true),
        )
        .with(
            s(dev(), Key::Coalesce("rx-usecs".into())),
            HostValue::Int(8),
        )
        .with(
            s(dev(), Key::Coalesce("adaptive-rx".into())),
            HostValue::Bool(false),
        )
        .with(napi(0, Napi::DeferHardIrqs), HostValue::Int(0))
        .with(napi(1, Napi::DeferHardIrqs), HostValue::Int(0))
        .with(napi(0, Napi::GroFlushTimeout), HostValue::Int(0))
        .with(napi(1, Napi::GroFlushTimeout), HostValue::Int(0))
        .with(
            s(Object::Netns, Key::Sysctl("net.core.somaxconn".into())),
            HostValue::text("4096"),
        )
        .with(rps(0), HostValue::Cpus(CpuSet::from_iter([1])))
        .with(rps(1), HostValue::Cpus(CpuSet::default()));
    h.granularity
        .insert(s(dev(), Key::Coalesce("rx-usecs".into())), 2);
    h.limits
        .insert(s(dev(), Key::Channels(Channel::Combined)), 8);
    h.napis.insert(IF.into(), 2);
    h.queues.insert(IF.into(), (2, 2));
    h
}

pub fn request() -> ApplyRequest {
    ApplyRequest {
        pid: 1,
        now_unix_ms: 1_000,
        netns: None,
        iface: Some(IF.into()),
        confirm_within_ms: None,
    }
}
