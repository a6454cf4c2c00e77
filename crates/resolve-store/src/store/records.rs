//! The records of the store and their ids: who staged an action ([`Origin`]), a pending
//! action ([`PendingRecord`]), a resolved one ([`HistoryRecord`]), the partial views that
//! listing and clean-up read instead of whole records, and reading and writing them as JSON.
//! Every record carries the format's version; a record of another version is refused.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use resolve_core::{DecidedBy, Extra};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::review::{Amendment, Review};
use crate::change_set::{ChangeSet, Content};
use crate::check_outcome::CheckOutcome;
use crate::error::StoreError;
use crate::fs;
use crate::mcp_action::{McpAction, Payload};
use crate::spool::SpooledChangeSet;

/// Every pending id starts with this.
pub(super) const ID_PREFIX: &str = "pending-action:";

/// The version of the record format this build writes and reads.
pub const RECORD_VERSION: u32 = 1;

/// A record's format version: written as [`RECORD_VERSION`]; reading any other fails, naming
/// the version found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordVersion;

impl Serialize for RecordVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(RECORD_VERSION)
    }
}

impl<'de> Deserialize<'de> for RecordVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match u64::deserialize(deserializer)? {
            version if version == u64::from(RECORD_VERSION) => Ok(Self),
            version => Err(serde::de::Error::custom(format_args!(
                "unknown record format version {version}; this resolve reads version {RECORD_VERSION}"
            ))),
        }
    }
}

/// Who staged a pending action; a model's `resolve` sees only its own origin's actions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A person on the command line.
    Cli,
    /// `resolve agent` runs (all runs in one root share it).
    Agent,
    /// An MCP client connection, by connection id.
    Mcp(String),
    /// One session of a host that runs `resolve` from its hooks and as its MCP server (Claude
    /// Code's `session_id`): what the session's hooks stage, its `resolve mcp` resolves.
    HostSession {
        /// The host, one of [`HOST_NAMES`] (`claude-code`).
        host: String,
        /// The host's id of the session.
        session: String,
    },
}

/// The hosts whose sessions are origins of their own (`claude-code:<session id>`).
pub const HOST_NAMES: [&str; 2] = ["claude-code", "codex"];

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cli => f.write_str("cli"),
            Self::Agent => f.write_str("agent"),
            Self::Mcp(connection) => write!(f, "mcp:{connection}"),
            Self::HostSession { host, session } => write!(f, "{host}:{session}"),
        }
    }
}

impl FromStr for Origin {
    type Err = StoreError;

