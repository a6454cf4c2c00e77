//! The [`Tool`] trait every in-process tool implements, the [`ToolContext`] it runs with, and
//! [`ToolError`], which separates errors the model reads from errors that end the run.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use resolve_core::{PendingAction, ResolveSession, ToolResult, ToolSpec};
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
/// use resolve_agent::{Tool, ToolContext, ToolFuture};
/// use resolve_core::{PendingAction, ToolResult, ToolSpec};
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
///             deferrable: true,
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

    /// Cancelled when the run is cancelled; long tools should stop when it fires.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The id of the tool call being executed.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }
}
