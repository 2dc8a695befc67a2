//! The guest as a benchmark's far side: `nictune serve` in the guest, bound to the guest's
//! NIC address, with a fresh random token, reached by clients in the host-side namespace.

use crate::bed::VmBed;
use crate::error::{Result, VmError};
use nictune_bench::{peer, PeerTarget, Token};
use std::io::Read;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Where the guest keeps the token.
const TOKEN_FILE: &str = "/run/nictune-token";
/// Where a server taking changes journals them in the guest.
pub const SERVE_STATE_DIR: &str = "/run/nictune-serve";

impl VmBed {
    /// Starts `nictune serve` in the guest if it is not running, and returns the peer to
    /// bench against (its clients run in the host-side namespace).
    pub fn peer(&mut self) -> Result<PeerTarget> {
        self.serve(&[])
    }

    /// Like [`VmBed::peer`], with the server taking change sessions for the guest's NIC and
    /// its driver's module parameters (`serve --allow-changes eth0 --allow-reload`), journaled
    /// in the guest: a client on the host changes the guest's real driver through the same
    /// protocol as a tune of both ends.
    pub fn peer_taking_changes(&mut self) -> Result<PeerTarget> {
        let changes = [
            "--allow-changes",
            "eth0",
            "--allow-reload",
            "--state-dir",
            SERVE_STATE_DIR,
        ];
        self.serve(&changes)
    }

    fn serve(&mut self, extra: &[&str]) -> Result<PeerTarget> {
        if let Some(p) = self.serving.clone() {
            return Ok(p);
        }
        let token = random_token()?;
        self.write_token(TOKEN_FILE, &token)?;
        let addr = SocketAddr::from((self.address().0, peer::DEFAULT_PORT));
        let bind = addr.to_string();
        let mut args = vec![
            "/bin/nictune",
            "serve",
            "--bind",
            &bind,
            "--token-file",
            TOKEN_FILE,
        ];
        args.extend(extra);
        self.serve_pid = Some(self.spawn(&args)?);
        let mut target = PeerTarget::new(addr, token);
        target.client_netns = Some(self.host_netns());
        self.wait_listening(Duration::from_secs(20))?;
        self.serving = Some(target.clone());
        Ok(target)
    }

    /// Writes `token` to `path` in the guest, readable by root only.
    pub(crate) fn write_token(&mut self, path: &str, token: &Token) -> Result<()> {
        let write = format!("umask 077; echo {} > {path}", token.expose());
        self.run_ok(&["sh", "-c", &write], Duration::from_secs(10))
            .map(drop)
    }

    /// Waits until the guest has a TCP socket listening on the serve port.
    fn wait_listening(&mut self, wait: Duration) -> Result<()> {
        let port = format!("{:04X}", peer::DEFAULT_PORT);
        let end = Instant::now() + wait;
        while Instant::now() < end {
            let tcp = self.read("/proc/net/tcp")?;
            // State 0A is LISTEN; the local address column is HEXIP:HEXPORT.
            let listening = tcp.lines().any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 3 && f[1].ends_with(&format!(":{port}")) && f[3] == "0A"
            });
            if listening {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(VmError::Agent(format!(
            "`nictune serve` in the guest did not start listening within {} s",
            wait.as_secs()
        )))
    }
}

fn random_token() -> Result<Token> {
    let mut bytes = [0u8; 24];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| VmError::io("reading", "/dev/urandom", e))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Token::parse(&hex, "the testbed").map_err(|e| VmError::Agent(e.to_string()))
}
