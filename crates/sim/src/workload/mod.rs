//! Workloads: what the applications and traffic sources do, as state machines that react to
//! received frames, finished application jobs and their own timers with [`Action`]s.
//!
//! - [`rr`]: closed-loop TCP request/response like netperf TCP_RR, with the ACKs, loss
//!   recovery (fast retransmit, retransmission timer) and
//!   transmit completions it causes;
//! - [`ping`]: ICMP echo at an interval, answered in the server's softirq;
//! - [`stream`]: open-loop streams from a generator (constant, Poisson, on/off, size mixes);
//! - [`bulk`]: a window-limited bulk TCP-like transfer with simple loss recovery.
//!
//! Host 0 is the client (or the only host), host 1 the server.

pub mod bulk;
pub mod ping;
pub mod rr;
pub mod stream;

use crate::host::costs::Costs;
use crate::metrics::recorder::{Recorder, StreamBatch};
use crate::nic::frame::{Frame, FrameRun};

/// Index of a host in the topology.
pub type HostId = usize;
/// The client in a two-host topology.
pub const CLIENT: HostId = 0;
/// The server (and the receiving host of a generator topology).
pub const SERVER: HostId = 1;

/// Something a workload asks the engine to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `host` hands `frame` to its driver at `at` (the send cost is already charged).
    Send {
        /// The sending host.
        host: HostId,
        /// Simulated time of the hand-off, ns.
        at: u64,
        /// The frame to send.
        frame: Frame,
    },
    /// Run `work` ns of application time on `host`, runnable from `ready`; `tag` comes back
    /// in [`Workload::on_job_done`].
    Job {
        /// The host whose CPU runs the job.
        host: HostId,
        /// Earliest simulated time the job may start, ns.
        ready: u64,
        /// Application CPU time the job takes, ns.
        work: u64,
        /// The workload's own label, returned when the job completes.
        tag: u64,
    },
    /// Call [`Workload::on_timer`] with `tag` at `at`.
    Timer {
        /// Simulated time the timer fires, ns.
        at: u64,
        /// The workload's own label, passed back to `on_timer`.
        tag: u64,
    },
}

/// A receive handed to the workload by the softirq.
#[derive(Debug, Clone, Copy)]
pub struct Rx<'a> {
    /// The receiving host.
    pub host: HostId,
    /// Its costs.
    pub costs: &'a Costs,
    /// When the stack started processing the frame (socket timestamp).
    pub start: u64,
    /// When its processing finished.
    pub end: u64,
}

/// The workload of a run.
#[derive(Debug)]
pub enum Workload {
    /// netperf TCP_RR-like.
    Rr(Box<rr::Rr>),
    /// ping-like.
    Ping(ping::Ping),
    /// Open-loop generator stream (the generator sits on the NIC's feed; this sinks it).
    Stream,
    /// Window-limited bulk TCP.
    Bulk(bulk::Bulk),
}

/// The stream workload's whole per-frame step: a stream frame's processing ended at `end`
/// (its latency is measured from release; its payload reached the sink).
#[inline(always)]
pub fn sink(rec: &mut StreamBatch<'_>, frame: &Frame, end: u64) {
    rec.frame(frame.sent, frame.payload, end);
}

/// [`sink`] for the frames of `run` processed one after another from `t`, `rx_ns` each;
/// returns when the last finished.
#[inline]
pub fn sink_run(rec: &mut StreamBatch<'_>, run: &FrameRun, t: u64, rx_ns: u64) -> u64 {
    rec.run(run, t, rx_ns)
}

impl Workload {
    /// First actions at time 0.
    pub fn start(&mut self, costs: &[Costs], out: &mut Vec<Action>) {
        match self {
            Workload::Rr(w) => w.start(costs, out),
            Workload::Ping(w) => w.start(out),
            Workload::Stream => {}
            Workload::Bulk(w) => w.start(costs, out),
        }
    }

    /// A frame finished its softirq processing; returns extra softirq ns this caused
    /// (replies and ACKs sent from the softirq).
    #[inline]
    pub fn on_rx(
        &mut self,
        rx: Rx<'_>,
        frame: &Frame,
        rec: &mut Recorder,
        out: &mut Vec<Action>,
    ) -> u64 {
        match self {
            Workload::Stream => {
                sink(&mut rec.stream_batch(), frame, rx.end);
                0
            }
            Workload::Rr(w) => w.on_rx(rx, frame, out),
            Workload::Ping(w) => w.on_rx(rx, frame, rec, out),
            Workload::Bulk(w) => w.on_rx(rx, frame, rec, out),
        }
    }

    /// An application job finished on `host` at `now`.
    pub fn on_job_done(
        &mut self,
        host: HostId,
        tag: u64,
        now: u64,
        rec: &mut Recorder,
        out: &mut Vec<Action>,
    ) {
        match self {
            Workload::Rr(w) => w.on_job_done(host, tag, now, rec, out),
            Workload::Ping(w) => w.on_job_done(host, tag, now, out),
            Workload::Bulk(w) => w.on_job_done(host, now, out),
            Workload::Stream => {}
        }
    }

    /// A workload timer fired.
    pub fn on_timer(&mut self, tag: u64, now: u64, costs: &[Costs], out: &mut Vec<Action>) {
        match self {
            Workload::Ping(w) => w.on_timer(now, costs, out),
            Workload::Bulk(w) => w.on_timer(tag, now, costs, out),
            Workload::Rr(w) => w.on_timer(tag, now, out),
            Workload::Stream => {}
        }
    }

    /// Whether this workload counts transactions (request/response).
    pub fn has_transactions(&self) -> bool {
        matches!(self, Workload::Rr(_))
    }
}
