//! Staged file edits for `resolve`: the preview producers and the model-facing file tools.
//!
//! The producers (`ast_edit`, `edit`, `write`, `apply_patch`) turn a request into a [`Preview`]: a change set
//! whose contents are already in the blob store, a label, and a text (a unified diff per file).
//! Nothing in the workspace is written. [`FileTools`] runs them (and the read-only `read`, `ls`,
//! `grep`) for a model, staging each preview as a durable pending action in the
//! [`Store`]; [`StorePendingSource`] keeps a `resolve-core` pending stack in
//! step with the store and resolves stored MCP tool calls through an [`ExternalActionRunner`].
//!
//! Layers, bottom up: `error`, `producer` (a producer's name and success text), `blocking`;
//! `text_file`, `diff`, `word_diff` (the changed words of a line pair), `hunks` (a file
//! change's hunks and composing them), `merge/` (the three-way line merge a stale preview is
//! rebased with), `ordered`, `selection` (hunk addresses), `sorted_walk` (a directory walk in path order
//! that keeps the `ignore` crate's rules), `scope`;
//! `preview` (with [`Produce`], the trait of a producer's request); the producers `ast_edit/`,
//! `text_edit`, `apply_patch/` (Codex-format patches) and the read-only `read_tools`;
//! `producers` (the list of producers, one line each) and `read_only` (the read-only tools by
//! name); `external`, `review` (hunk-level apply and amend), `settle` (a conflicting file amended
//! onto its current bytes, `amend --take`), `reviewer_answer` (what a person types at a
//! review's prompts), `reviewer_note` (what the model is told a
//! person did), `shown` (what a stored action shows, derived from what it lands),
//! `pending_source`; `check/` (running a command against a preview, in place or in
//! a scratch copy, and the model's `check` tool); `tools`; `builtin` (every built-in tool as
//! one [`ToolRegistry`](resolve_core::ToolRegistry), which the agent and the MCP server both
//! dispatch through); `shell_writes` (what a shell command line visibly writes), `host_input`
//! (a host hook's stdin JSON, parsed and checked without I/O) and `host_edit` (a host's own
//! edit caught by its hook, staged and decided through the same pipeline).
//!
//! It does not own the durable state, the transaction or the lock (`resolve-store`, whose items
//! are re-exported here for convenience), nor the `resolve` dispatch, the pending stack or the
//! soft requirement (`resolve-core`), nor the agent loop or the MCP server.

#![deny(missing_docs, clippy::print_stdout, clippy::print_stderr)]
// Unit tests set up and inspect files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

mod blocking;
mod error;
mod producer;

mod diff;
mod hunks;
mod line_scan;
mod ordered;
mod scope;
mod selection;
mod sorted_walk;
mod text_file;
mod word_diff;

mod merge;
mod preview;
mod preview_facts;

mod apply_patch;
mod ast_edit;
mod read_tools;
mod text_edit;

mod approval;
mod git_commit;
mod producers;
mod read_only;

mod external;
mod pending_source;
mod review;
mod reviewer_answer;
mod reviewer_note;
mod settle;
mod shown;

mod check;
mod config;
mod opened;
mod tools;

mod builtin;
mod host_edit;
mod host_input;
mod shell_capture;
mod shell_writes;

pub use resolve_store::{
    AmendFile, Amendment, ApplyOutcome, Attribution, BINARY_SNIFF_LEN, BLOB_GRACE, Blobs,
    CHECK_TAIL_LINES, CONFIG_MAX_LEN, CRASH_AT_ENV, CRASH_STEPS, ChangeSet, CheckFacts, CheckMode,
    CheckOutcome, CheckRun, CommandTrust, CommitFact, ConfigFile, ConfiguredCommand,
    ConflictReason, Content, DraftRejection, FileChange, FileConflict, FileContent, GcReport,
    HistoryRecord, HunkReview, JOURNAL_DIR, LOCK_FILE, LOCK_TIMEOUT, Landing, LineComment,
    LineSide, McpAction, McpToolCall, NewAction, NoteResolution, ObservedFile, Origin, Outcome,
    PLANS_DIR, Payload, PendingRecord, PendingSummary, Rebase, RebaseConflict, RebaseState,
    Rebased, RecordKey, Rederived, RejectedFile, RejectedHunk, Retention, Review, ReviewDraft,
    ReviewedApply, ReviewerNote, STATE_DIR, SpooledChangeSet, StagedRecord, StateLayout, Store,
    StoreError, StoreLock, StoredAction, TreeSnapshot, TrustState, TrustedFiles, Untrusted,
    Workspace, WorkspacePath, atomic_write, content_hash, create_dir_all, hex, is_binary,
    normalize_lexically, path_order, read_content, read_regular_file, read_state_file, remove_file,
    same_secret, shell_words,
};

