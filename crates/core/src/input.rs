//! Size limits for everything read from outside, and the one reader that enforces them.
//!
//! Every file nictune reads from a user, a capture, the kernel or a peer goes through
//! [`read_limited`] (or [`read_file`]): it reads at most the limit and fails naming the file,
//! the limit and a hint instead of growing without end (`--profile /dev/zero`). This is the
//! crate's only I/O, kept here so that the limits live in one place.

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

/// A size limit in bytes for one kind of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// What kind of input this is, e.g. `profile`.
    pub what: &'static str,
    /// Most bytes accepted.
    pub bytes: u64,
}

/// Profiles (`apply --profile`, `export`), scenario files and other TOML a user writes.
pub const PROFILE: Limit = Limit {
    what: "profile",
    bytes: 1 << 20,
};
/// A `sim` scenario file (TOML).
pub const SCENARIO: Limit = Limit {
    what: "scenario file",
    bytes: 1 << 20,
};
/// A `sim --set binding=FILE` queue-to-CPU binding map.
pub const BINDING: Limit = Limit {
    what: "binding map",
    bytes: 1 << 20,
};
/// One file of a capture directory (Linux `nictune capture`, FreeBSD command output).
pub const CAPTURE_FILE: Limit = Limit {
    what: "capture file",
    bytes: 16 << 20,
};
/// One procfs or sysfs file read live (`/proc/interrupts` of a large machine is the largest).
pub const KERNEL_FILE: Limit = Limit {
    what: "kernel file",
    bytes: 64 << 20,
};
/// One change journal of the state directory.
pub const JOURNAL: Limit = Limit {
    what: "journal",
    bytes: 16 << 20,
};
/// A token file (`serve --token-file`, `bench --token-file`).
pub const TOKEN: Limit = Limit {
    what: "token file",
    bytes: 4 << 10,
};

/// Most CPUs a host may report (Linux `NR_CPUS` maximum); CPU ids are below it.
pub const MAX_CPUS: u64 = crate::cpuset::MAX_CPU as u64 + 1;
/// Most queues or channels of one kind a device may report (`ip link` caps at 4096).
pub const MAX_QUEUES: u64 = 4096;

/// A count or number read from input that is outside its sane range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {value} is out of range; allowed: {min}..={max}")]
pub struct OutOfRange {
    /// What the number counts, e.g. `hw.ncpu`.
    pub what: String,
    /// The number as read.
    pub value: i128,
    /// Smallest value allowed (inclusive).
    pub min: u64,
    /// Largest value allowed (inclusive).
    pub max: u64,
}

/// `value` when it is within `min..=max`; else an error naming `what` and the range.
pub fn in_range(what: &str, value: i128, min: u64, max: u64) -> Result<u64, OutOfRange> {
    if (i128::from(min)..=i128::from(max)).contains(&value) {
        return Ok(value as u64);
    }
    Err(OutOfRange {
        what: what.to_string(),
        value,
        min,
        max,
    })
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.bytes {
            b if b >= 1 << 20 && b % (1 << 20) == 0 => write!(f, "{} MiB", b >> 20),
            b if b >= 1 << 10 && b % (1 << 10) == 0 => write!(f, "{} KiB", b >> 10),
            b => write!(f, "{b} bytes"),
        }
    }
}

/// A read that failed or went over its limit.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Opening or reading failed. The I/O error is part of the message, not a cause of its
    /// own (it once printed twice: `reading profile /tmp: Is a directory` and `caused by: Is
    /// a directory`).
    #[error("reading {what} {name}: {error}")]
    Io {
        /// Kind of input, the [`Limit::what`] of the read.
        what: &'static str,
        /// The path or name the caller gave for the input.
        name: String,
        /// The error from the file system or reader.
        error: io::Error,
    },
    #[error(
        "{what} {name} is larger than {limit}, the most a {what} may be; \
         check that it names the right file (devices such as /dev/zero never end)"
    )]
    /// The input holds more than `limit.bytes`; reading stopped one byte past the limit.
    TooLarge {
        /// Kind of input, the [`Limit::what`] of the read.
        what: &'static str,
        /// The path or name the caller gave for the input.
        name: String,
        /// The limit that was exceeded.
        limit: Limit,
    },
    #[error("{what} {name} is not UTF-8 text (byte {offset}); allowed: UTF-8 text")]
    /// The input is within the limit but not valid UTF-8.
    NotText {
        /// Kind of input, the [`Limit::what`] of the read.
        what: &'static str,
        /// The path or name the caller gave for the input.
        name: String,
        /// Byte offset of the first invalid UTF-8 sequence.
        offset: usize,
    },
}

impl ReadError {
    /// The underlying I/O error, if the read itself failed.
    pub fn io(&self) -> Option<&io::Error> {
        match self {
            ReadError::Io { error, .. } => Some(error),
            _ => None,
        }
    }

