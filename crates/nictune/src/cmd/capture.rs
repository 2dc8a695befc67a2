//! `nictune capture DIR`: reads the host the way `show` and `doctor` do, through a recorder,
//! and writes every raw input plus a manifest into DIR — a support bundle that
//! `show --root DIR` and `doctor --root DIR` read offline.

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
pub struct Args {
    /// Directory to write (created; must be empty or absent).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Capture inside network namespace NAME (needs root).
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
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
    let source = SourceArgs {
        netns: args.netns.clone(),
        root: None,
        os: Os::Linux,
    };
    check_source(&source)?;
    check_target(&args.dir)?;
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
    capture::save(&args.dir, &recording, &manifest)
        .with_context(|| format!("writing capture {}", args.dir.display()))?;
    let body = CaptureBody {
        dir: args.dir.display().to_string(),
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
