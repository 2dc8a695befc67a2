//! The parameters a loaded driver module runs with, from the text of the places they can be
//! learnt. Many drivers register theirs with permission 0 (e1000 and e1000e do, in
//! `e1000_param.c` / `param.c`), so `/sys/module/<m>/parameters/` does not show them; the
//! values are then, in order: nictune's record of its last reload of the module
//! (`/run/nictune/module-params/<m>`, gone at reboot like the load itself), else the
//! `options <m> p=v` lines of `/etc/modprobe.d/*.conf` overlaid by the kernel command line
//! (`<m>.<p>=v`), else nothing: the driver's defaults. A module loaded by hand with other
//! values (`modprobe m p=v`) leaves no trace in any of them. Pure: text in.

use serde::Serialize;
use std::collections::BTreeMap;

/// Parameters as `name → value`, in the order modprobe would pass them.
pub type Params = BTreeMap<String, String>;

/// Where nictune records the parameters it loaded a module with.
pub const RECORD_DIR: &str = "/run/nictune/module-params";
/// Where modprobe's option files are.
pub const MODPROBE_D: &str = "/etc/modprobe.d";
/// The kernel command line.
pub const CMDLINE: &str = "/proc/cmdline";

/// One parameter's value and the file or place it was learnt from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Param {
    /// The value as written there (one integer or a per-port comma list).
    pub value: String,
    /// `/run/nictune/module-params/e1000e`, `/etc/modprobe.d/nic.conf`, `/proc/cmdline`,
    /// `/sys/module/e1000e/parameters/copybreak`.
    pub from: String,
}

/// `<m>.<p>=v` words of a kernel command line for module `module`.
pub fn cmdline_params(cmdline: &str, module: &str) -> Params {
    let prefix = format!("{module}.");
    cmdline
        .split_whitespace()
        .filter_map(|w| w.strip_prefix(&prefix)?.split_once('='))
        .map(|(p, v)| (p.to_string(), v.to_string()))
        .collect()
}

/// `options <module> p=v ...` lines of a modprobe.d file (later lines win, as in modprobe).
pub fn modprobe_params(conf: &str, module: &str) -> Params {
    let mut out = Params::new();
    for line in conf.lines() {
        let mut words = line.split('#').next().unwrap_or("").split_whitespace();
        if words.next() != Some("options") {
            continue;
        }
        let m = words.next().unwrap_or("").replace('-', "_");
        if m != module.replace('-', "_") {
            continue;
        }
        for w in words {
            if let Some((p, v)) = w.split_once('=') {
                out.insert(p.to_string(), v.to_string());
            }
        }
    }
    out
}

/// The record file's text: one `p=v` per line.
pub fn render_record(params: &Params) -> String {
    params.iter().map(|(p, v)| format!("{p}={v}\n")).collect()
}

/// Parses a record written by [`render_record`].
pub fn parse_record(text: &str) -> Params {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(p, v)| (p.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// What `module` was loaded with: the `record` (its path and text) when there is one, else
/// the modprobe.d files (`(path, text)`, in the order modprobe reads them) overlaid by the
/// kernel command line.
pub fn loaded(
    record: Option<(&str, &str)>,
    modprobe_d: &[(String, String)],
    cmdline: &str,
    module: &str,
) -> BTreeMap<String, Param> {
    let mut out = BTreeMap::new();
    let mut tag = |params: Params, from: &str| {
        for (p, value) in params {
            let from = from.to_string();
            out.insert(p, Param { value, from });
        }
    };
    if let Some((path, text)) = record {
        tag(parse_record(text), path);
    } else {
        for (path, text) in modprobe_d {
            tag(modprobe_params(text, module), path);
        }
        tag(cmdline_params(cmdline, module), CMDLINE);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_gives_this_module_only() {
        let p = cmdline_params(
            "quiet e1000.InterruptThrottleRate=3000 e1000e.TxIntDelay=0",
            "e1000",
        );
        assert_eq!(
            p,
            Params::from([("InterruptThrottleRate".into(), "3000".into())])
        );
    }

    #[test]
    fn modprobe_options_are_read_later_lines_winning() {
        let conf = "# tuned\noptions e1000 InterruptThrottleRate=8000 TxIntDelay=0\n\
                    options igb RSS=4\noptions e1000 InterruptThrottleRate=2000 # later\n";
        let p = modprobe_params(conf, "e1000");
        assert_eq!(p["InterruptThrottleRate"], "2000");
        assert_eq!(p["TxIntDelay"], "0");
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn records_round_trip() {
        let p = Params::from([
            ("TxIntDelay".into(), "0".into()),
            ("InterruptThrottleRate".into(), "500,500".into()),
        ]);
        assert_eq!(parse_record(&render_record(&p)), p);
    }

    #[test]
    fn a_record_wins_whole_else_the_command_line_overlays_modprobe_d() {
        let confs = [(
            "/etc/modprobe.d/nic.conf".to_string(),
            "options e1000e InterruptThrottleRate=8000 TxIntDelay=0\n".to_string(),
        )];
        let cmdline = "ro e1000e.InterruptThrottleRate=1";
        let p = loaded(None, &confs, cmdline, "e1000e");
        let got = |n: &str| (p[n].value.as_str(), p[n].from.as_str());
        assert_eq!(got("InterruptThrottleRate"), ("1", CMDLINE));
        assert_eq!(got("TxIntDelay"), ("0", "/etc/modprobe.d/nic.conf"));
        let record = Some(("/run/nictune/module-params/e1000e", ""));
        assert!(
            loaded(record, &confs, cmdline, "e1000e").is_empty(),
            "an empty record: reloaded with the driver's defaults"
        );
    }
}
