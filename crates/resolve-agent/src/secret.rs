//! [`ApiKey`]: an API key that never shows up in logs, debug output or error messages.
//!
//! Owned here: holding the key and the environment variable names. Not owned: sending it (the
//! provider clients).

use std::fmt;

/// Environment variable conventionally holding an OpenAI(-compatible) API key.
pub const OPENAI_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// Environment variable conventionally holding an Anthropic API key.
pub const ANTHROPIC_API_KEY_ENV: &str = "ANTHROPIC_API_KEY";

/// An API key. `Debug` and `Display` print `****`; only [`ApiKey::expose`] gives the value.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wrap a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// Read a key from the environment variable `var`; `None` when unset or empty.
    pub fn from_env(var: &str) -> Option<Self> {
        std::env::var(var)
            .ok()
            .filter(|key| !key.trim().is_empty())
            .map(Self)
    }

    /// The key itself, for building a request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(****)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("****")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_key_debug_and_display_hide_the_value() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{key}"), "****");
        assert_eq!(format!("{key:?}"), "ApiKey(****)");
        assert_eq!(key.expose(), "sk-secret-123");
    }
}
