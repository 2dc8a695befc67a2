//! Strict parsers for the exported formats, used by the tests and available to callers:
//! each accepts only what the format's own parser accepts (comments, blank lines and the
//! format's statements) and returns what it read, so a test can compare it to the profile.
//! Shell scripts and systemd units are additionally checked with `sh -n` and
//! `systemd-analyze verify` in the integration tests where those tools exist.

/// A line the format's parser would reject.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}: {text:?}")]
pub struct FormatError {
    /// Line number in the checked text, from 1.
    pub line: usize,
    /// What the format's parser objects to.
    pub why: &'static str,
    /// The offending line.
    pub text: String,
}

/// Checks `text` with the strict parser of `format` and returns how many statements it
/// holds; `None` for the shell formats (`rc.conf`, `cpuset`), which only `sh -n` checks.
pub fn check(format: super::Format, text: &str) -> Option<Result<usize, FormatError>> {
    use super::Format as F;
    Some(match format {
        F::SystemdLink | F::Networkmanager | F::Tuned | F::SystemdUnit => {
            ini(text).map(|v| v.len())
        }
        F::Udev => udev_rules(text).map(|v| v.len()),
        F::Modprobe => modprobe(text).map(|v| v.len()),
        F::SysctlD | F::FreebsdSysctlConf | F::LoaderConf => sysctl_lines(text).map(|v| v.len()),
        F::Kernconf => kernconf(text).map(|v| v.len()),
        F::Fstab => mount_options(text).map(|v| v.len()),
        F::RcConf | F::Cpuset => return None,
    })
}

/// The options field of an fstab line (fstab(5)): `name[=value]` joined by commas, no
/// blanks. Returns the options.
pub fn mount_options(text: &str) -> Result<Vec<String>, FormatError> {
    let mut out = Vec::new();
    for (n, line) in lines(text) {
        for option in line.split(',') {
            let name = option.split('=').next().unwrap_or("");
            let valid = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !option.contains(char::is_whitespace);
            if !valid {
                return Err(error(n, "not name[=value] options joined by commas", line));
            }
            out.push(option.to_string());
        }
    }
    Ok(out)
}

/// A kernel configuration file as config(8) reads the lines nictune writes (config(5)):
/// `include FILE`, `ident NAME`, `options NAME[=VALUE]`, `nooptions NAME`, one per line.
/// Returns (keyword, argument).
pub fn kernconf(text: &str) -> Result<Vec<(String, String)>, FormatError> {
    let option = |s: &str| {
        let (name, value) = s.split_once('=').unwrap_or((s, "1"));
        let upper = |c: char| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_';
        !name.is_empty() && name.chars().all(upper) && !value.is_empty()
    };
    let word = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    };
    let mut out = Vec::new();
    for (n, line) in lines(text) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let [keyword, arg] = words[..] else {
            return Err(error(n, "not `keyword argument`", line));
        };
        let valid = match keyword {
            "include" | "ident" => word(arg),
            "options" | "nooptions" => option(arg),
            _ => return Err(error(n, "unknown keyword", line)),
        };
        if !valid {
            return Err(error(n, "bad argument", line));
        }
        out.push((keyword.to_string(), arg.to_string()));
    }
    Ok(out)
}

fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'))
}

fn error(line: usize, why: &'static str, text: &str) -> FormatError {
    FormatError {
        line,
        why,
        text: text.to_string(),
    }
}

/// INI as systemd units, `.link` files, NetworkManager keyfiles and tuned profiles write it:
/// `[Section]` headers and `Key=Value` lines inside a section. Returns (section, key, value).
pub fn ini(text: &str) -> Result<Vec<(String, String, String)>, FormatError> {
    let mut section: Option<String> = None;
    let mut out = Vec::new();
    for (n, line) in lines(text) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if name.is_empty() || name.contains(['[', ']']) {
                return Err(error(n, "bad section header", line));
            }
            section = Some(name.to_string());
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(error(n, "neither a section nor Key=Value", line));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(error(n, "bad key", line));
        }
        let section = section
            .clone()
            .ok_or_else(|| error(n, "key outside any section", line))?;
        out.push((section, key.to_string(), value.trim().to_string()));
    }
    Ok(out)
}

