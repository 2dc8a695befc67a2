//! `nictune completions SHELL`, run by the shells themselves: each script is loaded by its
//! shell and asked to complete, so a script the shell cannot read, or one that offers no keys,
//! scenarios, formats or interfaces, fails here. bash, zsh, fish and elvish are installed by
//! `scripts/install-deps`; where one is missing its test reports itself skipped. (PowerShell
//! is not packaged for Debian: its script is checked for its lists in the unit tests only.)

mod common;

use common::{assert_exit, command as nictune, stdout};
use std::path::PathBuf;
use std::process::Command;

/// Writes the script once per test into a temporary file and returns its path.
fn script(tag: &str) -> PathBuf {
    let out = nictune().args(["completions", "bash"]).output().unwrap();
    assert_exit(&out, 0);
    let path = std::env::temp_dir().join(format!(
        "nictune-completion-{}-{tag}.bash",
        std::process::id()
    ));
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

/// What bash offers for `line` (the word under the cursor is the last one; a trailing space
/// starts an empty word), as bash's programmable completion would call the function.
fn complete(script: &PathBuf, line: &str) -> Vec<String> {
    let program = r#"
source "$1" || exit 9
read -ra COMP_WORDS <<< "$2"
[[ $2 == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="$2"
COMP_POINT=${#2}
# The function complete(1) registered for nictune.
func=$(complete -p nictune | sed -n 's/.*-F \([^ ]*\).*/\1/p')
"$func" nictune "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"#;
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", program, "bash"])
        .arg(script)
        .arg(line)
        .current_dir(std::env::temp_dir())
        .output()
        .expect("bash runs");
    assert_exit(&out, 0);
    stdout(&out).lines().map(str::to_string).collect()
}

#[test]
fn bash_completes_keys_formats_scenarios_and_interfaces() {
    let s = script("values");
    let keys = complete(&s, "nictune apply coalesce.rx-u");
    assert!(keys.contains(&"coalesce.rx-usecs=".to_string()), "{keys:?}");
    assert!(
        keys.iter().all(|k| k.starts_with("coalesce.rx-u")),
        "{keys:?}"
    );

    let keys = complete(&s, "nictune check --driver igb napi.");
    assert!(
        keys.contains(&"napi.gro-flush-timeout=".to_string()),
        "{keys:?}"
    );

    let explain = complete(&s, "nictune explain napi.g");
    assert!(
        explain.contains(&"napi.gro-flush-timeout".to_string()),
        "{explain:?}"
    );

    let formats = complete(&s, "nictune export p.toml --format sys");
    assert_eq!(formats, ["systemd-link", "sysctl.d", "systemd-unit"]);

    // The scenarios `nictune sim --list --json` names are offered.
    let list = nictune()
        .args(["sim", "--list", "--json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let names: Vec<String> = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!names.is_empty());
    let offered = complete(&s, "nictune sim ");
    for n in &names {
        assert!(offered.contains(n), "{n} not in {offered:?}");
    }
    let sim_keys = complete(&s, "nictune sim seed-e1000-rr --set client.it");
    assert_eq!(sim_keys, ["client.itr="]);
    // A case scenario's keys too (README: completion offers --set/--sweep keys).
    let case_keys = complete(&s, "nictune sim seed-igb-router --set nmbc");
    assert_eq!(case_keys, ["nmbclusters="]);

    // Interfaces come from /sys/class/net when completing: whatever is there now.
    let here: Vec<String> = std::fs::read_dir("/sys/class/net")
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!here.is_empty());
    let mut ifaces = complete(&s, "nictune apply --iface ");
    ifaces.sort();
    let mut want = here.clone();
    want.sort();
    assert_eq!(ifaces, want);
    let first = &here[0];
    let shown = complete(&s, &format!("nictune show {}", &first[..1]));
    assert!(shown.contains(first), "{first} not in {shown:?}");
    std::fs::remove_file(&s).unwrap();
}

#[test]
fn bash_leaves_subcommands_and_flags_to_clap() {
    let s = script("clap");
    assert_eq!(complete(&s, "nictune ap"), ["apply"]);
    assert_eq!(complete(&s, "nictune apply --dry"), ["--dry-run"]);
    assert_eq!(complete(&s, "nictune --json tune --synth"), ["--synthetic"]);
    let hidden = complete(&s, "nictune vm-");
    assert!(
        hidden.iter().all(|w| w.is_empty()),
        "the hidden command is offered: {hidden:?}"
    );
    std::fs::remove_file(&s).unwrap();
}

/// The script for `shell`, written to a temporary directory.
fn script_for(shell: &str) -> (tempfile::TempDir, PathBuf) {
    let out = nictune().args(["completions", shell]).output().unwrap();
    assert_exit(&out, 0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("nictune.{shell}"));
    std::fs::write(&path, stdout(&out)).unwrap();
    (dir, path)
}

/// Runs `shell args...`, or reports the shell missing (and the test skipped).
fn run(shell: &str, args: &[&str]) -> Option<String> {
    match Command::new(shell).args(args).output() {
        Ok(out) => {
            assert!(
                out.status.success(),
                "{shell} {args:?}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            Some(String::from_utf8_lossy(&out.stdout).into_owned())
        }
        Err(e) => {
            nictune_core::live::skip(&format!(
                "{shell} is not installed ({e}); scripts/install-deps installs it"
            ));
            None
        }
    }
}

/// An interface every Linux host has, to find among the completed names.
const LOOPBACK: &str = "lo";

#[test]
fn fish_completes_keys_scenarios_formats_and_interfaces() {
    let (_dir, path) = script_for("fish");
    let complete = |line: &str| {
        let program = format!("source '{}'; complete -C'{line}'", path.display());
        run("fish", &["--no-config", "-c", &program])
    };
    let Some(keys) = complete("nictune check coalesce.rx-u") else {
        return;
    };
    assert!(keys.lines().any(|l| l == "coalesce.rx-usecs="), "{keys}");
    let explain = complete("nictune explain napi.gro").unwrap();
    assert!(
        explain.lines().any(|l| l == "napi.gro-flush-timeout"),
        "{explain}"
    );
    let sim = complete("nictune sim seed-e1000-r").unwrap();
    assert!(sim.lines().any(|l| l.starts_with("seed-e1000-rr")), "{sim}");
    let formats = complete("nictune export --format sysc").unwrap();
    assert!(
        formats.lines().any(|l| l.starts_with("sysctl.d")),
        "{formats}"
    );
    let ifaces = complete("nictune doctor l").unwrap();
    assert!(ifaces.lines().any(|l| l == LOOPBACK), "{ifaces}");
}

#[test]
fn zsh_reads_the_script() {
    let (_dir, path) = script_for("zsh");
    // -n: parse without running (zsh's completion system needs a terminal to run it).
    let Some(_) = run("zsh", &["-n", path.to_str().unwrap()]) else {
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(":_net_interfaces'"),
        "interfaces through zsh's own function"
    );
    let settings = text
        .lines()
        .find(|l| l.starts_with("'*::settings -- "))
        .unwrap();
    assert!(settings.contains("compadd -S \"\" -- "), "{settings}");
    assert!(settings.contains(" coalesce.rx-usecs= "), "{settings}");
}

/// elvish: the script runs with the editor's two names stood in for (a non-interactive
/// elvish has no `edit:` module), then its completer is asked directly.
#[test]
fn elvish_completes_keys_scenarios_and_formats() {
    let (dir, path) = script_for("elvish");
    let text = std::fs::read_to_string(&path).unwrap();
    let standalone = text
        .replace(
            "edit:completion:arg-completer[nictune]",
            "arg-completer[nictune]",
        )
        .replace("edit:complex-candidate", "candidate");
    let complete = |words: &str| {
        let program = format!(
            "var arg-completer = [&]\nfn candidate {{|text &display=''| put $text }}\n{standalone}\n\
             $arg-completer[nictune] {words}\n"
        );
        let file = dir.path().join("run.elv");
        std::fs::write(&file, program).unwrap();
        run("elvish", &["-norc", file.to_str().unwrap()])
    };
    let Some(keys) = complete("nictune explain coalesce.rx-u") else {
        return;
    };
    assert!(keys.contains("coalesce.rx-usecs\n"), "{keys}");
    let sim = complete("nictune sim seed").unwrap();
    assert!(sim.contains("seed-e1000-rr\n"), "{sim}");
    let export = complete("nictune export --format x").unwrap();
    assert!(export.contains("sysctl.d\n"), "{export}");
}

/// README: with --json every command prints one JSON document; completions and manpage
/// print theirs with the script or page as text, or the paths written.
#[test]
fn completions_and_manpage_print_one_json_document_with_json() {
    let out = common::nictune(&["--json", "completions", "bash"]);
    assert_exit(&out, 0);
    let doc = common::json(&out);
    assert_eq!(doc["schema"], "nictune.completions/v1");
    assert_eq!(doc["shell"], "bash");
    let plain = common::nictune(&["completions", "bash"]);
    assert_eq!(doc["script"].as_str().unwrap(), stdout(&plain));

    let out = common::nictune(&["manpage", "apply", "--json"]);
    assert_exit(&out, 0);
    let doc = common::json(&out);
    assert_eq!(doc["schema"], "nictune.manpage/v1");
    assert!(doc["dir"].is_null());
    assert_eq!(doc["pages"][0]["name"], "nictune-apply");
    assert!(doc["pages"][0]["path"].is_null());
    let plain = common::nictune(&["manpage", "apply"]);
    assert_eq!(doc["pages"][0]["roff"].as_str().unwrap(), stdout(&plain));

    let dir = tempfile::tempdir().unwrap();
    let out = common::nictune(&["--json", "manpage", "--dir", dir.path().to_str().unwrap()]);
    assert_exit(&out, 0);
    let doc = common::json(&out);
    let pages = doc["pages"].as_array().unwrap();
    assert!(pages.len() > 10, "{doc}");
    for page in pages {
        assert!(page["roff"].is_null());
        let path = page["path"].as_str().unwrap();
        assert!(std::path::Path::new(path).is_file(), "{path}");
    }
}

/// `help --json` prints the help as `--help --json` does, instead of "unrecognized
/// subcommand '--json'".
#[test]
fn help_takes_json() {
    let help = common::nictune(&["help", "apply", "--json"]);
    assert_exit(&help, 0);
    assert_eq!(
        stdout(&help),
        stdout(&common::nictune(&["apply", "--help", "--json"]))
    );
}
