//! The simulator: a pure, deterministic discrete-event model of the host receive path.
//!
//! Flow A: scenario → **sim** → metrics → report. No wall clock, no threads and no I/O inside
//! a run; a run is a function of its scenario and seed.
//!
//! # Layout (the seams)
//!
//! - [`engine`]: integer-nanosecond time, the `(time, seq)` event queue, the seeded RNG
//!   (xoshiro256**), host oscillators, and the run loop ([`engine::sim`]).
//! - [`nic`]: link, on-card buffer, bus/DMA, rx/tx rings, the 8254x delay timers
//!   ([`nic::timers`]) and the interrupt throttle with both hardware readings
//!   ([`nic::throttle`]). Packets are not events: the NIC replays arrivals arithmetically
//!   whenever the host touches it.
//! - [`driver`]: the moderation-policy trait ([`driver::policy::ModerationPolicy`]) and the
//!   e1000 family ([`driver::e1000`]). Other drivers' algorithms plug in as further policies.
//! - [`host`]: CPU cores with irq/softirq/user/idle accounting and the cost model, NAPI and
//!   the NET_RX softirq budgets.
//! - [`workload`]: TCP_RR, ping, open-loop streams, bulk TCP.
//! - [`scenario`]: TOML scenarios with validated keys, built-ins, `--set`/`--sweep`
//!   expansion, and the parallel sweep runner (threads live outside runs).
//! - [`metrics`]: histograms, recording, and conversion to the shared metrics shape.
#![forbid(unsafe_code)]

pub mod bus;
pub mod cases;
pub mod driver;
pub mod engine;
pub mod freebsd;
pub mod host;
pub mod metrics;
pub mod moderation;
pub mod multiqueue;
pub mod napi_extras;
pub mod nic;
pub mod pool;
pub mod scenario;
pub mod workload;
