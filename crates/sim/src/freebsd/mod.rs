//! FreeBSD mechanisms: DEVICE_POLLING and the em/igb receive tunables.
//!
//! The AIM generations live with the other moderation families in
//! [`crate::moderation::freebsd_aim`]; cluster zones in [`crate::pool`].

pub mod polling;
pub mod rx_limit;

/// A FreeBSD tunable or sysctl value outside what the kernel accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}={value} is out of range: allowed {allowed}")]
pub struct TunableError {
    /// The tunable, as named by sysctl(8).
    pub name: &'static str,
    /// The value given.
    pub value: i64,
    /// What the kernel accepts.
    pub allowed: &'static str,
}

pub(crate) fn check_range(
    name: &'static str,
    value: i64,
    range: std::ops::RangeInclusive<i64>,
    allowed: &'static str,
) -> Result<u32, TunableError> {
    if range.contains(&value) {
        Ok(value as u32)
    } else {
        Err(TunableError {
            name,
            value,
            allowed,
        })
    }
}
