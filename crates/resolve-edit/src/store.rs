//! The durable pending store: pending actions and their history, kept as JSON under
//! `<root>/.resolve/`, so any process working in the root can list, apply, discard or undo
//! what another staged.
//!
//! Layout (created on first use):
//!
//! ```text
//! .resolve/
//!   .gitignore          `*`: nothing in here is ever committed
//!   lock                the flock target (see the lock module)
//!   counters.json       {"nextSeq": N}: the never-reused id counter
//!   pending/<seq>.json  one PendingRecord per pending action
//!   history/<seq>.json  one HistoryRecord per applied or discarded action
//!   blobs/<sha256>      contents the records name: preview texts, kept originals
//!   blobs/pack-<…>      new contents of one preview thread, named by offset and hash
//!   journal/            the transaction in flight: journal.json and backups
//! ```
//!
//! Records name file contents by hash (see the blobs module), so reading, applying or undoing
//! an action holds one file's content at a time, never a whole change set. Records written
//! before the blob store carry their contents inline and stay readable. Staging writes a
//! record's change set straight from the spool its producer wrote it to (see the spool module),
//! so staging a change to every file of a tree holds none of it either.
//!
//! Every operation takes the lock, then runs recovery, then reads fresh state from disk, so
//! changes made by other processes are always seen. Applying, discarding and undoing are
//! transactions: the files and the pending→history move land together or not at all.
//! Corrupt state files are reported as [`EditError::CorruptState`], never skipped.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use resolve_core::Extra;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::blobs::Blobs;
use crate::external::{McpAction, Payload};
use crate::lock::{LOCK_TIMEOUT, StoreLock};
use crate::transaction::{self, FileWrite, Purpose, StateChange, Transaction};
use crate::{ChangeSet, Content, EditError, SpooledChangeSet, Workspace, content_hash, fs};

/// Pending records, by seq.
const PENDING_DIR: &str = "pending";
/// History records, by seq.
const HISTORY_DIR: &str = "history";
/// The id counter.
const COUNTERS_FILE: &str = "counters.json";
/// Every pending id starts with this.
const ID_PREFIX: &str = "pending-action:";

/// Who staged a pending action; a model's `resolve` sees only its own origin's actions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A person on the command line.
    Cli,
    /// `resolve agent` runs (all runs in one root share it).
    Agent,
    /// An MCP client connection, by connection id.
    Mcp(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cli => f.write_str("cli"),
            Self::Agent => f.write_str("agent"),
            Self::Mcp(connection) => write!(f, "mcp:{connection}"),
        }
    }
}

impl FromStr for Origin {
    type Err = EditError;

    fn from_str(origin: &str) -> Result<Self, Self::Err> {
        match origin {
            "cli" => Ok(Self::Cli),
            "agent" => Ok(Self::Agent),
            other => match other.strip_prefix("mcp:") {
                Some(connection) if !connection.is_empty() => Ok(Self::Mcp(connection.to_owned())),
                Some(_) | None => Err(EditError::UnknownOrigin {
                    origin: origin.to_owned(),
                }),
            },
        }
    }
}

impl Serialize for Origin {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Origin {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A durable pending action: a staged change set (or an MCP tool call) waiting for `resolve`.
///
/// Read from the store, its change set is a [`ChangeSet`]; as returned by staging, it is the
/// [`SpooledChangeSet`] the record was written from ([`StagedRecord`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    bound(deserialize = "C: Deserialize<'de> + Default")
)]
pub struct PendingRecord<C = ChangeSet> {
    /// `pending-action:<sourceTool>:<seq>`.
    pub id: String,
    /// The never-reused number in the id.
    pub seq: u64,
    /// Who staged it.
    pub origin: Origin,
    /// The tool that staged it.
    pub source_tool: String,
    /// Short label (`Edit: src/main.rs`).
    pub label: String,
    /// When it was staged, in Unix seconds.
    pub created_at: u64,
    /// Stack position, drawn from the id counter when staged, bumped or resolved; the highest
    /// pending order is the head, and orders compare with the seqs of in-memory actions.
    pub order: u64,
    /// What applying it writes (empty when the payload is an MCP call).
    #[serde(default)]
    pub change_set: C,
    /// When present, the payload: an MCP tool call to make instead of writing files. Records
    /// without it (all records before MCP calls existed) carry a change set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpAction>,
    /// The preview text shown when it was staged (in the blob store; inline in records written
    /// before it).
    pub preview_text: Content,
    /// The producer's result details (not the list of files some results show, which is the
    /// change set's; see [`Preview::files_key`](crate::Preview::files_key)).
    pub details: Value,
    /// [`ChangeSet::fingerprint`] of the change set.
    pub fingerprint: String,
}

/// A pending record as staging returns it: its change set is still in the spool it was
/// written from, so staging a change to every file of a tree never holds all of it.
pub type StagedRecord = PendingRecord<SpooledChangeSet>;

impl StagedRecord {
    /// The record as the store reads it back: its change set loaded from the spool.
    pub fn load(&self) -> Result<PendingRecord, EditError> {
        Ok(PendingRecord {
            id: self.id.clone(),
            seq: self.seq,
            origin: self.origin.clone(),
            source_tool: self.source_tool.clone(),
            label: self.label.clone(),
            created_at: self.created_at,
            order: self.order,
            change_set: self.change_set.load()?,
            mcp: self.mcp.clone(),
            preview_text: self.preview_text.clone(),
            details: self.details.clone(),
            fingerprint: self.fingerprint.clone(),
        })
    }
}

