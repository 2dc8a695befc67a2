//! `nictune export PROFILE --format FORMAT`: a profile as native configuration. Pure apart
//! from reading the profile, writing `--output` and, with `--install`, the files under
//! `--root` (default `/`): nothing on the host is read or changed otherwise.

use crate::output::{Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use nictune_apply::export::{self, ExportContext, ExportError, Exported, Format, Omitted, Version};
use nictune_core::error::Hinted;
use nictune_core::input;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Where `--install` puts the nictune binary the re-apply unit runs (a copy of the running
/// one), so the unit never points into a build tree.
pub const INSTALLED_BINARY: &str = "/usr/local/sbin/nictune";
/// Where `--install` puts the profile the re-apply unit reads.
pub const PROFILE_DIR: &str = "/etc/nictune";

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
                       for what no native format holds (one NAPI's values, IRQ affinity);
                       it runs /usr/local/sbin/nictune with /etc/nictune/IF.toml: --install
                       puts both there, otherwise the commands to do so are printed
Settings a format cannot express are listed on stderr and at the top of the file; an export
that would write no setting at all is refused (exit status 1).
Lines are written for the oldest reader nictune supports (NetworkManager 1.42, systemd 252);
--target-version adds the keys a newer one reads, each marked with the version it needs.")]
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
    /// The version of the program that reads the file (NetworkManager for networkmanager,
    /// systemd for systemd-link, udev and systemd-unit), e.g. 1.46 or 256; default: the
    /// oldest supported (1.42, 252).
    #[arg(long, value_name = "VERSION")]
    pub target_version: Option<String>,
    /// For systemd-link: find the device by this condition instead of the kernel's name
    /// (`OriginalName=`, which never matches a name udev gave, such as enp3s0): mac=ADDRESS,
    /// permanent-mac=ADDRESS, path=ID_PATH (`udevadm info /sys/class/net/IF`) or
    /// driver=NAME. Repeat to require several.
    #[arg(long = "match", value_name = "KEY=VALUE")]
    pub link_match: Vec<String>,
    /// Install the file where it usually goes; for systemd-unit also the nictune binary
    /// (/usr/local/sbin/nictune) and the profile (/etc/nictune/IF.toml) it runs.
    #[arg(long)]
    pub install: bool,
    /// With --install: install under this directory instead of / (image builds, tests).
    #[arg(long, value_name = "DIR", requires = "install")]
    pub root: Option<PathBuf>,
    /// With --install: replace a file that is there with other content (another export's
    /// settings, a hand edit); without it such a file is kept and nothing is installed.
    #[arg(long, requires = "install")]
    pub force: bool,
}

/// What `export` reports, written or refused, in one shape (`nictune.export/v2`): the fields
/// that do not apply to a refusal are `null`, never missing (docs/cli.md).
#[derive(Serialize)]
struct Report<'a> {
    /// The format's command-line name (`sysctl.d`, `systemd-link`).
    format: &'static str,
    /// Whether a file was produced; `false` when the format would hold none of the settings.
    written: bool,
    /// Where the file usually goes; `null` when nothing was written.
    path: Option<&'a str>,
    /// The file's contents; `null` when nothing was written.
    text: Option<&'a str>,
    /// The settings the format could not express, with why and where they can go instead.
    omitted: &'a [Omitted],
    /// Lines written with a caveat: an unchecked FreeBSD sysctl, a module parameter written
    /// as the run-time value that stands for it (udev's `ethtool -C rx-usecs`).
    warnings: &'a [String],
}

impl<'a> Report<'a> {
    fn written(e: &'a Exported) -> Report<'a> {
        Report {
            format: e.format.name(),
            written: true,
            path: Some(&e.path),
            text: Some(&e.text),
            omitted: &e.omitted,
            warnings: &e.warnings,
        }
    }
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
    let version = match &args.target_version {
        None => None,
        Some(text) => {
            let consumer = format.consumer();
            let fits = |v: &Version| consumer.is_none_or(|(_, oldest)| v.fits(oldest));
            Some(Version::parse(text).filter(fits).ok_or_else(|| {
                let (name, hint) = match consumer {
                    Some(("NetworkManager", _)) => (
                        "NetworkManager",
                        "give the version `NetworkManager --version` prints, e.g. 1.46 or 1.42.4",
                    ),
                    Some((name, _)) => (
                        name,
                        "give the release number `systemctl --version` prints first, e.g. 256",
                    ),
                    None => ("its reader", "leave out --target-version"),
                };
                anyhow::Error::new(Hinted::new(
                    ExportError::BadVersion {
                        consumer: name,
                        version: text.clone(),
                    },
                    hint,
                ))
            })?)
        }
    };
    let link_match = args
        .link_match
        .iter()
        .map(|m| export::LinkMatch::parse(m))
        .collect::<Result<Vec<_>, _>>()
        .hint("`udevadm info /sys/class/net/IF` shows the device's ID_PATH and address")?;
    // The re-apply unit names the installed copies, never the build tree or the path given.
    let installed_profile = format!(
        "{PROFILE_DIR}/{}.toml",
        iface.as_deref().unwrap_or("profile")
    );
    let target = ExportContext {
        iface: iface.as_deref(),
        profile_path: &installed_profile,
        nictune: INSTALLED_BINARY,
        netns: profile.netns.as_deref(),
        version,
        link_match: &link_match,
    };
    let exported = match export::export(format, &profile.items, &target) {
        Ok(e) => e,
        Err(ExportError::NothingToWrite { format, omitted }) => {
            let refused = Report {
                format,
                written: false,
                path: None,
                text: None,
                omitted: &omitted,
                warnings: &[],
            };
            if ctx.json {
                ctx.emit("export", &refused, |_| String::new())?;
            } else {
                // On stderr: stdout is where the configuration goes (`> nictune.conf`), and a
                // refusal must not land in a file some program then reads as one.
                let mut out = format!(
                    "nothing written: --format {} would hold none of the profile's settings:\n",
                    refused.format
                );
                for o in refused.omitted {
                    out += &format!("  {}: {}\n", o.setting, o.reason);
                }
                eprintln!("{out}hint: choose a format named above for these settings");
            }
            return Ok(Outcome::Problems);
        }
        Err(e) => {
            let hint = match e {
                ExportError::Name(_) => "give names as `ip link` and `ip netns list` show them",
                ExportError::BadPath { .. } => {
                    "move the profile to a path without control characters"
                }
                ExportError::Unversioned { .. } => "leave out --target-version",
                ExportError::OtherNamespace { .. } => {
                    "use --format systemd-unit (it runs `nictune apply --netns`), or take netns out \
                     of the profile if the interface is the host's"
                }
                ExportError::MatchUnsupported { .. } => {
                    "leave out --match, or use --format systemd-link"
                }
                ExportError::TooOld { .. } => {
                    "leave out --target-version to write for the oldest supported release"
                }
                _ => "add --iface IF",
            };
            return Err(anyhow::Error::new(Hinted::new(e, hint)));
        }
    };
    for o in &exported.omitted {
        eprintln!(
            "note: not expressible as {}: {} ({})",
            format.name(),
            o.setting,
            o.reason
        );
    }
    for w in &exported.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(path) = &args.output {
        std::fs::write(path, &exported.text)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if args.install {
        let root = args.root.clone().unwrap_or_else(|| PathBuf::from("/"));
        install(
            &exported,
            &root,
            &args.profile,
            &installed_profile,
            args.force,
        )?;
    } else if format == Format::SystemdUnit {
        let unit = exported.path.rsplit('/').next().unwrap_or_default();
        let (save, output) = match &args.output {
            Some(p) => (String::new(), absolute(p)),
            None => (
                format!("save the unit printed on stdout as {unit}, then "),
                unit.to_string(),
            ),
        };
        eprintln!(
            "note: the unit runs {INSTALLED_BINARY} with {installed_profile}; {save}install them and it:\n  \
             {}\n  systemctl daemon-reload && systemctl enable --now {unit}\n  \
             (or run this export again with --install)",
            install_commands(&exported, &args.profile, &installed_profile, &output).join("\n  "),
        );
    }
    ctx.emit("export", &Report::written(&exported), |_| {
        human(&exported, args.output.is_some(), args.install)
    })?;
    Ok(Outcome::Success)
}

/// The formats `--install` can put in place as a file of their own (the others are merged
/// into a file the system already has: loader.conf, rc.conf, fstab, a connection keyfile).
fn installable(format: Format) -> bool {
    matches!(
        format,
        Format::SystemdLink
            | Format::Udev
            | Format::Tuned
            | Format::Modprobe
            | Format::SysctlD
            | Format::Cpuset
            | Format::SystemdUnit
    )
}

/// `install` commands that put the unit, the binary and the profile in place.
fn install_commands(e: &Exported, profile: &Path, installed: &str, unit: &str) -> Vec<String> {
    let exe = std::env::current_exe().map_or_else(|_| "nictune".into(), |p| absolute(&p));
    vec![
        format!("install -D -m 0755 {} {INSTALLED_BINARY}", quote(&exe)),
        format!(
            "install -D -m 0644 {} {installed}",
            quote(&absolute(profile))
        ),
        format!("install -D -m 0644 {} {}", quote(unit), e.path),
    ]
}

/// A path for a shell command line: single-quoted unless plain.
fn quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@,=".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// `--install`: the file where it usually goes under `root`; for the re-apply unit also a
/// copy of this binary and of the profile, at the paths the unit names. A file already there
/// with other content (another profile's sysctl.d file, a hand-edited rule) is never
/// replaced without `force`: nothing is installed then. The binary is exempt: the unit must
/// run this nictune.
fn install(
    e: &Exported,
    root: &Path,
    profile: &Path,
    installed_profile: &str,
    force: bool,
) -> Result<()> {
    if !installable(e.format) {
        return Err(anyhow::Error::new(Hinted::new(
            anyhow::anyhow!(
                "--install: --format {} is merged into a file the system already has ({}); \
                 allowed with: systemd-link, udev, tuned, modprobe, sysctl.d, cpuset, systemd-unit",
                e.format.name(),
                e.path
            ),
            "write it with --output FILE and merge it by hand",
        )));
    }
    let under = |path: &str| root.join(path.trim_start_matches('/'));
    let put = |path: &str, bytes: &[u8], mode: u32| -> Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let dest = under(path);
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(&dest, bytes).with_context(|| format!("writing {}", dest.display()))?;
        std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("setting the mode of {}", dest.display()))?;
        eprintln!("installed {}", dest.display());
        Ok(())
    };
    let profile_text = match e.format {
        Format::SystemdUnit => Some(input::read_file(profile, input::PROFILE)?),
        _ => None,
    };
    if !force {
        let mut files = vec![(e.path.as_str(), e.text.as_bytes())];
        if let Some(text) = &profile_text {
            files.push((installed_profile, text.as_bytes()));
        }
        let differing: Vec<String> = files
            .iter()
            .map(|(path, bytes)| (under(path), bytes))
            .filter(|(dest, bytes)| std::fs::read(dest).is_ok_and(|old| old != **bytes))
            .map(|(dest, _)| dest.display().to_string())
            .collect();
        if !differing.is_empty() {
            return Err(anyhow::Error::new(Hinted::new(
                anyhow::anyhow!(
                    "--install: {} already there with other content; nothing was installed",
                    differing.join(", ")
                ),
                "compare it with this export (--output FILE) and merge what it should keep, \
                 or add --force to replace it",
            )));
        }
    }
    if e.format == Format::SystemdUnit {
        let exe = std::env::current_exe().context("finding this nictune binary to install")?;
        // Run as the installed copy itself: it is in place (and busy: it cannot be rewritten).
        let same = std::fs::canonicalize(under(INSTALLED_BINARY)).is_ok_and(|p| p == exe);
        if !same {
            let binary =
                std::fs::read(&exe).with_context(|| format!("reading {}", exe.display()))?;
            put(INSTALLED_BINARY, &binary, 0o755)?;
        }
        let text = profile_text.as_deref().unwrap_or_default();
        put(installed_profile, text.as_bytes(), 0o644)?;
    }
    let mode = if e.format == Format::Cpuset {
        0o555
    } else {
        0o644
    };
    put(&e.path, e.text.as_bytes(), mode)?;
    Ok(())
}

fn human(e: &Exported, written: bool, installed: bool) -> String {
    if installed {
        format!("Installed {} as {}.", e.format.name(), e.path)
    } else if written {
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
