//! `nictune export PROFILE --format FORMAT`: a profile as native configuration. Pure apart
//! from reading the profile and writing `--output`: nothing on the host is read or changed.

use crate::output::{Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use nictune_apply::export::{self, ExportError, Exported, Format, Target};
use nictune_core::error::Hinted;
use nictune_core::input;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(after_help = "Formats:
  systemd-link         /etc/systemd/network/*.link (channels, rings, coalescing, offloads, RPS)
  networkmanager       [ethtool] section of a NetworkManager connection keyfile
  udev                 udev rule: sysfs attributes and ethtool runs on device add
  tuned                tuned profile: [net], [sysctl], [sysfs]
  modprobe             modprobe.d options for driver module parameters (needs a reload)
  sysctl.d             /etc/sysctl.d drop-in for net.* sysctls
  loader.conf          FreeBSD /boot/loader.conf tunables
  freebsd-sysctl.conf  FreeBSD /etc/sysctl.conf
  rc.conf              FreeBSD polling flag for ifconfig_IF
  cpuset               FreeBSD rc.d script binding queue interrupts to CPUs at boot, found
                       by name in vmstat -i (freebsd.irq.queue-cpus@Q; irq.affinity@N)
  kernconf             FreeBSD kernel configuration: GENERIC plus DEVICE_POLLING, HZ
  fstab                NFS mount options (rsize, wsize) for the options field of /etc/fstab
  systemd-unit         oneshot service re-running `nictune apply --profile` on device add,
                       for what no native format holds (per-NAPI values, IRQ affinity)
Settings a format cannot express are listed on stderr and at the top of the file.")]
pub struct Args {
    /// The profile (TOML, as for `apply --profile`).
    #[arg(value_name = "PROFILE")]
    pub profile: PathBuf,
    /// Output format (see below).
    #[arg(long, short, value_name = "FORMAT")]
    pub format: String,
    /// Interface to match (overrides `iface` in the profile).
    #[arg(long, short)]
    pub iface: Option<String>,
    /// Write to this file instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args, ctx: &Ctx) -> Result<Outcome> {
    let format = Format::parse(&args.format)
        .ok_or_else(|| ExportError::UnknownFormat {
            format: args.format.clone(),
        })
        .hint("see `nictune export --help` for what each format holds")?;
    let text = input::read_file(&args.profile, input::PROFILE)?;
    let profile = export::parse_profile(&text)
        .hint("a profile is TOML: iface = \"eth1\" and a [settings] table of KEY = VALUE")?;
    let iface = args.iface.clone().or(profile.iface.clone());
    let profile_path = absolute(&args.profile);
    let exe = std::env::current_exe().unwrap_or_else(|_| "/usr/local/bin/nictune".into());
    let target = Target {
        iface: iface.as_deref(),
        profile_path: &profile_path,
        nictune: &exe.to_string_lossy(),
        netns: profile.netns.as_deref(),
    };
    let exported = export::export(format, &profile.items, &target).map_err(|e| {
        let hint = match e {
            ExportError::Name(_) => "give names as `ip link` and `ip netns list` show them",
            ExportError::BadPath { .. } => "move the profile to a path without control characters",
            _ => "add --iface IF",
        };
        anyhow::Error::new(Hinted::new(e, hint))
    })?;
    for o in &exported.omitted {
        eprintln!(
            "note: not expressible as {}: {} ({})",
            format.name(),
            o.setting,
            o.reason
        );
    }
    if let Some(path) = &args.output {
        std::fs::write(path, &exported.text)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    ctx.emit("export", &exported, |e| human(e, args.output.is_some()))?;
    Ok(Outcome::Success)
}

fn human(e: &Exported, written: bool) -> String {
    if written {
        format!(
            "Wrote {} (usually installed as {}).",
            e.format.name(),
            e.path
        )
    } else {
        e.text.clone()
    }
}

/// The profile's absolute path, so the re-apply unit finds it from any directory.
fn absolute(path: &Path) -> String {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .to_string_lossy()
        .into_owned()
}