impl PendingRecord {
    /// What resolving it does: write its change set, or call an MCP tool.
    pub fn payload(&self) -> Payload<'_> {
        match &self.mcp {
            Some(action) => Payload::Mcp(action),
            None => Payload::ChangeSet(&self.change_set),
        }
    }
}

/// The identifying fields of a [`PendingRecord`], read without its change set, preview text
/// and details: what keeping a pending stack in step with the store needs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingSummary {
    /// `pending-action:<sourceTool>:<seq>`.
    pub id: String,
    /// The never-reused number in the id.
    pub seq: u64,
    /// Who staged it.
    pub origin: Origin,
    /// The tool that staged it.
    pub source_tool: String,
    /// Short label (`Edit: src/main.rs`).
    pub label: String,
    /// Stack position; the highest pending order is the head.
    pub order: u64,
    /// The MCP tool call it makes, for an action staged by an MCP custom tool.
    #[serde(default)]
    pub mcp: Option<McpAction>,
}

/// The fields of a [`HistoryRecord`] that finding an earlier discard needs.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HistorySummary {
    id: String,
    seq: u64,
    order: u64,
    fingerprint: String,
    outcome: Outcome,
}

/// How a pending action was resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Its files were written.
    Applied,
    /// It was dropped; no file was touched.
    Discarded,
}

/// A resolved action: the pending record plus how, why and what it changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "HistoryFields")]
pub struct HistoryRecord {
    /// The pending record as it was when resolved (`order` is the resolution's).
    #[serde(flatten)]
    pub action: PendingRecord,
    /// Applied or discarded.
    pub outcome: Outcome,
    /// The `reason` given to `resolve`.
    pub reason: String,
    /// The `extra` given to `resolve`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Extra>,
    /// When it was resolved, in Unix seconds.
    pub resolved_at: u64,
    /// Files written (all of them, or the `only` subset).
    pub applied_files: Vec<String>,
    /// Files of the change set that were not written.
    pub dropped_files: Vec<String>,
    /// The content of each applied file before the apply (`None`: it did not exist), as older
    /// records hold it; empty in records written now, whose originals are the base hashes of
    /// their change sets (see [`HistoryRecord::original`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub before: BTreeMap<String, Option<Content>>,
    /// Whether the apply was undone.
    pub undone: bool,
}

impl HistoryRecord {
    /// The content the applied file `path` had before the apply (`None`: it did not exist),
    /// for undo; `None` when the record does not know it. An apply writes only files that
    /// still hold the base their change was computed from, and keeps that content in the blob
    /// store under its hash.
    pub fn original(&self, path: &str) -> Option<Option<Content>> {
        original_of(&self.before, &self.action.change_set, path)
    }
}

/// The original of the applied file `path`, from a history record's `before` and change set
/// (see [`HistoryRecord::original`]).
fn original_of(
    before: &BTreeMap<String, Option<Content>>,
    change_set: &ChangeSet,
    path: &str,
) -> Option<Option<Content>> {
    if let Some(kept) = before.get(path) {
        return Some(kept.clone());
    }
    let change = change_set.get(path)?;
    Some(change.base_hash().map(|blob| Content::Stored {
        blob: blob.to_owned(),
    }))
}

/// What a pending or history record keeps in the blob store, read without the rest (its
/// details above all): what collecting garbage needs.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlobUse {
    id: String,
    seq: u64,
    preview_text: Content,
    #[serde(default)]
    change_set: ChangeSet,
    /// `None` for a pending record.
    #[serde(default)]
    outcome: Option<Outcome>,
    #[serde(default)]
    undone: bool,
    #[serde(default)]
    applied_files: Vec<String>,
    #[serde(default)]
    before: BTreeMap<String, Option<Content>>,
}

impl BlobUse {
    /// The blobs and packs it needs: its preview text; when pending, its new contents; when
    /// an apply that can still be undone, its originals.
    fn needs(&self, mut need: impl FnMut(&Content)) {
        need(&self.preview_text);
        match (self.outcome, self.undone) {
            (None, _) => {
                for (_, change) in self.change_set.files() {
                    change.new_content().map(&mut need);
                }
            }
            (Some(Outcome::Applied), false) => {
                for path in &self.applied_files {
                    if let Some(Some(original)) = original_of(&self.before, &self.change_set, path)
                    {
                        need(&original);
                    }
                }
            }
            (Some(_), _) => {}
        }
    }
}

/// A history record as stored: the pending record's fields and the resolution's side by side.
/// Reading it through this flat shape avoids `#[serde(flatten)]` on the way in, which would
/// buffer the whole record (every changed file) as an untyped tree first.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HistoryFields {
    id: String,
    seq: u64,
    origin: Origin,
    source_tool: String,
    label: String,
    created_at: u64,
    order: u64,
    #[serde(default)]
    change_set: ChangeSet,
    #[serde(default)]
    mcp: Option<McpAction>,
    preview_text: Content,
    details: Value,
    fingerprint: String,
    outcome: Outcome,
    reason: String,
    #[serde(default)]
    extra: Option<Extra>,
    resolved_at: u64,
    applied_files: Vec<String>,
    dropped_files: Vec<String>,
    #[serde(default)]
    before: BTreeMap<String, Option<Content>>,
    undone: bool,
}

