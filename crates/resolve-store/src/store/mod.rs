//! The durable pending store: pending actions and their history, kept as JSON under
//! `<root>/.resolve/` (see the layout module for every name there), so any process working in
//! the root can list, apply, discard or undo what another staged. It knows no producer: a
//! pending action is a change set or an MCP tool call, staged with a label and a preview text.
//!
//! Records name file contents by hash (see the blobs module), so reading, applying or undoing
//! an action holds one file's content at a time, never a whole change set. Staging writes a
//! record's change set straight from the spool its producer wrote it to (see the spool module),
//! so staging a change to every file of a tree holds none of it either.
//!
//! Every operation takes the lock, then runs recovery, then reads fresh state from disk, so
//! changes made by other processes are always seen. Applying, discarding and undoing are
//! transactions: the files and the pending→history move land together or not at all.
//! Corrupt state files are reported as [`StoreError::CorruptState`], never skipped.
//!
//! By concern: `records` (the records and their ids), `read` (listing and finding), `staging`,
//! `resolution` (apply and discard, whole or hunk by hunk), `rebasing` (a changed file merged at apply), `check` (a preview put in place for
//! a check, or written into a scratch copy, and the outcome kept on the record), `undo`,
//! `external` (MCP tool calls and their markers), `gc` (the blob store's clean-up), `review`
//! (what a reviewer did, as records keep it), `notes` (telling the model what a person did), `signature` (signing this user's records and
//! telling foreign ones) and `amend`.

mod amend;
mod check;
mod drafts;
mod external;
mod gc;
mod moved;
mod notes;
mod read;
mod rebasing;
mod records;
mod resolution;
mod review;
mod shell;
mod signature;
mod staging;
mod undo;

use std::sync::Arc;
use std::time::Duration;

use crate::blobs::Blobs;
use crate::error::StoreError;
use resolve_core::DecidedBy;

use crate::lock::{LOCK_TIMEOUT, StoreLock};
use crate::rebase::Rebase;
use crate::transaction;
use crate::trust::CommandTrust;
use crate::workspace::Workspace;

pub use self::amend::AmendFile;
pub use self::drafts::{DraftRejection, ReviewDraft};
pub use self::gc::{AUTO_GC_PERIOD, BLOB_GRACE, GcReport, Retention};
pub use self::moved::MovedNote;
pub use self::notes::{MAX_NOTES_PER_ORIGIN, NoteResolution, ReviewerNote};
pub use self::rebasing::RebaseState;
pub use self::records::{
    ApplyOutcome, Attribution, CommitFact, HOST_NAMES, HistoryRecord, Origin, Outcome,
    PendingRecord, PendingSummary, RECORD_VERSION, RecordVersion, StagedRecord, StoredAction,
    default_decider,
};
pub use self::resolution::{Landing, ReviewedApply};
pub use self::review::{
    Amendment, HunkReview, LineComment, LineSide, RejectedFile, RejectedHunk, Review,
};
pub use self::shell::{ObservedFile, TreeSnapshot};
pub use self::staging::NewAction;

/// The pending store of one workspace. Operations block while they wait for the lock.
///
/// ```
/// use resolve_store::{ChangeSet, FileChange, NewAction, Origin, RecordKey, Store, Workspace};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// // Records are signed with this user's key (`~/.config/resolve/record-key`) unless the store
/// // is given one, as here, so that the example leaves the home directory alone.
/// let store =
///     Store::open(Workspace::open(dir.path())?).with_record_key(RecordKey::from_bytes([7; 32]));
/// let mut change_set = ChangeSet::new();
/// change_set.insert("hello.txt", FileChange::Create { content: "hi\n".into() });
/// let action = NewAction {
///     origin: Origin::Cli,
///     source_tool: "write".into(),
///     label: "Write: hello.txt".into(),
///     preview_text: "preview".into(),
///     details: serde_json::Value::Null,
/// };
/// let record = store.stage(action, change_set)?;
/// assert_eq!(record.id, "pending-action:write:1");
/// assert!(!dir.path().join("hello.txt").exists());
///
/// let outcome = store.apply(&record.id, None, "greet", None)?;
/// assert_eq!(outcome.applied_files, ["hello.txt"]);
/// assert_eq!(std::fs::read_to_string(dir.path().join("hello.txt"))?, "hi\n");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Store {
    workspace: Workspace,
    lock_timeout: Duration,
    /// Who resolves through this handle, recorded in each history record it writes.
    resolver: Option<Origin>,
    /// Whether an apply needs a passing check of the preview first.
    require_check: bool,
    /// The key that signs records (see [`Store::with_record_key`]).
    key: signature::KeyCell,
    /// Whether foreign actions' payloads run (see [`Store::accepting_foreign`]).
    accept_foreign: bool,
    /// What merges a stale file's preview onto it at apply (see [`Store::rebasing`]).
    rebase: Option<Arc<dyn Rebase>>,
    /// Whether each apply becomes a git commit, and on whose word (see
    /// [`Store::committing`]).
    commit: Option<CommandTrust>,
    /// Hashes of workspace files by the metadata they had, shared by this handle's clones,
    /// so the moved-file check at each tool result reads only files that changed.
    hashes: Arc<moved::HashMemo>,
}

