//! A capture on disk — a support bundle that `show --root` and `doctor --root` read back.
//!
//! Layout of `DIR`:
//! - `proc/...`, `sys/...`, `etc/modprobe.d/...`, `run/nictune/module-params/...`: every
//!   file read, at its path on the host, verbatim;
//! - `index.json`: symbolic links (path → target), directory listings, and the reads that
//!   failed with their reasons (so "permission denied" survives the trip);
//! - `netlink.json`: the ethtool and netdev replies decoded, and the process names;
//! - `manifest.json`: what, when and where ([`Manifest`]).

use nictune_core::input;
use nictune_host::read::{EthtoolInfo, FakeHost, LinkAttrs, NetdevInfo, ReadError};
use nictune_host::snapshot::Readable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// What a capture is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// `nictune.capture/v1`.
    pub schema: String,
    /// The version of the nictune that wrote it (its Cargo package version).
    pub tool_version: String,
    /// The captured system's OS, `linux`.
    pub os: String,
    /// The kernel release (`/proc/sys/kernel/osrelease`); `None` when it could not be read.
    pub kernel: Option<String>,
    /// The host name (`/proc/sys/kernel/hostname`); `None` when it could not be read.
    pub hostname: Option<String>,
    /// Seconds since the Unix epoch when the capture was taken.
    pub captured_at_unix: u64,
    /// The `--netns` the capture was taken in; `None` for the caller's namespace.
    pub netns: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Index {
    links: BTreeMap<String, String>,
    dirs: BTreeMap<String, Vec<String>>,
    errors: BTreeMap<String, ReadError>,
}

#[derive(Debug, Serialize, Deserialize)]
struct NetlinkDump {
    ethtool: BTreeMap<String, EthtoolInfo>,
    netdev: NetdevInfo,
    processes: Vec<String>,
    /// rtnetlink link attributes (older captures have none).
    #[serde(default)]
    link_attrs: BTreeMap<String, Readable<LinkAttrs>>,
}

/// A capture that could not be written or read, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// A file or directory could not be created, written or read.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done (`creating`, `writing`, `listing`).
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: io::Error,
    },
    /// A JSON file (`manifest.json`, `index.json`, `netlink.json`) does not parse or serialize.
    #[error("{path}: {source}")]
    Json {
        /// The JSON file.
        path: PathBuf,
        /// The parse or serialize error.
        #[source]
        source: serde_json::Error,
    },
    /// The directory has no `manifest.json`.
    #[error("{path}: not a nictune capture (no manifest.json)")]
    NotACapture {
        /// The directory given.
        path: PathBuf,
    },
    /// A recorded path outside the captured trees (see `ALLOWED`) or containing `..`.
    #[error("refusing to store {path:?}: only /proc, /sys, /etc/modprobe.d and /run/nictune/module-params are captured")]
    BadPath {
        /// The host path that was refused.
        path: String,
    },
    /// A captured file is larger than a single capture file may be, or is unreadable.
    #[error(transparent)]
    Read(#[from] input::ReadError),
    /// An interface name in the capture fails the rule every entry point applies.
    #[error("{path}: {source}")]
    Name {
        /// The capture directory.
        path: PathBuf,
        /// What is wrong with the name.
        #[source]
        source: nictune_core::names::NameError,
    },
    /// The files together exceed CAPTURE_TOTAL.
    #[error("{path}: the capture's files add up to more than {limit}, the most a capture may hold; point --root at a `nictune capture` directory")]
    TooLarge {
        /// The capture directory.
        path: PathBuf,
        /// The limit exceeded, CAPTURE_TOTAL.
        limit: input::Limit,
    },
}

/// The most all files of one capture may add up to.
pub const CAPTURE_TOTAL: input::Limit = input::Limit {
    what: "capture",
    bytes: 256 << 20,
};

fn io_err<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> CaptureError + 'a {
    move |source| CaptureError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `recording` and `manifest` into `dir` (created if missing).
pub fn save(dir: &Path, recording: &FakeHost, manifest: &Manifest) -> Result<(), CaptureError> {
    std::fs::create_dir_all(dir).map_err(io_err("creating", dir))?;
    for (path, text) in &recording.files {
        let target = stored_path(dir, path)?;
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io_err("creating", parent))?;
        }
        std::fs::write(&target, text).map_err(io_err("writing", &target))?;
    }
    let index = Index {
        links: recording.links.clone(),
        dirs: recording.dirs.clone(),
        errors: recording.errors.clone(),
    };
    let netlink = NetlinkDump {
        ethtool: recording.ethtool.clone(),
        netdev: recording.netdev.clone(),
        processes: recording.processes.clone(),
        link_attrs: recording.link_attrs.clone(),
    };
    write_json(&dir.join("index.json"), &index)?;
    write_json(&dir.join("netlink.json"), &netlink)?;
    write_json(&dir.join("manifest.json"), manifest)
}

