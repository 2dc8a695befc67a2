//! What shell completion offers beyond clap's generated script: setting keys (from the
//! catalog), built-in sim scenarios and sim keys, export formats, and interface names.
//!
//! Keys, scenarios and formats are compiled in, so they are written into the script. Interface
//! names change, so the script lists `/sys/class/net` itself when completing (a shell glob,
//! not a call back into nictune). bash and fish get a layer on top of the generated script;
//! zsh gets the fixed lists as clap possible values and its actions for `KEY=VALUE`
//! arguments and interfaces; elvish and PowerShell, whose generated scripts offer no values,
//! get the fixed lists as candidates of the subcommands that take them (no interface names:
//! their scripts have no place that knows the argument being completed).

use clap::builder::PossibleValuesParser;
use clap_complete::Shell;

/// The values completion offers, each list sorted.
#[derive(Debug)]
pub struct Values {
    /// Canonical catalog keys (`coalesce.rx-usecs`).
    pub keys: Vec<String>,
    /// Built-in sim scenario names (scenarios and field cases, as `sim --list`).
    pub scenarios: Vec<String>,
    /// Sim scenario keys (`--set`, `--sweep`).
    pub sim_keys: Vec<String>,
    /// Export format names.
    pub formats: Vec<String>,
}

impl Values {
    pub fn compiled_in() -> Values {
        let mut keys: Vec<String> = nictune_core::catalog::catalog()
            .entries()
            .iter()
            .map(|e| e.key.clone())
            .collect();
        keys.sort();
        keys.dedup();
        let mut scenarios: Vec<String> = nictune_sim::scenario::builtin::list()
            .into_iter()
            .map(|(name, _)| name)
            .chain(
                nictune_sim::cases::registry::all()
                    .iter()
                    .map(|c| c.name.to_string()),
            )
            .collect();
        scenarios.sort();
        // The engine's keys and every case scenario's (`nmbclusters`, `rxd`, …).
        let mut sim_keys: Vec<String> = nictune_sim::scenario::keys::catalog()
            .iter()
            .map(|k| k.name.clone())
            .chain(
                nictune_sim::cases::registry::all()
                    .iter()
                    .flat_map(|c| c.keys().into_iter().map(|k| k.name)),
            )
            .collect();
        sim_keys.sort();
        sim_keys.dedup();
        let formats = nictune_apply::export::Format::ALL
            .iter()
            .map(|(_, n)| (*n).to_string())
            .collect();
        Values {
            keys,
            scenarios,
            sim_keys,
            formats,
        }
    }
}

/// The command as the completion generators see it: the fixed value lists as possible values,
/// so every shell's script offers them. (Only for generating: parsing keeps its own checks and
/// messages.)
pub fn for_generators(cmd: clap::Command, values: &Values) -> clap::Command {
    let cmd = without_hidden(cmd);
    let list = |v: &[String]| PossibleValuesParser::new(v.to_vec());
    let keys = list(&values.keys);
    let formats = list(&values.formats);
    let scenarios = list(&values.scenarios);
    name_ifaces(cmd)
        .mut_subcommand("explain", |c| {
            c.mut_arg("key", |a| a.value_parser(keys.clone()))
        })
        .mut_subcommand("export", |c| {
            c.mut_arg("format", |a| a.value_parser(formats.clone()))
        })
        .mut_subcommand("sim", |c| {
            c.mut_arg("scenario", |a| a.value_parser(scenarios.clone()))
        })
}

/// The command without its hidden subcommands (`vm-agent`, which only a testbed guest runs):
/// clap_complete writes hidden subcommands into the scripts, so they are left out here.
fn without_hidden(cmd: clap::Command) -> clap::Command {
    let visible: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    let mut top = clap::Command::new(cmd.get_name().to_string())
        .args(cmd.get_arguments().cloned())
        .subcommands(visible)
        .subcommand_required(cmd.is_subcommand_required_set())
        .propagate_version(cmd.is_propagate_version_set());
    if let Some(v) = cmd.get_version() {
        top = top.version(v.to_string());
    }
    if let Some(about) = cmd.get_about() {
        top = top.about(about.clone());
    }
    top
}

