//! Scenario errors: each names what was wrong, the value, and what is allowed.

/// A scenario that cannot be run as written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    /// A key no scenario knows.
    #[error("unknown scenario key `{key}`{}", suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    UnknownKey {
        /// The key as given.
        key: String,
        /// A known key that looks close.
        suggestion: Option<String>,
    },
    /// A value of the wrong type or outside its range.
    #[error("scenario key `{key}`: {value} is {problem}; allowed: {allowed}")]
    BadValue {
        /// The key.
        key: String,
        /// The value as given.
        value: String,
        /// `wrong type`, `out of range`, `not a choice`, ...
        problem: &'static str,
        /// What the key accepts.
        allowed: String,
    },
    /// The TOML text does not parse.
    #[error("scenario `{name}` is not valid TOML: {message}")]
    Toml {
        /// Scenario name or file.
        name: String,
        /// The parser's message.
        message: String,
    },
    /// No such built-in scenario.
    #[error("no built-in scenario named `{0}`")]
    NotFound(String),
    /// A `--set`/`--sweep` argument without `=`.
    #[error("`{0}` is not an assignment; expected KEY=VALUE")]
    Assignment(String),
    /// The model read a key its catalog does not define, or as another kind than the catalog
    /// gives it (a bug in the simulator, never in the input: reads are typed so that a
    /// misspelled key cannot silently read as 0).
    #[error("internal error: the model reads scenario key `{key}` as {wanted}, which its key catalog does not define as such; please report this")]
    Unread {
        /// The key the code asked for.
        key: String,
        /// `an integer`, `a number`, `text`.
        wanted: &'static str,
    },
    /// Values that are fine alone but not together.
    #[error("scenario keys do not fit together: {0}")]
    Inconsistent(String),
}