/// Reads a capture back as a [`FakeHost`] with its manifest.
pub fn load(dir: &Path) -> Result<(FakeHost, Manifest), CaptureError> {
    let manifest_path = dir.join("manifest.json");
    if !manifest_path.is_file() {
        return Err(CaptureError::NotACapture {
            path: dir.to_path_buf(),
        });
    }
    let manifest: Manifest = read_json(&manifest_path)?;
    let index: Index = read_json(&dir.join("index.json"))?;
    let netlink: NetlinkDump = read_json(&dir.join("netlink.json"))?;
    check_names(dir, &index, &netlink)?;
    let mut host = FakeHost {
        links: index.links,
        dirs: index.dirs,
        errors: index.errors,
        ethtool: netlink.ethtool,
        netdev: netlink.netdev,
        processes: netlink.processes,
        link_attrs: netlink.link_attrs,
        ..FakeHost::default()
    };
    let mut total = 0;
    for top in ["proc", "sys", "etc", "run"] {
        collect_files(dir, &dir.join(top), &mut host.files, &mut total)?;
    }
    Ok((host, manifest))
}

/// Interface names in a capture follow the rule every other entry point does: they end up in
/// the doctor's fix commands.
fn check_names(dir: &Path, index: &Index, netlink: &NetlinkDump) -> Result<(), CaptureError> {
    let listed = index.dirs.get("/sys/class/net").into_iter().flatten();
    for name in listed
        .chain(netlink.ethtool.keys())
        .chain(netlink.link_attrs.keys())
    {
        nictune_core::names::check_iface(name).map_err(|source| CaptureError::Name {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    Ok(())
}

/// Where captured files may come from: kernel state, the module options for the next load,
/// and nictune's record of the parameters it last loaded a module with.
const ALLOWED: [&str; 4] = [
    "/proc/",
    "/sys/",
    "/etc/modprobe.d/",
    "/run/nictune/module-params/",
];

/// `/proc/stat` → `DIR/proc/stat`; anything outside [`ALLOWED`], or with `..`, refused.
fn stored_path(dir: &Path, path: &str) -> Result<PathBuf, CaptureError> {
    let ok = ALLOWED.iter().any(|a| path.starts_with(a)) && !path.split('/').any(|p| p == "..");
    if !ok {
        return Err(CaptureError::BadPath { path: path.into() });
    }
    Ok(dir.join(path.trim_start_matches('/')))
}

/// Reads every regular file under `dir` into `out`, keyed by its path below `root`. Links are
/// not followed (the capture keeps them in `index.json`); each file and the sum (`total`) are
/// bounded.
fn collect_files(
    root: &Path,
    dir: &Path,
    out: &mut BTreeMap<String, String>,
    total: &mut u64,
) -> Result<(), CaptureError> {
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).map_err(io_err("listing", dir))? {
        let entry = entry.map_err(io_err("listing", dir))?;
        let kind = entry.file_type().map_err(io_err("listing", dir))?;
        let path = entry.path();
        if kind.is_dir() {
            collect_files(root, &path, out, total)?;
            continue;
        }
        if !kind.is_file() {
            continue;
        }
        let text = input::read_file(&path, input::CAPTURE_FILE)?;
        *total += text.len() as u64;
        if *total > CAPTURE_TOTAL.bytes {
            return Err(CaptureError::TooLarge {
                path: root.to_path_buf(),
                limit: CAPTURE_TOTAL,
            });
        }
        let rel = path.strip_prefix(root).unwrap_or(&path);
        out.insert(format!("/{}", rel.to_string_lossy()), text);
    }
    Ok(())
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), CaptureError> {
    let text = serde_json::to_string_pretty(value).map_err(|source| CaptureError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    std::fs::write(path, text + "\n").map_err(io_err("writing", path))
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, CaptureError> {
    let text = input::read_file(path, input::CAPTURE_FILE)?;
    serde_json::from_str(&text).map_err(|source| CaptureError::Json {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nictune_host::read::{HostRead, ReadErrorKind};

    fn manifest() -> Manifest {
        Manifest {
            schema: "nictune.capture/v1".into(),
            tool_version: "test".into(),
            os: "linux".into(),
            kernel: Some("6.18.44".into()),
            hostname: None,
            captured_at_unix: 0,
            netns: None,
        }
    }

    #[test]
    fn save_then_load_gives_the_same_inputs() {
        let mut host = FakeHost::new()
            .with_file("/proc/stat", "cpu 1 2 3 4\n")
            .with_file(
                "/run/nictune/module-params/e1000e",
                "InterruptThrottleRate=500\n",
            )
            .with_file("/sys/class/net/eth0/ifindex", "2\n")
            .with_link(
                "/sys/class/net/eth0/device/driver",
                "../../bus/virtio/drivers/virtio_net",
            );
        host.errors.insert(
            "/proc/irq/9/smp_affinity_list".into(),
            ReadError::new(
                "/proc/irq/9/smp_affinity_list",
                ReadErrorKind::Denied,
                "denied",
            ),
        );
        host.ethtool
            .insert("eth0".into(), EthtoolInfo::unreadable("test"));
        host.link_attrs.insert(
            "eth0".into(),
            Readable::Value(LinkAttrs {
                mtu_bytes: Some(1400),
                operstate: Some("up".into()),
                qdisc: Some("pfifo_fast".into()),
                txqlen: Some(1000),
                kind: None,
                speed_mbps: None,
            }),
        );
        let dir = tempfile::tempdir().unwrap();
        save(dir.path(), &host, &manifest()).unwrap();
        let (back, m) = load(dir.path()).unwrap();
        assert_eq!(back, host);
        assert_eq!(m, manifest());
        assert_eq!(
            back.file("/proc/irq/9/smp_affinity_list").unwrap_err().kind,
            ReadErrorKind::Denied
        );
    }

    #[test]
    fn a_capture_from_before_link_attributes_loads_without_them() {
        let host = FakeHost::new().with_file("/proc/stat", "cpu 1 2 3 4\n");
        let dir = tempfile::tempdir().unwrap();
        save(dir.path(), &host, &manifest()).unwrap();
        let path = dir.path().join("netlink.json");
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        json.as_object_mut().unwrap().remove("link_attrs").unwrap();
        std::fs::write(&path, json.to_string()).unwrap();
        let (back, _) = load(dir.path()).unwrap();
        assert!(back.link_attrs.is_empty());
        assert!(matches!(back.link_attrs("eth0"), Readable::Unsupported(_)));
    }

    #[test]
    fn a_capture_naming_an_interface_like_a_command_is_refused() {
        for (listed, ethtool) in [("eth0;reboot", "eth0"), ("eth0", "../../x")] {
            let mut host = FakeHost::new();
            host.dirs
                .insert("/sys/class/net".into(), vec![listed.into()]);
            host.ethtool
                .insert(ethtool.into(), EthtoolInfo::unreadable("test"));
            let dir = tempfile::tempdir().unwrap();
            save(dir.path(), &host, &manifest()).unwrap();
            let err = load(dir.path()).unwrap_err();
            assert!(matches!(err, CaptureError::Name { .. }), "{err}");
            assert!(err.to_string().contains("interface name"), "{err}");
        }
    }

    #[test]
    fn a_capture_file_larger_than_the_limit_or_a_link_loop_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        save(dir.path(), &FakeHost::new(), &manifest()).unwrap();
        let sys = dir.path().join("sys");
        std::fs::create_dir_all(&sys).unwrap();
        std::os::unix::fs::symlink("..", sys.join("loop")).unwrap();
        assert!(load(dir.path()).is_ok(), "a link back up is not followed");
        let big = vec![b'x'; input::CAPTURE_FILE.bytes as usize + 1];
        std::fs::write(sys.join("big"), big).unwrap();
        let err = load(dir.path()).unwrap_err();
        assert!(err.to_string().contains("larger than 16 MiB"), "{err}");
    }

    #[test]
    fn paths_outside_proc_and_sys_are_refused() {
        let host = FakeHost::new().with_file("/etc/shadow", "x");
        let dir = tempfile::tempdir().unwrap();
        let err = save(dir.path(), &host, &manifest()).unwrap_err();
        assert!(matches!(err, CaptureError::BadPath { .. }), "{err}");
        assert!(matches!(
            load(&dir.path().join("nope")),
            Err(CaptureError::NotACapture { .. })
        ));
    }
}
