//! One running guest and everything it holds on the host, as one value: dropping it stops
//! the guest and removes its namespace and files.
//!
//! ```text
//!   host, namespace nictune-vm-<pid>-<n>          QEMU guest (1 vCPU, its own kernel)
//!   tap ntv<pid>x<n>  198.18.1.1/30  <— emulated NIC —>  eth0 198.18.1.2/30 (e1000 | e1000e)
//!   /run/nictune/vm/<name>/agent.sock  <— virtio-serial —>  nictune vm-agent
//! ```
//!
//! Nothing outlives its owner: QEMU gets SIGKILL when the thread that started it ends
//! (`PR_SET_PDEATHSIG`), the guest powers itself off at the end of its lifetime, and every
//! [`VmBed::create`] first removes what a killed owner left behind (its QEMU, found by the
//! recorded process id and checked by its command line, its namespace and its directory).

use crate::agent::{AgentClient, Reply, Request};
use crate::error::{Result, VmError};
use crate::guest::{qemu_program, GuestDir, Nic};
use crate::hostnet;
use crate::image::{self, ImageSpec};
use crate::qemu::{Accel, AccelChoice, QemuSpec};
use nictune_core::privilege::Privilege;
use nictune_linux::write::detach;
use std::net::Ipv4Addr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Every testbed namespace and directory name starts with this.
pub const PREFIX: &str = "nictune-vm-";
/// Where running guests keep their files.
pub const RUN_DIR: &str = "/run/nictune/vm";
/// The host end of the link.
pub const HOST_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 1);
/// The guest end of the link.
pub const GUEST_IP: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 2);
const PREFIX_LEN: u8 = 30;
/// A pair's link: the bridge and two guests fit a /29.
pub(crate) const PAIR_PREFIX_LEN: u8 = 29;
/// How long a TCG boot may take before the guest counts as failed (≈10–13 s measured on a
/// quiet 2-core machine; a loaded one is slower).
const TCG_BOOT_WAIT: Duration = Duration::from_secs(90);
/// How long a KVM boot may take before KVM counts as unusable here.
const KVM_BOOT_WAIT: Duration = Duration::from_secs(20);

static NEXT: AtomicU32 = AtomicU32::new(0);

/// Where a guest's NIC meets the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostLink {
    /// A namespace of the guest's own, the tap at [`HOST_IP`]/30 and the guest at
    /// [`GUEST_IP`]/30.
    OwnTap,
    /// A port of `bridge` in namespace `netns` (a [`VmPair`](crate::pair::VmPair)'s, which
    /// owns both); the guest at `guest_ip`/29, its MAC ending in `mac_last`.
    Bridged {
        /// The pair's namespace, where the bridge and the tap are.
        netns: String,
        /// The bridge the tap is a port of.
        bridge: String,
        /// The guest's address on the bridged /29.
        guest_ip: Ipv4Addr,
        /// The last byte of the guest NIC's MAC (`52:54:00:4e:54:xx`), unique per guest of a pair.
        mac_last: u8,
    },
}

/// How to start a guest.
#[derive(Debug, Clone)]
pub struct BedOptions {
    /// The emulated NIC, and so the guest driver.
    pub nic: Nic,
    /// Where the NIC meets the host; `OwnTap` from `new`.
    pub link: HostLink,
    /// KVM, TCG, or KVM falling back to TCG; `Auto` from `new`.
    pub accel: AccelChoice,
    /// The guest ends itself after this long, whatever happens on the host.
    pub lifetime: Duration,
    /// The nictune binary to run in the guest.
    pub nictune: PathBuf,
    /// The guest's RAM, MiB (512 from `new`).
    pub memory_mib: u32,
}

impl BedOptions {
    /// Options for an own-tap guest with automatic acceleration and 512 MiB.
    pub fn new(nic: Nic, nictune: PathBuf, lifetime: Duration) -> BedOptions {
        BedOptions {
            nic,
            link: HostLink::OwnTap,
            accel: AccelChoice::Auto,
            lifetime,
            nictune,
            memory_mib: 512,
        }
    }
}