pub use apply_patch::{
    ApplyPatchOutcome, ApplyPatchRequest, ChangeBlock, FileOp, Patch, parse_patch,
    preview_apply_patch,
};
pub use approval::{
    ApprovalMode, ApprovalRequest, ApprovalSubject, ApproveTimeout, Approver, AutoApprover,
    AwaitPerson, DEFAULT_APPROVE_TIMEOUT, Decided, Decision, DecisionFuture, DecisionsAhead,
    InvalidApproveTimeout, Landed, PlanReview, ResolveRequest, TerminalApprover, TerminalReview,
    UnknownApprovalMode, decide, land,
};
pub use ast_edit::{
    AstEditOp, AstEditOutcome, AstEditRequest, DEFAULT_MAX_FILES, LIMIT_NOTE, NO_REPLACEMENTS,
    Prefilter, PrefilterCensus, language_of_path, prefilter_census, preview_ast_edit,
    preview_ast_edit_with, rederive, supported_languages,
};
pub use blocking::{TaskDied, run_blocking};
pub use builtin::{builtin_tools, check_tool};
pub use check::{
    CONFIG_PATH, CheckPlace, CheckRequest, CheckSettings, CheckTool, DEFAULT_CHECK_TIMEOUT,
    LiveOutput, changed_files_note, check_report, check_summary, command_line, run_check,
};
pub use config::{McpServerConfig, WorkspaceConfig};
pub use diff::{LineCounts, change_diff, unified_diff};
pub use error::EditError;
pub use external::ExternalActionRunner;
pub use git_commit::{commit_applied, commit_line, commit_message, short_id};
pub use host_edit::{
    HookApproval, HookReply, HookSettings, HostEdit, codex_session_origin, intercept,
};
pub use host_input::{
    CODEX_APPLY_PATCH_TOOL, CODEX_HOOK_MATCHER, CODEX_SHELL_TOOL, ClaudeEdit, ClaudeFileEdit,
    ClaudeHookInput, ClaudeMultiEdit, ClaudeNotebookEdit, ClaudeOneEdit, ClaudeWrite,
    CodexPatchCall, HookInputError, parse_codex_pre_tool_use, patch_of_shell_command,
};
pub use hunks::{ChangeKind, FileHunks, Hunk, HunkLine, LineKind};
pub use merge::{LineConflict, LineMerge, LineRebase, MergeSide, merge_lines, merge_lines_taking};
pub use opened::{OpenOptions, OpenedWorkspace, ProducerRebase, rebasing_store};
pub use pending_source::{AdoptedOrigins, StorePendingSource};
pub use preview::{
    PREVIEW_BANNER, Preview, Produce, ProduceLimits, Produced, ResultDetails, addressed_preview,
};
pub use preview_facts::{SpooledFiles, StagedDetails, preview_files};
pub use producer::{Producer, applied_label};
pub use producers::{
    PRODUCER_NAMES, PRODUCERS, ProducerRequest, applied_text, producer_named, producer_specs,
};
pub use read_only::ReadTool;
pub use read_tools::{
    DEFAULT_READ_LIMIT, GREP_LINE_BYTES, GREP_MAX_MATCHES, GrepRequest, LsRequest, READ_MAX_OUTPUT,
    READ_SCAN_BUDGET, ReadRequest, grep, ls, read,
};
pub use review::{
    ActionHunks, AmendOutcome, PreviewFile, ReviewDecision, action_hunks, amend, amend_target,
    apply_reviewed, apply_reviewed_as, apply_reviewed_commented, file_hunks, partial_apply_lines,
    previewed_content,
};
pub use reviewer_answer::{ReviewerAnswer, reviewer_reason};
pub use reviewer_note::{
    line_comment_text, moved_note_text, reviewer_note_text, take_origin_notes,
};
pub use selection::{HunkAddress, HunkRejection, MAX_HUNK_NUMBER, Selection};
pub use settle::{SettleOutcome, conflict_draft, has_conflict_markers, settle};
pub use shell_capture::{
    MAX_CAPTURED_FILE, MAX_SNAPSHOT_BYTES, MAX_SNAPSHOT_FILES, NotCaptured, changes_since,
    snapshot_tree,
};
pub use shell_writes::visible_shell_writes;
pub use shown::{shown_addressed_preview, shown_history_preview, shown_preview};
pub use text_edit::{EditRequest, WriteRequest, preview_edit, preview_write};
pub use tools::{FileToolOutput, FileTools, StagedPreview, file_tool_specs};
pub use word_diff::{WordDiff, word_diff};

#[cfg(test)]
mod test_support;
