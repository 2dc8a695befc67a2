//! `nictune completions` and `nictune manpage`: generated from the same definitions as `--help`,
//! plus what clap cannot know: the environment, the files each command reads or writes, the
//! exit status (man pages), and the values of keys, scenarios, formats and interfaces
//! (completions, see [`super::completion`]).

use super::completion;
use crate::cli::Cli;
use crate::output::{Ctx, HintExt, Outcome};
use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;
use nictune_core::error::InvalidInput;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = "Install:
  nictune completions bash > /usr/share/bash-completion/completions/nictune
  nictune completions zsh > /usr/local/share/zsh/site-functions/_nictune
  nictune completions fish > ~/.config/fish/completions/nictune.fish
Keys, scenarios and formats are this build's; interface names are listed when completing.")]
pub struct CompletionsArgs {
    /// The shell to generate for.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  nictune manpage | man -l -
  nictune manpage apply | man -l -
  sudo nictune manpage --dir /usr/local/share/man/man1   # nictune.1 and nictune-*.1")]
pub struct ManpageArgs {
    /// Print the page of this command, nictune-COMMAND(1) (default: nictune(1)).
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
    /// Write every page (nictune.1, nictune-apply.1, ...) into DIR instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<PathBuf>,
}

/// `nictune.completions/v1`: the script as text, for `--json`.
#[derive(Debug, serde::Serialize)]
struct Completions {
    shell: String,
    script: String,
}

/// `nictune.manpage/v1`: the page printed, or every page written into `dir`.
#[derive(Debug, serde::Serialize)]
struct Manpages {
    /// `--dir`, `null` when one page is printed.
    dir: Option<PathBuf>,
    pages: Vec<Manpage>,
}

#[derive(Debug, serde::Serialize)]
struct Manpage {
    /// `nictune-apply`: the page is `nictune-apply(1)`.
    name: String,
    /// Where the page was written (`--dir`), else `null`.
    path: Option<PathBuf>,
    /// The page in roff when printed, `null` when written to `path`.
    roff: Option<String>,
}

pub fn completions(args: CompletionsArgs, ctx: &Ctx) -> Result<Outcome> {
    let script = completion_script(args.shell);
    if ctx.json {
        let body = Completions {
            shell: args.shell.to_string(),
            script: String::from_utf8_lossy(&script).into_owned(),
        };
        ctx.print_json("completions", &body)?;
        return Ok(Outcome::Success);
    }
    write_stdout(&script)
}

/// clap's script for `shell` with the values it cannot know added.
pub fn completion_script(shell: Shell) -> Vec<u8> {
    let values = completion::Values::compiled_in();
    let mut cmd = completion::for_generators(Cli::command(), &values);
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "nictune", &mut buf);
    completion::finish(shell, &String::from_utf8_lossy(&buf), &values).into_bytes()
}

pub fn manpage(args: ManpageArgs, ctx: &Ctx) -> Result<Outcome> {
    let top = built();
    if let Some(dir) = args.dir {
        std::fs::create_dir_all(&dir)
            .map_err(|e| {
                InvalidInput::new(
                    "manpage --dir",
                    dir.display(),
                    format!("a directory that can be created and written ({e})"),
                )
            })
            .hint("pass a directory you can write, e.g. --dir ~/.local/share/man/man1")?;
        let mut pages = Vec::new();
        for (name, page) in all_pages(&top)? {
            let path = dir.join(format!("{name}.1"));
            std::fs::write(&path, page).with_context(|| format!("writing {}", path.display()))?;
            pages.push(Manpage {
                name,
                path: Some(path),
                roff: None,
            });
        }
        if ctx.json {
            let body = Manpages {
                dir: Some(dir),
                pages,
            };
            ctx.print_json("manpage", &body)?;
        }
        return Ok(Outcome::Success);
    }
    let cmd = match args.command.as_deref() {
        None => &top,
        Some(name) => top
            .get_subcommands()
            .find(|c| !c.is_hide_set() && c.get_name() == name)
            .ok_or_else(|| {
                InvalidInput::new(
                    "manpage COMMAND",
                    name,
                    format!("one of {}", subcommand_names(&top).join(", ")),
                )
            })
            .hint("`nictune manpage` without a command prints the top-level page")?,
    };
    let roff = page(cmd, &top)?;
    if ctx.json {
        let body = Manpages {
            dir: None,
            pages: vec![Manpage {
                name: cmd.get_display_name().unwrap_or(cmd.get_name()).to_string(),
                path: None,
                roff: Some(String::from_utf8_lossy(&roff).into_owned()),
            }],
        };
        ctx.print_json("manpage", &body)?;
        return Ok(Outcome::Success);
    }
    write_stdout(&roff)
}