impl From<HistoryFields> for HistoryRecord {
    fn from(fields: HistoryFields) -> Self {
        Self {
            action: PendingRecord {
                id: fields.id,
                seq: fields.seq,
                origin: fields.origin,
                source_tool: fields.source_tool,
                label: fields.label,
                created_at: fields.created_at,
                order: fields.order,
                change_set: fields.change_set,
                mcp: fields.mcp,
                preview_text: fields.preview_text,
                details: fields.details,
                fingerprint: fields.fingerprint,
            },
            outcome: fields.outcome,
            reason: fields.reason,
            extra: fields.extra,
            resolved_at: fields.resolved_at,
            applied_files: fields.applied_files,
            dropped_files: fields.dropped_files,
            before: fields.before,
            undone: fields.undone,
        }
    }
}

/// The MCP call in flight for a pending action, as its marker file records it.
#[derive(Clone, Serialize, Deserialize)]
struct McpCallMarker {
    server: String,
    tool: String,
}

/// What [`Store::get`] finds.
#[derive(Debug, Clone, PartialEq)]
pub enum StoredAction {
    /// Still pending.
    Pending(PendingRecord),
    /// Applied or discarded.
    Resolved(HistoryRecord),
}

/// The result of [`Store::apply`].
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyOutcome {
    /// The history record the action became.
    pub record: HistoryRecord,
    /// Files written.
    pub applied_files: Vec<String>,
    /// Files of the preview left out by `only`.
    pub dropped_files: Vec<String>,
    /// Replacements in the written files.
    pub total_replacements: usize,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Counters {
    next_seq: u64,
}

/// How long an unneeded blob is kept before an apply, discard or undo removes it: a preview
/// writes its blobs before it is staged, and it is computed without the lock.
pub const BLOB_GRACE: Duration = Duration::from_secs(60 * 60);

/// The pending store of one workspace. Operations block while they wait for the lock.
///
/// ```
/// use resolve_edit::{ChangeSet, FileChange, Origin, Store, Workspace};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let store = Store::open(Workspace::open(dir.path())?);
/// let mut change_set = ChangeSet::new();
/// change_set.insert("hello.txt", FileChange::Create { content: "hi\n".into() });
/// let record = store.stage(
///     Origin::Cli,
///     "write",
///     "Write: hello.txt",
///     change_set,
///     "preview".into(),
///     serde_json::Value::Null,
/// )?;
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
}

