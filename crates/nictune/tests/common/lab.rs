//! Two network namespaces of a test's own joined by a veth pair (`tp-a` 198.18.77.1 in
//! `a`, `tp-b` 198.18.77.2 in `b`, GRO on and TSO off so veth runs in NAPI mode), with
//! `nictune serve` listening in `b`. Made with `ip` and ethtool, not with nictune, so what
//! nictune does across it is checked against a path it did not build. Everything is
//! removed when the lab is dropped, also after a failed assertion.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_nictune");
pub const TOKEN: &str = "tune-peer-test-token-0123";
pub const PORT: &str = "12877";
/// Where the server listens (inside namespace `b`).
pub const SERVER: &str = "198.18.77.2";

/// Runs `ip ARGS`, failing the test when it fails.
pub fn ip(args: &[&str]) -> Output {
    let out = Command::new("ip").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The two namespaces and the server.
pub struct Lab {
    pub a: String,
    pub b: String,
    pub server: Option<Child>,
}

impl Lab {
    /// A lab whose namespaces are named `nictune-TAG-<pid>-<n>{a,b}`.
    pub fn create(tag: &str) -> Lab {
        Lab::serving(tag, &[])
    }

    /// The lab with a server that lets clients change tp-b, journaled in `state`.
    pub fn taking_changes(tag: &str, state: &Path) -> Lab {
        let state = state.to_str().unwrap();
        Lab::serving(tag, &["--allow-changes", "tp-b", "--state-dir", state])
    }

    /// The lab with `nictune serve … EXTRA` in namespace b.
    pub fn serving(tag: &str, extra: &[&str]) -> Lab {
        // Tests of one file run in parallel: each lab its own namespaces.
        static LABS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = LABS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pid = std::process::id();
        let mut lab = Lab {
            a: format!("nictune-{tag}-{pid}-{n}a"),
            b: format!("nictune-{tag}-{pid}-{n}b"),
            server: None,
        };
        ip(&["netns", "add", &lab.a]);
        ip(&["netns", "add", &lab.b]);
        ip(&[
            "-n", &lab.a, "link", "add", "tp-a", "type", "veth", "peer", "name", "tp-b", "netns",
            &lab.b,
        ]);
        for (ns, dev, addr) in [
            (&lab.a, "tp-a", "198.18.77.1/24"),
            (&lab.b, "tp-b", "198.18.77.2/24"),
        ] {
            ip(&["-n", ns, "addr", "add", addr, "dev", dev]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
            // NAPI mode, so the per-NAPI settings have instances to act on.
            ip(&[
                "netns", "exec", ns, "ethtool", "-K", dev, "gro", "on", "tso", "off",
            ]);
        }
        let server = Command::new("ip")
            .args(["netns", "exec", &lab.b, BIN, "serve", "--bind"])
            .arg(format!("{SERVER}:{PORT}"))
            .args(extra)
            .env("NICTUNE_TOKEN", TOKEN)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        lab.server = Some(server);
        lab.wait_for_listener();
        lab
    }

    /// Waits (at most 10 s) until the server listens.
    fn wait_for_listener(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let out = Command::new("ip")
                .args(["netns", "exec", &self.b, "ss", "-ltnH"])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&out.stdout).contains(&format!(":{PORT}")) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("nictune serve did not start listening in {}", self.b);
    }

    /// `nictune ARGS` run inside namespace `a` with the lab's token.
    pub fn nictune_in_a(&self, args: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", &self.a, BIN])
            .args(args)
            .env("NICTUNE_TOKEN", TOKEN)
            .output()
            .unwrap()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(mut server) = self.server.take() {
            let _ = server.kill();
            let _ = server.wait();
        }
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}