/// The command tree as clap builds it for help (display names like `nictune-apply`).
fn built() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

fn subcommand_names(top: &clap::Command) -> Vec<&str> {
    top.get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(clap::Command::get_name)
        .collect()
}

/// Every page as (file stem, roff): `nictune` and `nictune-<command>` for each visible command.
pub fn all_pages(top: &clap::Command) -> Result<Vec<(String, Vec<u8>)>> {
    let mut pages = vec![("nictune".to_string(), page(top, top)?)];
    for sub in top.get_subcommands().filter(|c| !c.is_hide_set()) {
        pages.push((format!("nictune-{}", sub.get_name()), page(sub, top)?));
    }
    Ok(pages)
}

/// One man page: clap_mangen's sections, then EXAMPLES/NOTES (the `after_help`), ENVIRONMENT,
/// FILES, EXIT STATUS and SEE ALSO.
fn page(cmd: &clap::Command, top: &clap::Command) -> Result<Vec<u8>> {
    let is_top = std::ptr::eq(cmd, top);
    // The exit codes are their own section below, not the top-level `after_help` text.
    let cmd = if is_top {
        cmd.clone().after_help("")
    } else {
        cmd.clone()
    };
    let name = if is_top {
        "nictune".to_string()
    } else {
        format!("nictune-{}", cmd.get_name())
    };
    let man = clap_mangen::Man::new(cmd.clone().name(name.clone()).display_name(name.clone()))
        .title(name.clone())
        .manual("nictune manual");
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if is_top {
        man.render_subcommands_section(&mut out)?;
    }
    if let Some(extra) = cmd.get_after_help().map(ToString::to_string) {
        if !extra.trim().is_empty() {
            section(&mut out, "NOTES");
            preformatted(&mut out, &extra);
        }
    }
    let command = if is_top { None } else { Some(cmd.get_name()) };
    section(&mut out, "ENVIRONMENT");
    for (var, text) in environment(&cmd, command) {
        item(&mut out, &var, &text);
    }
    section(&mut out, "FILES");
    for (path, text) in files(command) {
        item(&mut out, path, text);
    }
    section(&mut out, "EXIT STATUS");
    for (code, text) in crate::cli::EXIT_STATUS {
        item(&mut out, &code.to_string(), text);
    }
    section(&mut out, "SEE ALSO");
    let refs: Vec<String> = if is_top {
        subcommand_names(top)
            .iter()
            .map(|n| format!("\\fBnictune\\-{}\\fR(1)", escape(n)))
            .collect()
    } else {
        vec!["\\fBnictune\\fR(1)".to_string()]
    };
    line(&mut out, &refs.join(", "));
    Ok(out)
}

