//! [`AgentSessionBuilder`]: sets up an [`AgentSession`] — tools, prompt, `resolve` state,
//! limits and plan mode — and the session's constructors built on it.
//!
//! Owned here: defaults and checks made once, when the session is built. Not owned: what plan
//! mode does on entry (`plan`, called from here) or anything that happens in a run.

use std::fmt;
use std::sync::Arc;

use resolve_core::{ResolveSession, ToolChoice};
use resolve_edit::{CheckTool, check_tool};

use super::AgentSession;
use super::tool_set::ToolSet;
use crate::error::AgentError;
use crate::plan::{PlanMode, PlanRuntime};
use crate::provider::{Provider, ProviderConfig};
use crate::reviewer_notes::ReviewerNotes;
use resolve_core::Tool;

impl AgentSession {
    /// A session talking to the model in `config`, with `tools` and `system_prompt`, and
    /// defaults for everything else (see [`AgentSessionBuilder`]).
    pub fn new(
        config: ProviderConfig,
        tools: Vec<Arc<dyn Tool>>,
        system_prompt: impl Into<String>,
    ) -> Result<Self, AgentError> {
        let mut builder = AgentSessionBuilder::new(config);
        builder.tools(tools).system_prompt(system_prompt);
        builder.build()
    }

    /// A builder for a session talking to the model in `config`.
    pub fn builder(config: ProviderConfig) -> AgentSessionBuilder {
        AgentSessionBuilder::new(config)
    }
}

/// Sets up an [`AgentSession`].
pub struct AgentSessionBuilder {
    config: ProviderConfig,
    tools: Vec<Arc<dyn Tool>>,
    check: Option<CheckTool>,
    system_prompt: String,
    resolve: Option<Arc<ResolveSession>>,
    max_turns: Option<u32>,
    offer_resolve: bool,
    tool_choice: Option<ToolChoice>,
    plan: Option<PlanMode>,
    reviewer_notes: Option<Arc<dyn ReviewerNotes>>,
}

impl fmt::Debug for AgentSessionBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentSessionBuilder")
            .field("config", &self.config)
            .field("tools", &self.tools.len())
            .field("max_turns", &self.max_turns)
            .field("offer_resolve", &self.offer_resolve)
            .finish_non_exhaustive()
    }
}

impl AgentSessionBuilder {
    /// A builder for a session talking to the model in `config`.
    pub fn new(config: ProviderConfig) -> Self {
        Self {
            config,
            tools: Vec::new(),
            check: None,
            system_prompt: String::new(),
            resolve: None,
            max_turns: None,
            offer_resolve: false,
            tool_choice: None,
            plan: None,
            reviewer_notes: None,
        }
    }

    /// Register a tool. By default, there are none.
    pub fn tool(&mut self, tool: Arc<dyn Tool>) -> &mut Self {
        self.tools.push(tool);
        self
    }

    /// Register several tools, in order. By default, there are none.
    pub fn tools(&mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> &mut Self {
        self.tools.extend(tools);
        self
    }

    /// Offer `check` (the project's configured check run against the pending preview), after
    /// the registered tools. While it is offered, a turn that calls it with a preview pending
    /// is no decline of the soft requirement: testing a preview is part of resolving it. The
    /// name `check` is reserved for it, as `resolve` is: a registered tool of that name is
    /// refused by [`build`](Self::build). By default, no check tool is offered.
    pub fn check(&mut self, check: CheckTool) -> &mut Self {
        self.check = Some(check);
        self
    }

    /// The system prompt. By default, none is sent.
    pub fn system_prompt(&mut self, prompt: impl Into<String>) -> &mut Self {
        self.system_prompt = prompt.into();
        self
    }

    /// Share a `resolve` state (for example one backed by the durable store). By default, the
    /// session makes a fresh in-memory [`ResolveSession`].
    pub fn resolve_session(&mut self, session: Arc<ResolveSession>) -> &mut Self {
        self.resolve = Some(session);
        self
    }

    /// Stop a run with `Stopped after N model calls (--max-turns).` once it has made `n` model
    /// calls. By default, there is no limit.
    pub fn max_turns(&mut self, n: Option<u32>) -> &mut Self {
        self.max_turns = n;
        self
    }

    /// Offer `resolve` even when no registered tool is deferrable (plan mode, a standing
    /// handler, or previews staged by another process). By default, `resolve` is offered only
    /// when a deferrable tool is registered.
    pub fn offer_resolve(&mut self, yes: bool) -> &mut Self {
        self.offer_resolve = yes;
        self
    }

    /// The static tool choice of every request (host directives and the one-turn escalation
    /// take precedence). By default, none is sent.
    pub fn tool_choice(&mut self, choice: Option<ToolChoice>) -> &mut Self {
        self.tool_choice = choice;
        self
    }

    /// Start the session in plan mode (see [`PlanMode`]): until a plan is approved the model
    /// has only the plan mode's tools, a `write` for plan files and `resolve`, and
    /// [`PLAN_MODE_PROMPT`](crate::PLAN_MODE_PROMPT) is appended to the system prompt; the
    /// tools registered here are offered once the plan is approved. By default, a session
    /// starts with all its tools.
    pub fn plan_mode(&mut self, plan: PlanMode) -> &mut Self {
        self.plan = Some(plan);
        self
    }

    /// Tell the model, before each request, what a person did to the actions it staged (see
    /// [`ReviewerNotes`]). By default, nothing is told.
    pub fn reviewer_notes(&mut self, notes: Arc<dyn ReviewerNotes>) -> &mut Self {
        self.reviewer_notes = Some(notes);
        self
    }

    /// Build the session: check tool names, create the HTTP client.
    pub fn build(&self) -> Result<AgentSession, AgentError> {
        let mut tools = ToolSet::new(
            self.tools.clone(),
            self.check.clone().map(check_tool),
            self.offer_resolve,
        )?;
        let provider = Provider::new(self.config.clone())?;
        let resolve = self
            .resolve
            .clone()
            .unwrap_or_else(|| Arc::new(ResolveSession::new()));
        let mut system_prompt = self.system_prompt.clone();
        let plan = match &self.plan {
            Some(plan) => Some(PlanRuntime::enter(
                plan,
                &mut tools,
                &resolve,
                &mut system_prompt,
            )?),
            None => None,
        };
        Ok(AgentSession {
            provider,
            tools,
            resolve,
            system_prompt,
            transcript: Vec::new(),
            max_turns: self.max_turns,
            tool_choice: self.tool_choice.clone(),
            plan,
            approved_plan: None,
            reviewer_notes: self.reviewer_notes.clone(),
        })
    }
}