/// The names one guest uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    /// `nictune-vm-<pid>-<n>`: the guest's name (QEMU's `-name`, its directory's).
    pub name: String,
    /// The namespace its tap is in: its own (named like the guest) or a pair's.
    pub netns: String,
    /// The host end of the guest's NIC, `ntv<pid>x<n>` (short enough for IFNAMSIZ).
    pub tap: String,
    /// The guest's working directory, `RUN_DIR/<name>` (console log, agent socket, pid file).
    pub dir: PathBuf,
}

impl Names {
    /// The names of guest `n` of process `pid`.
    pub fn new(pid: u32, n: u32) -> Names {
        let name = format!("{PREFIX}{pid}-{n}");
        Names {
            tap: format!("ntv{pid}x{n}"),
            dir: Path::new(RUN_DIR).join(&name),
            netns: name.clone(),
            name,
        }
    }
}

/// The next `n` of this process's testbed names.
pub(crate) fn next_n() -> u32 {
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The process that created testbed `name`, if the name is one of ours.
pub fn owner_of(name: &str) -> Option<u32> {
    let (pid, n) = name.strip_prefix(PREFIX)?.split_once('-')?;
    n.parse::<u32>().ok()?;
    pid.parse().ok()
}

/// How the guest came up.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BootInfo {
    /// The accelerator the guest runs under (KVM, or TCG when KVM is unusable or not chosen).
    pub accel: Accel,
    /// Why KVM was not used, when it was not.
    pub accel_note: Option<String>,
    /// From starting QEMU to the agent's first answer.
    pub boot_seconds: f64,
    /// The guest kernel's release (the guest directory's `kernel-release` file).
    pub kernel_release: String,
    /// QEMU's `-device` model name (`e1000-82545em`, `e1000e`).
    pub qemu_device: &'static str,
    /// The emulated controller, for people (`Intel 82545EM`, `Intel 82574L`).
    pub nic_model: &'static str,
}

/// QEMU's use of the host at one moment.
#[derive(Debug, Clone, Copy)]
pub struct QemuUsage {
    /// User plus system CPU time QEMU has used, seconds (`/proc/<pid>/stat`, utime + stime).
    pub cpu_seconds: f64,
    /// QEMU's resident memory, MiB (`VmRSS` of `/proc/<pid>/status`).
    pub rss_mib: f64,
    /// When it was read.
    pub at: Instant,
}

impl QemuUsage {
    /// CPU cores QEMU kept busy between `earlier` and `self`.
    pub fn cores_since(&self, earlier: &QemuUsage) -> f64 {
        let wall = self.at.duration_since(earlier.at).as_secs_f64().max(1e-3);
        (self.cpu_seconds - earlier.cpu_seconds).max(0.0) / wall
    }
}

/// A running guest.
#[derive(Debug)]
pub struct VmBed {
    names: Names,
    link: HostLink,
    nic: Nic,
    qemu: Option<Child>,
    agent: Option<AgentClient>,
    boot: Option<BootInfo>,
    /// The guest's `nictune serve`, once started ([`VmBed::peer`]).
    pub(crate) serving: Option<nictune_bench::PeerTarget>,
    pub(crate) serve_pid: Option<u32>,
    removed: bool,
}

impl VmBed {
    /// Checks what is needed (root: `privilege`), removes stale guests, and boots a new one;
    /// returns when its agent answers.
    pub fn create(opts: &BedOptions, privilege: Privilege) -> Result<VmBed> {
        if !privilege.is_root() {
            return Err(VmError::NotRoot);
        }
        let guest = GuestDir::locate()?;
        let program = qemu_program()?;
        remove_stale()?;
        let mut names = Names::new(std::process::id(), next_n());
        if let HostLink::Bridged { netns, .. } = &opts.link {
            names.netns = netns.clone();
        }
        let mut bed = VmBed {
            names,
            link: opts.link.clone(),
            nic: opts.nic,
            qemu: None,
            agent: None,
            boot: None,
            serving: None,
            serve_pid: None,
            removed: false,
        };
        bed.start(opts, &guest, program)?;
        Ok(bed)
    }

