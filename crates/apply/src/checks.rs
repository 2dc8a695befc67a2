//! Known dangerous or ineffective combinations of requested settings. Each check is a small
//! function that returns a [`Note`] naming the settings involved and what to do instead.

use crate::desired::Desired;
use nictune_host::write::setting::{Key, Napi, SysfsNapi};
use nictune_host::write::value::HostValue;
use serde::Serialize;

/// Something the plan wants the user to know; it does not stop the apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    /// The keys involved, as typed (without `@N`).
    pub settings: Vec<String>,
    /// What is wrong with the combination and what to do instead.
    pub message: String,
}

/// Runs every check over the request.
pub fn check_combinations(desired: &[Desired]) -> Vec<Note> {
    [
        suspend_without_fallback(desired),
        adaptive_overrides_usecs(desired, "rx"),
        adaptive_overrides_usecs(desired, "tx"),
        sysfs_overwrites_napi(desired, SysfsNapi::NapiDeferHardIrqs, Napi::DeferHardIrqs),
        sysfs_overwrites_napi(desired, SysfsNapi::GroFlushTimeout, Napi::GroFlushTimeout),
        busy_poll_threading(desired),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn find<'a>(desired: &'a [Desired], key: &Key) -> Option<&'a HostValue> {
    desired.iter().find(|d| &d.key == key).map(|d| &d.value)
}

fn nonzero(v: Option<&HostValue>) -> bool {
    v.and_then(HostValue::as_int).is_some_and(|n| n > 0)
}

/// napi.rst: IRQ suspension only has a visible effect together with defer-hard-irqs and
/// gro-flush-timeout, which take over once the application stops finding events.
fn suspend_without_fallback(desired: &[Desired]) -> Option<Note> {
    let suspend = find(desired, &Key::Napi(Napi::IrqSuspendTimeout));
    let defer = find(desired, &Key::Napi(Napi::DeferHardIrqs));
    let gro = find(desired, &Key::Napi(Napi::GroFlushTimeout));
    (nonzero(suspend) && !(nonzero(defer) && nonzero(gro))).then(|| Note {
        settings: vec!["napi.irq-suspend-timeout".into()],
        message: "IRQ suspension needs napi.defer-hard-irqs and napi.gro-flush-timeout set too, \
                  and an application using epoll with prefer_busy_poll; alone it changes nothing"
            .into(),
    })
}

/// With adaptive moderation on, the driver rewrites the fixed timer itself.
fn adaptive_overrides_usecs(desired: &[Desired], dir: &str) -> Option<Note> {
    let adaptive = find(desired, &Key::Coalesce(format!("adaptive-{dir}")));
    let usecs = find(desired, &Key::Coalesce(format!("{dir}-usecs")));
    (adaptive == Some(&HostValue::Bool(true)) && usecs.is_some()).then(|| Note {
        settings: vec![
            format!("coalesce.adaptive-{dir}"),
            format!("coalesce.{dir}-usecs"),
        ],
        message: format!(
            "adaptive moderation is on, so the driver overrides coalesce.{dir}-usecs as load \
             changes; turn adaptive off to pin the timer"
        ),
    })
}

/// The device-wide sysfs file overwrites every per-NAPI value (ecosystem.md §1.5); both are
/// applied, sysfs first, so the per-NAPI value wins.
fn sysfs_overwrites_napi(desired: &[Desired], sysfs: SysfsNapi, napi: Napi) -> Option<Note> {
    let (s, n) = (Key::SysfsNapi(sysfs), Key::Napi(napi));
    (find(desired, &s).is_some() && find(desired, &n).is_some()).then(|| Note {
        settings: vec![s.to_string(), n.to_string()],
        message: format!("{s} overwrites {n} on every NAPI; it is written first, so {n} wins"),
    })
}

/// Threaded busy polling (mode 2) is newer than 6.18, which answers EIO.
fn busy_poll_threading(desired: &[Desired]) -> Option<Note> {
    let keys = [
        Key::Napi(Napi::Threaded),
        Key::SysfsNapi(SysfsNapi::Threaded),
    ];
    let key = keys
        .iter()
        .find(|k| find(desired, k) == Some(&HostValue::Int(2)))?;
    Some(Note {
        settings: vec![key.to_string()],
        message: "threaded=2 (busy-poll kthreads) needs a kernel newer than 6.18; older kernels \
                  refuse it and the change rolls back"
            .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desired::parse_assignment;

    fn notes(args: &[&str]) -> Vec<Note> {
        let d: Vec<_> = args.iter().map(|a| parse_assignment(a).unwrap()).collect();
        check_combinations(&d)
    }

    #[test]
    fn suspension_alone_is_flagged_and_with_its_partners_is_not() {
        assert_eq!(notes(&["napi.irq-suspend-timeout=1000000"]).len(), 1);
        let full = [
            "napi.irq-suspend-timeout=1000000",
            "napi.defer-hard-irqs=2",
            "napi.gro-flush-timeout=20000",
        ];
        assert!(notes(&full).is_empty());
    }

    #[test]
    fn adaptive_with_fixed_timer_and_sysfs_with_napi_are_flagged() {
        let n = notes(&["coalesce.adaptive-rx=on", "coalesce.rx-usecs=50"]);
        assert_eq!(n[0].settings, ["coalesce.adaptive-rx", "coalesce.rx-usecs"]);
        let n = notes(&["sysfs.gro_flush_timeout=1", "napi.gro-flush-timeout=2"]);
        assert!(n[0].message.contains("napi.gro-flush-timeout wins"));
        assert_eq!(notes(&["napi.threaded=2"]).len(), 1);
    }
}
