//! The control channel between the host and a guest: one JSON object per line over a
//! virtio-serial port (QEMU's `virtserialport`, a UNIX socket on the host side). It stays up
//! while the guest's NIC driver is unloaded and reloaded, which a TCP connection over that
//! NIC would not.
//!
//! The guest runs `nictune vm-agent`, which answers requests one at a time: run a program
//! to completion (bounded by a timeout, output bounded), start one in the background, stop
//! it, or read a file. Only the testbed's host side can reach the port: it is a file under
//! the testbed's private directory, not a network service.
//!
//! Every request carries a sequence number that its reply echoes, and the host takes only
//! the reply to the request it is waiting for. The channel can hold replies nobody waits
//! for: a request the host gave up on (its reply comes late), or the pings the host sends
//! while the guest boots, which QEMU may queue until the agent opens the port and which the
//! agent then answers all at once. Without the number, each such reply would be read as the
//! answer to the next request, and every answer after it would be one behind.

use crate::error::{Result, VmError};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
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

/// A request as it travels: its sequence number beside its fields, one JSON object
/// (`{"seq":7,"op":"ping"}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NumberedRequest {
    /// Chosen by the host, increasing per connection; echoed in the reply.
    pub seq: u64,
    /// The request itself.
    #[serde(flatten)]
    pub request: Request,
}

/// The answer to one request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// The sequence number of the request this answers; `None` when the request was too
    /// garbled to carry one.
    #[serde(default)]
    pub seq: Option<u64>,
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

/// The longest reply line the host accepts: two streams of [`MAX_OUTPUT`] bytes, each of
/// which JSON may escape to six bytes a byte (`\u0001`), with room for the rest.
const MAX_REPLY_LINE: usize = 13 * MAX_OUTPUT;

/// Sequence numbers are unique across every connection this process makes, so a reply
/// left in the channel by an earlier connection (the boot-time pings each use a new one)
/// can never match a later request.
static NEXT_SEQ: AtomicU64 = AtomicU64::new(1);

/// The host's end of the channel.
#[derive(Debug)]
pub struct AgentClient {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    path: PathBuf,
    /// The sequence number of the last request sent.
    seq: u64,
    /// A reply line read in part when a wait ran out; the next read goes on from it.
    partial: Vec<u8>,
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
            seq: 0,
            partial: Vec::new(),
        })
    }

    /// Sends `request` and waits up to `wait` for its reply. Replies to earlier requests
    /// still in the channel are passed over.
    pub fn call(&mut self, request: &Request, wait: Duration) -> Result<Reply> {
        self.seq = NEXT_SEQ.fetch_add(1, Ordering::Relaxed);
        let envelope = NumberedRequest {
            seq: self.seq,
            request: request.clone(),
        };
        let mut line =
            serde_json::to_string(&envelope).map_err(|e| VmError::Agent(e.to_string()))?;
        line.push('\n');
        self.writer
            .write_all(line.as_bytes())
            .map_err(|e| VmError::io("writing to", &self.path, e))?;
        let deadline = Instant::now() + wait;
        loop {
            let answer = self.read_reply_line(deadline, wait)?;
            let reply: Reply = serde_json::from_slice(&answer).map_err(|e| {
                let text = String::from_utf8_lossy(&answer);
                VmError::Agent(format!("unreadable reply {text:?}: {e}"))
            })?;
            match reply.seq {
                Some(seq) if seq == self.seq => return Ok(reply),
                // An answer to a request given up on, or to a boot-time ping.
                _ => continue,
            }
        }
    }

    /// One whole reply line, read until `deadline`.
    fn read_reply_line(&mut self, deadline: Instant, wait: Duration) -> Result<Vec<u8>> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(no_reply(wait));
            }
            self.reader
                .get_ref()
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .map_err(|e| VmError::io("setting a timeout on", &self.path, e))?;
            let room = (MAX_REPLY_LINE + 1).saturating_sub(self.partial.len()) as u64;
            // On a timeout the bytes read so far stay in `partial` (read_until keeps them).
            match (&mut self.reader)
                .take(room)
                .read_until(b'\n', &mut self.partial)
            {
                Ok(0) if self.partial.is_empty() => {
                    return Err(VmError::Agent(
                        "the guest closed the control channel".into(),
                    ))
                }
                Ok(_) if self.partial.ends_with(b"\n") => {
                    return Ok(std::mem::take(&mut self.partial))
                }
                Ok(_) if self.partial.len() > MAX_REPLY_LINE => {
                    self.partial.clear();
                    return Err(VmError::Agent(format!(
                        "a reply longer than {MAX_REPLY_LINE} bytes"
                    )));
                }
                Ok(0) => {
                    return Err(VmError::Agent(
                        "the guest closed the control channel in the middle of a reply".into(),
                    ))
                }
                Ok(_) => continue,
                Err(e) if is_timeout(&e) => return Err(no_reply(wait)),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(VmError::io("reading from", &self.path, e)),
            }
        }
    }
}

