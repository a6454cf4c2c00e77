//! Staged file edits for `resolve`.
//!
//! This crate turns tool calls into [`ChangeSet`]s (previews that touch nothing), keeps them as
//! durable pending actions under `<root>/.resolve/`, and applies them transactionally: every
//! file's base hash is checked before any write, and a multi-file apply lands whole or not at
//! all, also across a crash.
//!
//! It does not own the `resolve` dispatch, the pending stack or the soft requirement
//! (`resolve-core`), nor the agent loop or the MCP server.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod change_set;
mod error;
mod fs;
mod lock;
mod store;
mod transaction;
mod workspace;

pub use change_set::{ChangeSet, FileChange, content_hash};
pub use error::EditError;
pub use fs::{BINARY_SNIFF_LEN, FileContent, atomic_write, read_content};
pub use lock::{LOCK_FILE, LOCK_TIMEOUT, StoreLock};
pub use store::{ApplyOutcome, HistoryRecord, Origin, Outcome, PendingRecord, Store, StoredAction};
pub use transaction::{CRASH_AT_ENV, CRASH_STEPS, JOURNAL_DIR};
pub use workspace::{STATE_DIR, Workspace, WorkspacePath};

/// First line of every preview result.
pub const PREVIEW_BANNER: &str = "Staged as a preview — files are NOT modified yet. Call `resolve` with action \"apply\" to apply it or \"discard\" to drop it.";