    fn start(&mut self, opts: &BedOptions, guest: &GuestDir, program: PathBuf) -> Result<()> {
        let dir = self.names.dir.clone();
        std::fs::create_dir_all(&dir).map_err(|e| VmError::io("creating", &dir, e))?;
        let initrd = image::build(&ImageSpec {
            guest,
            nictune: &opts.nictune,
            nic: opts.nic,
            address: self.address(),
            lifetime: opts.lifetime,
        })?;
        let initrd_path = dir.join("initrd.cpio");
        std::fs::write(&initrd_path, initrd)
            .map_err(|e| VmError::io("writing", &initrd_path, e))?;
        if self.owns_netns() {
            hostnet::create_netns(&self.names.netns)?;
        }
        let mac_last = match &self.link {
            HostLink::OwnTap => 0x02,
            HostLink::Bridged { mac_last, .. } => *mac_last,
        };
        let mut spec = QemuSpec {
            program,
            name: self.names.name.clone(),
            accel: Accel::Tcg,
            memory_mib: opts.memory_mib,
            kernel: guest.kernel(),
            initrd: initrd_path,
            console: dir.join("console.log"),
            agent_socket: dir.join("agent.sock"),
            pidfile: dir.join("qemu.pid"),
            nic: opts.nic,
            tap: self.names.tap.clone(),
            mac: [0x52, 0x54, 0x00, 0x4e, 0x54, mac_last],
        };
        let (accel, note, boot_seconds) = self.boot_with(opts.accel, guest, &mut spec)?;
        self.boot = Some(BootInfo {
            accel,
            accel_note: note,
            boot_seconds,
            kernel_release: guest.kernel_release.clone(),
            qemu_device: opts.nic.qemu_device(),
            nic_model: opts.nic.model(),
        });
        Ok(())
    }

    /// Boots with KVM when chosen or found usable, falling back to TCG (and remembering
    /// that KVM did not work here); returns the accelerator used, why not KVM, and the
    /// boot time.
    fn boot_with(
        &mut self,
        choice: AccelChoice,
        guest: &GuestDir,
        spec: &mut QemuSpec,
    ) -> Result<(Accel, Option<String>, f64)> {
        let (try_kvm, mut note) = match choice {
            AccelChoice::Only(a) => (a == Accel::Kvm, None),
            AccelChoice::Auto => kvm_prospect(guest),
        };
        if try_kvm {
            spec.accel = Accel::Kvm;
            match self.boot_once(spec, KVM_BOOT_WAIT) {
                Ok(seconds) => {
                    remember_kvm(guest, "usable");
                    return Ok((Accel::Kvm, None, seconds));
                }
                Err(e) if choice == AccelChoice::Auto => {
                    let why = format!("KVM did not boot the guest: {}", first_line(&e));
                    remember_kvm(guest, &format!("unusable {why}"));
                    note = Some(why);
                    self.stop_qemu();
                    if self.owns_netns() {
                        hostnet::delete_netns(&self.names.netns)?;
                        hostnet::create_netns(&self.names.netns)?;
                    }
                }
                Err(e) => return Err(e),
            }
        }
        spec.accel = Accel::Tcg;
        let seconds = self.boot_once(spec, TCG_BOOT_WAIT)?;
        Ok((Accel::Tcg, note, seconds))
    }

    /// Starts QEMU and waits for the agent; the seconds that took.
    fn boot_once(&mut self, spec: &QemuSpec, wait: Duration) -> Result<f64> {
        let t0 = Instant::now();
        let _ = std::fs::remove_file(&spec.agent_socket);
        let _ = std::fs::remove_file(&spec.console);
        self.qemu = Some(spawn_in_netns(spec, &self.names)?);
        let (ns, tap) = (&self.names.netns, &self.names.tap);
        let tap_wait = Duration::from_secs(10);
        match &self.link {
            HostLink::OwnTap => hostnet::configure_tap(ns, tap, (HOST_IP, PREFIX_LEN), tap_wait)?,
            HostLink::Bridged { bridge, .. } => hostnet::bridge_tap(ns, tap, bridge, tap_wait)?,
        }
        self.wait_for_agent(spec, t0, wait)?;
        Ok(t0.elapsed().as_secs_f64())
    }