impl Store {
    /// The store of `workspace`; touches nothing until an operation runs.
    pub fn open(workspace: Workspace) -> Self {
        Self {
            workspace,
            lock_timeout: LOCK_TIMEOUT,
        }
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

    /// Settle a transaction a crash interrupted and say what was done (`None`: nothing to do).
    ///
    /// Every other operation recovers silently first; call this beforehand to report it.
    pub fn recover(&self) -> Result<Option<String>, EditError> {
        if !self.workspace.state_dir().is_dir() {
            return Ok(None);
        }
        let _lock = self.lock()?;
        transaction::recover(&self.workspace)
    }

    /// Take the next number of the never-reused id counter (in-memory actions share it).
    pub fn next_seq(&self) -> Result<u64, EditError> {
        let _lock = self.session()?;
        self.take_seq()
    }

    /// Stage `change_set` as a pending action at the head of the stack; its inline contents
    /// move to the blob store.
    pub fn stage(
        &self,
        origin: Origin,
        source_tool: &str,
        label: &str,
        change_set: ChangeSet,
        preview_text: Content,
        details: Value,
    ) -> Result<StagedRecord, EditError> {
        let change_set = change_set.into_spooled(&self.workspace)?;
        self.stage_spooled(
            origin,
            source_tool,
            label,
            change_set,
            preview_text,
            details,
        )
    }

    /// [`Store::stage`] of a change set in a spool (a [`Preview`](crate::Preview)'s): the record
    /// is written from the spool, one change at a time.
    pub fn stage_spooled(
        &self,
        origin: Origin,
        source_tool: &str,
        label: &str,
        change_set: SpooledChangeSet,
        preview_text: Content,
        details: Value,
    ) -> Result<StagedRecord, EditError> {
        let fingerprint = change_set.fingerprint().to_owned();
        self.stage_payload(
            origin,
            source_tool,
            label,
            (change_set, None),
            fingerprint,
            preview_text,
            details,
        )
    }

    /// Stage an MCP tool call as a pending action at the head of the stack; resolving it makes
    /// the call (see [`ExternalActionRunner`](crate::ExternalActionRunner)).
    pub fn stage_mcp(
        &self,
        origin: Origin,
        source_tool: &str,
        label: &str,
        action: McpAction,
        preview_text: Content,
        details: Value,
    ) -> Result<PendingRecord, EditError> {
        let encoded = serde_json::to_vec(&action).unwrap_or_default();
        let fingerprint = format!("mcp:{}", content_hash(&encoded));
        let payload = (ChangeSet::new(), Some(action));
        self.stage_payload(
            origin,
            source_tool,
            label,
            payload,
            fingerprint,
            preview_text,
            details,
        )
    }

    #[expect(clippy::too_many_arguments, reason = "the fields of a pending record")]
    fn stage_payload<C: Serialize>(
        &self,
        origin: Origin,
        source_tool: &str,
        label: &str,
        (change_set, mcp): (C, Option<McpAction>),
        fingerprint: String,
        mut preview_text: Content,
        details: Value,
    ) -> Result<PendingRecord<C>, EditError> {
        preview_text.store(&Blobs::of(&self.workspace))?;
        let _lock = self.session()?;
        let seq = self.take_seq()?;
        let record = PendingRecord {
            id: format!("{ID_PREFIX}{source_tool}:{seq}"),
            seq,
            origin,
            source_tool: source_tool.to_owned(),
            label: label.to_owned(),
            created_at: unix_now(),
            order: seq,
            fingerprint,
            change_set,
            mcp,
            preview_text,
            details,
        };
        write_json(&self.record_path(PENDING_DIR, seq), &record)?;
        Ok(record)
    }

    /// Every pending action, head (highest `order`) first.
    pub fn pending(&self) -> Result<Vec<PendingRecord>, EditError> {
        let Some(_lock) = self.read_session()? else {
            return Ok(Vec::new());
        };
        let mut records: Vec<PendingRecord> = self.load_all(PENDING_DIR, pending_key)?;
        records.sort_by_key(|record| Reverse(record.order));
        Ok(records)
    }

    /// Every pending action's identifying fields, head first: [`Store::pending`] without
    /// reading change sets into memory.
    pub fn pending_summaries(&self) -> Result<Vec<PendingSummary>, EditError> {
        let Some(_lock) = self.read_session()? else {
            return Ok(Vec::new());
        };
        let mut records: Vec<PendingSummary> = self
            .load_all(PENDING_DIR, |summary: &PendingSummary| {
                (&summary.id, summary.seq)
            })?;
        records.sort_by_key(|record| Reverse(record.order));
        Ok(records)
    }

    /// The pending action with this id, or `None` when it is not pending.
    pub(crate) fn pending_record(&self, id: &str) -> Result<Option<PendingRecord>, EditError> {
        let Some(_lock) = self.read_session()? else {
            return Ok(None);
        };
        self.find_pending(id)
    }

    /// The pending actions of `origin`, head first.
    pub fn pending_for(&self, origin: &Origin) -> Result<Vec<PendingRecord>, EditError> {
        let mut records = self.pending()?;
        records.retain(|record| &record.origin == origin);
        Ok(records)
    }

    /// The pending or history record with this id; [`EditError::UnknownAction`] when neither.
    pub fn get(&self, id: &str) -> Result<StoredAction, EditError> {
        let unknown = || EditError::UnknownAction { id: id.to_owned() };
        let Some(_lock) = self.read_session()? else {
            return Err(unknown());
        };
        if let Some(record) = self.find_pending(id)? {
            return Ok(StoredAction::Pending(record));
        }
        self.find_history(id)?
            .map(StoredAction::Resolved)
            .ok_or_else(unknown)
    }

    /// Every resolved action, most recently resolved first.
    pub fn history(&self) -> Result<Vec<HistoryRecord>, EditError> {
        let Some(_lock) = self.read_session()? else {
            return Ok(Vec::new());
        };
        let mut records: Vec<HistoryRecord> = self.load_all(HISTORY_DIR, history_key)?;
        records.sort_by_key(|record| Reverse(record.action.order));
        Ok(records)
    }

    /// The most recently discarded action whose change set has this fingerprint.
    pub fn discarded_with_fingerprint(
        &self,
        fingerprint: &str,
    ) -> Result<Option<HistoryRecord>, EditError> {
        let Some(_lock) = self.read_session()? else {
            return Ok(None);
        };
        let mut summaries: Vec<HistorySummary> = self
            .load_all(HISTORY_DIR, |summary: &HistorySummary| {
                (&summary.id, summary.seq)
            })?;
        summaries.sort_by_key(|summary| Reverse(summary.order));
        match summaries.into_iter().find(|summary| {
            summary.outcome == Outcome::Discarded && summary.fingerprint == fingerprint
        }) {
            Some(summary) => self.find_history(&summary.id),
            None => Ok(None),
        }
    }

    /// Move a pending action to the head of the stack (after a failed apply).
    pub fn bump_to_head(&self, id: &str) -> Result<PendingRecord, EditError> {
        let _lock = self.session()?;
        let mut record = self.require_pending(id)?;
        record.order = self.take_seq()?;
        write_json(&self.record_path(PENDING_DIR, record.seq), &record)?;
        Ok(record)
    }

    /// Apply a pending action (only the files in `only`, when given), consuming it.
    ///
    /// Every selected file is checked against its base hash before any write; a mismatch is
    /// [`EditError::Stale`] naming every changed file, with nothing written and the action
    /// still pending. The files and the move to history land together or not at all.
    pub fn apply(
        &self,
        id: &str,
        only: Option<&[String]>,
        reason: &str,
        extra: Option<Extra>,
    ) -> Result<ApplyOutcome, EditError> {
        let _lock = self.session()?;
        self.tidy_blobs();
        let mut record = self.require_pending(id)?;
        if let Some(action) = &record.mcp {
            return Err(EditError::InvalidRequest(format!(
                "`{id}` calls the tool `{}` of the MCP server `{}`; it is applied through an MCP client, not by writing files.",
                action.apply.tool, action.server
            )));
        }
        let restricted = match only {
            None => None,
            Some([]) => {
                return Err(EditError::InvalidRequest(
                    "`only` names no file; name at least one file of the preview, or discard it."
                        .to_owned(),
                ));
            }
            Some(only) => Some(record.change_set.restrict(only)?),
        };
        let (selected, dropped_files) = match &restricted {
            Some((kept, dropped)) => (kept, dropped.clone()),
            None => (&record.change_set, Vec::new()),
        };
        let targets = self.check_fresh(selected)?;
        let applied_files = selected.paths();
        let total_replacements = selected.total_replacements();
        drop(restricted);
        record.order = self.take_seq()?;
        let history = HistoryRecord {
            action: record,
            outcome: Outcome::Applied,
            reason: reason.to_owned(),
            extra,
            resolved_at: unix_now(),
            applied_files,
            dropped_files: dropped_files.clone(),
            before: BTreeMap::new(),
            undone: false,
        };
        // Every file holds its base (checked above), so that is its original here.
        let mut files = Vec::with_capacity(targets.len());
        for (relative, path) in targets.into_iter().zip(&history.applied_files) {
            let change = history.action.change_set.get(path).ok_or_else(|| {
                EditError::InvalidRequest(format!("`{path}` is not part of this preview."))
            })?;
            files.push(FileWrite {
                relative,
                original: change.base_hash().map(Cow::Borrowed),
                content: change.new_content(),
            });
        }
        self.commit(Purpose::Apply, files, &history)?;
        Ok(ApplyOutcome {
            applied_files: history.applied_files.clone(),
            dropped_files,
            total_replacements,
            record: history,
        })
    }

    /// Discard a pending action: it moves to history with the reason; no file is touched.
    pub fn discard(
        &self,
        id: &str,
        reason: &str,
        extra: Option<Extra>,
    ) -> Result<HistoryRecord, EditError> {
        let _lock = self.session()?;
        self.tidy_blobs();
        let mut record = self.require_pending(id)?;
        record.order = self.take_seq()?;
        let history = HistoryRecord {
            dropped_files: record.change_set.paths(),
            action: record,
            outcome: Outcome::Discarded,
            reason: reason.to_owned(),
            extra,
            resolved_at: unix_now(),
            applied_files: Vec::new(),
            before: BTreeMap::new(),
            undone: false,
        };
        self.commit(Purpose::Discard, Vec::new(), &history)?;
        Ok(history)
    }

    /// Resolve a pending action whose payload is not a change set: under the store's lock,
    /// `perform` does the work (an MCP tool call, say) on the current record, and only when it
    /// succeeds does the action move to history as `outcome`. So two processes can never both
    /// perform one action. When `perform` fails, the action stays pending; a failed apply moves
    /// it to the head of the stack. No file is written either way.
    ///
    /// While the MCP call is made, a marker names it (`pending/<seq>.calling`); it goes with the
    /// move to history, or when the call fails. A marker found here was left by a process that
    /// stopped during its call (the lock is ours): the call may have run, so this try makes no
    /// call and fails with [`EditError::InterruptedCall`], and the next one calls again.
    pub fn resolve_external<T, E>(
        &self,
        id: &str,
        outcome: Outcome,
        reason: &str,
        extra: Option<Extra>,
        perform: impl FnOnce(&PendingRecord) -> Result<T, E>,
    ) -> Result<Result<T, E>, EditError> {
        let _lock = self.session()?;
        let mut record = self.require_pending(id)?;
        let marker_name = format!("{PENDING_DIR}/{}.calling", record.seq);
        let marker = self.workspace.state_dir().join(&marker_name);
        let call = record.mcp.as_ref().and_then(|action| {
            let call = match outcome {
                Outcome::Applied => Some(&action.apply),
                Outcome::Discarded => action.reject.as_ref(),
            }?;
            Some(McpCallMarker {
                server: action.server.clone(),
                tool: call.tool.clone(),
            })
        });
        if let Some(bytes) = fs::read_bytes(&marker)? {
            // The marker names the call that was made (it may be the other of apply and reject).
            let interrupted = serde_json::from_slice::<McpCallMarker>(&bytes)
                .ok()
                .or_else(|| call.clone());
            fs::remove_file(&marker)?;
            fs::sync_dir(&fs::parent_of(&marker))?;
            let (server, tool) = interrupted.map_or_else(
                || ("(unknown)".to_owned(), "(unknown)".to_owned()),
                |call| (call.server, call.tool),
            );
            return Err(EditError::InterruptedCall {
                id: id.to_owned(),
                server,
                tool,
            });
        }
        if let Some(call) = &call {
            fs::atomic_write_json(&marker, call)?;
        }
        let performed = perform(&record);
        let also_remove = call.map(|_| marker_name);
        match (&performed, outcome) {
            (Ok(_), Outcome::Applied | Outcome::Discarded) => {
                record.order = self.take_seq()?;
                let history = HistoryRecord {
                    action: record,
                    outcome,
                    reason: reason.to_owned(),
                    extra,
                    resolved_at: unix_now(),
                    applied_files: Vec::new(),
                    dropped_files: Vec::new(),
                    before: BTreeMap::new(),
                    undone: false,
                };
                let purpose = match outcome {
                    Outcome::Applied => Purpose::Apply,
                    Outcome::Discarded => Purpose::Discard,
                };
                self.commit_removing(purpose, Vec::new(), &history, also_remove)?;
            }
            (Err(_), _) => {
                if outcome == Outcome::Applied {
                    record.order = self.take_seq()?;
                    write_json(&self.record_path(PENDING_DIR, record.seq), &record)?;
                }
                if also_remove.is_some() {
                    fs::remove_file(&marker)?;
                }
            }
        }
        Ok(performed)
    }

    /// Revert an applied action, when every file it wrote is still byte-identical to what it
    /// wrote; otherwise [`EditError::UndoConflict`] names the changed files and nothing is
    /// reverted. Directories the apply created for new files stay (empty).
    pub fn undo(&self, id: &str) -> Result<HistoryRecord, EditError> {
        let _lock = self.session()?;
        self.tidy_blobs();
        let nothing_to_undo = |state| EditError::NothingToUndo {
            id: id.to_owned(),
            state,
        };
        let Some(mut record) = self.find_history(id)? else {
            return Err(if self.find_pending(id)?.is_some() {
                nothing_to_undo("is still pending")
            } else {
                EditError::UnknownAction { id: id.to_owned() }
            });
        };
        match (record.outcome, record.undone) {
            (Outcome::Discarded, _) => return Err(nothing_to_undo("was discarded")),
            (Outcome::Applied, true) => return Err(nothing_to_undo("was already undone")),
            (Outcome::Applied, false) => {}
        }
        if record.action.mcp.is_some() {
            return Err(nothing_to_undo(
                "called a tool of an MCP server, which resolve cannot revert",
            ));
        }
        let record_path = self.record_path(HISTORY_DIR, record.action.seq);
        let corrupt = |reason: String| EditError::CorruptState {
            path: record_path.clone(),
            reason,
        };
        let mut changed = Vec::new();
        let mut targets = Vec::new();
        let mut originals = Vec::new();
        for path in &record.applied_files {
            let written = record
                .action
                .change_set
                .get(path)
                .ok_or_else(|| corrupt(format!("applied file `{path}` is not in its change set")))?
                .new_content()
                .map(|content| content.hash().into_owned());
            let original = record
                .original(path)
                .ok_or_else(|| corrupt(format!("no original content of `{path}` is recorded")))?;
            let (relative, current) = self.hash_target(path)?;
            if current != written {
                changed.push(path.clone());
                continue;
            }
            targets.push((relative, current));
            originals.push(original);
        }
        if !changed.is_empty() {
            return Err(EditError::UndoConflict {
                id: id.to_owned(),
                files: changed,
            });
        }
        record.undone = true;
        // Every file still holds what the apply wrote, so that is its original here.
        let files = targets
            .into_iter()
            .zip(&originals)
            .map(|((relative, current), original)| FileWrite {
                relative,
                original: current.map(Cow::Owned),
                content: original.as_ref(),
            })
            .collect();
        self.commit(Purpose::Undo, files, &record)?;
        Ok(record)
    }

    /// Remove the blobs no record needs that are older than `grace`; returns how many files
    /// were removed. Applies, discards and undos do this themselves (with [`BLOB_GRACE`]).
    ///
    /// A record needs its preview text; a pending one, its new contents; an apply that can still
    /// be undone, its originals (undo compares the written files by hash). The new contents of a
    /// resolved action are not kept: its preview text shows what it changed.
    pub fn collect_garbage(&self, grace: Duration) -> Result<usize, EditError> {
        let Some(_lock) = self.read_session()? else {
            return Ok(0);
        };
        self.collect_garbage_locked(grace)
    }

    fn collect_garbage_locked(&self, grace: Duration) -> Result<usize, EditError> {
        let mut needed = HashSet::new();
        let mut need = |content: &Content| {
            if let Some(name) = content.blob_name() {
                needed.insert(name.to_owned());
            }
        };
        for dir in [PENDING_DIR, HISTORY_DIR] {
            self.for_each_record(dir, blob_use_key, |record: BlobUse| {
                record.needs(&mut need);
            })?;
        }
        Blobs::of(&self.workspace).remove_unneeded(&needed, grace)
    }

    /// [`Store::collect_garbage`] as a resolution starts, under its lock, at most once per
    /// [`BLOB_GRACE`] (it reads every record): before the resolution loads its own record, so
    /// the two never take memory at once. A failure here is not the resolution's failure: the
    /// blobs stay until the next try.
    fn tidy_blobs(&self) {
        let blobs = Blobs::of(&self.workspace);
        if blobs.collected_within(BLOB_GRACE) {
            return;
        }
        if self.collect_garbage_locked(BLOB_GRACE).is_ok() {
            let _ = blobs.mark_collected();
        }
    }

    /// Take the lock without recovering.
    fn lock(&self) -> Result<StoreLock, EditError> {
        StoreLock::acquire_with_timeout(&self.workspace, self.lock_timeout)
    }

    /// Take the lock and recover; the lock is held until the returned guard drops.
    fn session(&self) -> Result<StoreLock, EditError> {
        let lock = self.lock()?;
        transaction::recover(&self.workspace)?;
        Ok(lock)
    }

    /// Like [`Store::session`], but `None` (nothing created) when there is no state yet.
    fn read_session(&self) -> Result<Option<StoreLock>, EditError> {
        if self.workspace.state_dir().is_dir() {
            self.session().map(Some)
        } else {
            Ok(None)
        }
    }

    /// Write `history` and, unless it is an undo, remove the pending record, in one
    /// transaction with `files`.
    fn commit(
        &self,
        purpose: Purpose,
        files: Vec<FileWrite<'_>>,
        history: &HistoryRecord,
    ) -> Result<(), EditError> {
        self.commit_removing(purpose, files, history, None)
    }

    /// [`Store::commit`], also removing the state file `also_remove` (relative to the state
    /// directory) in the same transaction.
    fn commit_removing(
        &self,
        purpose: Purpose,
        files: Vec<FileWrite<'_>>,
        history: &HistoryRecord,
        also_remove: Option<String>,
    ) -> Result<(), EditError> {
        let files = merge_aliases(files)?;
        let seq = history.action.seq;
        let mut state = vec![StateChange::Write {
            path: format!("{HISTORY_DIR}/{seq}.json"),
            record: history,
        }];
        match purpose {
            Purpose::Apply | Purpose::Discard => state.push(StateChange::Remove {
                path: format!("{PENDING_DIR}/{seq}.json"),
            }),
            Purpose::Undo => {}
        }
        state.extend(also_remove.map(|path| StateChange::Remove { path }));
        Transaction {
            workspace: &self.workspace,
            purpose,
            action: history.action.id.clone(),
            files,
            state,
        }
        .run()
    }

    /// Check every file of `set` against its base (absence for a create), reading one file at
    /// a time; on success each file's real root-relative name, in the order of
    /// `set`.
    fn check_fresh(&self, set: &ChangeSet) -> Result<Vec<String>, EditError> {
        let mut stale = Vec::new();
        let mut files = Vec::with_capacity(set.len());
        for (path, change) in set.files() {
            let (relative, current) = match self.hash_target(path) {
                Ok(target) => target,
                // A directory now stands where the preview saw a file (or none): it changed.
                Err(EditError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::IsADirectory =>
                {
                    stale.push(path.to_owned());
                    continue;
                }
                Err(error) => return Err(error),
            };
            if change.base_hash() != current.as_deref() {
                stale.push(path.to_owned());
            }
            files.push(relative);
        }
        if stale.is_empty() {
            Ok(files)
        } else {
            Err(EditError::Stale { files: stale })
        }
    }

    /// Confine `path`, follow it to the real file, and hash that: its root-relative name and
    /// its content's hash (`None` when absent).
    fn hash_target(&self, path: &str) -> Result<Target, EditError> {
        let resolved = self.workspace.resolve(path)?;
        let real = self.workspace.real_path(&resolved.absolute);
        let relative =
            self.workspace
                .relative_name(&real)
                .ok_or_else(|| EditError::SymlinkEscape {
                    path: path.to_owned(),
                    target: real.clone(),
                })?;
        let current = fs::read_bytes(&real)?.map(|bytes| content_hash(&bytes));
        Ok((relative, current))
    }

    /// Hand out the next seq: never below what the counter says nor below any stored record.
    fn take_seq(&self) -> Result<u64, EditError> {
        let path = self.workspace.state_dir().join(COUNTERS_FILE);
        let exhausted = |path: PathBuf| EditError::CorruptState {
            path,
            reason: "its number leaves no id to hand out".to_owned(),
        };
        let counted = read_json::<Counters>(&path)?.map_or(1, |counters| counters.next_seq);
        let mut seq = counted.max(1);
        for dir in [PENDING_DIR, HISTORY_DIR] {
            let dir = self.workspace.state_dir().join(dir);
            for name in fs::list_dir(&dir)? {
                if let Some(stored) = record_seq(&name) {
                    let after = stored
                        .checked_add(1)
                        .ok_or_else(|| exhausted(dir.join(&name)))?;
                    seq = seq.max(after);
                }
            }
        }
        let next_seq = seq.checked_add(1).ok_or_else(|| exhausted(path.clone()))?;
        write_json(&path, &Counters { next_seq })?;
        Ok(seq)
    }

    fn require_pending(&self, id: &str) -> Result<PendingRecord, EditError> {
        self.find_pending(id)?
            .ok_or_else(|| EditError::NotPending { id: id.to_owned() })
    }

    fn find_pending(&self, id: &str) -> Result<Option<PendingRecord>, EditError> {
        let Some(seq) = id_seq(id) else {
            return Ok(None);
        };
        let record = read_record(&self.record_path(PENDING_DIR, seq), seq, pending_key)?;
        Ok(record.filter(|record| record.id == id))
    }

    fn find_history(&self, id: &str) -> Result<Option<HistoryRecord>, EditError> {
        let Some(seq) = id_seq(id) else {
            return Ok(None);
        };
        let record = read_record(&self.record_path(HISTORY_DIR, seq), seq, history_key)?;
        Ok(record.filter(|record| record.action.id == id))
    }

    fn record_path(&self, dir: &str, seq: u64) -> PathBuf {
        self.workspace
            .state_dir()
            .join(dir)
            .join(format!("{seq}.json"))
    }

    /// Every record in `dir`; a record that does not parse is an error, never skipped.
    fn load_all<T: DeserializeOwned>(
        &self,
        dir: &str,
        key: fn(&T) -> (&str, u64),
    ) -> Result<Vec<T>, EditError> {
        let mut records = Vec::new();
        self.for_each_record(dir, key, |record| records.push(record))?;
        Ok(records)
    }

    /// Hand every record in `dir` to `visit`, one at a time.
    fn for_each_record<T: DeserializeOwned>(
        &self,
        dir: &str,
        key: fn(&T) -> (&str, u64),
        mut visit: impl FnMut(T),
    ) -> Result<(), EditError> {
        let dir = self.workspace.state_dir().join(dir);
        for name in fs::list_dir(&dir)? {
            if let Some(seq) = record_seq(&name)
                && let Some(record) = read_record(&dir.join(&name), seq, key)?
            {
                visit(record);
            }
        }
        Ok(())
    }
}

/// Create `<root>/.resolve/` with its record directories and `.gitignore` when missing;
/// returns its path.
pub(crate) fn ensure_state_dir(workspace: &Workspace) -> Result<PathBuf, EditError> {
    let dir = workspace.state_dir();
    for sub in [PENDING_DIR, HISTORY_DIR] {
        fs::create_dir_all(&dir.join(sub))?;
    }
    let gitignore = dir.join(".gitignore");
    if fs::read_bytes(&gitignore)?.is_none() {
        fs::atomic_write(&gitignore, b"*\n")?;
    }
    Ok(dir)
}

/// A file to write: its real root-relative name and its current hash (`None`: absent).
type Target = (String, Option<String>);

/// The seq of a record file name (`42.json`); `None` for anything else (temp files).
fn record_seq(name: &str) -> Option<u64> {
    name.strip_suffix(".json")?.parse().ok()
}

/// The seq of a pending id (`pending-action:<tool>:<seq>`).
fn id_seq(id: &str) -> Option<u64> {
    let (_tool, seq) = id.strip_prefix(ID_PREFIX)?.rsplit_once(':')?;
    seq.parse().ok()
}

/// Write each real file once: a change set may name one file twice (a path and a symlink to
/// it, both given to `ast_edit`); two writes of one target would collide in the transaction.
/// The two changes must agree.
fn merge_aliases(files: Vec<FileWrite>) -> Result<Vec<FileWrite>, EditError> {
    let mut merged: Vec<FileWrite> = Vec::with_capacity(files.len());
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for file in files {
        match index.get(&file.relative).map(|at| &merged[*at]) {
            Some(kept) if kept.content.map(Content::hash) == file.content.map(Content::hash) => {}
            Some(_) => {
                return Err(EditError::InvalidRequest(format!(
                    "The change names `{}` twice (through a symlink) with different contents; stage one change per file.",
                    file.relative
                )));
            }
            None => {
                index.insert(file.relative.clone(), merged.len());
                merged.push(file);
            }
        }
    }
    Ok(merged)
}

/// The id and seq a pending record carries.
fn pending_key(record: &PendingRecord) -> (&str, u64) {
    (&record.id, record.seq)
}

/// The id and seq a record read for its blobs carries.
fn blob_use_key(record: &BlobUse) -> (&str, u64) {
    (&record.id, record.seq)
}

/// The id and seq a history record carries.
fn history_key(record: &HistoryRecord) -> (&str, u64) {
    (&record.action.id, record.action.seq)
}

/// Read the record stored as `<seq>.json`; a record whose own seq or id disagrees with its
/// file name is corrupt (resolving it would move or remove another record's file).
fn read_record<T: DeserializeOwned>(
    path: &Path,
    seq: u64,
    key: fn(&T) -> (&str, u64),
) -> Result<Option<T>, EditError> {
    let Some(record) = read_json::<T>(path)? else {
        return Ok(None);
    };
    let (id, own_seq) = key(&record);
    if own_seq != seq || id_seq(id) != Some(seq) {
        return Err(EditError::CorruptState {
            path: path.to_path_buf(),
            reason: format!("it holds `{id}` with seq {own_seq}, which does not match its name"),
        });
    }
    Ok(Some(record))
}

/// Parse the JSON file at `path` as it is read (a record's text is never held whole);
/// `None` when it does not exist.
fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, EditError> {
    let Some(file) = fs::open_existing(path)? else {
        return Ok(None);
    };
    serde_json::from_reader(std::io::BufReader::with_capacity(64 * 1024, file))
        .map(Some)
        .map_err(|error| {
            if error.is_io() {
                EditError::io("read", path, error.into())
            } else {
                EditError::CorruptState {
                    path: path.to_path_buf(),
                    reason: error.to_string(),
                }
            }
        })
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), EditError> {
    fs::atomic_write_json(path, value)
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn origins_round_trip_as_their_strings() {
        for (origin, text) in [
            (Origin::Cli, "cli"),
            (Origin::Agent, "agent"),
            (Origin::Mcp("conn-7".into()), "mcp:conn-7"),
        ] {
            assert_eq!(origin.to_string(), text);
            assert_eq!(text.parse::<Origin>().unwrap(), origin);
            let json = serde_json::to_string(&origin).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<Origin>(&json).unwrap(), origin);
        }
    }

    #[test]
    fn unknown_origins_are_refused() {
        for text in ["", "mcp:", "human", "CLI"] {
            let err = text.parse::<Origin>().unwrap_err();
            assert!(matches!(err, EditError::UnknownOrigin { .. }), "{err}");
        }
        assert!(serde_json::from_str::<Origin>("\"robot\"").is_err());
    }

    #[test]
    fn ids_carry_their_seq_and_tool_names_may_hold_colons() {
        assert_eq!(id_seq("pending-action:edit:12"), Some(12));
        assert_eq!(id_seq("pending-action:a:b:3"), Some(3));
        assert_eq!(id_seq("edit:12"), None);
        assert_eq!(id_seq("pending-action:edit:x"), None);
        assert_eq!(record_seq("12.json"), Some(12));
        assert_eq!(record_seq(".resolve-abc.tmp"), None);
    }

    #[test]
    fn records_use_camel_case_keys() {
        let record = PendingRecord {
            id: "pending-action:edit:1".into(),
            seq: 1,
            origin: Origin::Agent,
            source_tool: "edit".into(),
            label: "Edit: a".into(),
            created_at: 5,
            order: 1,
            change_set: ChangeSet::new(),
            mcp: None,
            preview_text: String::new().into(),
            details: Value::Null,
            fingerprint: "f".into(),
        };
        let history = HistoryRecord {
            action: record,
            outcome: Outcome::Discarded,
            reason: "no".into(),
            extra: None,
            resolved_at: 6,
            applied_files: Vec::new(),
            dropped_files: Vec::new(),
            before: BTreeMap::from([("new.txt".to_owned(), None)]),
            undone: false,
        };
        let json = serde_json::to_value(&history).unwrap();
        for key in [
            "sourceTool",
            "createdAt",
            "changeSet",
            "previewText",
            "resolvedAt",
            "appliedFiles",
            "droppedFiles",
        ] {
            assert!(json.get(key).is_some(), "missing {key} in {json}");
        }
        assert_eq!(json["outcome"], "discarded");
        assert_eq!(json["before"]["new.txt"], Value::Null);
        assert!(json.get("extra").is_none());
        assert_eq!(
            serde_json::from_value::<HistoryRecord>(json).unwrap(),
            history
        );
    }
}
