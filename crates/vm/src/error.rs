//! The testbed's errors: each names the operation and the object, and the binary adds hints.

use std::path::PathBuf;

/// What went wrong building, starting, driving or removing a guest.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    #[error("the guest directory {dir} has no {what}")]
    GuestMissing { dir: PathBuf, what: &'static str },
    #[error("QEMU (qemu-system-x86_64) is not installed")]
    QemuMissing,
    #[error("the real-driver testbed needs root (network namespaces, taps, module loading)")]
    NotRoot,
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("building the guest image: {0}")]
    Image(String),
    #[error(transparent)]
    Modules(#[from] crate::modules::ModuleError),
    #[error("{command}: {detail}")]
    Command { command: String, detail: String },
    #[error(
        "the guest did not come up within {seconds} s ({accel}); last console lines:\n{console}"
    )]
    BootTimeout {
        seconds: u64,
        accel: &'static str,
        console: String,
    },
    #[error("QEMU exited ({status}); last console lines:\n{console}")]
    QemuExited { status: String, console: String },
    #[error("the guest agent: {0}")]
    Agent(String),
    #[error("in the guest, `{command}` failed (exit {code}): {stderr}")]
    GuestCommand {
        command: String,
        code: i32,
        stderr: String,
    },
}

impl VmError {
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> VmError {
        VmError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = VmError> = std::result::Result<T, E>;