    /// Connects to the control socket and pings until the agent answers, QEMU exits, or
    /// `deadline` passes.
    fn wait_for_agent(&mut self, spec: &QemuSpec, t0: Instant, wait: Duration) -> Result<()> {
        let deadline = t0 + wait;
        loop {
            self.check_qemu_alive(spec)?;
            if Instant::now() >= deadline {
                return Err(VmError::BootTimeout {
                    seconds: wait.as_secs(),
                    accel: spec.accel.name(),
                    console: console_tail(&spec.console),
                });
            }
            if let Ok(mut client) = AgentClient::connect(&spec.agent_socket) {
                let left = deadline.saturating_duration_since(Instant::now());
                match client.call(&Request::Ping, left.min(Duration::from_secs(2))) {
                    Ok(r) if r.code == Some(0) => {
                        self.agent = Some(client);
                        return Ok(());
                    }
                    _ => {}
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn check_qemu_alive(&mut self, spec: &QemuSpec) -> Result<()> {
        let Some(child) = self.qemu.as_mut() else {
            return Ok(());
        };
        if let Ok(Some(status)) = child.try_wait() {
            self.qemu = None;
            let log = console_tail(&self.names.dir.join("qemu.log"));
            return Err(VmError::QemuExited {
                status: format!("{status}; {}", log.trim()),
                console: console_tail(&spec.console),
            });
        }
        Ok(())
    }

    /// The guest's name, namespace, tap and directory.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// The guest's address and prefix length on its NIC.
    pub fn address(&self) -> (Ipv4Addr, u8) {
        match &self.link {
            HostLink::OwnTap => (GUEST_IP, PREFIX_LEN),
            HostLink::Bridged { guest_ip, .. } => (*guest_ip, PAIR_PREFIX_LEN),
        }
    }

    /// Whether the namespace is the guest's own (created and removed with it).
    fn owns_netns(&self) -> bool {
        self.link == HostLink::OwnTap
    }

    /// The emulated NIC the guest runs.
    pub fn nic(&self) -> Nic {
        self.nic
    }

    /// What a result says about this guest (the bench results' `testbed` block).
    pub fn info(&self) -> nictune_bench::TestbedInfo {
        let boot = self.boot_info();
        nictune_bench::TestbedInfo {
            kind: self.nic().name().into(),
            nic_model: self.nic().model().into(),
            qemu_device: self.nic().qemu_device().into(),
            guest_kernel: boot.map(|b| b.kernel_release.clone()).unwrap_or_default(),
            accel: boot.map_or("?", |b| b.accel.name()).into(),
            accel_note: boot.and_then(|b| b.accel_note.clone()),
            boot_seconds: boot.map_or(0.0, |b| b.boot_seconds),
            qemu_cpu_cores: None,
            qemu_rss_mib: self.qemu_usage().map(|u| u.rss_mib),
        }
    }

    /// How the guest came up; `None` until it has booted.
    pub fn boot_info(&self) -> Option<&BootInfo> {
        self.boot.as_ref()
    }

    /// `/run/netns/<namespace>`: the host side's namespace, for clients to enter.
    pub fn host_netns(&self) -> PathBuf {
        Path::new(hostnet::NETNS_DIR).join(&self.names.netns)
    }

    /// Sends one request to the guest's agent.
    pub fn call(&mut self, request: &Request, wait: Duration) -> Result<Reply> {
        let agent = self
            .agent
            .as_mut()
            .ok_or_else(|| VmError::Agent("the guest is not running".into()))?;
        let reply = agent.call(request, wait)?;
        match &reply.error {
            Some(e) => Err(VmError::Agent(e.clone())),
            None => Ok(reply),
        }
    }

    /// Runs `argv` in the guest to completion; returns the whole reply, any exit code.
    pub fn run(&mut self, argv: &[&str], timeout: Duration) -> Result<Reply> {
        let request = Request::Run {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            timeout_ms: timeout.as_millis() as u64,
        };
        self.call(&request, timeout + Duration::from_secs(5))
    }

    /// Runs `argv` in the guest; its stdout, or an error naming the command and its stderr.
    pub fn run_ok(&mut self, argv: &[&str], timeout: Duration) -> Result<String> {
        let r = self.run(argv, timeout)?;
        match r.code {
            Some(0) => Ok(r.stdout),
            code => Err(VmError::GuestCommand {
                command: argv.join(" "),
                code: code.unwrap_or(-1),
                stderr: r.stderr.trim().to_string(),
            }),
        }
    }

    /// Reads a file in the guest.
    pub fn read(&mut self, path: &str) -> Result<String> {
        let r = self.call(
            &Request::Read { path: path.into() },
            Duration::from_secs(10),
        )?;
        Ok(r.stdout)
    }

    /// Starts `argv` in the guest's background; its process id there.
    pub fn spawn(&mut self, argv: &[&str]) -> Result<u32> {
        let request = Request::Spawn {
            argv: argv.iter().map(|s| s.to_string()).collect(),
        };
        let r = self.call(&request, Duration::from_secs(10))?;
        r.pid
            .ok_or_else(|| VmError::Agent("spawn returned no process id".into()))
    }

    /// Stops a program [`VmBed::spawn`] started; its exit code and log.
    pub fn stop(&mut self, pid: u32) -> Result<Reply> {
        self.call(&Request::Stop { pid }, Duration::from_secs(10))
    }

    /// QEMU's CPU time so far (user + system, all its threads) and resident memory, from
    /// `/proc/<pid>/stat` and `status`: what the testbed costs the host.
    pub fn qemu_usage(&self) -> Option<QemuUsage> {
        let pid = self.qemu.as_ref()?.id();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the parenthesised command name; utime and stime are 14th and 15th.
        let rest = stat.rsplit_once(')')?.1;
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let rss_kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())?;
        Some(QemuUsage {
            // USER_HZ is 100 on every Linux architecture QEMU runs this on (x86-64 ABI).
            cpu_seconds: ticks as f64 / 100.0,
            rss_mib: rss_kib as f64 / 1024.0,
            at: Instant::now(),
        })
    }

    /// The last lines the guest printed on its console.
    pub fn console_tail(&self) -> String {
        console_tail(&self.names.dir.join("console.log"))
    }

    /// Stops the guest and removes its namespace and files, reporting failures.
    pub fn destroy(mut self) -> Result<()> {
        self.remove()
    }

    fn stop_qemu(&mut self) {
        self.agent = None;
        if let Some(mut child) = self.qemu.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub(crate) fn remove(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.removed, true) {
            return Ok(());
        }
        self.stop_qemu();
        let ns = match self.owns_netns() {
            true => hostnet::delete_netns(&self.names.netns),
            false => Ok(()),
        };
        let dir = match std::fs::remove_dir_all(&self.names.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(VmError::io("removing", &self.names.dir, e))
            }
            _ => Ok(()),
        };
        ns.and(dir)
    }
}

impl Drop for VmBed {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// Starts QEMU inside the testbed's namespace, killed when this thread ends.
fn spawn_in_netns(spec: &QemuSpec, names: &Names) -> Result<Child> {
    // (A bridged guest's namespace is its pair's; the directory is always its own.)
    let log_path = names.dir.join("qemu.log");
    let log =
        std::fs::File::create(&log_path).map_err(|e| VmError::io("creating", &log_path, e))?;
    let log2 = log
        .try_clone()
        .map_err(|e| VmError::io("cloning", &log_path, e))?;
    let mut cmd = Command::new(&spec.program);
    cmd.args(spec.args())
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2);
    #[allow(unsafe_code)]
    // SAFETY: between fork and exec the closure only makes the async-signal-safe system
    // call prctl.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    nictune_linux::netns::spawn_in(&names.netns, &mut cmd).map_err(|e| VmError::Command {
        command: spec.program.display().to_string(),
        detail: e.to_string(),
    })
}

