//! [`AgentError`]: every way an agent run or a provider call can fail.
//!
//! Tool failures the model should read (unknown tool, bad arguments, a tool's own error) are
//! not errors here: they become error tool results and the run goes on. What remains ends a
//! run: provider failures, the soft-requirement cap, `--max-turns`, cancellation and fatal tool
//! errors.
//!
//! Owned here: the run-ending errors and their texts. Not owned: the texts of error tool
//! results (the tools and the turn loop write those) or MCP call errors (`mcp`).

use std::time::Duration;

/// A size bound on what a model server may send; breaking one ends the model call with
/// [`AgentError::ResponseTooLarge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseLimit {
    /// One line of a streamed (SSE) response: 8 MiB.
    SseLine,
    /// The data of one SSE event: 32 MiB.
    SseEvent,
    /// A whole streamed response: 256 MiB.
    Stream,
    /// A whole response that is not streamed: 64 MiB.
    Body,
}

impl ResponseLimit {
    /// The bound in bytes.
    pub const fn bytes(self) -> usize {
        match self {
            Self::SseLine => 8 << 20,
            Self::SseEvent => 32 << 20,
            Self::Stream => 256 << 20,
            Self::Body => 64 << 20,
        }
    }
}

impl std::fmt::Display for ResponseLimit {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mib = self.bytes() >> 20;
        match self {
            Self::SseLine => write!(formatter, "an SSE line longer than {mib} MiB"),
            Self::SseEvent => write!(formatter, "an SSE event with more than {mib} MiB of data"),
            Self::Stream => write!(formatter, "a streamed response longer than {mib} MiB"),
            Self::Body => write!(formatter, "a response body larger than {mib} MiB"),
        }
    }
}

/// Why an agent run (or building a session) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The HTTP client could not be built (TLS set-up, for example).
    #[error("Could not build the HTTP client.")]
    ClientBuild(#[source] reqwest::Error),
    /// Anthropic extended thinking needs an output limit above the thinking budget.
    #[error(
        "The thinking budget ({budget} tokens) must be below the output token limit `max_tokens` ({max_tokens}); raise `max_tokens` or lower the budget."
    )]
    ThinkingBudget {
        /// The configured thinking budget.
        budget: u32,
        /// The configured output token limit.
        max_tokens: u32,
    },
    /// The configured base URL is not an `http://` or `https://` URL.
    #[error(
        "The base URL `{url}` is not an http:// or https:// URL. Give the server's base, e.g. `http://127.0.0.1:8080/v1` (OpenAI-compatible) or `https://api.anthropic.com` (Anthropic)."
    )]
    InvalidBaseUrl {
        /// The URL as given.
        url: String,
    },
    /// The API key cannot be sent in an HTTP header.
    #[error(
        "The API key contains characters that cannot be sent in an HTTP header (a newline, for example)."
    )]
    InvalidApiKey,
    /// Two registered tools share a name, or a tool uses a reserved name (`resolve`, `check`).
    #[error(
        "Tool name `{name}` is used twice or is reserved; tool names must be unique, and `resolve` and `check` are provided by the session (give a check tool with `AgentSessionBuilder::check`)."
    )]
    DuplicateTool {
        /// The clashing name.
        name: String,
    },
    /// The server rejected the credentials (HTTP 401 or 403).
    #[error(
        "The server at `{url}` rejected the request for model `{model}` with HTTP {status}: {body}. Check the API key (`--api-key-env`)."
    )]
    Unauthorized {
        /// The request URL.
        url: String,
        /// The configured model.
        model: String,
        /// The HTTP status (401 or 403).
        status: u16,
        /// The start of the server's answer.
        body: String,
    },
    /// The server answered 404: wrong base URL or unknown model.
    #[error(
        "The server at `{url}` answered HTTP 404 for model `{model}`: {body}. Check `--base-url` (OpenAI-compatible bases include `/v1`, Anthropic bases do not) and `--model`."
    )]
    NotFound {
        /// The request URL.
        url: String,
        /// The configured model.
        model: String,
        /// The start of the server's answer.
        body: String,
    },
    /// The server answered with another error status (after retries, for 429 and 5xx).
    #[error("The server at `{url}` answered HTTP {status} for model `{model}`: {body}")]
    Status {
        /// The request URL.
        url: String,
        /// The configured model.
        model: String,
        /// The HTTP status.
        status: u16,
        /// The start of the server's answer.
        body: String,
    },
    /// The server could not be reached (after retries).
    #[error("Could not reach `{url}` after {attempts} attempts.")]
    Connection {
        /// The request URL.
        url: String,
        /// How many attempts were made.
        attempts: u32,
        /// The last transport error.
        #[source]
        source: reqwest::Error,
    },
    /// The request took longer than the configured timeout.
    #[error("The request to `{url}` timed out after {} s.", .after.as_secs_f64())]
    Timeout {
        /// The request URL.
        url: String,
        /// The configured request timeout.
        after: Duration,
    },
    /// The server's answer could not be understood.
    #[error("The server at `{url}` sent a response that could not be read: {message}")]
    BadResponse {
        /// The request URL.
        url: String,
        /// What was wrong with it.
        message: String,
    },
    /// The server's response broke one of the client's size bounds; it is dropped, not retried.
    #[error(
        "The model server at `{url}` sent {limit}; the response was dropped and not retried. Check that `--base-url` points at a working model server."
    )]
    ResponseTooLarge {
        /// The request URL.
        url: String,
        /// The bound it broke.
        limit: ResponseLimit,
    },
    /// The run reached its model-call limit.
    #[error("Stopped after {0} model calls (--max-turns).")]
    MaxTurns(u32),
    /// The core runtime ended the run (the soft-requirement escalation cap).
    #[error(transparent)]
    Core(#[from] resolve_core::Error),
    /// A tool failed in a way that must end the run.
    #[error("Tool `{tool}` failed: {message}")]
    ToolFatal {
        /// The tool that failed.
        tool: String,
        /// Its message.
        message: String,
    },
    /// Plan approval could not be had (for example, nobody could answer the prompt).
    #[error("Plan approval stopped the run: {reason}")]
    PlanApprovalStopped {
        /// The approver's reason.
        reason: String,
    },
    /// The run was cancelled.
    #[error("Cancelled.")]
    Cancelled,
}
