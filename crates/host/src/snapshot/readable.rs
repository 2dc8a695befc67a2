//! A value that may not have been readable, and why — `show` prints the reason instead of
//! pretending a missing value is zero.

use serde::{Deserialize, Serialize};

/// A value read from the host, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Readable<T> {
    /// Read successfully.
    Value(T),
    /// The driver or kernel does not offer it (EOPNOTSUPP, missing file on this kernel).
    Unsupported(String),
    /// It exists but could not be read (permissions, I/O error, malformed content).
    Unreadable(String),
}

impl<T> Readable<T> {
    /// The value, if read.
    pub fn value(&self) -> Option<&T> {
        match self {
            Readable::Value(v) => Some(v),
            _ => None,
        }
    }

    /// A borrowed view, for mapping without cloning the value.
    pub fn as_ref(&self) -> Readable<&T> {
        match self {
            Readable::Value(v) => Readable::Value(v),
            Readable::Unsupported(r) => Readable::Unsupported(r.clone()),
            Readable::Unreadable(r) => Readable::Unreadable(r.clone()),
        }
    }

    /// Transforms the value, keeping the reason otherwise.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Readable<U> {
        match self {
            Readable::Value(v) => Readable::Value(f(v)),
            Readable::Unsupported(r) => Readable::Unsupported(r),
            Readable::Unreadable(r) => Readable::Unreadable(r),
        }
    }

    /// Chains a fallible step; its error becomes `Unreadable`.
    pub fn and_then<U, E: std::fmt::Display>(
        self,
        f: impl FnOnce(T) -> Result<U, E>,
    ) -> Readable<U> {
        match self {
            Readable::Value(v) => match f(v) {
                Ok(u) => Readable::Value(u),
                Err(e) => Readable::Unreadable(e.to_string()),
            },
            Readable::Unsupported(r) => Readable::Unsupported(r),
            Readable::Unreadable(r) => Readable::Unreadable(r),
        }
    }

    /// `n/a (reason)` or `? (reason)`; empty for a value.
    pub fn absent_text(&self) -> String {
        match self {
            Readable::Value(_) => String::new(),
            Readable::Unsupported(r) => format!("n/a ({r})"),
            Readable::Unreadable(r) => format!("? ({r})"),
        }
    }

    /// The reason there is no value.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Readable::Value(_) => None,
            Readable::Unsupported(r) | Readable::Unreadable(r) => Some(r),
        }
    }
}

impl<T: std::fmt::Display> Readable<T> {
    /// The value as text, or `n/a (reason)` / `? (reason)`.
    pub fn display(&self) -> String {
        match self {
            Readable::Value(v) => v.to_string(),
            _ => self.absent_text(),
        }
    }
}