impl Store {
    /// The store of `workspace`; touches nothing until an operation runs.
    pub fn open(workspace: Workspace) -> Self {
        Self {
            workspace,
            lock_timeout: LOCK_TIMEOUT,
            resolver: None,
            require_check: false,
            key: signature::KeyCell::default(),
            accept_foreign: false,
            rebase: None,
            commit: None,
            hashes: Arc::default(),
        }
    }

    /// This store asking for one git commit per apply when `commit` is given: on the word of
    /// a file whose trust it carries (`commit = true` in a configuration), or
    /// [`CommandTrust::Allowed`] for the person's own `--commit`. The store only carries the
    /// request; the front end's pipeline makes the commit and records it
    /// ([`Store::record_commit`]). By default no commit is asked for.
    #[must_use]
    pub fn committing(mut self, commit: Option<CommandTrust>) -> Self {
        self.commit = commit;
        self
    }

    /// Whether each apply through this store is to become a git commit, and on whose word
    /// (see [`Store::committing`]).
    pub fn commit_request(&self) -> Option<&CommandTrust> {
        self.commit.as_ref()
    }

    /// This store rebasing, at apply, each file that changed since its preview with `rebase`
    /// (base → preview merged into base → current): a clean merge lands, in the same
    /// transaction, and the outcome names the file ([`ApplyOutcome::rebased_files`]); a
    /// conflict writes nothing ([`StoreError::Conflicts`]). `None` refuses any changed file
    /// ([`StoreError::Stale`]). By default no rebase is made.
    #[must_use]
    pub fn rebasing(mut self, rebase: Option<Arc<dyn Rebase>>) -> Self {
        self.rebase = rebase;
        self
    }

    /// This store recording `origin` as where each action it applies or discards was resolved
    /// ([`HistoryRecord::resolved_by`]): `cli` for the command line, `agent` for `resolve
    /// agent`, `mcp:<id>` for an MCP connection. By default nothing is recorded.
    #[must_use]
    pub fn resolved_by(mut self, origin: Origin) -> Self {
        self.resolver = Some(origin);
        self
    }

    /// Who decides what this store resolves when no [`Attribution`] is given:
    /// [`default_decider`] its resolver (a person at the command line, else the model); `None`
    /// when no resolver was given. Callers that know who decided pass an [`Attribution`]
    /// ([`Store::apply_as`], [`Store::discard_as`], …): who decided travels with the decision.
    pub fn decider(&self) -> Option<DecidedBy> {
        self.resolver
            .as_ref()
            .map(|resolver| default_decider(Some(resolver)))
    }

    /// The attribution of what this handle resolves without being given one (the plain
    /// [`Store::apply`], [`Store::discard`], …): its [`Store::decider`] alone.
    pub fn default_attribution(&self) -> Option<Attribution> {
        self.decider().map(|decided_by| Attribution {
            decided_by,
            model_reason: None,
        })
    }

    /// Where actions resolved through this store are recorded as resolved (see
    /// [`Store::resolved_by`]).
    pub fn resolver(&self) -> Option<&Origin> {
        self.resolver.as_ref()
    }

    /// This store refusing to apply a preview whose last check (on its change set as it is)
    /// did not pass, when `yes` ([`StoreError::CheckRequired`]; nothing is written and the
    /// action stays pending). Actions that call an MCP tool change no file and are not checked.
    /// By default no check is required.
    #[must_use]
    pub fn requiring_check(mut self, yes: bool) -> Self {
        self.require_check = yes;
        self
    }

    /// Whether an apply through this store needs a passing check (see
    /// [`Store::requiring_check`]).
    pub fn requires_check(&self) -> bool {
        self.require_check
    }

    /// This store waiting up to `timeout` for the lock. By default, [`LOCK_TIMEOUT`].
    #[must_use]
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The blob store the records name contents in (read a record's preview text or a
    /// change's content through it).
    pub fn blobs(&self) -> Blobs {
        Blobs::of(&self.workspace)
    }

    /// Settle a transaction a crash interrupted and say what was done (`None`: nothing to do).
    ///
    /// Every other operation recovers silently first; call this beforehand to report it.
    pub fn recover(&self) -> Result<Option<String>, StoreError> {
        if !self.workspace.layout().exists() {
            return Ok(None);
        }
        let _lock = self.lock()?;
        transaction::recover(&self.workspace)
    }

    /// [`Store::recover`] without waiting: [`StoreError::LockTimeout`] at once while another
    /// process (or thread) holds the lock, so a caller can say it will wait, or go on reading.
    pub fn recover_now(&self) -> Result<Option<String>, StoreError> {
        if !self.workspace.layout().exists() {
            return Ok(None);
        }
        let _lock = StoreLock::acquire_with_timeout(&self.workspace, Duration::ZERO)?;
        transaction::recover(&self.workspace)
    }

    /// Take the lock without recovering.
    pub(super) fn lock(&self) -> Result<StoreLock, StoreError> {
        StoreLock::acquire_with_timeout(&self.workspace, self.lock_timeout)
    }

    /// Take the lock and recover; the lock is held until the returned guard drops.
    pub(super) fn session(&self) -> Result<StoreLock, StoreError> {
        let lock = self.lock()?;
        transaction::recover(&self.workspace)?;
        Ok(lock)
    }

    /// Like [`Store::session`], but `None` (nothing created) when there is no state yet.
    pub(super) fn read_session(&self) -> Result<Option<StoreLock>, StoreError> {
        if self.workspace.layout().exists() {
            self.session().map(Some)
        } else {
            Ok(None)
        }
    }
}
