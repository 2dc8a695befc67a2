//! The control channel between the host and a guest: one JSON object per line over a
//! virtio-serial port (QEMU's `virtserialport`, a UNIX socket on the host side). It stays up
//! while the guest's NIC driver is unloaded and reloaded, which a TCP connection over that
//! NIC would not.
//!
//! The guest runs `nictune vm-agent`, which answers requests one at a time: run a program
//! to completion (bounded by a timeout, output bounded), start one in the background, stop
//! it, or read a file. Only the testbed's host side can reach the port: it is a file under
//! the testbed's private directory, not a network service.

use crate::error::{Result, VmError};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The most output one request returns per stream; the rest is cut with a note.
pub const MAX_OUTPUT: usize = 4 << 20;
/// The longest a request line may be.
const MAX_LINE: usize = 1 << 20;

/// A request from the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Answered at once: proves the agent is up.
    Ping,
    /// Runs `argv` to completion, killed after `timeout_ms`.
    Run {
        /// The program and its arguments; `argv[0]` is looked up in the guest's PATH.
        argv: Vec<String>,
        /// Milliseconds before the program is killed.
        timeout_ms: u64,
    },
    /// Starts `argv` in the background; its output goes to `/run/nictune-agent-<pid>.log`.
    Spawn {
        /// The program and its arguments.
        argv: Vec<String>,
    },
    /// Stops a program `Spawn` started: SIGTERM, then SIGKILL after two seconds.
    Stop {
        /// The guest pid `Spawn` returned.
        pid: u32,
    },
    /// Reads a file (at most [`MAX_OUTPUT`] bytes).
    Read {
        /// The file's path in the guest.
        path: String,
    },
}

/// The answer to one request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// Exit code (`Run`, `Stop`); -1 when killed by a signal or the timeout.
    pub code: Option<i32>,
    /// Standard output (`Run`) or the file's text (`Read`), at most MAX_OUTPUT bytes.
    pub stdout: String,
    /// Standard error (`Run`; `killed after N ms` on the timeout) or the program's log (`Stop`).
    pub stderr: String,
    /// The started program (`Spawn`).
    pub pid: Option<u32>,
    /// Why the request could not be carried out at all.
    pub error: Option<String>,
}

// ---------------------------------------------------------------- host side

/// The host's end of the channel.
#[derive(Debug)]
pub struct AgentClient {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    path: PathBuf,
}

impl AgentClient {
    /// Connects to QEMU's socket for the port.
    pub fn connect(path: &Path) -> Result<AgentClient> {
        let writer =
            UnixStream::connect(path).map_err(|e| VmError::io("connecting to", path, e))?;
        let reader = BufReader::new(
            writer
                .try_clone()
                .map_err(|e| VmError::io("cloning", path, e))?,
        );
        Ok(AgentClient {
            writer,
            reader,
            path: path.into(),
        })
    }

