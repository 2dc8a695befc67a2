//! The POSIX sh script that captures a Linux host without nictune on it
//! (`nictune capture --print-script linux`): the files `nictune capture` records, at the same
//! paths, with `index.json`, `netlink.json` and `manifest.json`, in a tarball that `show` and
//! `doctor --root` read once unpacked. The script's header says what it reads and what it
//! cannot (the netlink replies).

const LINUX: &str = include_str!("scripts/capture-linux.sh");

/// The capture script, naming the nictune version that printed it.
pub fn capture_script(tool_version: &str) -> String {
    nictune_host::capture_script::render(LINUX, "linux", "nictune doctor --root", tool_version)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_script_names_its_version_and_is_sh() {
        let script = super::capture_script("1.2.3");
        assert!(script.starts_with("#!/bin/sh\n"));
        assert!(script.contains("nictune 1.2.3") && !script.contains('@'));
    }
}