/// The variables a command reads: those clap knows (`#[arg(env = ...)]`), then the ones the
/// code reads directly.
fn environment(cmd: &clap::Command, command: Option<&str>) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = cmd
        .get_arguments()
        .filter_map(|a| {
            let var = a.get_env()?.to_string_lossy().into_owned();
            let flag = a.get_long().map_or_else(String::new, |l| format!("--{l}"));
            let help = a.get_help().map(ToString::to_string).unwrap_or_default();
            Some((
                var,
                format!("{}. Overridden by {flag}.", help.trim_end_matches('.')),
            ))
        })
        .collect();
    let state = nictune_apply::state::STATE_DIR_ENV;
    if !vars.iter().any(|(v, _)| v == state) {
        vars.push((
            state.to_string(),
            format!(
                "The state directory (default {}). Every command reads it at start to warn \
                 about a change left open by a crash.",
                nictune_apply::state::DEFAULT_STATE_DIR
            ),
        ));
    }
    let token = nictune_bench::token::TOKEN_ENV;
    if matches!(command, None | Some("bench" | "serve" | "tune")) {
        vars.push((
            token.to_string(),
            "The shared token of a peer run (`bench --peer`, `serve`), when no --token-file \
             is given."
                .to_string(),
        ));
    }
    if matches!(command, None | Some("apply")) {
        vars.push((
            "SSH_CONNECTION".to_string(),
            "Its server address names the interface carrying this SSH session, which `apply` \
             refuses to change without --force."
                .to_string(),
        ));
    }
    if matches!(command, None | Some("bench" | "tune")) {
        vars.push((
            nictune_vm::guest::QEMU_ENV.to_string(),
            "The QEMU binary for --testbed e1000/e1000e (default: qemu-system-x86_64 on PATH)."
                .to_string(),
        ));
        vars.push((
            nictune_vm::guest::GUEST_DIR_ENV.to_string(),
            format!(
                "Where scripts/install-guest put the testbed guest's kernel, modules and \
                 busybox (default {}).",
                nictune_vm::guest::DEFAULT_GUEST_DIR
            ),
        ));
    }
    vars
}

/// The files a command reads or writes (None: the top-level page, all of them).
fn files(command: Option<&str>) -> Vec<(&'static str, &'static str)> {
    const STATE: (&str, &str) = (
        "/var/lib/nictune/changes/",
        "One journal per change (old and new values), read by confirm, revert and status and \
         at the start of every command. The directory is $NICTUNE_STATE_DIR or --state-dir.",
    );
    const LOCK: (&str, &str) = (
        "/var/lib/nictune/lock",
        "Held while a change runs, so only one runs at a time.",
    );
    const SYSFS: (&str, &str) = (
        "/sys/class/net/IFACE/, /proc/interrupts, /proc/net/softnet_stat, /proc/stat",
        "What show, doctor, capture and bench read (with --root DIR, the same paths under a \
         capture directory), besides ethtool and netdev netlink.",
    );
    const ROUTES: (&str, &str) = (
        "/proc/net/route, /proc/net/ipv6_route",
        "Read to find the interface carrying the default route, which is not changed without \
         --force.",
    );
    const PROFILE: (&str, &str) = (
        "/etc/nictune/IFACE.toml",
        "A profile (a [settings] table, optionally iface and netns), as read by \
         apply --profile and export; the place the systemd-unit export expects it.",
    );
    const TOKEN: (&str, &str) = (
        "/etc/nictune/token",
        "A conventional --token-file for bench --peer and serve.",
    );
    const GUEST: (&str, &str) = (
        "/var/cache/nictune/guest/",
        "The testbed guest (kernel, modules, busybox) for --testbed e1000/e1000e; \
         $NICTUNE_GUEST_DIR overrides it.",
    );
    const TUNE_OUT: (&str, &str) = (
        "OUT/results.json, OUT/recommended.toml, OUT/report.html, OUT/journal/",
        "What tune writes into --out: every run, the best settings as a profile, the report, \
         and the journals of its candidate changes.",
    );
    const EXPORTS: (&str, &str) = (
        "/etc/systemd/network/10-nictune-IFACE.link, \
         /etc/NetworkManager/system-connections/IFACE.nmconnection, \
         /etc/udev/rules.d/81-nictune-IFACE.rules, /etc/tuned/nictune-IFACE/tuned.conf, \
         /etc/modprobe.d/nictune-DRIVER.conf, /etc/sysctl.d/90-nictune.conf, \
         /etc/systemd/system/nictune-IFACE.service",
        "Where each export format belongs (named in the file's first line); export prints to \
         stdout unless --output is given.",
    );
    match command {
        None => vec![
            STATE, LOCK, SYSFS, ROUTES, PROFILE, TOKEN, TUNE_OUT, EXPORTS, GUEST,
        ],
        Some("apply") => vec![STATE, LOCK, ROUTES, PROFILE, SYSFS],
        Some("confirm" | "revert" | "status") => vec![STATE, LOCK],
        Some("show" | "doctor" | "capture") => vec![SYSFS, STATE],
        Some("bench") => vec![SYSFS, TOKEN, GUEST, STATE, LOCK],
        Some("serve") => vec![TOKEN, STATE, LOCK],
        Some("tune") => vec![TUNE_OUT, SYSFS, TOKEN, GUEST, STATE, LOCK],
        Some("export") => vec![PROFILE, EXPORTS, STATE],
        _ => vec![STATE],
    }
}

