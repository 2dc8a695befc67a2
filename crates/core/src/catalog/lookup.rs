//! Finding an entry by canonical key or alias, with suggestions for typos and candidates for
//! ambiguous aliases.

use super::model::Entry;
use std::collections::HashMap;

/// A name that does not pick exactly one entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// Nothing has this name.
    #[error("unknown setting {name:?}")]
    Unknown {
        /// The name as typed.
        name: String,
        /// Nearest canonical keys by edit distance, best first.
        suggestions: Vec<String>,
    },
    /// Several entries share this alias.
    #[error("{name:?} is ambiguous: it names {}", candidates.join(", "))]
    Ambiguous {
        /// The name as typed.
        name: String,
        /// Canonical keys it could mean.
        candidates: Vec<String>,
    },
    /// The entry belongs to another driver than the one given.
    #[error("{key} is a parameter of the {owner} driver, not {driver}")]
    WrongDriver {
        /// Canonical key.
        key: String,
        /// Driver that owns the entry.
        owner: String,
        /// Driver given.
        driver: String,
    },
}

/// Name index over the entries: lower-cased keys and aliases → entry positions.
#[derive(Debug, Default)]
pub(super) struct NameIndex {
    names: HashMap<String, Vec<usize>>,
}

impl NameIndex {
    pub(super) fn build(entries: &[Entry]) -> NameIndex {
        let mut names: HashMap<String, Vec<usize>> = HashMap::new();
        for (position, entry) in entries.iter().enumerate() {
            let aliases = entry.aliases.iter().map(|a| a.name.as_str());
            for name in std::iter::once(entry.key.as_str()).chain(aliases) {
                let slot = names.entry(name.to_ascii_lowercase()).or_default();
                if !slot.contains(&position) {
                    slot.push(position);
                }
            }
        }
        NameIndex { names }
    }

    /// Positions of every entry `name` may mean (case-insensitive; a number in a dotted
    /// segment also matches the `N` placeholder, as in `dev.igb.0.rx_processing_limit`).
    pub(super) fn positions(&self, name: &str) -> &[usize] {
        let lower = name.trim().to_ascii_lowercase();
        if let Some(found) = self.names.get(&lower) {
            return found;
        }
        self.names
            .get(&numbered_segments_as_n(&lower))
            .map_or(&[], Vec::as_slice)
    }

    /// Canonical keys whose names are closest to `name`, best first.
    pub(super) fn suggest(&self, name: &str, entries: &[Entry], limit: usize) -> Vec<String> {
        let lower = name.trim().to_ascii_lowercase();
        let length = lower.chars().count();
        let budget = (length / 3).max(1);
        let mut scored: Vec<(usize, &str)> = Vec::new();
        for (known, positions) in &self.names {
            let distance = if lower.len() >= 4 && known.contains(&lower) {
                1
            } else if length.abs_diff(known.chars().count()) > budget {
                // The distance is at least the difference in length: skip the quadratic
                // comparison (a 20,000-character name once took seconds per lookup).
                continue;
            } else {
                edit_distance(&lower, known)
            };
            if distance <= budget {
                scored.extend(
                    positions
                        .iter()
                        .map(|&p| (distance, entries[p].key.as_str())),
                );
            }
        }
        scored.sort();
        let mut keys: Vec<String> = Vec::new();
        for (_, key) in scored {
            if !keys.iter().any(|k| k == key) && keys.len() < limit {
                keys.push(key.to_string());
            }
        }
        keys
    }
}

/// `dev.igb.0.rx_processing_limit` → `dev.igb.n.rx_processing_limit`.
fn numbered_segments_as_n(name: &str) -> String {
    let segments: Vec<&str> = name
        .split('.')
        .map(|s| {
            if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
                "n"
            } else {
                s
            }
        })
        .collect();
    segments.join(".")
}

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_unknown_name_gets_no_suggestions_quickly() {
        let started = std::time::Instant::now();
        let name = format!("irq.affinity@{}", "9".repeat(20_000));
        assert!(crate::catalog::catalog().suggest(&name).is_empty());
        assert!(
            started.elapsed() < std::time::Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn edit_distance_known_values() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("rx-usecs", "rx-usecs"), 0);
        assert_eq!(edit_distance("rx-usec", "rx-usecs"), 1);
    }

    #[test]
    fn numbered_segments_become_the_placeholder() {
        assert_eq!(
            numbered_segments_as_n("dev.igb.12.rx_processing_limit"),
            "dev.igb.n.rx_processing_limit"
        );
        assert_eq!(numbered_segments_as_n("rx-usecs"), "rx-usecs");
    }
}