/// Whether to try KVM: /dev/kvm must open, and an earlier attempt on this machine with
/// this guest must not have failed. The reason when not.
fn kvm_prospect(guest: &GuestDir) -> (bool, Option<String>) {
    if std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_err()
    {
        return (false, Some("no usable /dev/kvm".into()));
    }
    match std::fs::read_to_string(guest.root.join("kvm-verdict")) {
        Ok(v) if v.starts_with("unusable") => (
            false,
            Some(format!(
                "{} (remembered in {}; delete it to try again)",
                v.trim_start_matches("unusable").trim(),
                guest.root.join("kvm-verdict").display()
            )),
        ),
        _ => (true, None),
    }
}

fn remember_kvm(guest: &GuestDir, verdict: &str) {
    let _ = std::fs::write(guest.root.join("kvm-verdict"), format!("{verdict}\n"));
}

fn first_line(e: &VmError) -> String {
    e.to_string().lines().next().unwrap_or_default().to_string()
}

/// The last 20 lines of a console log (or QEMU's own log), read from its last 64 KiB only:
/// a guest that printed for its whole lifetime cannot make this read grow.
fn console_tail(path: &Path) -> String {
    const TAIL: u64 = 64 << 10;
    let read = || -> std::io::Result<String> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(path)?;
        let len = f.metadata()?.len();
        f.seek(SeekFrom::Start(len.saturating_sub(TAIL)))?;
        let mut buf = Vec::new();
        f.take(TAIL).read_to_end(&mut buf)?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    };
    let text = read().unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// Testbed names (namespaces and directories) present now.
