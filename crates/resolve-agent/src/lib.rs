//! The agent side of `resolve`: sessions, the agent loop and thin model clients.
//!
//! An [`AgentSession`] owns a provider client (OpenAI Chat Completions-compatible or Anthropic
//! Messages), a registry of [`Tool`]s, the session's [`ResolveSession`](resolve_core::ResolveSession)
//! and the transcript. [`AgentSession::run`] drives the loop: a tool stages a preview with
//! [`ToolContext::queue_resolve_handler`] (a custom tool with
//! [`ToolContext::push_pending_action`]), the loop reminds the model once, and nothing lands
//! until the model calls the hidden `resolve` tool. A model that does anything else meanwhile
//! has its calls skipped and `resolve` forced for one call; the fourth decline ends the run.
//!
//! Owned here: the wire formats (streaming and not), retries, the forced-choice and streaming
//! fallbacks, the loop, plan mode ([`PlanMode`]), the [`AgentEvent`]s it reports, and custom
//! tools, both in-process ([`CustomPendingAction`]) and from MCP servers ([`mcp`]). Not owned:
//! the queue, pending stack, `resolve` dispatch and soft-requirement state machine
//! (`resolve-core`), file
//! producers and the durable store (`resolve-edit`), and the `resolve agent` command
//! (`resolve-cli`).
//!
//! Inside, the modules depend one way. The session (`session`: its state, builder, turn loop
//! and tool set) is on top and calls into plan mode (`plan`) and the model clients
//! (`provider`); plan mode gets what it may change handed in (the session's tool set, its
//! `resolve` state, the transcript, an event sink) and never reaches the session. Below them
//! are the shared pieces: `tool`, `event`, `message`, `usage`, `error` and `secret`. In `mcp`, the hub
//! uses the tools it makes, never the other way round.
//!
//! # Example
//!
//! ```no_run
//! use std::sync::Arc;
//! use resolve_agent::{AgentEvent, AgentSession, ProviderConfig, ProviderKind};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn demo() -> Result<(), resolve_agent::AgentError> {
//! resolve_agent::init();
//! let config = ProviderConfig::new(ProviderKind::OpenAi, "http://127.0.0.1:8080/v1", "local");
//! let mut session = AgentSession::new(config, Vec::new(), "You are a careful coding agent.")?;
//! let mut sink = |event: AgentEvent| {
//!     if let AgentEvent::TextDelta { text } = event {
//!         let _ = text; // print it
//!     }
//! };
//! let summary = session.run("Say hello.", &mut sink, &CancellationToken::new()).await?;
//! assert!(summary.model_calls >= 1);
//! # Ok(())
//! # }
//! ```

// Unit tests set up and inspect files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]
#![deny(missing_docs, clippy::print_stdout, clippy::print_stderr)]

mod error;
mod event;
mod file_tools;
pub mod mcp;
mod message;
mod plan;
pub mod provider;
mod reviewer_notes;
mod secret;
mod session;
mod usage;

pub use error::{AgentError, ResponseLimit};
pub use event::{AgentEvent, EventSink};
pub use file_tools::file_tools;
pub use message::{Message, ToolCall};
pub use plan::{
    PLAN_APPROVAL_LABEL, PLAN_APPROVAL_TOOL, PLAN_DIR, PLAN_MODE_DECISION, PLAN_MODE_PROMPT,
    PLAN_MODE_REMINDER, PLAN_MODE_REMINDER_MAX, PlanMode, PlanTitleError, normalize_plan_title,
    resolve_plan_title,
};
pub use provider::{ForcedChoiceSupport, ProviderConfig, ProviderKind, ReasoningEffort};
pub use resolve_core::{
    CUSTOM_TOOL_SOURCE, CustomPendingAction, Tool, ToolContext, ToolError, ToolFuture, ToolKind,
};
pub use reviewer_notes::{ReviewerNotes, StoreReviewerNotes};
pub use secret::{ANTHROPIC_API_KEY_ENV, ApiKey, OPENAI_API_KEY_ENV};
pub use session::{AgentSession, AgentSessionBuilder, RunSummary};
pub use usage::{CallUsage, TokenUsage, Usage};

/// Process-wide set-up: installs rustls' `ring` crypto provider (rustls
/// ships none by default, and without one the HTTP client panics). Idempotent; sessions call it too, and so should tests.
pub fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // An error means another provider is already installed, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
