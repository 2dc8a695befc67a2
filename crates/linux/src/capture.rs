//! A capture on disk — a support bundle that `show --root` and `doctor --root` read back.
//!
//! Layout of `DIR`:
//! - `proc/...`, `sys/...`, `etc/modprobe.d/...`, `run/nictune/module-params/...`: every
//!   file read, at its path on the host, verbatim;
//! - `index.json`: symbolic links (path → target), directory listings, and the reads that
//!   failed with their reasons (so "permission denied" survives the trip);
//! - `netlink.json`: the ethtool and netdev replies decoded, and the process names;
//! - `manifest.json`: what, when and where ([`Manifest`]).

use nictune_host::read::{EthtoolInfo, FakeHost, NetdevInfo, ReadError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// What a capture is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// `nictune.capture/v1`.
    pub schema: String,
    pub tool_version: String,
    pub os: String,
    pub kernel: Option<String>,
    pub hostname: Option<String>,
    /// Seconds since the Unix epoch when the capture was taken.
    pub captured_at_unix: u64,
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
}

/// A capture that could not be written or read, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path}: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: not a nictune capture (no manifest.json)")]
    NotACapture { path: PathBuf },
    #[error("refusing to store {path:?}: only /proc, /sys, /etc/modprobe.d and /run/nictune/module-params are captured")]
    BadPath { path: String },
}

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
    let mut host = FakeHost {
        links: index.links,
        dirs: index.dirs,
        errors: index.errors,
        ethtool: netlink.ethtool,
        netdev: netlink.netdev,
        processes: netlink.processes,
        ..FakeHost::default()
    };
    for top in ["proc", "sys", "etc", "run"] {
        collect_files(dir, &dir.join(top), &mut host.files)?;
    }
    Ok((host, manifest))
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

fn collect_files(
    root: &Path,
    dir: &Path,
    out: &mut BTreeMap<String, String>,
) -> Result<(), CaptureError> {
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).map_err(io_err("listing", dir))? {
        let path = entry.map_err(io_err("listing", dir))?.path();
        if path.is_dir() {
            collect_files(root, &path, out)?;
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(io_err("reading", &path))?;
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
    let text = std::fs::read_to_string(path).map_err(io_err("reading", path))?;
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
