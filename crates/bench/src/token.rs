//! The shared secret `serve` requires before it runs anything.

use nictune_core::error::InvalidInput;
use nictune_core::input;
use std::fmt;

/// Environment variable holding the token when no file is given.
pub const TOKEN_ENV: &str = "NICTUNE_TOKEN";
/// Shortest accepted token.
pub const MIN_LEN: usize = 16;

/// A token (its value is never printed).
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    /// Accepts `text` (surrounding whitespace and a final newline from a file are dropped)
    /// when it has at least [`MIN_LEN`] printable characters.
    pub fn parse(text: &str, source: &str) -> Result<Token, InvalidInput> {
        let t = text.trim();
        if t.len() >= MIN_LEN && t.chars().all(|c| c.is_ascii_graphic()) {
            return Ok(Token(t.to_string()));
        }
        Err(InvalidInput {
            what: format!("token from {source}"),
            value: format!("<{} characters>", t.len()),
            allowed: format!("at least {MIN_LEN} printable ASCII characters, no spaces"),
        })
    }

    /// Reads the token from `file`, or else from `$NICTUNE_TOKEN`.
    pub fn load(file: Option<&std::path::Path>) -> Result<Token, crate::BenchError> {
        let (text, source) = match file {
            Some(path) => {
                let text = input::read_file(path, input::TOKEN)
                    .map_err(|e| crate::BenchError::read("reading token file", e))?;
                (text, path.display().to_string())
            }
            None => {
                let text = std::env::var(TOKEN_ENV).map_err(|_| InvalidInput {
                    what: "token".into(),
                    value: "none given".into(),
                    allowed: format!("a token file (--token-file PATH) or ${TOKEN_ENV}"),
                })?;
                (text, format!("${TOKEN_ENV}"))
            }
        };
        Ok(Token::parse(&text, &source)?)
    }

    /// The token's text, for sending.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Compares in time that does not depend on where the first difference is.
    pub fn matches(&self, offered: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), offered.as_bytes());
        let mut diff = (a.len() != b.len()) as u8;
        for (i, x) in a.iter().enumerate() {
            diff |= x ^ b.get(i).copied().unwrap_or(0);
        }
        diff == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_or_spaced_tokens_are_refused_and_values_never_printed() {
        assert!(Token::parse("short", "x").is_err());
        assert!(Token::parse("has a space in it!!", "x").is_err());
        let t = Token::parse("  0123456789abcdef\n", "file").unwrap();
        assert_eq!(format!("{t:?}"), "Token(<redacted>)");
        assert!(t.matches("0123456789abcdef"));
        assert!(!t.matches("0123456789abcdeF"));
        assert!(!t.matches("0123456789abcdef0"));
        assert!(!t.matches(""));
    }
}