fn no_reply(wait: Duration) -> VmError {
    VmError::Agent(format!("no reply within {:.0} s", wait.as_secs_f64()))
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
        let reply = answer(&line);
        let mut out = serde_json::to_vec(&reply).map_err(|e| VmError::Agent(e.to_string()))?;
        out.push(b'\n');
        writer
            .write_all(&out)
            .map_err(|e| VmError::io("writing", &path, e))?;
    }
}

/// The reply to one request line, carrying the line's sequence number.
pub fn answer(line: &[u8]) -> Reply {
    match serde_json::from_slice::<NumberedRequest>(line) {
        Ok(envelope) => Reply {
            seq: Some(envelope.seq),
            ..handle(&envelope.request)
        },
        Err(e) => {
            // Still echo the number where the line has one, so the host is not left waiting.
            let seq = serde_json::from_slice::<serde_json::Value>(line)
                .ok()
                .and_then(|v| v.get("seq")?.as_u64());
            Reply {
                seq,
                ..failure(format!("unreadable request: {e}"))
            }
        }
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
        let r = NumberedRequest {
            seq: 7,
            request: Request::Run {
                argv: argv(&["cat", "/proc/interrupts"]),
                timeout_ms: 5000,
            },
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            r#"{"seq":7,"op":"run","argv":["cat","/proc/interrupts"],"timeout_ms":5000}"#
        );
        assert_eq!(serde_json::from_str::<NumberedRequest>(&text).unwrap(), r);
    }

    #[test]
    fn the_agent_echoes_the_sequence_number_even_of_a_request_it_cannot_read() {
        let r = answer(br#"{"seq":12,"op":"ping"}"#);
        assert_eq!((r.seq, r.code, r.error), (Some(12), Some(0), None));
        let r = answer(br#"{"seq":13,"op":"fly"}"#);
        assert_eq!(r.seq, Some(13));
        assert!(r.error.is_some_and(|e| e.contains("unreadable request")));
        assert_eq!(answer(b"{not json").seq, None);
    }

    /// A fake guest on a UNIX socket: for each request line it receives, `script` says
    /// which lines to write back.
    fn fake_agent(
        name: &str,
        mut script: impl FnMut(u64) -> Vec<String> + Send + 'static,
    ) -> (PathBuf, std::thread::JoinHandle<()>) {
        let path =
            std::env::temp_dir().join(format!("nictune-agent-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let t = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut w = stream.try_clone().unwrap();
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { return };
                let env: NumberedRequest = serde_json::from_str(&line).unwrap();
                for out in script(env.seq) {
                    w.write_all(out.as_bytes()).unwrap();
                }
            }
        });
        (path, t)
    }

    fn reply_line(seq: Option<u64>, pid: Option<u32>) -> String {
        let r = Reply {
            seq,
            code: Some(0),
            pid,
            ..Reply::default()
        };
        format!("{}\n", serde_json::to_string(&r).unwrap())
    }

    /// The CI failure this fixes: pings queued during boot were answered after the host had
    /// moved on, so `spawn` read the reply to the `run` before it ("no process id").
    #[test]
    fn regression_spawn_returned_no_process_id_after_queued_boot_pings() {
        let (path, t) = fake_agent("stale", |seq| {
            // Two answers to requests the host no longer waits for, then the real one.
            vec![
                reply_line(Some(seq.saturating_sub(1)), None),
                reply_line(None, None),
                reply_line(Some(seq), Some(4242)),
            ]
        });
        let mut c = AgentClient::connect(&path).unwrap();
        let spawn = Request::Spawn {
            argv: argv(&["/bin/nictune", "serve"]),
        };
        for _ in 0..3 {
            let r = c.call(&spawn, Duration::from_secs(5)).unwrap();
            assert_eq!(r.pid, Some(4242), "{r:?}");
        }
        drop(c);
        t.join().unwrap();
        let _ = std::fs::remove_file(&path);
    }

    /// A reply that arrives after its wait ran out is passed over by the next call, also
    /// when the wait ended half-way through the reply's line.
    #[test]
    fn a_late_reply_is_not_taken_for_the_next_one() {
        let mut unanswered = None;
        let (path, t) = fake_agent("late", move |seq| {
            let Some(earlier) = unanswered else {
                unanswered = Some(seq); // the first request gets no answer in time
                return vec![];
            };
            let late = reply_line(Some(earlier), None);
            let (head, tail) = late.split_at(late.len() / 2);
            vec![
                head.to_string(),
                tail.to_string(),
                reply_line(Some(seq), Some(7)),
            ]
        });
        let mut c = AgentClient::connect(&path).unwrap();
        let ping = Request::Ping;
        let e = c.call(&ping, Duration::from_millis(200)).unwrap_err();
        assert!(e.to_string().contains("no reply"), "{e}");
        let r = c.call(&ping, Duration::from_secs(5)).unwrap();
        assert_eq!(r.pid, Some(7), "{r:?}");
        drop(c);
        t.join().unwrap();
        let _ = std::fs::remove_file(&path);
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
