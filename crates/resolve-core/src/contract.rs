//! The [`Tool`] trait every in-process tool implements, the [`ToolContext`] it runs with,
//! [`CustomPendingAction`] (what a custom tool stages with [`ToolContext::push_pending_action`]),
//! and [`ToolError`], which separates errors the model reads from errors that end the run.
//!
//! Owned here: the contract between a tool and whoever runs it (the agent's session, the MCP
//! server). Not owned: which tools are offered (the registry module's [`ToolRegistry`](crate::ToolRegistry)
//! and its users), running them, or any particular tool (`resolve-edit` implements the
//! built-in ones).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::{ActionError, Extra, PendingAction, ResolveSession, ToolResult, ToolSpec};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The future a tool's [`Tool::execute`] returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolResult, ToolError>> + Send + 'a>>;

/// How a tool call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The model should read this and may try again: it becomes an error tool result.
    #[error("{0}")]
    RespondToModel(String),
    /// Something is broken beyond the model's reach: the run ends with this message.
    #[error("{0}")]
    Fatal(String),
}

/// A tool the model can call.
///
/// ```
/// use resolve_core::{PendingAction, Tool, ToolContext, ToolFuture, ToolKind, ToolResult, ToolSpec};
/// use serde_json::{Value, json};
///
/// /// Stages a greeting; it is "written" only when the model resolves it with `apply`.
/// struct Greet;
///
/// impl Tool for Greet {
///     fn spec(&self) -> ToolSpec {
///         ToolSpec {
///             name: "greet".into(),
///             description: "Stage a greeting.".into(),
///             input_schema: json!({"type": "object", "properties": {"name": {"type": "string"}},
///                                  "required": ["name"], "additionalProperties": false}),
///             hidden: false,
///             strict: true,
///             kind: ToolKind::Producer,
///         }
///     }
///
///     fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
///         Box::pin(async move {
///             let name = args["name"].as_str().unwrap_or_default().to_owned();
///             let label = format!("Greet: {name}");
///             ctx.queue_resolve_handler(PendingAction::new(label, "greet", move |_reason, _extra| {
///                 let name = name.clone();
///                 async move { Ok(ToolResult::text(format!("Hello, {name}!"))) }
///             }))?;
///             Ok(ToolResult::text("Staged as a preview."))
///         })
///     }
/// }
/// ```
pub trait Tool: Send + Sync {
    /// Name, description, schema and flags. Must return the same spec every time.
    fn spec(&self) -> ToolSpec;

    /// Run the call. `args` already passed [`ToolSpec::validate`].
    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a>;
}

/// What a running tool can reach: the session's `resolve` state and the run's cancellation.
#[derive(Debug, Clone)]
pub struct ToolContext {
    resolve: Arc<ResolveSession>,
    cancel: CancellationToken,
    call_id: String,
}

impl ToolContext {
    /// A context for the call `call_id`.
    pub fn new(resolve: Arc<ResolveSession>, cancel: CancellationToken, call_id: String) -> Self {
        Self {
            resolve,
            cancel,
            call_id,
        }
    }

    /// The session's `resolve` state (queue, pending stack, standing handler).
    pub fn resolve_session(&self) -> &Arc<ResolveSession> {
        &self.resolve
    }

    /// Stage `action` as a pending action (a preview); returns its id.
    pub fn queue_resolve_handler(&self, action: PendingAction) -> Result<String, ToolError> {
        self.resolve
            .queue_resolve_handler(action)
            .map_err(|error| ToolError::RespondToModel(error.to_string()))
    }

