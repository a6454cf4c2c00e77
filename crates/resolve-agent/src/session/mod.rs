//! [`AgentSession`]: one conversation with a model — its provider client, the [`ToolSet`] it
//! offers, `resolve` state and transcript — and what a finished run reports ([`RunSummary`]).
//!
//! Owned here: the session's state and its accessors. The submodules own the rest of the
//! session: `builder` sets one up ([`AgentSessionBuilder`]), `turn_loop` runs it
//! ([`AgentSession::run`]), `tool_set` holds the offered tools. Not owned: plan mode (`plan`,
//! which the session calls into and which never reaches back), the wire formats (`provider`)
//! and the `resolve` state machine (`resolve-core`).

mod builder;
pub(crate) mod tool_set;
mod turn_loop;

use std::fmt;
use std::sync::Arc;

use resolve_core::{ResolveSession, ToolChoice, ToolSpec};

pub use builder::AgentSessionBuilder;
use tool_set::ToolSet;

use crate::message::Message;
use crate::plan::PlanRuntime;
use crate::provider::{Provider, ProviderConfig};
use crate::reviewer_notes::ReviewerNotes;
use crate::usage::Usage;

/// What a finished run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    /// The model's text in its last response.
    pub final_text: String,
    /// How many model calls the run made.
    pub model_calls: u32,
    /// How many tool calls were executed (including `resolve`).
    pub executed_calls: u32,
    /// How many tool calls were skipped because a preview was pending.
    pub skipped_calls: u32,
    /// How many pending actions are left after the run.
    pub pending_actions: usize,
    /// Model calls and tokens of the run, forced calls also apart (the same figures as the
    /// run's last event, [`AgentEvent::Usage`](crate::AgentEvent::Usage)).
    pub usage: Usage,
}

/// A conversation with a model: provider, tools, `resolve` state and transcript.
///
/// Each [`AgentSession::run`] appends a task to the transcript and runs the agent loop until
/// the model answers without calling tools. Pending actions persist across runs.
pub struct AgentSession {
    provider: Provider,
    /// The tools offered now (plan mode's while it lasts).
    tools: ToolSet,
    resolve: Arc<ResolveSession>,
    system_prompt: String,
    transcript: Vec<Message>,
    max_turns: Option<u32>,
    tool_choice: Option<ToolChoice>,
    /// Plan mode while it lasts (see `plan`).
    plan: Option<PlanRuntime>,
    /// The approved plan's path, once plan mode ended with approval.
    approved_plan: Option<String>,
    /// Where notes about what a person did to the model's actions come from.
    reviewer_notes: Option<Arc<dyn ReviewerNotes>>,
}

impl fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentSession")
            .field("provider", &self.provider)
            .field("tools", &self.tools.names())
            .field("messages", &self.transcript.len())
            .field("max_turns", &self.max_turns)
            .finish_non_exhaustive()
    }
}

impl AgentSession {
    /// The session's `resolve` state: tools stage previews here, and a person can resolve them.
    pub fn resolve_session(&self) -> &Arc<ResolveSession> {
        &self.resolve
    }

    /// Everything said so far, oldest first.
    pub fn transcript(&self) -> &[Message] {
        &self.transcript
    }

    /// The tool specs sent to the model in every request (`resolve` last, when offered).
    pub fn tool_specs(&self) -> &[ToolSpec] {
        self.tools.specs()
    }

    /// The provider configuration.
    pub fn provider_config(&self) -> &ProviderConfig {
        self.provider.config()
    }

    /// Whether the session is in plan mode (no plan approved yet).
    pub fn in_plan_mode(&self) -> bool {
        self.plan.is_some()
    }

    /// The approved plan's path relative to the root, once plan mode has ended with approval.
    pub fn approved_plan(&self) -> Option<&str> {
        self.approved_plan.as_deref()
    }
}
