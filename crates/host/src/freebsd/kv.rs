//! Key/value files: `sysctl -a` output (`name: value`) and `loader.conf`, `sysctl.conf`,
//! `rc.conf` (`name=value`, `name="value"`, `#` comments). Lines that are not a key and a
//! value (continuations of multi-line sysctl values such as `kern.conftxt`) are skipped.

use std::collections::BTreeMap;

/// Parses one of these files into a map; later lines win, as when the system reads them.
pub fn parse_kv(text: &str) -> BTreeMap<String, String> {
    kv_lines(text)
        .map(|(_, k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The key/value lines of such a file in order, each with its 1-based line number.
pub fn kv_lines(text: &str) -> impl Iterator<Item = (usize, &str, &str)> {
    text.lines().enumerate().filter_map(|(i, line)| {
        let line = line.split('#').next().unwrap_or("").trim();
        let (key, value) = line.split_once('=').or_else(|| line.split_once(": "))?;
        let key = key.trim();
        let valid = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-%".contains(c));
        valid.then(|| (i + 1, key, unquote(value.trim())))
    })
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

    #[test]
    fn lines_are_numbered_from_one() {
        let lines: Vec<_> = kv_lines("# c\nhw.ncpu: 4\n\nkern.hz=\"1000\"\n").collect();
        assert_eq!(lines, [(2, "hw.ncpu", "4"), (4, "kern.hz", "1000")]);
    }
}