/// One udev rule: its (key, operator, value) assignments.
pub type Rule = Vec<(String, String, String)>;

/// udev rules: each line a comma-separated list of `KEY{attr}OP"value"`, OP one of
/// `==`, `!=`, `=`, `+=`, `-=`, `:=`. Returns per rule (key, op, value).
pub fn udev_rules(text: &str) -> Result<Vec<Rule>, FormatError> {
    lines(text)
        .map(|(n, line)| rule(line).ok_or_else(|| error(n, "not a udev rule", line)))
        .collect()
}

fn rule(mut rest: &str) -> Option<Rule> {
    let mut out = Vec::new();
    loop {
        // Operators start after any `{attribute}`, whose name may contain `-`.
        let from = match (rest.find('{'), rest.find(|c: char| "=!+:".contains(c))) {
            (Some(open), Some(op)) if open < op => rest[open..].find('}')? + open,
            _ => 0,
        };
        let key_end = from + rest[from..].find(|c: char| "=!+-:".contains(c))?;
        let key = rest[..key_end].trim();
        let ok_key = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "{}_/-.*$".contains(c));
        let op_len = ["==", "!=", "+=", "-=", ":=", "="]
            .iter()
            .find(|op| rest[key_end..].starts_with(*op))?
            .len();
        let after = rest[key_end + op_len..].strip_prefix('"')?;
        let close = after.find('"')?;
        if !ok_key {
            return None;
        }
        out.push((
            key.to_string(),
            rest[key_end..key_end + op_len].to_string(),
            after[..close].to_string(),
        ));
        rest = after[close + 1..].trim_start();
        match rest.strip_prefix(',') {
            Some(more) => rest = more.trim_start(),
            None if rest.is_empty() => return Some(out),
            None => return None,
        }
    }
}

/// modprobe.d: `options MODULE key=value...` lines. Returns (module, parameters).
pub fn modprobe(text: &str) -> Result<Vec<(String, Vec<String>)>, FormatError> {
    lines(text)
        .map(|(n, line)| {
            let mut words = line.split_whitespace();
            let (Some("options"), Some(module)) = (words.next(), words.next()) else {
                return Err(error(n, "not an options line", line));
            };
            let params: Vec<String> = words.map(String::from).collect();
            if params.is_empty() || params.iter().any(|p| !p.contains('=')) {
                return Err(error(n, "options need key=value parameters", line));
            }
            Ok((module.to_string(), params))
        })
        .collect()
}

/// sysctl.d: `key = value` lines with dotted keys. Returns (key, value).
pub fn sysctl_lines(text: &str) -> Result<Vec<(String, String)>, FormatError> {
    lines(text)
        .map(|(n, line)| {
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| error(n, "not key = value", line))?;
            let k = k.trim();
            let ok = !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-/*".contains(c));
            if !ok {
                return Err(error(n, "bad sysctl name", line));
            }
            Ok((k.to_string(), v.trim().to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_rejects_stray_text_and_keys_outside_sections() {
        assert!(ini("[Link]\nRxCoalesceSec=50us\n").is_ok());
        assert_eq!(ini("Key=1\n").unwrap_err().why, "key outside any section");
        assert_eq!(
            ini("[Link]\njust words\n").unwrap_err().why,
            "neither a section nor Key=Value"
        );
    }

    #[test]
    fn udev_rules_need_quoted_values_and_operators() {
        let ok = udev_rules("ACTION==\"add\", ATTR{threaded}=\"1\"\n").unwrap();
        assert_eq!(
            ok[0][1],
            (
                "ATTR{threaded}".to_string(),
                "=".to_string(),
                "1".to_string()
            )
        );
        assert!(udev_rules("ACTION==add\n").is_err());
        assert!(
            udev_rules("ACTION==\"add\" ATTR{x}=\"1\"\n").is_err(),
            "missing comma"
        );
    }

    #[test]
    fn modprobe_and_sysctl_lines_are_checked() {
        assert!(modprobe("options e1000e InterruptThrottleRate=3000\n").is_ok());
        assert!(modprobe("option e1000e x=1\n").is_err());
        assert!(sysctl_lines("net.core.busy_poll = 50\n").is_ok());
        assert!(sysctl_lines("net core = 1\n").is_err());
    }
}