/// Gives every interface argument (`--iface`, show's and doctor's positional interfaces) the
/// value name `IFACE`, which [`finish`] recognises in the zsh script.
fn name_ifaces(cmd: clap::Command) -> clap::Command {
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .filter(|id| id == "iface" || id == "ifaces")
        .collect();
    let mut cmd = ids.iter().fold(cmd, |c, id| {
        c.mut_arg(id.as_str(), |a| a.value_name("IFACE"))
    });
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for sub in subs {
        cmd = cmd.mut_subcommand(sub, name_ifaces);
    }
    cmd
}

/// clap's script for `shell` made to complete interface names, followed by the layer for the
/// values clap does not know.
pub fn finish(shell: Shell, generated: &str, v: &Values) -> String {
    match shell {
        Shell::Bash => format!("{generated}{}", bash(v)),
        Shell::Fish => format!("{generated}{}", fish(v)),
        // zsh's own `_net_interfaces` (from zsh's completion functions) lists the interfaces;
        // `compadd -S ''` offers KEY= without the space after it.
        Shell::Zsh => {
            let keys = zsh_keys(&v.keys);
            let sim_keys = zsh_keys(&v.sim_keys);
            generated
                .lines()
                .map(|l| {
                    if l.contains(":IFACE:_default'") || l.starts_with("'*::ifaces -- ") {
                        l.replace(":_default'", ":_net_interfaces'")
                    } else if l.starts_with("'*::settings -- ") {
                        l.replace(":_default'", &format!(":{keys}'"))
                    } else if l.starts_with("'*--set=[") || l.starts_with("'*--sweep=[") {
                        l.replace(":_default'", &format!(":{sim_keys}'"))
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        }
        Shell::Elvish => candidates(generated, v, "        &'nictune;", "'= {", |value| {
            format!("            cand {value} '{value}'")
        }),
        Shell::PowerShell => candidates(generated, v, "        'nictune;", "' {", |value| {
            format!(
                "            [CompletionResult]::new('{value}', '{value}', \
                 [CompletionResultType]::ParameterValue, '{value}')"
            )
        }),
        _ => generated.to_string(),
    }
}

/// A zsh action offering `KEY=` for each key, with no space after it.
fn zsh_keys(keys: &[String]) -> String {
    let words: Vec<String> = keys.iter().map(|k| format!("{k}=")).collect();
    format!("{{compadd -S \"\" -- {}}}", words.join(" "))
}

/// The values each subcommand's positional or value flag takes, for shells that complete per
/// subcommand only: explain's keys, apply's and check's `KEY=`, sim's scenarios, export's
/// formats.
fn per_subcommand(v: &Values) -> Vec<(&'static str, Vec<String>)> {
    let eq: Vec<String> = v.keys.iter().map(|k| format!("{k}=")).collect();
    vec![
        ("explain", v.keys.clone()),
        ("apply", eq.clone()),
        ("check", eq),
        ("sim", v.scenarios.clone()),
        ("export", v.formats.clone()),
    ]
}

/// The generated script with `line(value)` added after the line opening each subcommand's
/// block (`{open}SUB{close}`), for the values [`per_subcommand`] gives it.
fn candidates(
    generated: &str,
    v: &Values,
    open: &str,
    close: &str,
    line: impl Fn(&str) -> String,
) -> String {
    let lists = per_subcommand(v);
    let mut out = String::with_capacity(generated.len() * 2);
    for l in generated.lines() {
        out.push_str(l);
        out.push('\n');
        let list = lists
            .iter()
            .find(|(sub, _)| l == format!("{open}{sub}{close}"))
            .map(|(_, list)| list);
        for value in list.into_iter().flatten() {
            out.push_str(&line(value));
            out.push('\n');
        }
    }
    out
}

/// A bash function run before clap's `_nictune`: it answers for interface names, keys,
/// scenarios and formats, and leaves everything else to `_nictune`.
fn bash(v: &Values) -> String {
    let words = |list: &[String]| list.join(" ");
    let with_eq = |list: &[String]| {
        list.iter()
            .map(|k| format!("{k}="))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        r#"
# Values clap does not know: keys, scenarios, formats (compiled in) and interfaces (listed
# from /sys/class/net when completing). Everything else goes to _nictune above.
_nictune_ifaces() {{
    local d
    for d in /sys/class/net/*; do
        [[ -e $d ]] && printf '%s\n' "${{d##*/}}"
    done
}}

_nictune_values() {{
    local cur prev sub i
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev=""
    if (( COMP_CWORD > 0 )); then prev="${{COMP_WORDS[COMP_CWORD-1]}}"; fi
    sub=""
    for (( i = 1; i < COMP_CWORD; i++ )); do
        case "${{COMP_WORDS[i]}}" in
            -*) ;;
            *) sub="${{COMP_WORDS[i]}}"; break ;;
        esac
    done
    local keys="{keys}"
    local keys_eq="{keys_eq}"
    case "$prev" in
        --iface|-i)
            COMPREPLY=( $(compgen -W "$(_nictune_ifaces)" -- "$cur") )
            return 0 ;;
        --format|-f)
            if [[ $sub == export ]]; then
                COMPREPLY=( $(compgen -W "{formats}" -- "$cur") )
                return 0
            fi ;;
        --set|--sweep)
            if [[ $sub == sim ]]; then
                COMPREPLY=( $(compgen -W "{sim_keys_eq}" -- "$cur") )
                compopt -o nospace 2>/dev/null
                return 0
            fi ;;
    esac
    if [[ $cur != -* && $prev != -* ]]; then
        case "$sub" in
            apply|check)
                if [[ $cur != *=* ]]; then
                    COMPREPLY=( $(compgen -W "$keys_eq" -- "$cur") )
                    compopt -o nospace 2>/dev/null
                    return 0
                fi ;;
            explain)
                COMPREPLY=( $(compgen -W "$keys" -- "$cur") )
                return 0 ;;
            show|doctor)
                COMPREPLY=( $(compgen -W "$(_nictune_ifaces)" -- "$cur") )
                return 0 ;;
            sim)
                COMPREPLY=( $(compgen -W "{scenarios}" -- "$cur") $(compgen -f -- "$cur") )
                return 0 ;;
        esac
    fi
    _nictune "$@"
}}

