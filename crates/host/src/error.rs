//! The error every parser in this crate returns: which input, which line, what was wrong.

/// A text input that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parsing {input}: line {line}: {problem}")]
pub struct ParseError {
    /// What was being parsed, e.g. `/proc/interrupts` or `netstat -m`.
    pub input: &'static str,
    /// 1-based line number (0 when the problem is the input as a whole).
    pub line: usize,
    /// What was wrong, naming the offending text.
    pub problem: String,
}

impl ParseError {
    /// A problem on line `line` (1-based) of `input`.
    pub fn new(input: &'static str, line: usize, problem: impl Into<String>) -> Self {
        ParseError {
            input,
            line,
            problem: problem.into(),
        }
    }
}

/// Parses one unsigned decimal field, naming it in the error.
pub(crate) fn dec(
    input: &'static str,
    line: usize,
    field: &str,
    text: &str,
) -> Result<u64, ParseError> {
    text.parse().map_err(|_| {
        ParseError::new(
            input,
            line,
            format!("{field}: {text:?} is not an unsigned integer"),
        )
    })
}
