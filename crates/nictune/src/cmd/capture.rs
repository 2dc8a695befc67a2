//! `nictune capture DIR`: reads the host the way `show` and `doctor` do, through a recorder,
//! and writes every raw input plus a manifest into DIR — a support bundle that
//! `show --root DIR` and `doctor --root DIR` read offline. `--print-script freebsd` prints
//! the POSIX sh script that captures a FreeBSD host the way `doctor --os freebsd --root`
//! reads it.

use super::source::{check_source, open_linux, Os, SourceArgs};
use crate::output::{Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use nictune_core::error::InvalidInput;
use nictune_host::read::Recorder;
use nictune_host::snapshot;
use nictune_linux::capture::{self, Manifest};
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "FreeBSD hosts: nictune capture --print-script freebsd > nictune-capture.sh,
run `sh nictune-capture.sh` as root there, copy the tarball back, unpack it and read it
with `nictune doctor --os freebsd --root DIR`. Linux hosts without nictune: the same with
--print-script linux and `nictune doctor --root DIR` (no ethtool or netdev netlink values)."
)]
pub struct Args {
    /// Directory to write (created; must be empty or absent).
    #[arg(value_name = "DIR", required_unless_present = "print_script")]
    pub dir: Option<PathBuf>,
    /// Capture inside network namespace NAME (needs root).
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
    /// Print a POSIX sh script that captures a host of this OS into a tarball, instead of
    /// capturing this one.
    #[arg(long, value_name = "OS", value_enum, conflicts_with_all = ["dir", "netns"])]
    pub print_script: Option<ScriptOs>,
}

/// The systems `--print-script` has a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScriptOs {
    Linux,
    Freebsd,
}

/// `nictune.capture/v1` with `--print-script`: the script and where its output goes.
#[derive(Debug, Serialize)]
struct ScriptBody {
    os: &'static str,
    script: String,
    /// How to read the script's output back.
    read_with: &'static str,
}

#[derive(Debug, Serialize)]
struct CaptureBody {
    dir: String,
    files: usize,
    links: usize,
    interfaces: Vec<String>,
    unreadable: usize,
    manifest: Manifest,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    if let Some(os) = args.print_script {
        return print_script(os, ctx);
    }
    let Some(dir) = args.dir.clone() else {
        return Err(InvalidInput::new("DIR", "(none)", "a directory to write"))
            .hint("give a new directory, or --print-script freebsd for a FreeBSD host");
    };
    let source = SourceArgs {
        netns: args.netns.clone(),
        root: None,
        os: Os::Linux,
    };
    check_source(&source)?;
    check_target(&dir)?;
    let host = open_linux(&source)?;
    let recorder = Recorder::new(host.as_ref());
    let snap = snapshot::build(&recorder, &[]);
    let recording = recorder.into_recording();
    let manifest = Manifest {
        schema: "nictune.capture/v1".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        os: "linux".into(),
        kernel: snap.kernel.value().cloned(),
        hostname: snap.hostname.value().cloned(),
        captured_at_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        netns: args.netns.clone(),
    };
    capture::save(&dir, &recording, &manifest)
        .with_context(|| format!("writing capture {}", dir.display()))?;
    let body = CaptureBody {
        dir: dir.display().to_string(),
        files: recording.files.len(),
        links: recording.links.len(),
        interfaces: snap.nics.iter().map(|n| n.name.clone()).collect(),
        unreadable: recording.errors.len(),
        manifest,
    };
    ctx.emit("capture", &body, |b| {
        format!(
            "captured {} files, {} links, {} unreadable paths, interfaces {} into {}\nread it back with: nictune show --root {}",
            b.files, b.links, b.unreadable, b.interfaces.join(", "), b.dir, b.dir
        )
    })?;
    Ok(Outcome::Success)
}

fn print_script(os: ScriptOs, ctx: &Ctx) -> Result<Outcome> {
    let version = env!("CARGO_PKG_VERSION");
    let body = match os {
        ScriptOs::Freebsd => ScriptBody {
            os: "freebsd",
            script: nictune_host::freebsd::script::capture_script(version),
            read_with: "tar -xzf NAME.tar.gz && nictune doctor --os freebsd --root NAME",
        },
        ScriptOs::Linux => ScriptBody {
            os: "linux",
            script: nictune_linux::script::capture_script(version),
            read_with: "tar -xzf NAME.tar.gz && nictune doctor --root NAME",
        },
    };
    ctx.emit("capture", &body, |b| b.script.clone())?;
    Ok(Outcome::Success)
}

/// The target must be absent or an empty directory: a capture never mixes with other files.
fn check_target(dir: &std::path::Path) -> Result<()> {
    let Ok(mut entries) = std::fs::read_dir(dir) else {
        if dir.exists() {
            return Err(InvalidInput::new("DIR", dir.display(), "a directory"))
                .hint("choose a new directory name");
        }
        return Ok(());
    };
    if entries.next().is_some() {
        return Err(InvalidInput::new(
            "DIR",
            dir.display(),
            "an empty or new directory",
        ))
        .hint("choose a new directory name");
    }
    Ok(())
}