    fn from_str(origin: &str) -> Result<Self, Self::Err> {
        match origin {
            "cli" => Ok(Self::Cli),
            "agent" => Ok(Self::Agent),
            other => match other.split_once(':') {
                Some(("mcp", connection)) if !connection.is_empty() => {
                    Ok(Self::Mcp(connection.to_owned()))
                }
                Some((host, session)) if HOST_NAMES.contains(&host) && !session.is_empty() => {
                    Ok(Self::HostSession {
                        host: host.to_owned(),
                        session: session.to_owned(),
                    })
                }
                Some(_) | None => Err(StoreError::UnknownOrigin {
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
    /// The record format ([`RECORD_VERSION`]).
    pub version: RecordVersion,
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
    /// When present, the payload: an MCP tool call to make instead of writing files; records
    /// without it carry a change set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpAction>,
    /// The preview text shown when it was staged (in the blob store).
    pub preview_text: Content,
    /// The producer's result details (not the list of files some results show, which is the
    /// change set's; see `Preview::files_key` in `resolve-edit`).
    pub details: Value,
    /// [`ChangeSet::fingerprint`] of the change set.
    pub fingerprint: String,
    /// A reviewer's amendments of its files, oldest first (their contents are in the change set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amendments: Vec<Amendment>,
    /// What re-derives its change on a file that moved (an `ast_edit` request), handed to the
    /// store's [`Rebase::rederive`](crate::Rebase::rederive) at apply; records without it
    /// (older ones, other producers) rebase by lines only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rederive: Option<Value>,
    /// The files that had moved since the preview when its origin was last told so (path →
    /// the hash they held then, empty when absent), so each move is told once (see
    /// [`Store::take_moved_notes`](crate::Store::take_moved_notes)).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub told_moved: BTreeMap<String, String>,
    /// The outcome of its last check (`resolve check`, the model's `check` tool); records
    /// written before checks existed have none. It counts only while it was made of this
    /// change set (see [`PendingRecord::last_check`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<CheckOutcome>,
    /// The signature of this user's `resolve` over what resolving it does (see the
    /// `signature` module); records written before signatures existed, or by anyone else (a
    /// cloned `.resolve/`), have none or an invalid one and are foreign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    /// Whether this user's `resolve` did not write it ([`PendingRecord::mac`] is missing or
    /// wrong): decided by the store when it reads the record; `true` until then. A model never
    /// resolves a foreign action; a person does, naming it.
    #[serde(skip, default = "foreign_until_verified")]
    pub foreign: bool,
}

/// A record read without the store's key is foreign until the store verified it.
fn foreign_until_verified() -> bool {
    true
}

/// A pending record as staging returns it: its change set is still in the spool it was
/// written from, so staging a change to every file of a tree never holds all of it.
pub type StagedRecord = PendingRecord<SpooledChangeSet>;

impl StagedRecord {
    /// The record as the store reads it back: its change set loaded from the spool.
    pub fn load(&self) -> Result<PendingRecord, StoreError> {
        Ok(PendingRecord {
            version: RecordVersion,
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
            amendments: self.amendments.clone(),
            rederive: self.rederive.clone(),
            told_moved: self.told_moved.clone(),
            check: self.check.clone(),
            mac: self.mac.clone(),
            foreign: self.foreign,
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

impl<C> PendingRecord<C> {
    /// The outcome of its last check, when that check ran on this very change set: a preview
    /// amended since (its fingerprint changed) has none, and a re-staged one is a new record.
    pub fn last_check(&self) -> Option<&CheckOutcome> {
        self.check
            .as_ref()
            .filter(|check| check.fingerprint == self.fingerprint)
    }
}

/// The identifying fields of a [`PendingRecord`], read without its change set, preview text
/// and details: what keeping a pending stack in step with the store needs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingSummary {
    /// Checked when read; see [`RecordVersion`].
    #[serde(rename = "version")]
    _version: RecordVersion,
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
pub(super) struct HistorySummary {
    #[serde(rename = "version")]
    _version: RecordVersion,
    pub(super) id: String,
    pub(super) seq: u64,
    pub(super) order: u64,
    pub(super) fingerprint: String,
    pub(super) outcome: Outcome,
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

/// Who decided one resolution and what the model had asked, passed to each apply or discard
/// (see [`Store::apply_as`](super::Store::apply_as)): it is written to the history record and
/// decides whether the staging model is told through a [`ReviewerNote`](super::ReviewerNote).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribution {
    /// Who decided.
    pub decided_by: DecidedBy,
    /// The model's reason when someone else decided over its request; kept in the history
    /// beside the recorded reason when the two differ.
    pub model_reason: Option<String>,
}

impl Attribution {
    /// The model decided its own request.
    pub fn model() -> Self {
        Self {
            decided_by: DecidedBy::Model,
            model_reason: None,
        }
    }

    /// `decided_by` decided over the model's request, whose reason was `model_reason`.
    pub fn over_model(decided_by: DecidedBy, model_reason: impl Into<String>) -> Self {
        Self {
            decided_by,
            model_reason: Some(model_reason.into()),
        }
    }

    /// The model's reason beside `reason` in a record: only when someone else decided with a
    /// different one.
    pub(crate) fn model_reason_beside(&self, reason: &str) -> Option<String> {
        self.model_reason
            .as_deref()
            .filter(|model| *model != reason)
            .map(str::to_owned)
    }
}

/// Who decides through a store that resolves as `resolver` when nobody said otherwise: a
/// person at the command line, the model anywhere else.
pub fn default_decider(resolver: Option<&Origin>) -> DecidedBy {
    match resolver {
        Some(Origin::Cli) => DecidedBy::Person,
        Some(Origin::Agent | Origin::Mcp(_) | Origin::HostSession { .. }) | None => {
            DecidedBy::Model
        }
    }
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
    /// Where it was resolved: the process that applied or discarded it (`cli`, `agent`,
    /// `mcp:<id>`), as its [`Store::resolved_by`](super::Store::resolved_by) says; `None` when
    /// that store was not told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<Origin>,
    /// Who decided it (`model`, `person` or `policy`), as the decision's [`Attribution`] says;
    /// `None` when the store was given none and knows no resolver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<DecidedBy>,
    /// The model's own reason, kept when a person decided with a different one (`reason` is
    /// then the person's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_reason: Option<String>,
    /// Files written (all of them, or the `only` subset).
    pub applied_files: Vec<String>,
    /// Files of the change set that were not written.
    pub dropped_files: Vec<String>,
    /// Whether the apply was undone.
    pub undone: bool,
    /// What a selective apply landed hunk by hunk and what it rejected, and why; `None` for a
    /// whole-file apply or a discard. The change set holds what each file received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
    /// The git commit made for this apply (a commit per apply, `resolve apply --commit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Why no commit was made although one was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_committed: Option<String>,
}

impl HistoryRecord {
    /// Record what came of the commit asked for after this apply.
    pub fn set_commit(&mut self, fact: &CommitFact) {
        match fact {
            CommitFact::Committed { commit } => {
                self.commit = Some(commit.clone());
                self.not_committed = None;
            }
            CommitFact::NotCommitted { reason } => {
                self.commit = None;
                self.not_committed = Some(reason.clone());
            }
        }
    }

    /// The content the applied file `path` had before the apply (`None`: it did not exist),
    /// for undo; `None` when `path` is not part of the change set. An apply writes only files
    /// that still hold the base their change was computed from, and keeps that content in the
    /// blob store under its hash.
    pub fn original(&self, path: &str) -> Option<Option<Content>> {
        original_of(&self.action.change_set, path)
    }
}

/// The original of the applied file `path` of `change_set` (see [`HistoryRecord::original`]).
pub(super) fn original_of(change_set: &ChangeSet, path: &str) -> Option<Option<Content>> {
    let change = change_set.get(path)?;
    Some(change.base_hash().map(|blob| Content::Stored {
        blob: blob.to_owned(),
    }))
}

/// A history record as stored: the pending record's fields and the resolution's side by side.
/// Reading it through this flat shape avoids `#[serde(flatten)]` on the way in, which would
/// buffer the whole record (every changed file) as an untyped tree first.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HistoryFields {
    version: RecordVersion,
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
    #[serde(default)]
    amendments: Vec<Amendment>,
    #[serde(default)]
    rederive: Option<Value>,
    #[serde(default)]
    told_moved: BTreeMap<String, String>,
    check: Option<CheckOutcome>,
    #[serde(default)]
    mac: Option<String>,
    outcome: Outcome,
    reason: String,
    #[serde(default)]
    extra: Option<Extra>,
    resolved_at: u64,
    #[serde(default)]
    resolved_by: Option<Origin>,
    #[serde(default)]
    decided_by: Option<DecidedBy>,
    #[serde(default)]
    model_reason: Option<String>,
    applied_files: Vec<String>,
    dropped_files: Vec<String>,
    undone: bool,
    #[serde(default)]
    review: Option<Review>,
    #[serde(default)]
    commit: Option<String>,
    #[serde(default)]
    not_committed: Option<String>,
}

impl From<HistoryFields> for HistoryRecord {
    fn from(fields: HistoryFields) -> Self {
        Self {
            action: PendingRecord {
                version: fields.version,
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
                amendments: fields.amendments,
                rederive: fields.rederive,
                told_moved: fields.told_moved,
                check: fields.check,
                mac: fields.mac,
                foreign: true,
            },
            outcome: fields.outcome,
            reason: fields.reason,
            extra: fields.extra,
            resolved_at: fields.resolved_at,
            resolved_by: fields.resolved_by,
            decided_by: fields.decided_by,
            model_reason: fields.model_reason,
            applied_files: fields.applied_files,
            dropped_files: fields.dropped_files,
            undone: fields.undone,
            review: fields.review,
            commit: fields.commit,
            not_committed: fields.not_committed,
        }
    }
}

/// What came of the git commit asked for after an apply (see
/// [`Store::record_commit`](super::Store::record_commit)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitFact {
    /// One commit holds the apply's files.
    Committed {
        /// The commit's full id.
        commit: String,
    },
    /// No commit was made; the apply stands.
    NotCommitted {
        /// Why, in a sentence the person and the model can read.
        reason: String,
    },
}

/// What [`Store::get`](super::Store::get) finds.
#[derive(Debug, Clone, PartialEq)]
#[expect(
    clippy::large_enum_variant,
    reason = "one is read at a time, by value; boxing the history record would only add an allocation"
)]
pub enum StoredAction {
    /// Still pending.
    Pending(PendingRecord),
    /// Applied or discarded.
    Resolved(HistoryRecord),
}

/// The result of [`Store::apply`](super::Store::apply).
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
    /// Files that changed since the preview and received the preview rebased onto them.
    pub rebased_files: Vec<String>,
    /// Those of [`ApplyOutcome::rebased_files`] whose change was re-derived (the `ast_edit`
    /// rewrite run again on their current bytes) rather than merged by lines.
    pub rederived_files: Vec<String>,
}

/// The seq of a pending id (`pending-action:<tool>:<seq>`).
pub(super) fn id_seq(id: &str) -> Option<u64> {
    let (_tool, seq) = id.strip_prefix(ID_PREFIX)?.rsplit_once(':')?;
    seq.parse().ok()
}

/// The id and seq a pending record carries.
pub(super) fn pending_key(record: &PendingRecord) -> (&str, u64) {
    (&record.id, record.seq)
}

/// The id and seq a history record carries.
pub(super) fn history_key(record: &HistoryRecord) -> (&str, u64) {
    (&record.action.id, record.action.seq)
}

/// Read the record stored as `<seq>.json`; a record whose own seq or id disagrees with its
/// file name is corrupt (resolving it would move or remove another record's file).
pub(super) fn read_record<T: DeserializeOwned>(
    path: &Path,
    seq: u64,
    key: fn(&T) -> (&str, u64),
) -> Result<Option<T>, StoreError> {
    let Some(record) = read_json::<T>(path)? else {
        return Ok(None);
    };
    let (id, own_seq) = key(&record);
    if own_seq != seq || id_seq(id) != Some(seq) {
        return Err(StoreError::CorruptState {
            path: path.to_path_buf(),
            reason: format!("it holds `{id}` with seq {own_seq}, which does not match its name"),
        });
    }
    Ok(Some(record))
}

/// Parse the JSON file at `path`; `None` when it does not exist. The text is read whole and
/// parsed from memory, several times faster than parsing it as it is read (which took a tenth
/// of an apply's CPU on its pending record), at the cost of holding the text while parsing.
pub(super) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, StoreError> {
    let Some(text) = fs::read_state_file(path, u64::MAX)? else {
        return Ok(None);
    };
    serde_json::from_slice(&text)
        .map(Some)
        .map_err(|error| StoreError::CorruptState {
            path: path.to_path_buf(),
            reason: error.to_string(),
        })
}

pub(super) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    fs::atomic_write_json(path, value)
}

pub(super) fn unix_now() -> u64 {
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
    fn host_session_origins_round_trip_and_name_a_known_host() {
        let origin = Origin::HostSession {
            host: "claude-code".into(),
            session: "329ca72c-6ace".into(),
        };
        assert_eq!(origin.to_string(), "claude-code:329ca72c-6ace");
        assert_eq!(
            "claude-code:329ca72c-6ace".parse::<Origin>().unwrap(),
            origin
        );
        for text in ["claude-code:", "editor:abc"] {
            assert!(text.parse::<Origin>().is_err(), "{text}");
        }
    }

    #[test]
    fn unknown_origins_are_refused() {
        for text in ["", "mcp:", "human", "CLI"] {
            let err = text.parse::<Origin>().unwrap_err();
            assert!(matches!(err, StoreError::UnknownOrigin { .. }), "{err}");
        }
        assert!(serde_json::from_str::<Origin>("\"robot\"").is_err());
    }

    #[test]
    fn ids_carry_their_seq_and_tool_names_may_hold_colons() {
        assert_eq!(id_seq("pending-action:edit:12"), Some(12));
        assert_eq!(id_seq("pending-action:a:b:3"), Some(3));
        assert_eq!(id_seq("edit:12"), None);
        assert_eq!(id_seq("pending-action:edit:x"), None);
    }

    #[test]
    fn records_use_camel_case_keys() {
        let record = PendingRecord {
            version: RecordVersion,
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
            amendments: Vec::new(),
            rederive: None,
            told_moved: BTreeMap::new(),
            check: None,
            mac: None,
            foreign: true,
        };
        let history = HistoryRecord {
            action: record,
            outcome: Outcome::Discarded,
            reason: "no".into(),
            extra: None,
            resolved_at: 6,
            resolved_by: None,
            decided_by: None,
            model_reason: None,
            applied_files: Vec::new(),
            dropped_files: Vec::new(),
            undone: false,
            commit: None,
            not_committed: None,
            review: None,
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
        assert_eq!(json["version"], 1);
        assert!(json.get("extra").is_none());
        assert!(
            json.get("resolvedBy").is_none(),
            "optional on write: {json}"
        );
        assert_eq!(
            serde_json::from_value::<HistoryRecord>(json).unwrap(),
            history
        );
    }

    #[test]
    fn where_a_record_was_resolved_is_kept_as_resolved_by() {
        let mut json = serde_json::json!({
            "version": 1, "id": "pending-action:edit:1", "seq": 1, "origin": "agent",
            "sourceTool": "edit", "label": "Edit: a", "createdAt": 5, "order": 2,
            "previewText": "", "details": null, "fingerprint": "f", "outcome": "applied",
            "reason": "ok", "resolvedAt": 6, "appliedFiles": [], "droppedFiles": [],
            "undone": false
        });
        let old: HistoryRecord = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(old.resolved_by, None, "records written before it was kept");
        json["resolvedBy"] = "mcp:conn-7".into();
        let record: HistoryRecord = serde_json::from_value(json).unwrap();
        assert_eq!(record.resolved_by, Some(Origin::Mcp("conn-7".into())));
        let written = serde_json::to_value(&record).unwrap();
        assert_eq!(written["resolvedBy"], "mcp:conn-7");
        assert_eq!(written["version"], 1);
    }
}
