//! The POSIX sh script an admin runs on a FreeBSD host to capture every file
//! [`super::FILES`] names (`nictune capture --print-script freebsd`): the exact commands, the
//! time of each `vmstat -i` sample, all packed into a tarball that `doctor --os freebsd
//! --root` reads once unpacked. The script is in `scripts/capture-freebsd.sh`; its header
//! documents what it runs.

const FREEBSD: &str = include_str!("scripts/capture-freebsd.sh");

/// The capture script, naming the nictune version that printed it.
pub fn capture_script(tool_version: &str) -> String {
    crate::capture_script::render(
        FREEBSD,
        "freebsd",
        "nictune doctor --os freebsd --root",
        tool_version,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_writes_every_file_the_doctor_reads() {
        let script = capture_script("1.2.3");
        for file in super::super::FILES {
            let writes = [format!("run {file} "), format!("copy {file} ")];
            assert!(
                writes.iter().any(|w| script.contains(w.as_str())) || file == "capture.txt",
                "the script does not write {file}"
            );
        }
        assert!(script.contains("nictune 1.2.3"));
        for marker in ["@VERSION@", "@WORKDIR@", "@PACK@", "@OS@", "@READ@"] {
            assert!(!script.contains(marker), "{marker} left in the script");
        }
        assert!(script.starts_with("#!/bin/sh\n"));
    }
}
