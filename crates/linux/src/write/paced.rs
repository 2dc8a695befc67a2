//! A test seam: `NICTUNE_TEST_WRITE_DELAY_MS=N` makes every write wait N ms first, so the live
//! tests can `kill -9` nictune in the middle of an apply and prove `nictune revert` recovers.
//! Unset (normal use) it adds nothing.

use nictune_host::write::identity::{IfaceId, IrqActions};
use nictune_host::write::setting::Setting;
use nictune_host::write::value::HostValue;
use nictune_host::write::{HostError, HostWrite};
use std::time::Duration;

/// The variable that sets the delay.
const DELAY_ENV: &str = "NICTUNE_TEST_WRITE_DELAY_MS";

/// A host whose writes are paced.
#[derive(Debug)]
pub struct Paced<H> {
    inner: H,
    delay: Option<Duration>,
}

/// Wraps `inner`, reading the delay from the environment.
pub fn paced<H: HostWrite>(inner: H) -> Paced<H> {
    let delay = std::env::var(DELAY_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis);
    Paced { inner, delay }
}

impl<H: HostWrite> HostWrite for Paced<H> {
    fn napi_count(&mut self, iface: &str) -> Result<u32, HostError> {
        self.inner.napi_count(iface)
    }
    fn queue_counts(&mut self, iface: &str) -> Result<(u32, u32), HostError> {
        self.inner.queue_counts(iface)
    }
    fn read(&mut self, setting: &Setting) -> Result<HostValue, HostError> {
        self.inner.read(setting)
    }
    fn limit(&mut self, setting: &Setting) -> Result<Option<u64>, HostError> {
        self.inner.limit(setting)
    }
    fn write(&mut self, setting: &Setting, value: &HostValue) -> Result<(), HostError> {
        if let Some(d) = self.delay {
            std::thread::sleep(d);
        }
        self.inner.write(setting, value)
    }
    fn write_all(&mut self, items: &[(&Setting, &HostValue)]) -> Result<(), HostError> {
        if let Some(d) = self.delay {
            std::thread::sleep(d);
        }
        self.inner.write_all(items)
    }
    fn iface_id(&mut self, iface: &str) -> Result<IfaceId, HostError> {
        self.inner.iface_id(iface)
    }
    fn irq_actions(&mut self) -> Result<IrqActions, HostError> {
        self.inner.irq_actions()
    }
    fn irqs_of(&mut self, iface: &str) -> Result<Vec<u32>, HostError> {
        self.inner.irqs_of(iface)
    }
}