complete -F _nictune_values -o bashdefault -o default nictune
"#,
        keys = words(&v.keys),
        keys_eq = with_eq(&v.keys),
        formats = words(&v.formats),
        sim_keys_eq = with_eq(&v.sim_keys),
        scenarios = words(&v.scenarios),
    )
}

/// fish: more candidates for the same options and positionals (fish merges them with
/// clap's).
fn fish(v: &Values) -> String {
    let mut out = String::from(
        "\n# Values clap does not know: interfaces (listed when completing), keys, sim keys.\n\
         complete -c nictune -n '__fish_seen_subcommand_from apply export tune bench serve' \
         -l iface -xa '(string replace -r \".*/\" \"\" /sys/class/net/*)'\n",
    );
    out.push_str(
        "complete -c nictune -n '__fish_seen_subcommand_from show doctor' \
         -fa '(string replace -r \".*/\" \"\" /sys/class/net/*)'\n",
    );
    let eq: Vec<String> = v.keys.iter().map(|k| format!("{k}=")).collect();
    out.push_str(&format!(
        "complete -c nictune -n '__fish_seen_subcommand_from apply check' -fa '{}'\n",
        eq.join(" ")
    ));
    let sim: Vec<String> = v.sim_keys.iter().map(|k| format!("{k}=")).collect();
    out.push_str(&format!(
        "complete -c nictune -n '__fish_seen_subcommand_from sim' -l set -l sweep -xa '{}'\n",
        sim.join(" ")
    ));
    out.push_str(&format!(
        "complete -c nictune -n '__fish_seen_subcommand_from explain' -fa '{}'\n",
        v.keys.join(" ")
    ));
    out.push_str(&format!(
        "complete -c nictune -n '__fish_seen_subcommand_from sim' -a '{}'\n",
        v.scenarios.join(" ")
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(shell: Shell) -> String {
        String::from_utf8(crate::cmd::meta::completion_script(shell)).unwrap()
    }

    #[test]
    fn zsh_lists_interfaces_formats_scenarios_and_keys() {
        let zsh = script(Shell::Zsh);
        let iface_lines: Vec<&str> = zsh.lines().filter(|l| l.contains(":IFACE:")).collect();
        assert!(iface_lines.len() >= 4, "{iface_lines:?}");
        assert!(
            iface_lines.iter().all(|l| l.contains("_net_interfaces")),
            "{iface_lines:?}"
        );
        let values = Values::compiled_in();
        let formats = format!(":FORMAT:({})", values.formats.join(" "));
        assert!(zsh.contains(&formats), "no {formats}");
        assert!(zsh.contains(&values.scenarios.join(" ")));
        assert!(zsh.contains("coalesce.rx-usecs "), "no keys for explain");
    }

    #[test]
    fn fish_adds_interfaces_keys_and_sim_keys() {
        let fish = script(Shell::Fish);
        assert!(fish.contains("-l iface -xa '(string replace -r"), "{fish}");
        assert!(fish.contains("coalesce.rx-usecs="), "{fish}");
        assert!(fish.contains("-l set -l sweep -xa '"), "{fish}");
        assert!(fish.contains("sysctl.d"), "{fish}");
        let v = Values::compiled_in();
        assert!(
            fish.contains(&v.scenarios.join(" ")),
            "no scenarios for sim"
        );
        assert!(fish.contains(&format!("explain' -fa '{}", v.keys.join(" "))));
        assert!(!fish.contains("vm-agent"), "the hidden command is left out");
    }

    #[test]
    fn zsh_offers_keys_for_settings_and_sim_keys_for_set() {
        let zsh = script(Shell::Zsh);
        let settings: Vec<&str> = zsh
            .lines()
            .filter(|l| l.starts_with("'*::settings -- "))
            .collect();
        assert_eq!(settings.len(), 2, "apply and check: {settings:?}");
        assert!(settings
            .iter()
            .all(|l| l.contains("compadd -S \"\" -- ") && l.contains("coalesce.rx-usecs=")));
        let set = zsh.lines().find(|l| l.starts_with("'*--set=[")).unwrap();
        assert!(set.contains("client.itr="), "{set}");
        assert!(!zsh.contains("vm-agent"));
    }

    #[test]
    fn elvish_and_powershell_offer_keys_scenarios_and_formats() {
        let v = Values::compiled_in();
        for (shell, cand) in [
            (Shell::Elvish, "cand seed-e1000-rr 'seed-e1000-rr'"),
            (
                Shell::PowerShell,
                "[CompletionResult]::new('seed-e1000-rr', 'seed-e1000-rr'",
            ),
        ] {
            let s = script(shell);
            assert!(s.contains(cand), "{shell:?}: no scenario");
            assert!(s.contains("coalesce.rx-usecs="), "{shell:?}: no KEY=");
            assert!(
                s.contains(&format!("'{}'", v.formats[0])),
                "{shell:?}: no format"
            );
            assert!(!s.contains("vm-agent"), "{shell:?}");
        }
    }

    #[test]
    fn the_compiled_in_lists_are_complete() {
        let v = Values::compiled_in();
        assert_eq!(
            v.keys.len(),
            nictune_core::catalog::catalog()
                .entries()
                .iter()
                .map(|e| &e.key)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        );
        assert_eq!(v.formats.len(), nictune_apply::export::Format::ALL.len());
        assert_eq!(
            v.scenarios.len(),
            nictune_sim::scenario::builtin::list().len()
                + nictune_sim::cases::registry::all().len()
        );
        assert!(
            v.sim_keys.iter().any(|k| k == "client.itr"),
            "{:?}",
            v.sim_keys
        );
    }
}
