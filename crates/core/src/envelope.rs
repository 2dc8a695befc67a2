//! The versioned JSON envelope every `--json` document uses.
//!
//! Every command prints exactly one JSON document on stdout whose first key is
//! `"schema": "nictune.<command>/v<version>"`. The rest of the document is the command's
//! body, flattened beside it.

use serde::Serialize;

/// Schema name for `command` at `version`, e.g. `nictune.sim/v1`.
pub fn schema_name(command: &str, version: u32) -> String {
    format!("nictune.{command}/v{version}")
}

/// A JSON body wrapped with its schema name.
#[derive(Debug, Serialize)]
pub struct Envelope<'a, T: Serialize> {
    /// `nictune.<command>/v<version>`.
    pub schema: String,
    /// The command's document, flattened beside `schema`.
    #[serde(flatten)]
    pub body: &'a T,
}

impl<'a, T: Serialize> Envelope<'a, T> {
    /// Wraps `body` as version 1 of `command`'s schema.
    pub fn v1(command: &str, body: &'a T) -> Self {
        Envelope::versioned(command, 1, body)
    }

    /// Wraps `body` as `version` of `command`'s schema (for a schema changed incompatibly).
    pub fn versioned(command: &str, version: u32, body: &'a T) -> Self {
        Envelope {
            schema: schema_name(command, version),
            body,
        }
    }

    /// Renders the envelope as pretty JSON.
    pub fn to_json(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Body {
        answer: u32,
    }

    #[test]
    fn schema_comes_first_and_body_is_flattened() {
        let body = Body { answer: 42 };
        let json = Envelope::v1("explain", &body).to_json().unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["schema"], "nictune.explain/v1");
        assert_eq!(value["answer"], 42);
        assert!(json.trim_start().starts_with("{\n  \"schema\""));
    }
}
