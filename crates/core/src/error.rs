//! Errors that carry a hint for the user.
//!
//! Library errors are typed enums in each crate. When an error has a useful next step for the
//! person at the terminal, wrap it in [`Hinted`]; the binary walks the cause chain, prints
//! every cause, and ends with the first hint it finds.

use std::error::Error as StdError;
use std::fmt;

/// An error with a hint: what to do next.
#[derive(Debug)]
pub struct Hinted {
    source: Box<dyn StdError + Send + Sync + 'static>,
    hint: String,
}

impl Hinted {
    /// Attaches `hint` to `source`.
    pub fn new(
        source: impl Into<Box<dyn StdError + Send + Sync + 'static>>,
        hint: impl Into<String>,
    ) -> Self {
        Hinted {
            source: source.into(),
            hint: hint.into(),
        }
    }

    /// The hint text.
    pub fn hint(&self) -> &str {
        &self.hint
    }
}

impl fmt::Display for Hinted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Show the wrapped error's message; the chain continues through `source()`.
        fmt::Display::fmt(&self.source, f)
    }
}

impl StdError for Hinted {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.source()
    }
}

/// A value the user typed that is not allowed: names the value, what is allowed and a hint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {value:?} is not allowed; allowed: {allowed}")]
pub struct InvalidInput {
    /// What was being read, e.g. `setting coalesce.rx-usecs` or `--duration`.
    pub what: String,
    /// The value as typed.
    pub value: String,
    /// What is allowed, e.g. `an integer from 0 to 8191 (µs)`.
    pub allowed: String,
}

impl InvalidInput {
    /// `what` was given as `value`, which is not allowed; `allowed` says what is.
    pub fn new(what: impl Into<String>, value: impl ToString, allowed: impl Into<String>) -> Self {
        InvalidInput {
            what: what.into(),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }
}

/// An error with its causes, `a: b: c` (what anyhow's `{:#}` prints), for libraries that
/// hand a failure on as text.
pub fn chain(e: &(dyn StdError + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hinted_displays_the_wrapped_message_and_keeps_the_hint() {
        let inner = InvalidInput {
            what: "--duration".into(),
            value: "-3".into(),
            allowed: "a positive number of seconds".into(),
        };
        let h = Hinted::new(inner, "try --duration 10");
        assert_eq!(
            h.to_string(),
            "--duration: \"-3\" is not allowed; allowed: a positive number of seconds"
        );
        assert_eq!(h.hint(), "try --duration 10");
    }
}
