//! The fuzz tier: property tests over every parser that reads outside input, in files named
//! `tests/fuzz_*.rs` in the crates that own the parsers. This crate holds what they share:
//!
//! - [`config`]: a fixed number of cases per property ([`CASES`], overridable with
//!   `PROPTEST_CASES`), so the tier's cost in `cargo test --workspace` stays small and fixed;
//! - [`any_text`] and [`any_bytes`]: arbitrary input;
//! - [`mutated`]: structure-aware mutations of real inputs (fixtures): lines flipped, deleted,
//!   duplicated or inserted, numbers replaced by extremes (`-1`, 2^64, huge lengths);
//! - [`bounded`] and [`assert_output_bounded`]: the properties besides "no panic": time per
//!   case, and output size in proportion to the input (a proxy for memory).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Cases per property when `PROPTEST_CASES` is not set.
pub const CASES: u32 = 256;

/// Longest one case may take. Generous: the machine is shared with other builds; a parser
/// that loops on its input takes far longer.
pub const CASE_BUDGET: Duration = Duration::from_secs(5);

/// Numbers that break parsers that trust them: negative, zero, type limits and beyond, and
/// a number longer than any type.
pub const EXTREMES: &[&str] = &[
    "-1",
    "0",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999999999999",
    "0x",
    "",
    "nan",
    "1e308",
];

/// The test config of the tier: [`CASES`] cases (or `PROPTEST_CASES`), no regression files.
pub fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Arbitrary bytes, up to 4 KiB.
pub fn any_bytes() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..4096)
}

/// Arbitrary bytes as text (invalid UTF-8 replaced), up to 4 KiB.
pub fn any_text() -> impl Strategy<Value = String> {
    any_bytes().prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// One edit of a text.
#[derive(Debug, Clone)]
pub enum Edit {
    /// Flip one bit of the byte at this position (modulo the length).
    Flip {
        /// Byte offset into the text, taken modulo its length in bytes.
        at: usize,
        /// Bit to flip, 0–7 (0 is the least significant).
        bit: u8,
    },
    /// Delete the line at this index.
    Delete {
        /// Line index, taken modulo the number of lines; no-op on empty text.
        line: usize,
    },
    /// Repeat the line at this index this many more times.
    Duplicate {
        /// Line index, taken modulo the number of lines; no-op on empty text.
        line: usize,
        /// Extra copies inserted after the original (the generator draws 1–199).
        times: usize,
    },
    /// Insert a line before this index.
    Insert {
        /// Line index, taken modulo the number of lines plus one (so the end is reachable).
        line: usize,
        /// The new line, without its newline (one is added).
        text: String,
    },
    /// Replace the nth number in the text with an extreme.
    Number {
        /// Which run of digits (with its leading `-`, if any), modulo their count; no-op
        /// when the text has no digits.
        nth: usize,
        /// The replacement: one of [`EXTREMES`] or a long run of `9`s.
        with: String,
    },
    /// Cut the text at this position.
    Truncate {
        /// Byte offset, modulo the length plus one, moved back to a character boundary.
        at: usize,
    },
}

fn edit() -> impl Strategy<Value = Edit> {
    let extreme = proptest::sample::select(EXTREMES).prop_map(str::to_string);
    let huge = (1usize..20_000).prop_map(|n| "9".repeat(n));
    let number = prop_oneof![4 => extreme, 1 => huge];
    let line = prop_oneof![
        proptest::sample::select(EXTREMES).prop_map(str::to_string),
        "[ -~]{0,60}",
    ];
    prop_oneof![
        1 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Edit::Flip { at, bit }),
        1 => any::<usize>().prop_map(|line| Edit::Delete { line }),
        1 => (any::<usize>(), 1usize..200).prop_map(|(line, times)| Edit::Duplicate { line, times }),
        1 => (any::<usize>(), line).prop_map(|(line, text)| Edit::Insert { line, text }),
        3 => (any::<usize>(), number).prop_map(|(nth, with)| Edit::Number { nth, with }),
        1 => any::<usize>().prop_map(|at| Edit::Truncate { at }),
    ]
}

/// One of `seeds`, changed by 1 to 8 edits.
pub fn mutated(seeds: Vec<String>) -> impl Strategy<Value = String> {
    assert!(!seeds.is_empty(), "mutations need at least one seed");
    let seed = proptest::sample::select(seeds);
    (seed, proptest::collection::vec(edit(), 1..8))
        .prop_map(|(seed, edits)| edits.iter().fold(seed, |text, e| apply(&text, e)))
}