pub fn list() -> Vec<String> {
    let mut names: Vec<String> = [hostnet::NETNS_DIR, RUN_DIR]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|d| d.flatten())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| owner_of(n).is_some())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Removes guests whose creating process is gone: their QEMU (by the recorded process id,
/// only if its command line names the guest), namespace and directory. Returns their names.
pub fn remove_stale() -> Result<Vec<String>> {
    // Made by a process that is gone: one holding its pid now that started after the
    // guest's namespace (or directory) was made is another process.
    let gone = |name: &String| {
        let handle = Path::new(hostnet::NETNS_DIR).join(name);
        let made = match handle.exists() {
            true => handle,
            false => Path::new(RUN_DIR).join(name),
        };
        owner_of(name).is_some_and(|pid| !detach::alive_as_maker_of(pid, &made))
    };
    let stale: Vec<String> = list().into_iter().filter(gone).collect();
    for name in &stale {
        let dir = Path::new(RUN_DIR).join(name);
        kill_recorded_qemu(&dir, name);
        hostnet::delete_netns(name)?;
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(stale)
}

/// Kills the QEMU whose pid `dir/qemu.pid` records, if that process is still the guest
/// called `name` (a recycled pid belongs to someone else and is left alone).
fn kill_recorded_qemu(dir: &Path, name: &str) {
    let Ok(text) = std::fs::read_to_string(dir.join("qemu.pid")) else {
        return;
    };
    let Ok(pid) = text.trim().parse::<i32>() else {
        return;
    };
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let ours = cmdline.split(|&b| b == 0).any(|arg| arg == name.as_bytes());
    if ours {
        #[allow(unsafe_code)]
        // SAFETY: kill takes plain integers; the target was checked to be our guest.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// What the emulated testbed can and cannot show, for every result measured on it.
pub fn caveat(info: &nictune_bench::TestbedInfo) -> String {
    format!(
        "real-driver testbed: Linux {} `{}` driver on QEMU's emulated {} ({}): the driver, its \
         parameters, its ethtool semantics and its interrupts are real; the hardware timing is \
         QEMU's (no two interrupts closer than 128 µs) and the guest CPU is {}, so rates are \
         the emulator's, not a real NIC's",
        info.guest_kernel,
        info.kind,
        info.nic_model,
        info.qemu_device,
        if info.accel == "tcg" {
            "emulated (TCG, several times slower than the host)"
        } else {
            "virtualised (KVM)"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_the_kernel_limits_and_carry_their_owner() {
        let n = Names::new(4_194_304, 999);
        assert!(n.tap.len() <= 15, "{n:?}");
        assert_eq!(owner_of(&n.netns), Some(4_194_304));
        assert!(n.dir.ends_with(&n.netns));
    }

    #[test]
    fn a_console_tail_is_the_last_lines_of_a_bounded_read() {
        let path = std::env::temp_dir().join(format!("nictune-vm-tail-{}", std::process::id()));
        let text: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let tail = console_tail(&path);
        assert_eq!(tail.lines().count(), 20);
        assert_eq!(tail.lines().last(), Some("line 99999"));
        assert_eq!(console_tail(Path::new("/nonexistent/console.log")), "");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn foreign_names_are_never_ours() {
        for name in [
            "nictune-tb-12-3-c",
            "nictune-vm-x-1",
            "nictune-vm-12",
            "other",
            "nictune-vm-1-a",
        ] {
            assert_eq!(owner_of(name), None, "{name}");
        }
    }
}