    /// What to do about it, for the `hint:` line.
    pub fn hint(&self) -> String {
        match self {
            ReadError::Io { what, name, error } => match error.kind() {
                io::ErrorKind::NotFound => {
                    format!("check the path: there is no {name}; give the {what}'s path")
                }
                io::ErrorKind::IsADirectory => {
                    format!("{name} is a directory: give the path of the {what} in it")
                }
                io::ErrorKind::PermissionDenied => {
                    format!("check that {name} is readable by this user (ls -l {name})")
                }
                _ => format!("check that {name} is a readable {what} file"),
            },
            ReadError::TooLarge { what, limit, .. } => {
                format!("give a {what} of at most {limit}")
            }
            ReadError::NotText { what, .. } => {
                format!("give a {what} as UTF-8 text (is it the file you meant, not a binary?)")
            }
        }
    }
}

/// Reads `reader` to its end as UTF-8 text, failing once it holds more than `limit` bytes.
/// `name` names the input in errors.
pub fn read_limited(reader: impl Read, limit: Limit, name: &str) -> Result<String, ReadError> {
    let mut bytes = Vec::new();
    reader
        .take(limit.bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| ReadError::Io {
            what: limit.what,
            name: name.to_string(),
            error,
        })?;
    if bytes.len() as u64 > limit.bytes {
        return Err(ReadError::TooLarge {
            what: limit.what,
            name: name.to_string(),
            limit,
        });
    }
    String::from_utf8(bytes).map_err(|e| ReadError::NotText {
        what: limit.what,
        name: name.to_string(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// Reads the file at `path` as text of at most `limit` bytes.
pub fn read_file(path: &Path, limit: Limit) -> Result<String, ReadError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|error| ReadError::Io {
        what: limit.what,
        name: name.clone(),
        error,
    })?;
    read_limited(file, limit, &name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Limit = Limit {
        what: "profile",
        bytes: 8,
    };

    /// The I/O error is in the message once, not again as its cause; the hint says what to do.
    #[test]
    fn a_failed_read_names_its_error_once_with_a_hint() {
        use std::error::Error as _;
        let err = read_file(Path::new("/"), PROFILE).unwrap_err();
        assert!(err.to_string().starts_with("reading profile /: "), "{err}");
        assert!(err.source().is_none());
        assert_eq!(
            err.hint(),
            "/ is a directory: give the path of the profile in it"
        );
        let err = read_file(Path::new("/nonexistent/x"), SCENARIO).unwrap_err();
        assert_eq!(
            err.hint(),
            "check the path: there is no /nonexistent/x; give the scenario file's path"
        );
    }

    #[test]
    fn text_within_the_limit_is_read_whole() {
        assert_eq!(
            read_limited(&b"12345678"[..], SMALL, "p").unwrap(),
            "12345678"
        );
        assert_eq!(read_limited(&b""[..], SMALL, "p").unwrap(), "");
    }

    #[test]
    fn an_endless_input_stops_at_the_limit_and_names_it() {
        let err = read_limited(io::repeat(0), PROFILE, "/dev/zero").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("profile /dev/zero is larger than 1 MiB"),
            "{text}"
        );
        assert!(text.contains("/dev/zero never end"), "{text}");
    }

    #[test]
    fn one_byte_over_is_too_large_and_bad_utf8_is_named() {
        let err = read_limited(&b"123456789"[..], SMALL, "p").unwrap_err();
        assert!(matches!(err, ReadError::TooLarge { .. }), "{err}");
        let err = read_limited(&b"ab\xffc"[..], SMALL, "p").unwrap_err();
        assert_eq!(
            err.to_string(),
            "profile p is not UTF-8 text (byte 2); allowed: UTF-8 text"
        );
    }

    #[test]
    fn counts_outside_their_range_name_it() {
        assert_eq!(in_range("hw.ncpu", 4, 1, MAX_CPUS), Ok(4));
        let err = in_range("hw.ncpu", -1, 1, MAX_CPUS).unwrap_err();
        assert_eq!(
            err.to_string(),
            "hw.ncpu: -1 is out of range; allowed: 1..=8192"
        );
        assert!(in_range("q", i128::from(u64::MAX) + 1, 0, u64::MAX).is_err());
    }

    #[test]
    fn limits_print_in_readable_units() {
        assert_eq!(PROFILE.to_string(), "1 MiB");
        assert_eq!(TOKEN.to_string(), "4 KiB");
        assert_eq!(SMALL.to_string(), "8 bytes");
    }

    #[test]
    fn a_missing_file_names_the_path() {
        let err = read_file(Path::new("/nonexistent/nictune/p.toml"), PROFILE).unwrap_err();
        assert!(err.io().is_some());
        assert!(err
            .to_string()
            .starts_with("reading profile /nonexistent/nictune/p.toml"));
    }
}