/// `text` with `edit` applied.
pub fn apply(text: &str, edit: &Edit) -> String {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    let pick = |i: usize, n: usize| if n == 0 { 0 } else { i % n };
    match edit {
        Edit::Flip { at, bit } => {
            let mut bytes = text.as_bytes().to_vec();
            if !bytes.is_empty() {
                let i = pick(*at, bytes.len());
                bytes[i] ^= 1 << bit;
            }
            return String::from_utf8_lossy(&bytes).into_owned();
        }
        Edit::Delete { line } if !lines.is_empty() => {
            lines.remove(pick(*line, lines.len()));
        }
        Edit::Duplicate { line, times } if !lines.is_empty() => {
            let i = pick(*line, lines.len());
            let copy = with_newline(&lines[i]);
            lines[i] = copy.clone();
            lines.splice(i..i, std::iter::repeat_n(copy, *times));
        }
        Edit::Insert { line, text } => {
            let i = pick(*line, lines.len() + 1);
            lines.insert(i, format!("{text}\n"));
        }
        Edit::Number { nth, with } => return replace_number(text, *nth, with),
        Edit::Truncate { at } => {
            let mut i = pick(*at, text.len() + 1);
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            return text[..i].to_string();
        }
        _ => {}
    }
    lines.concat()
}

fn with_newline(line: &str) -> String {
    match line.ends_with('\n') {
        true => line.to_string(),
        false => format!("{line}\n"),
    }
}

/// Replaces the `nth` (modulo their count) run of digits, with a `-` before it if any.
fn replace_number(text: &str, nth: usize, with: &str) -> String {
    let bytes = text.as_bytes();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = if i > 0 && bytes[i - 1] == b'-' {
                i - 1
            } else {
                i
            };
            let end = i + bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
            runs.push(start..end);
            i = end;
        } else {
            i += 1;
        }
    }
    if runs.is_empty() {
        return text.to_string();
    }
    let r = runs[nth % runs.len()].clone();
    format!("{}{with}{}", &text[..r.start], &text[r.end..])
}

/// Runs `f`, failing the case when it takes longer than [`CASE_BUDGET`].
pub fn bounded<R>(what: &str, f: impl FnOnce() -> R) -> R {
    let started = Instant::now();
    let out = f();
    let took = started.elapsed();
    assert!(
        took <= CASE_BUDGET,
        "{what} took {took:?} (budget {CASE_BUDGET:?})"
    );
    out
}

/// Fails when `output`, as JSON, is larger than 64 bytes per input byte plus 64 KiB: what a
/// parser keeps must grow with its input, not with numbers inside it.
pub fn assert_output_bounded<T: Serialize>(what: &str, output: &T, input_len: usize) {
    let size = serde_json::to_vec(output).map_or(0, |v| v.len());
    assert_size_bounded(what, size, input_len);
}

/// [`assert_output_bounded`] on the value of `result`, when it is one (errors are fine).
pub fn assert_ok_bounded<T: Serialize, E>(what: &str, result: Result<T, E>, input_len: usize) {
    if let Ok(output) = result {
        assert_output_bounded(what, &output, input_len);
    }
}

/// Fails when `size` (bytes of some output) is more than 64 per input byte plus 64 KiB.
pub fn assert_size_bounded(what: &str, size: usize, input_len: usize) {
    let limit = 64 * input_len + (64 << 10);
    assert!(
        size <= limit,
        "{what}: {size} bytes of output for {input_len} bytes of input"
    );
}

/// A file of the repository (a fixture), as text.
pub fn repo_file(path: &str) -> String {
    let full = repo_root().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_replaced_with_their_sign() {
        assert_eq!(replace_number("hw.ncpu: -24\n", 0, "7"), "hw.ncpu: 7\n");
        assert_eq!(replace_number("a 1 b 22", 1, "-1"), "a 1 b -1");
        assert_eq!(replace_number("none", 3, "1"), "none");
    }

    #[test]
    fn line_edits_keep_the_other_lines() {
        let text = "a\nb\nc";
        assert_eq!(apply(text, &Edit::Delete { line: 4 }), "a\nc");
        assert_eq!(
            apply(text, &Edit::Duplicate { line: 2, times: 2 }),
            "a\nb\nc\nc\nc\n"
        );
        let inserted = Edit::Insert {
            line: 0,
            text: "-1".into(),
        };
        assert_eq!(apply(text, &inserted), "-1\na\nb\nc");
        assert_eq!(apply("é", &Edit::Truncate { at: 1 }), "");
    }
}
