//! Staged file edits for `resolve`.
//!
//! This crate turns tool calls into [`ChangeSet`]s (previews that touch nothing), keeps them as
//! durable pending actions under `<root>/.resolve/`, and applies them transactionally: every
//! file's base hash is checked before any write, and a multi-file apply lands whole or not at
//! all, also across a crash. A durable pending action may also carry a call to a tool of an MCP
//! server instead of a change set ([`McpAction`]); an [`ExternalActionRunner`] makes that call.
//!
//! It does not own the `resolve` dispatch, the pending stack or the soft requirement
//! (`resolve-core`), nor the agent loop or the MCP server.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod blobs;
mod change_set;
mod error;
mod fs;
mod lock;
mod spool;
mod store;
mod transaction;
mod workspace;

// Preview producers and read-only tools.
mod ast_edit;
mod diff;
mod ordered;
mod preview;
mod read_tools;
mod scope;
mod text_edit;
mod text_file;

// The model-facing file tools over the store.
mod tools;

// Durable MCP tool calls (the `resolve/pendingAction` convention).
mod external;

pub use change_set::{ChangeSet, Content, FileChange, content_hash, path_order};
pub use error::EditError;
pub use external::{ExternalActionRunner, McpAction, McpToolCall, Payload};
pub use fs::{BINARY_SNIFF_LEN, FileContent, atomic_write, is_binary, read_content};
pub use lock::{LOCK_FILE, LOCK_TIMEOUT, StoreLock};
pub use store::{
    ApplyOutcome, BLOB_GRACE, HistoryRecord, Origin, Outcome, PendingRecord, PendingSummary,
    StagedRecord, Store, StoredAction,
};
pub use transaction::{CRASH_AT_ENV, CRASH_STEPS, JOURNAL_DIR};
pub use workspace::{STATE_DIR, Workspace, WorkspacePath};

pub use ast_edit::{
    AstEditOp, AstEditOutcome, AstEditRequest, DEFAULT_MAX_FILES, LIMIT_NOTE, NO_REPLACEMENTS,
    ast_edit_applied_text, preview_ast_edit, supported_languages,
};
pub use diff::{change_diff, unified_diff};
pub use preview::{AST_EDIT_TOOL, EDIT_TOOL, Preview, ResultDetails, WRITE_TOOL, applied_text};
pub use read_tools::{
    DEFAULT_READ_LIMIT, GREP_MAX_MATCHES, GrepRequest, LsRequest, ReadRequest, grep, ls, read,
};
pub use spool::SpooledChangeSet;
pub use text_edit::{
    EditRequest, WriteRequest, edit_applied_text, preview_edit, preview_write, write_applied_text,
};
pub use tools::{
    ApplyGate, FileToolOutput, FileTools, GateDecision, StagedPreview, StorePendingSource,
    file_tool_specs,
};

/// First line of every preview result.
pub const PREVIEW_BANNER: &str = "Staged as a preview — files are NOT modified yet. Call `resolve` with action \"apply\" to apply it or \"discard\" to drop it.";
