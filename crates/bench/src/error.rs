//! The crate's error type: every variant records the operation and the object it concerned.

use std::io;

/// What went wrong while preparing, running or cleaning up a measurement.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A spec value outside what the engine accepts.
    #[error(transparent)]
    Invalid(#[from] nictune_core::error::InvalidInput),
    /// A socket operation failed.
    #[error("{op} {object}: {source}")]
    Socket {
        /// What was being done (`connecting to`, `reading`, ...), worded to precede `object`.
        op: &'static str,
        /// The socket or address, e.g. the server's `HOST:PORT`.
        object: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// Building or removing the namespace testbed failed (the step and namespace named).
    #[error("testbed: {0}")]
    Testbed(#[from] nictune_linux::lab::LabError),
    /// A system call outside sockets (setns, affinity, procfs read) failed.
    #[error("{op} {object}: {source}")]
    System {
        /// What was being done (`connecting to`, `reading`, ...), worded to precede `object`.
        op: &'static str,
        /// What it concerned: a file, a namespace, a CPU, a thread.
        object: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The testbed needs privileges or tools this process does not have.
    #[error("the namespace testbed is not available: {0}")]
    TestbedUnavailable(String),
    /// The peer broke the control protocol or refused the test.
    #[error("control protocol with {peer}: {detail}")]
    Protocol {
        /// The peer's control address (`HOST:PORT`).
        peer: String,
        /// What was wrong: the peer's error message or the unexpected reply.
        detail: String,
    },
    /// The peer runs another client's test (`detail` says whose and for how long).
    #[error("{peer}: {detail}")]
    PeerBusy {
        /// The peer's control address (`HOST:PORT`).
        peer: String,
        /// The peer's refusal, starting with `peer busy:`.
        detail: String,
    },
    /// The peer did not answer a control message in time: it stopped, crashed or vanished.
    #[error("{peer}: peer stopped answering: no {awaited} within {waited:?}")]
    PeerSilent {
        /// The peer's control address (`HOST:PORT`).
        peer: String,
        /// The reply waited for (`welcome`, `report`, ...).
        awaited: &'static str,
        /// How long it was waited for.
        waited: std::time::Duration,
    },
    /// The run was stopped (Ctrl-C, SIGTERM, SIGHUP) before it finished.
    #[error("the measurement was interrupted")]
    Interrupted,
    /// A worker thread panicked or could not be started.
    #[error("worker thread {0} failed")]
    Worker(String),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, BenchError>;

impl BenchError {
    /// A socket error about `object` during `op`.
    pub fn socket(op: &'static str, object: impl Into<String>, source: io::Error) -> BenchError {
        BenchError::Socket {
            op,
            object: object.into(),
            source,
        }
    }

    /// A system-call error about `object` during `op`.
    pub fn system(op: &'static str, object: impl Into<String>, source: io::Error) -> BenchError {
        BenchError::System {
            op,
            object: object.into(),
            source,
        }
    }

    /// A bounded file read ([`nictune_core::input`]) that failed during `op`.
    pub fn read(op: &'static str, e: nictune_core::input::ReadError) -> BenchError {
        match e {
            nictune_core::input::ReadError::Io { name, error, .. } => {
                BenchError::system(op, name, error)
            }
            other => BenchError::Invalid(nictune_core::error::InvalidInput::new(
                op,
                other.to_string(),
                "a file within its size limit",
            )),
        }
    }

    /// A control-protocol error with `peer`.
    pub fn protocol(peer: impl Into<String>, detail: impl Into<String>) -> BenchError {
        BenchError::Protocol {
            peer: peer.into(),
            detail: detail.into(),
        }
    }
}
