//! Staged file edits for `resolve`: the preview producers and the model-facing file tools.
//!
//! The producers (`ast_edit`, `edit`, `write`) turn a request into a [`Preview`]: a change set
//! whose contents are already in the blob store, a label, and a text (a unified diff per file).
//! Nothing in the workspace is written. [`FileTools`] runs them (and the read-only `read`, `ls`,
//! `grep`) for a model, staging each preview as a durable pending action in the
//! [`Store`](resolve_store::Store); [`StorePendingSource`] keeps a `resolve-core` pending stack in
//! step with the store and resolves stored MCP tool calls through an [`ExternalActionRunner`].
//!
//! Layers, bottom up: `error`, `producer` (the producers' names and success texts), `blocking`;
//! `text_file`, `diff`, `ordered`, `scope`; `preview`; the producers `ast_edit/`, `text_edit`
//! and the read-only `read_tools`; `external`, `pending_source`; `tools`.
//!
//! It does not own the durable state, the transaction or the lock (`resolve-store`, whose items
//! are re-exported here for convenience), nor the `resolve` dispatch, the pending stack or the
//! soft requirement (`resolve-core`), nor the agent loop or the MCP server.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![cfg_attr(
    test,
    allow(
        clippy::disallowed_methods,
        reason = "tests set up and inspect files directly"
    )
)]

mod blocking;
mod error;
mod producer;

mod diff;
mod ordered;
mod scope;
mod text_file;

mod preview;

mod ast_edit;
mod read_tools;
mod text_edit;

mod external;
mod pending_source;

mod tools;

pub use resolve_store::{
    ApplyOutcome, BINARY_SNIFF_LEN, BLOB_GRACE, Blobs, CRASH_AT_ENV, CRASH_STEPS, ChangeSet,
    Content, Decider, FileChange, FileContent, HistoryRecord, JOURNAL_DIR, LOCK_FILE, LOCK_TIMEOUT,
    McpAction, McpToolCall, NewAction, Origin, Outcome, PLANS_DIR, Payload, PendingRecord,
    PendingSummary, STATE_DIR, SpooledChangeSet, StagedRecord, StateLayout, Store, StoreError,
    StoreLock, StoredAction, Workspace, WorkspacePath, atomic_write, content_hash, create_dir_all,
    is_binary, normalize_lexically, path_order, read_content,
};

pub use ast_edit::{
    AstEditOp, AstEditOutcome, AstEditRequest, DEFAULT_MAX_FILES, LIMIT_NOTE, NO_REPLACEMENTS,
    preview_ast_edit, supported_languages,
};
pub use blocking::{TaskDied, run_blocking};
pub use diff::{change_diff, unified_diff};
pub use error::EditError;
pub use external::ExternalActionRunner;
pub use pending_source::{ApplyGate, GateDecision, StorePendingSource};
pub use preview::{PREVIEW_BANNER, Preview, ResultDetails, applied_text};
pub use producer::{AST_EDIT_TOOL, EDIT_TOOL, Producer, WRITE_TOOL, applied_label};
pub use read_tools::{
    DEFAULT_READ_LIMIT, GREP_MAX_MATCHES, GrepRequest, LsRequest, ReadRequest, grep, ls, read,
};
pub use text_edit::{EditRequest, WriteRequest, preview_edit, preview_write};
pub use tools::{FileToolOutput, FileTools, StagedPreview, file_tool_specs};