fn section(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(format!(".SH \"{name}\"\n").as_bytes());
}

fn item(out: &mut Vec<u8>, tag: &str, text: &str) {
    out.extend_from_slice(format!(".TP\n\\fB{}\\fR\n", escape(tag)).as_bytes());
    line(out, &escape(text));
}

fn line(out: &mut Vec<u8>, roff: &str) {
    out.extend_from_slice(roff.as_bytes());
    out.push(b'\n');
}

/// Text kept as typed (examples): no filling, every line escaped.
fn preformatted(out: &mut Vec<u8>, text: &str) {
    line(out, ".nf");
    for l in text.lines() {
        line(out, &escape(l));
    }
    line(out, ".fi");
}

/// Escapes text for roff (groff(7)): backslashes, hyphens (so they are not hyphenation
/// points), and a leading `.` or `'` that would start a request.
fn escape(text: &str) -> String {
    let body = text.replace('\\', "\\e").replace('-', "\\-");
    if body.starts_with('.') || body.starts_with('\'') {
        format!("\\&{body}")
    } else {
        body
    }
}

fn write_stdout(bytes: &[u8]) -> Result<Outcome> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(cmd: Option<&str>) -> String {
        let top = built();
        let pages = all_pages(&top).unwrap();
        let want = cmd.map_or("nictune".to_string(), |c| format!("nictune-{c}"));
        let (_, page) = pages.into_iter().find(|(n, _)| *n == want).unwrap();
        String::from_utf8(page).unwrap()
    }

    #[test]
    fn every_page_the_top_level_page_points_to_exists() {
        let top = built();
        let pages = all_pages(&top).unwrap();
        let top_page = text(None);
        for name in subcommand_names(&top) {
            let reference = format!("\\fBnictune\\-{}\\fR(1)", escape(name));
            assert!(top_page.contains(&reference), "no SEE ALSO {reference}");
            assert!(
                pages.iter().any(|(n, _)| *n == format!("nictune-{name}")),
                "no page for {name}"
            );
        }
    }

    #[test]
    fn every_page_has_environment_files_and_exit_status() {
        let top = built();
        for (name, page) in all_pages(&top).unwrap() {
            let page = String::from_utf8(page).unwrap();
            for s in [
                "ENVIRONMENT",
                "FILES",
                "EXIT STATUS",
                "SEE ALSO",
                "SYNOPSIS",
            ] {
                assert!(
                    page.contains(&format!(".SH \"{s}\"")) || page.contains(&format!(".SH {s}")),
                    "{name} lacks {s}"
                );
            }
            assert!(page.contains("\\fB77\\fR"), "{name} lacks exit code 77");
        }
    }

    #[test]
    fn apply_page_names_its_state_directory_and_variable() {
        let page = text(Some("apply"));
        assert!(
            page.contains(".TH nictune\\-apply 1") || page.contains(".TH nictune-apply 1"),
            "{page}"
        );
        assert!(page.contains("NICTUNE_STATE_DIR"), "{page}");
        assert!(page.contains("/var/lib/nictune/changes/"), "{page}");
        assert!(page.contains("SSH_CONNECTION"), "{page}");
        assert!(page.contains("\\-\\-confirm\\-within"), "{page}");
    }

    #[test]
    fn the_files_named_are_the_defaults_the_code_uses() {
        let tags: Vec<&str> = files(None).iter().map(|(t, _)| *t).collect();
        for dir in [
            nictune_apply::state::DEFAULT_STATE_DIR,
            nictune_vm::guest::DEFAULT_GUEST_DIR,
        ] {
            assert!(
                tags.iter().any(|t| t.starts_with(dir)),
                "{dir} not in {tags:?}"
            );
        }
    }

    #[test]
    fn escape_keeps_roff_requests_out_of_text() {
        assert_eq!(escape(".x-y\\"), "\\&.x\\-y\\e");
        assert_eq!(escape("'q"), "\\&'q");
    }
}
