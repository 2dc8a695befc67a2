//! Key/value files: `sysctl -a` output (`name: value`) and `loader.conf`, `sysctl.conf`,
//! `rc.conf` (`name=value`, `name="value"`, `#` comments). Lines that are not a key and a
//! value (continuations of multi-line sysctl values such as `kern.conftxt`) are skipped.

use std::collections::BTreeMap;

/// Parses one of these files into a map; later lines win, as when the system reads them.
pub fn parse_kv(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let split = line.split_once('=').or_else(|| line.split_once(": "));
        let Some((key, value)) = split else { continue };
        let key = key.trim();
        let valid = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-%".contains(c));
        if valid {
            out.insert(key.to_string(), unquote(value.trim()).to_string());
        }
    }
    out
}

fn unquote(v: &str) -> &str {
    v.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_notations_comments_and_quotes() {
        let conf = parse_kv("# tuning\nhw.igb.rxd=4096\nhw.igb.num_queues=\"4\" # per port\n\n");
        assert_eq!(conf["hw.igb.rxd"], "4096");
        assert_eq!(conf["hw.igb.num_queues"], "4");
        let sysctl =
            parse_kv("kern.ipc.nmbclusters: 25600\nkern.conftxt: options\tX\nmachine\tamd64\n");
        assert_eq!(sysctl["kern.ipc.nmbclusters"], "25600");
        assert_eq!(sysctl.len(), 2);
    }
}
