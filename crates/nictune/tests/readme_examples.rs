//! The README's export examples are what `nictune export` prints: each example profile
//! (`eth1.toml`, `em0.toml`, `e1000e.toml`) is written out, every "`nictune export P
//! --format F`:" line is run, and its output must equal the code block that follows it.
//! A change to an export format fails here until the README shows the new output.

mod common;

use common::{command, stdout};
use std::path::Path;

/// The README, from the workspace root.
fn readme() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    std::fs::read_to_string(root).unwrap()
}

/// The fenced code blocks after `from` (line index), as (first line index, text).
fn blocks_after<'a>(
    lines: &'a [&'a str],
    from: usize,
) -> impl Iterator<Item = (usize, String)> + 'a {
    let mut i = from;
    std::iter::from_fn(move || {
        while i < lines.len() && !lines[i].starts_with("```") {
            i += 1;
        }
        if i >= lines.len() {
            return None;
        }
        let start = i + 1;
        let end = (start..lines.len()).find(|&j| lines[j].starts_with("```"))?;
        i = end + 1;
        Some((start, lines[start..end].join("\n") + "\n"))
    })
}

#[test]
fn every_export_example_in_the_readme_is_what_export_prints() {
    let text = readme();
    let lines: Vec<&str> = text.lines().collect();
    let dir = tempfile::tempdir().unwrap();
    // The profiles: the TOML blocks after "`eth1.toml` (Linux):" and "`em0.toml` (FreeBSD)
    // and `e1000e.toml`".
    let linux = lines
        .iter()
        .position(|l| l.starts_with("`eth1.toml` (Linux):"))
        .expect("the eth1.toml example");
    let (_, eth1) = blocks_after(&lines, linux).next().unwrap();
    let freebsd = lines
        .iter()
        .position(|l| l.starts_with("`em0.toml` (FreeBSD)"))
        .expect("the em0.toml example");
    let mut two = blocks_after(&lines, freebsd);
    let (_, em0) = two.next().unwrap();
    let (_, e1000e) = two.next().unwrap();
    for (name, body) in [
        ("eth1.toml", eth1),
        ("em0.toml", em0),
        ("e1000e.toml", e1000e),
    ] {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let mut checked = 0;
    for (at, line) in lines.iter().enumerate() {
        let Some(cmd) = line
            .strip_prefix("`nictune export ")
            .and_then(|l| l.strip_suffix("`:"))
        else {
            continue;
        };
        let args: Vec<&str> = cmd.split_whitespace().collect();
        let out = command()
            .arg("export")
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README line {}: {cmd}: {out:?}",
            at + 1
        );
        let (start, shown) = blocks_after(&lines, at + 1).next().unwrap();
        assert_eq!(
            shown,
            stdout(&out),
            "README line {}: `nictune export {cmd}` prints something else than the block at line {}",
            at + 1,
            start + 1
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} examples found");
}
