//! The simulator: a pure, deterministic discrete-event model of the host receive path.
//!
//! Flow A: scenario → **sim** → metrics → report. No wall clock, no threads and no I/O inside
//! a run; a run is a function of its scenario and seed.
//!
//! The specification — how a run is put together, where each algorithm lives and which
//! kernel or driver source (file and version) it follows — is `docs/simulator.md`.
//!
//! # Layout (the seams)
//!
//! - [`engine`]: integer-nanosecond time, the `(time, seq)` event queue every model schedules
//!   its typed events on, the seeded RNG (xoshiro256**), host oscillators, and the two-host
//!   run loop ([`engine::sim`]).
//! - [`nic`]: link, on-card buffer, bus/DMA, rx/tx rings, the 8254x delay timers
//!   ([`nic::timers`]) and the interrupt throttle with both hardware readings
//!   ([`nic::throttle`]). Packets are not events: the NIC replays arrivals arithmetically
//!   whenever the host touches it.
//! - [`moderation`]: the one moderation trait ([`moderation::ModerationPolicy`]), the NIC
//!   register set it returns ([`moderation::Coalescing`]) and the igb, ixgbe, ixgbevf, DIM
//!   and FreeBSD AIM families; [`driver`]: the e1000 family ([`driver::e1000`]).
//! - [`host`]: CPU cores with irq/softirq/user/idle accounting and the cost model, NAPI (the
//!   one [`host::napi::NapiConfig`]) and the NET_RX softirq budgets; [`napi_extras`]: NAPI
//!   completion, deferral, suspension, busy polling, softirq limits, threaded NAPI.
//! - [`cases`]: the field cases 2–5 as models on the same queue, trait and configuration,
//!   and the NAPI-policy scenario (`napi-memcached`: base, deferral, IRQ suspension, epoll
//!   busy polling, [`cases::napi_rr`]); [`freebsd`], [`multiqueue`], [`bus`] and [`pool`]:
//!   the mechanisms they add.
//! - [`workload`]: TCP_RR, ping, open-loop streams, bulk TCP.
//! - [`scenario`]: TOML scenarios with one typed key catalog, built-ins, `--set`/`--sweep`
//!   expansion, and the parallel sweep runner (threads live outside runs).
//! - [`metrics`]: histograms, recording, and conversion to the shared metrics shape.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

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
