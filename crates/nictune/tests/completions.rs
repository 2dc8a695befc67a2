//! The bash completion script, run in bash: it completes keys, scenarios, formats and
//! interface names, and leaves subcommands and flags to clap's generated part.

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
    std::fs::remove_file(&s).unwrap();
}
