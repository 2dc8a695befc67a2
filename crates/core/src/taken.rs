//! Whether a write took: the one rule `apply` (its steps) and `tune` (each candidate's
//! read-backs, on either end) judge a read-back by.

use serde::{Deserialize, Serialize};

/// How a value read back after a write differs from the value written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Taken {
    /// Read back as something other than written and other than before: the driver rounded it.
    Adjusted,
    /// Read back unchanged from before the write: the host kept its value.
    NotTaken,
}

/// How a write of `written` over `before` came out, read back as `read`; `None` when it read
/// back as written. A write of the value already there that reads back so was taken.
pub fn taken<T: PartialEq + ?Sized>(before: &T, written: &T, read: &T) -> Option<Taken> {
    match (read == written, read == before) {
        (true, _) => None,
        (false, true) => Some(Taken::NotTaken),
        (false, false) => Some(Taken::Adjusted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_rounded_and_taken_writes() {
        assert_eq!(taken(&3, &48, &3), Some(Taken::NotTaken));
        assert_eq!(taken(&3, &45, &48), Some(Taken::Adjusted));
        assert_eq!(taken(&3, &48, &48), None);
        assert_eq!(taken(&48, &48, &48), None, "already there");
        assert_eq!(taken("0", "1", "0"), Some(Taken::NotTaken));
        assert!(
            Taken::NotTaken > Taken::Adjusted,
            "the worse outcome orders last"
        );
    }
}
