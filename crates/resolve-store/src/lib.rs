//! The durable state of a `resolve` workspace.
//!
//! Everything `resolve` keeps under `<root>/.resolve/` is owned here: the confinement every
//! path goes through ([`Workspace`]), content hashes, the layout of the state directory
//! ([`StateLayout`]), the blob store ([`Blobs`]), the workspace lock ([`StoreLock`]), change
//! sets ([`ChangeSet`], and [`SpooledChangeSet`] for ones too large to hold), the transaction
//! that writes a change set whole or not at all across a crash, and the [`Store`] of pending
//! and resolved actions with stage, apply, discard, undo and clean-up. Also whether the person
//! trusts a workspace's `.resolve/config.toml` to run the commands it names ([`ConfigFile`],
//! [`CommandTrust`]; the records, [`TrustedFiles`], live in the per-user directory).
//!
//! Layers, bottom up, each using only those below it: `error`, `hash`, `fs` (the only module
//! that writes, renames or removes files), `layout`, `user_dir`, `record_key`, `trust`,
//! `workspace`; `change_set` (pure data), `check_outcome`, `mcp_action` and `rebase` (pure data, and the trait a rebase at apply calls), `blobs`,
//! `spool`, `lock`; `transaction`; `store`.
//!
//! It knows no producer (no parser, no directory walk, no diff): what a change set contains
//! and how it is shown are `resolve-edit`'s. It does not own the `resolve` dispatch, the
//! pending stack or the soft requirement (`resolve-core`).

#![deny(missing_docs, clippy::print_stdout, clippy::print_stderr)]
// Unit tests set up and inspect files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

mod error;
mod hash;

mod fs;
mod layout;
mod record_key;
mod trust;
mod user_dir;
mod workspace;

mod blobs;
mod change_set;
mod check_outcome;
mod lock;
mod mcp_action;
mod rebase;
mod spool;

mod transaction;

mod store;

pub use blobs::{BlobWriter, Blobs, Pack, PackWriter};
pub use change_set::{ChangeSet, Content, FileChange, path_order};
pub use check_outcome::{CHECK_TAIL_LINES, CheckFacts, CheckMode, CheckOutcome, CheckRun};
pub use error::{Invariant, StoreError};
pub use fs::{
    BINARY_SNIFF_LEN, FileContent, STATE_FILE_MAX_LEN, atomic_write, copy_file, copy_symlink,
    create_dir_all, create_symlink, is_binary, open_regular_file, read_content,
    read_listed_regular_file, read_listed_regular_file_into, read_regular_file,
    read_regular_file_into, read_state_file, remove_file, text_of,
};
pub use hash::{content_hash, hex, same_secret, sha256};
pub use layout::{
    CONFIG_FILE, JOURNAL_DIR, LOCK_FILE, PLANS_DIR, RecordKind, STATE_DIR, StateLayout,
};
pub use lock::{LOCK_TIMEOUT, StoreLock};
pub use mcp_action::{McpAction, McpToolCall, Payload};
pub use rebase::{ConflictReason, FileConflict, Rebase, RebaseConflict, Rebased, Rederived};
pub use record_key::{RECORD_KEY_FILE, RecordKey};
pub use spool::{ChangeSetWriter, FileCounts, SpooledChangeSet};
pub use store::{
    AUTO_GC_PERIOD, AmendFile, Amendment, ApplyOutcome, Attribution, BLOB_GRACE, CommitFact,
    DraftRejection, GcReport, HOST_NAMES, HistoryRecord, HunkReview, Landing, LineComment,
    LineSide, MAX_NOTES_PER_ORIGIN, MovedNote, NewAction, NoteResolution, ObservedFile, Origin,
    Outcome, PendingRecord, PendingSummary, RECORD_VERSION, RebaseState, RecordVersion,
    RejectedFile, RejectedHunk, Retention, Review, ReviewDraft, ReviewedApply, ReviewerNote,
    StagedRecord, Store, StoredAction, TreeSnapshot, default_decider,
};
pub use transaction::{CRASH_AT_ENV, CRASH_STEPS, GC_CRASH_STEPS};
pub use trust::{
    CONFIG_MAX_LEN, CommandTrust, ConfigFile, ConfiguredCommand, TRUST_FILE, TrustRecord,
    TrustState, TrustedFiles, Untrusted, shell_words,
};
pub use user_dir::user_dir;
pub use workspace::{Workspace, WorkspacePath, normalize_lexically};

#[cfg(test)]
mod test_support;
