//! The testbed's errors: each names the operation and the object, and the binary adds hints.

use std::path::PathBuf;

/// What went wrong building, starting, driving or removing a guest.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// A file `scripts/install-guest` puts in the guest directory is missing.
    #[error("the guest directory {dir} has no {what}")]
    GuestMissing {
        /// The guest directory.
        dir: PathBuf,
        /// The missing part (`complete`, `vmlinuz`, `busybox`, `modules`, `kernel-release`).
        what: &'static str,
    },
    /// `$NICTUNE_QEMU` is unset and no `qemu-system-x86_64` is on PATH.
    #[error("QEMU (qemu-system-x86_64) is not installed")]
    QemuMissing,
    /// The process is not running as root.
    #[error("the real-driver testbed needs root (network namespaces, taps, module loading)")]
    NotRoot,
    /// A host file or directory operation failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done (`reading`, `creating`, ...).
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The initramfs could not be assembled: an executable or library that does not parse or
    /// cannot be found.
    #[error("building the guest image: {0}")]
    Image(String),
    /// A kernel module or one of its dependencies could not be resolved.
    #[error(transparent)]
    Modules(#[from] crate::modules::ModuleError),
    /// A host program (QEMU) could not be started.
    #[error("{command}: {detail}")]
    Command {
        /// The program.
        command: String,
        /// Why it could not start.
        detail: String,
    },
    /// The guest agent did not answer within the boot wait.
    #[error(
        "the guest did not come up within {seconds} s ({accel}); last console lines:\n{console}"
    )]
    BootTimeout {
        /// The wait, seconds.
        seconds: u64,
        /// The accelerator tried, `kvm` or `tcg`.
        accel: &'static str,
        /// The end of the guest's console log.
        console: String,
    },
    /// QEMU ended before or while the guest was in use.
    #[error("QEMU exited ({status}); last console lines:\n{console}")]
    QemuExited {
        /// The exit status and the end of QEMU's own log.
        status: String,
        /// The end of the guest's console log.
        console: String,
    },
    /// The control channel failed: no reply, an unreadable one, or the agent's own error.
    #[error("the guest agent: {0}")]
    Agent(String),
    /// A command run in the guest exited non-zero.
    #[error("in the guest, `{command}` failed (exit {code}): {stderr}")]
    GuestCommand {
        /// The command line, joined with spaces.
        command: String,
        /// The exit code; -1 when killed (signal or timeout).
        code: i32,
        /// Its standard error, trimmed.
        stderr: String,
    },
}

impl VmError {
    /// An `Io` error for operation `op` on `path`.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> VmError {
        VmError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// The testbed's result; the error defaults to `VmError`.
pub type Result<T, E = VmError> = std::result::Result<T, E>;