    /// Sends `request` and waits up to `wait` for its reply.
    pub fn call(&mut self, request: &Request, wait: Duration) -> Result<Reply> {
        let mut line = serde_json::to_string(request).map_err(|e| VmError::Agent(e.to_string()))?;
        line.push('\n');
        self.writer
            .write_all(line.as_bytes())
            .map_err(|e| VmError::io("writing to", &self.path, e))?;
        self.reader
            .get_ref()
            .set_read_timeout(Some(wait.max(Duration::from_millis(1))))
            .map_err(|e| VmError::io("setting a timeout on", &self.path, e))?;
        let mut answer = String::new();
        match self.reader.read_line(&mut answer) {
            Ok(0) => Err(VmError::Agent(
                "the guest closed the control channel".into(),
            )),
            Ok(_) => serde_json::from_str(&answer)
                .map_err(|e| VmError::Agent(format!("unreadable reply {answer:?}: {e}"))),
            Err(e) if is_timeout(&e) => Err(VmError::Agent(format!(
                "no reply within {:.0} s",
                wait.as_secs_f64()
            ))),
            Err(e) => Err(VmError::io("reading from", &self.path, e)),
        }
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

// ---------------------------------------------------------------- guest side

/// The character device of the virtio-serial port called `name`
/// (`/sys/class/virtio-ports/vportNpM/name` holds the name).
pub fn find_port(name: &str) -> Option<PathBuf> {
    let dir = std::fs::read_dir("/sys/class/virtio-ports").ok()?;
    dir.flatten()
        .find(|e| std::fs::read_to_string(e.path().join("name")).is_ok_and(|n| n.trim() == name))
        .map(|e| Path::new("/dev").join(e.file_name()))
}

/// Serves requests on port `name` until the process is killed. While no host is
/// connected the port reads as end-of-file; the agent waits and reads again.
pub fn serve(name: &str) -> Result<()> {
    let path = wait_for_port(name)?;
    let port = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| VmError::io("opening", &path, e))?;
    let mut writer = port
        .try_clone()
        .map_err(|e| VmError::io("cloning", &path, e))?;
    let mut reader = BufReader::new(port);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)
            .map_err(|e| VmError::io("reading", &path, e))?;
        if n == 0 {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        let reply = match serde_json::from_slice::<Request>(&line) {
            Ok(request) => handle(&request),
            Err(e) => failure(format!("unreadable request: {e}")),
        };
        let mut out = serde_json::to_vec(&reply).map_err(|e| VmError::Agent(e.to_string()))?;
        out.push(b'\n');
        writer
            .write_all(&out)
            .map_err(|e| VmError::io("writing", &path, e))?;
    }
}

fn wait_for_port(name: &str) -> Result<PathBuf> {
    for _ in 0..200 {
        if let Some(p) = find_port(name) {
            if p.exists() {
                return Ok(p);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(VmError::Agent(format!(
        "no virtio-serial port named {name}"
    )))
}

fn failure(error: String) -> Reply {
    Reply {
        error: Some(error),
        ..Reply::default()
    }
}

/// Carries out one request.
pub fn handle(request: &Request) -> Reply {
    match request {
        Request::Ping => Reply {
            code: Some(0),
            ..Reply::default()
        },
        Request::Run { argv, timeout_ms } => run(argv, Duration::from_millis(*timeout_ms)),
        Request::Spawn { argv } => spawn(argv),
        Request::Stop { pid } => stop(*pid),
        Request::Read { path } => match read_bounded(Path::new(path)) {
            Ok(stdout) => Reply {
                code: Some(0),
                stdout,
                ..Reply::default()
            },
            Err(e) => failure(format!("reading {path}: {e}")),
        },
    }
}

fn read_bounded(path: &Path) -> std::io::Result<String> {
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_OUTPUT as u64)
        .read_to_end(&mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn command(argv: &[String]) -> std::result::Result<Command, Reply> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| failure("empty command".into()))?;
    let mut c = Command::new(program);
    c.args(args).stdin(Stdio::null());
    Ok(c)
}

fn run(argv: &[String], timeout: Duration) -> Reply {
    let mut c = match command(argv) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let mut child = match child {
        Ok(ch) => ch,
        Err(e) => return failure(format!("starting {}: {e}", argv[0])),
    };
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let code = wait_bounded(&mut child, timeout);
    Reply {
        code: Some(code.unwrap_or(-1)),
        stdout: out.join().unwrap_or_default(),
        stderr: match code {
            Some(_) => err.join().unwrap_or_default(),
            None => format!("killed after {} ms\n", timeout.as_millis()),
        },
        ..Reply::default()
    }
}

/// Reads a pipe to its end on a thread, keeping at most [`MAX_OUTPUT`] bytes.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let Some(mut pipe) = pipe else {
            return String::new();
        };
        let mut kept = Vec::new();
        let _ = (&mut pipe).take(MAX_OUTPUT as u64).read_to_end(&mut kept);
        let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// The exit code, or `None` when the program had to be killed at the timeout.
fn wait_bounded(child: &mut Child, timeout: Duration) -> Option<i32> {
    let end = Instant::now() + timeout;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status.code().unwrap_or(-1));
        }
        if Instant::now() >= end {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn spawn(argv: &[String]) -> Reply {
    let mut c = match command(argv) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let log = |pid: &str| format!("/run/nictune-agent-{pid}.log");
    let file = match std::fs::File::create(log("new")) {
        Ok(f) => f,
        Err(e) => return failure(format!("creating the log: {e}")),
    };
    let err = file
        .try_clone()
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null());
    match c.stdout(Stdio::from(file)).stderr(err).spawn() {
        Ok(child) => {
            let pid = child.id();
            let _ = std::fs::rename(log("new"), log(&pid.to_string()));
            // The child is reaped by `Stop`; dropping the handle does not kill it.
            std::mem::forget(child);
            Reply {
                code: Some(0),
                pid: Some(pid),
                ..Reply::default()
            }
        }
        Err(e) => failure(format!("starting {}: {e}", argv[0])),
    }
}