    /// Stage a custom tool's pending action; returns its id.
    ///
    /// It takes the same path as the built-in previews: a fresh `pending-action:<tool>:<seq>`
    /// id from the session's id allocator (in `resolve agent`, the store's persisted counter),
    /// the head of this session's LIFO stack, the reminder and the `resolve` gate, and a failed
    /// apply keeps it pending at the head. It lives in memory only: it is never written to the
    /// durable store, and only this session (the one running the tool) can resolve it.
    ///
    /// ```
    /// use resolve_core::{CustomPendingAction, Tool, ToolContext, ToolFuture, ToolKind, ToolResult, ToolSpec};
    /// use serde_json::{Value, json};
    ///
    /// /// Stages a database migration; it runs only when the model resolves it with `apply`.
    /// struct Migrate;
    ///
    /// impl Tool for Migrate {
    ///     fn spec(&self) -> ToolSpec {
    ///         ToolSpec {
    ///             name: "migrate".into(),
    ///             description: "Stage a schema migration.".into(),
    ///             input_schema: json!({"type": "object", "properties": {"sql": {"type": "string"}},
    ///                                  "required": ["sql"], "additionalProperties": false}),
    ///             hidden: false,
    ///             strict: true,
    ///             kind: ToolKind::Producer,
    ///         }
    ///     }
    ///
    ///     fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
    ///         Box::pin(async move {
    ///             let sql = args["sql"].as_str().unwrap_or_default().to_owned();
    ///             let preview = format!("Would run: {sql}");
    ///             ctx.push_pending_action(
    ///                 CustomPendingAction::new("Migration: add users.email", move |reason, _extra| {
    ///                     let sql = sql.clone();
    ///                     async move { Ok(ToolResult::text(format!("Ran `{sql}` ({reason})."))) }
    ///                 })
    ///                 .source_tool("migrate")
    ///                 .with_reject(|reason, _extra| async move {
    ///                     Ok(Some(ToolResult::text(format!("Migration dropped: {reason}"))))
    ///                 }),
    ///             )?;
    ///             Ok(ToolResult::text(preview))
    ///         })
    ///     }
    /// }
    /// ```
    pub fn push_pending_action(&self, action: CustomPendingAction) -> Result<String, ToolError> {
        self.queue_resolve_handler(action.action)
    }

    /// Cancelled when the run is cancelled; long tools should stop when it fires.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The id of the tool call being executed.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }
}

/// The source tool name of a custom pending action that does not name one.
pub const CUSTOM_TOOL_SOURCE: &str = "custom_tool";

/// A pending action staged by an in-process custom tool with
/// [`ToolContext::push_pending_action`]: a label, the staging tool's name (by default
/// [`CUSTOM_TOOL_SOURCE`]), an async apply `(reason, extra)` and an optional async reject.
///
/// Keep the label short (renderers show it), make apply deterministic and treat `reason` as
/// information; give a reject only when discarding needs cleanup (without one, discard answers
/// `Discarded: <label>. Reason: <reason>`). An apply error is reported as `Apply failed: …`
/// (an [`ActionError::Tool`] passes unchanged) and the action stays pending.
#[derive(Debug, Clone)]
pub struct CustomPendingAction {
    action: PendingAction,
}

impl CustomPendingAction {
    /// An action labelled `label` that runs `apply` on `resolve` apply.
    pub fn new<F, Fut>(label: impl Into<String>, apply: F) -> Self
    where
        F: Fn(String, Option<Extra>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, ActionError>> + Send + 'static,
    {
        Self {
            action: PendingAction::new(label, CUSTOM_TOOL_SOURCE, apply),
        }
    }

    /// Name the tool that staged it (part of the pending id). By default, `custom_tool`.
    #[must_use]
    pub fn source_tool(mut self, name: impl Into<String>) -> Self {
        self.action.source_tool = name.into();
        self
    }

    /// Run `reject` on `resolve` discard; returning `None` keeps the default discard text. By
    /// default, discard calls nothing.
    #[must_use]
    pub fn with_reject<F, Fut>(mut self, reject: F) -> Self
    where
        F: Fn(String, Option<Extra>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<ToolResult>, ActionError>> + Send + 'static,
    {
        self.action = self.action.with_reject(reject);
        self
    }

    /// The label.
    pub fn label(&self) -> &str {
        &self.action.label
    }

    /// The pending action as `resolve-core` runs it.
    pub fn into_pending_action(self) -> PendingAction {
        self.action
    }
}
