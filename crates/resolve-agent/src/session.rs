//! [`AgentSession`]: one conversation with a model — its provider client, tool registry,
//! `resolve` state and transcript — and [`AgentSessionBuilder`] to set one up.
//!
//! The run loop itself ([`AgentSession::run`]) lives in `agent_loop`.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use resolve_core::{
    RESOLVE_TOOL_NAME, ResolveSession, ToolChoice, ToolSpec, needs_resolve_tool, resolve_tool_spec,
};

use crate::plan_mode::PlanRuntime;
use crate::provider::Provider;
use crate::{AgentError, Message, PlanMode, ProviderConfig, Tool};

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
}

/// A conversation with a model: provider, tools, `resolve` state and transcript.
///
/// Each [`AgentSession::run`] appends a task to the transcript and runs the agent loop until
/// the model answers without calling tools. Pending actions persist across runs.
pub struct AgentSession {
    pub(crate) provider: Provider,
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    /// Model-facing specs: the registered tools, then `resolve` when it is offered.
    pub(crate) specs: Vec<ToolSpec>,
    pub(crate) offers_resolve: bool,
    pub(crate) resolve: Arc<ResolveSession>,
    pub(crate) system_prompt: String,
    pub(crate) transcript: Vec<Message>,
    pub(crate) max_turns: Option<u32>,
    pub(crate) tool_choice: Option<ToolChoice>,
    /// Plan mode while it lasts (see `plan_mode`).
    pub(crate) plan: Option<PlanRuntime>,
    /// The approved plan's path, once plan mode ended with approval.
    pub(crate) approved_plan: Option<String>,
}

impl fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentSession")
            .field("provider", &self.provider)
            .field(
                "tools",
                &self
                    .specs
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("messages", &self.transcript.len())
            .field("max_turns", &self.max_turns)
            .finish_non_exhaustive()
    }
}

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
        &self.specs
    }

    /// The provider configuration.
    pub fn provider_config(&self) -> &ProviderConfig {
        self.provider.config()
    }
}

/// Sets up an [`AgentSession`].
pub struct AgentSessionBuilder {
    config: ProviderConfig,
    tools: Vec<Arc<dyn Tool>>,
    system_prompt: String,
    resolve: Option<Arc<ResolveSession>>,
    max_turns: Option<u32>,
    offer_resolve: bool,
    tool_choice: Option<ToolChoice>,
    plan: Option<PlanMode>,
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
            system_prompt: String::new(),
            resolve: None,
            max_turns: None,
            offer_resolve: false,
            tool_choice: None,
            plan: None,
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

    /// Build the session: check tool names, create the HTTP client.
    pub fn build(&self) -> Result<AgentSession, AgentError> {
        let (specs, offers_resolve) = offered_specs(&self.tools, self.offer_resolve)?;
        let mut session = AgentSession {
            provider: Provider::new(self.config.clone())?,
            tools: self.tools.clone(),
            specs,
            offers_resolve,
            resolve: self
                .resolve
                .clone()
                .unwrap_or_else(|| Arc::new(ResolveSession::new())),
            system_prompt: self.system_prompt.clone(),
            transcript: Vec::new(),
            max_turns: self.max_turns,
            tool_choice: self.tool_choice.clone(),
            plan: None,
            approved_plan: None,
        };
        if let Some(plan) = &self.plan {
            session.enter_plan_mode(plan)?;
        }
        Ok(session)
    }
}

/// The specs sent to the model for `tools`, with `resolve` last when it is offered (some tool
/// is deferrable, or `offer_resolve`); whether it is. Names must be unique and not `resolve`.
pub(crate) fn offered_specs(
    tools: &[Arc<dyn Tool>],
    offer_resolve: bool,
) -> Result<(Vec<ToolSpec>, bool), AgentError> {
    let mut specs: Vec<ToolSpec> = tools.iter().map(|tool| tool.spec()).collect();
    let mut seen = HashSet::new();
    for spec in &specs {
        if spec.name == RESOLVE_TOOL_NAME || !seen.insert(spec.name.clone()) {
            return Err(AgentError::DuplicateTool {
                name: spec.name.clone(),
            });
        }
    }
    let offers_resolve = needs_resolve_tool(&specs, offer_resolve);
    if offers_resolve {
        specs.push(resolve_tool_spec().clone());
    }
    Ok((specs, offers_resolve))
}
