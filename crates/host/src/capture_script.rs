//! What the capture scripts (`nictune capture --print-script OS`) share: the working
//! directory and tarball name made from the host name and the time, and the packing at the
//! end. Each OS's template marks where they go with `@WORKDIR@` and `@PACK@`; `@VERSION@` is
//! the nictune version that printed the script.

const WORKDIR: &str = include_str!("scripts/workdir.sh");
const PACK: &str = include_str!("scripts/pack.sh");

/// `template` with the shared parts for `os` (the tarball's name part) and `read_with` (the
/// command that reads the unpacked capture, before its directory name).
pub fn render(template: &str, os: &str, read_with: &str, tool_version: &str) -> String {
    template
        .replace("@WORKDIR@\n", &WORKDIR.replace("@OS@", os))
        .replace("@PACK@\n", &PACK.replace("@READ@", read_with))
        .replace("@VERSION@", tool_version)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_markers_are_replaced() {
        let out = super::render(
            "#!/bin/sh\n# @VERSION@\n@WORKDIR@\nwork\n@PACK@\n",
            "linux",
            "nictune doctor --root",
            "9.9",
        );
        assert!(!out.contains('@'), "{out}");
        assert!(out.contains("name=\"nictune-linux-$host-$stamp\""));
        assert!(out.contains("&& nictune doctor --root $name\""));
        assert!(out.starts_with("#!/bin/sh\n# 9.9\n"));
    }
}