fn stop(pid: u32) -> Reply {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return failure(format!("no such process {pid}"));
    };
    let status = |sig| {
        // SAFETY: kill and waitpid take plain integers; results are checked.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(raw, sig)
        }
    };
    if status(libc::SIGTERM) != 0 {
        return failure(format!("no such process {pid}"));
    }
    let end = Instant::now() + Duration::from_secs(2);
    loop {
        if let Some(code) = reap(raw) {
            let log = read_bounded(Path::new(&format!("/run/nictune-agent-{pid}.log")));
            return Reply {
                code: Some(code),
                stderr: log.unwrap_or_default(),
                ..Reply::default()
            };
        }
        if Instant::now() >= end {
            status(libc::SIGKILL);
            return Reply {
                code: Some(reap_blocking(raw)),
                ..Reply::default()
            };
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The exit code of child `pid` if it has ended.
#[allow(unsafe_code)]
fn reap(pid: libc::pid_t) -> Option<i32> {
    let mut status = 0;
    // SAFETY: status is a valid out-pointer; WNOHANG never blocks.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    (r == pid).then(|| exit_code(status))
}

#[allow(unsafe_code)]
fn reap_blocking(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    // SAFETY: status is a valid out-pointer; the child was just sent SIGKILL.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    if r == pid {
        exit_code(status)
    } else {
        -1
    }
}

fn exit_code(status: i32) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn requests_are_one_json_object_per_line() {
        let r = Request::Run {
            argv: argv(&["cat", "/proc/interrupts"]),
            timeout_ms: 5000,
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            r#"{"op":"run","argv":["cat","/proc/interrupts"],"timeout_ms":5000}"#
        );
        assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), r);
    }

    #[test]
    fn run_returns_code_and_output() {
        let r = handle(&Request::Run {
            argv: argv(&["sh", "-c", "echo out; echo err >&2; exit 3"]),
            timeout_ms: 5000,
        });
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (Some(3), "out\n", "err\n")
        );
    }

    #[test]
    fn run_is_bounded_by_its_timeout() {
        let t = Instant::now();
        let r = handle(&Request::Run {
            argv: argv(&["sleep", "5"]),
            timeout_ms: 100,
        });
        assert_eq!(r.code, Some(-1));
        assert!(r.stderr.contains("killed after 100 ms"), "{r:?}");
        assert!(t.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn a_missing_program_or_file_is_an_error_reply() {
        let r = handle(&Request::Run {
            argv: argv(&["/nonexistent/x"]),
            timeout_ms: 100,
        });
        assert!(r.error.is_some_and(|e| e.contains("/nonexistent/x")));
        let r = handle(&Request::Read {
            path: "/nonexistent/y".into(),
        });
        assert!(r.error.is_some_and(|e| e.contains("/nonexistent/y")));
        let r = handle(&Request::Run {
            argv: vec![],
            timeout_ms: 100,
        });
        assert_eq!(r.error.as_deref(), Some("empty command"));
    }
}
