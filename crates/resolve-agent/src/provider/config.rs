//! [`ProviderConfig`]: where and how to reach the model — the wire format
//! ([`ProviderKind`]), the server's forced-choice support ([`ForcedChoiceSupport`]), limits,
//! retries and reasoning settings (Anthropic thinking, OpenAI-compatible [`ReasoningEffort`]).
//!
//! Owned here: the settings, their defaults and the endpoint URL. Not owned: what the settings
//! do on the wire (`openai`, `anthropic`) and in the transport (`http`, the parent module).

use std::time::Duration;

use crate::ApiKey;

/// Which wire format a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// OpenAI Chat Completions and compatible servers (llama.cpp, vLLM, Ollama, …).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

impl ProviderKind {
    /// The official base URL (OpenAI's includes `/v1`, Anthropic's does not).
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The environment variable that conventionally holds the API key.
    pub fn api_key_env(self) -> &'static str {
        match self {
            Self::OpenAi => crate::secret::OPENAI_API_KEY_ENV,
            Self::Anthropic => crate::secret::ANTHROPIC_API_KEY_ENV,
        }
    }
}

/// How far a server supports forcing a tool choice; also the fallback ladder's rungs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ForcedChoiceSupport {
    /// No forcing: a declined preview gets the reminder only.
    Off,
    /// Only "call some tool" (`"required"` / `{"type":"any"}`).
    AnyTool,
    /// Naming the tool (`{"type":"function",…}` / `{"type":"tool",…}`).
    Named,
}

impl ForcedChoiceSupport {
    pub(super) fn describe(self) -> &'static str {
        match self {
            Self::Off => "no tool_choice (reminder only)",
            Self::AnyTool => "a `required`/`any` tool_choice",
            Self::Named => "a named tool_choice",
        }
    }
}

/// How hard an OpenAI-compatible reasoning model thinks (`reasoning_effort` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReasoningEffort {
    /// `"low"`.
    Low,
    /// `"medium"`.
    Medium,
    /// `"high"`.
    High,
}

impl ReasoningEffort {
    /// The wire value: `low`, `medium` or `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// Where and how to reach the model.
///
/// Fields are public; build one with [`ProviderConfig::new`] and adjust what you need.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProviderConfig {
    /// The wire format.
    pub kind: ProviderKind,
    /// Base URL as the official SDKs take it: OpenAI-compatible bases include the version
    /// segment (`http://127.0.0.1:8080/v1` → `<base>/chat/completions`); Anthropic bases do not
    /// (`https://api.anthropic.com` → `<base>/v1/messages`).
    pub base_url: String,
    /// Model name sent with every request.
    pub model: String,
    /// API key. By default, none (local servers need none).
    pub api_key: Option<ApiKey>,
    /// Stream responses (SSE). By default, true.
    pub stream: bool,
    /// How far the server supports forced tool choices. By default, [`ForcedChoiceSupport::Named`];
    /// a server that rejects a forced choice lowers it for the rest of the run anyway.
    pub forced_tool_choice: ForcedChoiceSupport,
    /// Output token limit. By default, none for OpenAI-compatible servers and 8192 for
    /// Anthropic (which requires one).
    pub max_tokens: Option<u32>,
    /// Sampling temperature. By default, the server's.
    pub temperature: Option<f64>,
    /// Timeout of one HTTP request, response body included. By default, 10 minutes.
    pub request_timeout: Duration,
    /// Retries after a 429, a 5xx or a connection error. By default, 3.
    pub max_retries: u32,
    /// First retry delay; it doubles per retry. By default, 500 ms.
    pub retry_base_delay: Duration,
    /// Cap on one retry delay (also on a server's `retry-after`). By default, 20 s.
    pub retry_max_delay: Duration,
    /// Anthropic extended thinking budget (see [`ProviderConfig::thinking_budget()`]). By default,
    /// none: thinking is off.
    pub thinking_budget: Option<u32>,
    /// OpenAI-compatible `reasoning_effort` (see [`ProviderConfig::reasoning_effort()`]). By
    /// default, none: the key is not sent.
    pub reasoning_effort: Option<ReasoningEffort>,
}

impl ProviderConfig {
    /// A configuration for `model` at `base_url`, with the defaults documented on each field.
    pub fn new(kind: ProviderKind, base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            kind,
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            stream: true,
            forced_tool_choice: ForcedChoiceSupport::Named,
            max_tokens: None,
            temperature: None,
            request_timeout: Duration::from_secs(600),
            max_retries: 3,
            retry_base_delay: Duration::from_millis(500),
            retry_max_delay: Duration::from_secs(20),
            thinking_budget: None,
            reasoning_effort: None,
        }
    }

    /// Enable Anthropic extended thinking with a budget of `tokens`: requests carry
    /// `"thinking": {"type": "enabled", "budget_tokens": tokens}`, and the `thinking` and
    /// `redacted_thinking` blocks of each response are kept verbatim (signature included) in the
    /// transcript and sent back in later requests. The API forces no tool while thinking, so a
    /// forced `resolve` falls back to the reminder alone. Without a configured `max_tokens`,
    /// the output limit becomes the budget plus 8192. OpenAI-compatible servers ignore it. By
    /// default, thinking is off and no `thinking` key is sent.
    pub fn thinking_budget(&mut self, tokens: Option<u32>) -> &mut Self {
        self.thinking_budget = tokens;
        self
    }

    /// Send `reasoning_effort` to an OpenAI-compatible server (reasoning models). Anthropic
    /// ignores it. By default, none is sent.
    pub fn reasoning_effort(&mut self, effort: Option<ReasoningEffort>) -> &mut Self {
        self.reasoning_effort = effort;
        self
    }

    /// The Anthropic thinking budget in effect (`None` for OpenAI-compatible servers).
    pub(super) fn anthropic_thinking(&self) -> Option<u32> {
        match self.kind {
            ProviderKind::Anthropic => self.thinking_budget,
            ProviderKind::OpenAi => None,
        }
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        match self.kind {
            ProviderKind::OpenAi => format!("{base}/chat/completions"),
            // Be liberal: a base that already ends in `/v1` is not given a second one.
            ProviderKind::Anthropic => {
                format!("{}/v1/messages", base.strip_suffix("/v1").unwrap_or(base))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_follow_the_official_sdks() {
        let openai = ProviderConfig::new(ProviderKind::OpenAi, "http://127.0.0.1:8080/v1/", "m");
        assert_eq!(
            openai.endpoint(),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        let anthropic =
            ProviderConfig::new(ProviderKind::Anthropic, "https://api.anthropic.com", "m");
        assert_eq!(
            anthropic.endpoint(),
            "https://api.anthropic.com/v1/messages"
        );
        let doubled = ProviderConfig::new(ProviderKind::Anthropic, "http://h/v1", "m");
        assert_eq!(doubled.endpoint(), "http://h/v1/messages");
    }
}
