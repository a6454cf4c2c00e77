//! Errors of the core runtime, and the error a pending action's callbacks return.
//!
//! Every [`Error`] displays as the exact text a model or a person reads; the agent loop and the
//! MCP server turn it into an error tool result with that text.

use crate::schema::SchemaViolation;

/// What went wrong in the core runtime; its `Display` is the model-facing text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `resolve` with `action: "apply"` found nothing to act on.
    #[error("No pending action to resolve. Nothing to apply or discard.")]
    NothingToApply,
    /// A tool error raised by a producer callback; its text reaches the model unchanged.
    #[error("{0}")]
    Tool(String),
    /// An apply callback failed with a non-tool error.
    #[error("Apply failed: {0}")]
    ApplyFailed(String),
    /// The call was aborted before or while it ran.
    #[error("Aborted: {0}")]
    Aborted(String),
    /// The arguments of a tool call do not match the tool's schema; nothing was dispatched.
    #[error("Invalid arguments for `{tool}`: {violation}")]
    InvalidArguments {
        /// The tool whose arguments were rejected.
        tool: String,
        /// The first schema violation found, naming the field.
        violation: SchemaViolation,
    },
    /// A forced tool choice named a tool that is not active.
    #[error("Tool \"{name}\" is not currently active.")]
    ToolInactive {
        /// The inactive tool.
        name: String,
    },
    /// A targeted resolve named an id that is not pending.
    #[error("`{id}` is not a pending action. Run `resolve pending` to list pending actions.")]
    NotPending {
        /// The id that was asked for.
        id: String,
    },
    /// The pluggable id allocator or pending source failed (for example a durable store).
    #[error("{0}")]
    PendingSource(String),
    /// The pending source could not be read, and the actions it had staged were dropped from
    /// the session as stale (so no gate stays closed on them).
    #[error(
        "{cause}\nDropped {} from this session because they could not be re-read: `resolve` is no longer required for them, and nothing was applied or discarded. They are not lost: they come back once their store can be read again.",
        crate::text::count_noun(*.dropped, "stale pending action")
    )]
    StalePendingDropped {
        /// Why the source could not be read.
        cause: String,
        /// How many stale actions were dropped.
        dropped: usize,
    },
    /// The soft requirement was declined more often than the cap allows.
    #[error(
        "Soft tool requirement '{tool}' was not satisfied after {cap} forced turns; aborting to avoid an unbounded force loop."
    )]
    EscalationCap {
        /// The required tool (`resolve`).
        tool: String,
        /// How many forced turns were allowed.
        cap: u32,
    },
}

/// The error a pending action's apply or reject callback returns.
///
/// A [`ActionError::Tool`] error reaches the model unchanged (a stale preview, for example);
/// a [`ActionError::Failed`] error from apply is reported as `Apply failed: <message>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    /// A model-facing tool error, passed through unchanged.
    #[error("{0}")]
    Tool(String),
    /// Any other failure (I/O, a crashed server, …).
    #[error("{0}")]
    Failed(String),
}
