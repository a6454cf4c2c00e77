//! The I/O-free runtime behind `resolve`: staged agent actions that land only when the model
//! (or a person) calls the `resolve` tool.
//!
//! A tool computes a change as a preview and stages it as a [`PendingAction`] with
//! [`ResolveSession::queue_resolve_handler`]. Nothing happens until a `resolve` call
//! ([`ResolveSession::execute_resolve`]) applies or discards it, with a reason.
//!
//! # Overview
//!
//! - [`ToolChoiceQueue`]: consuming hard tool-choice directives with lifecycle callbacks, and
//!   beside them the non-forcing [`PendingStack`] (most recent first).
//! - [`ResolveSession`]: one session's queue, standing handler and id allocator; dispatches
//!   `resolve` (in-flight invoker → pending head → standing handler) and produces the per-turn
//!   [`ToolChoiceDirective`] (a hard choice or a [`SoftToolRequirement`] with its reminder).
//! - [`SoftGate`]: the per-run lifecycle of a soft requirement (remind once per id, skip a
//!   declining turn's calls, force for one call, give up after three declines).
//! - [`run_resolve_invocation`]: runs a callback and shapes details and error texts.
//! - [`render_resolve_result`]: the terminal block for a finished `resolve` call.
//! - [`schema::validate`]: checks tool arguments against their JSON schema.
//! - [`Tool`], [`ToolContext`], [`ToolError`]: the contract every tool implements (the
//!   built-in file tools in `resolve-edit`, custom ones in an agent), with [`ToolKind`] saying
//!   what it does; [`ToolRegistry`]: the ordered set of tools the agent and the MCP server
//!   both dispatch through.
//! - [`facts`]: the typed facts results carry for programs ([`PreviewFacts`],
//!   [`ResolveFacts`]), with schemas generated from the types.
//!
//! This crate does no file or network I/O; `resolve-edit` builds file changes on top of it.
//!
//! # Example
//!
//! ```
//! use resolve_core::{PendingAction, ResolveSession, ToolResult};
//! use serde_json::json;
//! use tokio_util::sync::CancellationToken;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let session = ResolveSession::new();
//! let id = session.queue_resolve_handler(PendingAction::new(
//!     "Config: raise the pool size",
//!     "config_tool",
//!     |reason, _extra| async move { Ok(ToolResult::text(format!("Pool size raised ({reason})"))) },
//! ))?;
//! assert!(id.starts_with("pending-action:config_tool:"));
//!
//! let result = session
//!     .execute_resolve(&json!({"action": "apply", "reason": "Load test passed."}), &CancellationToken::new())
//!     .await?;
//! assert_eq!(result.text, "Pool size raised (Load test passed.)");
//! assert!(!session.queue().pending().has_pending());
//! # Ok::<(), resolve_core::Error>(())
//! # }).unwrap();
//! ```

#![deny(missing_docs, clippy::print_stdout, clippy::print_stderr)]

mod choice;
mod contract;
mod error;
pub mod facts;
mod pending;
mod queue;
mod registry;
mod render;
mod resolve;
mod result;
pub mod schema;
mod session;
mod soft;
mod text;
mod tool;
mod visible;

pub use choice::{
    RESOLVE_REMINDER, RESOLVE_TOOL_NAME, ReminderMessage, SoftToolRequirement, ToolChoice,
    ToolChoiceDirective,
};
pub use contract::{
    CUSTOM_TOOL_SOURCE, CustomPendingAction, Tool, ToolContext, ToolError, ToolFuture,
};
pub use error::{ActionError, Error};
pub use facts::{
    AppliedFacts, DecidedBy, Facts, PreviewFacts, PreviewFile, ProducerFacts, ResolveFacts,
    ResolveOutcome,
};
pub use pending::{
    ApplyFn, BoxFuture, Extra, IdAllocator, PendingAction, PendingEntry, PendingHead, PendingStack,
    ProcessIdAllocator, RejectFn, pending_id,
};
pub use queue::{
    OnRejected, OnResolved, PushOptions, RejectInfo, RejectOutcome, RejectReason, ResolveInfo,
    ToolChoiceQueue,
};
pub use registry::{DuplicateToolName, ToolRegistry};
pub use render::{ColorMode, render_resolve_call, render_resolve_result};
pub use resolve::{
    NOTHING_TO_DISCARD, RESOLVE_DESCRIPTION, ResolveAction, ResolveArgs, ResolveCallDetails,
    ResolveHandler, base_details, resolve_tool_spec, run_resolve_invocation,
};
pub use result::ToolResult;
pub use session::{PendingSource, ResolveSession, TurnStop};
pub use soft::{
    CHECK_TOOL_NAME, MAX_COMPANION_TURNS, MAX_SOFT_ESCALATIONS, SoftGate, TurnVerdict,
    skipped_call_details, skipped_call_text,
};
pub use text::count_noun;
pub use tool::{ToolKind, ToolSpec, needs_resolve_tool};
pub use visible::{has_hidden_characters, quote_path, visible_line, visible_text};

/// The README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

/// The library guide's Rust examples (docs/library.md), compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/library.md")]
struct LibraryGuideDoctests;

/// The custom tools guide's Rust examples (docs/custom-tools.md), compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/custom-tools.md")]
struct CustomToolsGuideDoctests;
