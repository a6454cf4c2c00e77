//! Applying and discarding a pending action, whole or as a reviewer picked it ([`ReviewedApply`]):
//! the freshness check of every file against its base, and the transaction that writes the
//! files, moves the record to the history and leaves a reviewer note, together.

use std::borrow::Cow;
use std::collections::HashMap;

use resolve_core::Extra;

use serde::Serialize;

use super::Store;
use super::notes::{NoteResolution, ReviewerNote};
use super::rebasing::{Keep, unless_directory};
use super::records::{
    ApplyOutcome, Attribution, CommitFact, HistoryRecord, Outcome, PendingRecord, unix_now,
};
use super::review::Review;
use crate::change_set::{ChangeSet, Content, FileChange};
use crate::error::{Invariant, StoreError};
use crate::fs;
use crate::hash::content_hash;
use crate::layout::{RecordKind, note_relative};
use crate::transaction::{FileWrite, Purpose, StateChange, Transaction};

/// One resolution's reason, `extra` and who decided it, as [`Store::land`] records them.
struct Resolution<'a> {
    reason: &'a str,
    extra: Option<Extra>,
    attribution: Option<&'a Attribution>,
}

/// A file to write: its real root-relative name and its current hash (`None`: absent).
pub(super) type Target = (String, Option<String>);

/// One file of a [`ReviewedApply`]: what lands in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landing {
    /// The file, as the change set names it.
    pub path: String,
    /// What to write instead of the previewed content (the base with some of its hunks), or
    /// `None` to write the previewed content.
    pub content: Option<Content>,
    /// The replacements counted for it, when `content` replaces the previewed content.
    pub replacements: usize,
}

/// A selective apply of a pending action, as a reviewer decided it: the files that land and
/// what each receives. Files of the change set that are not named are dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewedApply {
    /// The [`ChangeSet::fingerprint`] of the change set the selection was made on; when the
    /// action has changed since (it was amended), the apply is refused.
    pub fingerprint: String,
    /// The files that land, each once.
    pub landings: Vec<Landing>,
    /// What to record about the hunks picked and the reasons given.
    pub review: Option<Review>,
}

impl Store {
    /// The history record of `action` resolved now by this store's resolver with `outcome`,
    /// `reason` and `extra`, decided as `attribution` says; it lists no applied or dropped
    /// files, no review and no commit (callers fill in what their resolution has).
    pub(super) fn resolved_now(
        &self,
        action: PendingRecord,
        outcome: Outcome,
        reason: &str,
        extra: Option<Extra>,
        attribution: Option<&Attribution>,
    ) -> HistoryRecord {
        HistoryRecord {
            action,
            outcome,
            reason: reason.to_owned(),
            extra,
            resolved_at: unix_now(),
            resolved_by: self.resolver.clone(),
            decided_by: attribution.map(|attribution| attribution.decided_by),
            model_reason: attribution
                .and_then(|attribution| attribution.model_reason_beside(reason)),
            applied_files: Vec::new(),
            dropped_files: Vec::new(),
            undone: false,
            review: None,
            commit: None,
            not_committed: None,
        }
    }
}

impl Store {
    /// Apply a pending action (only the files in `only`, when given), consuming it.
    ///
    /// Every selected file is checked against its base hash before any write; a mismatch is
    /// [`StoreError::Stale`] naming every changed file, with nothing written and the action
    /// still pending. The files and the move to history land together or not at all. A store
    /// that [requires a check](Store::requiring_check) first refuses a preview without a
    /// passing one ([`StoreError::CheckRequired`]).
    pub fn apply(
        &self,
        id: &str,
        only: Option<&[String]>,
        reason: &str,
        extra: Option<Extra>,
    ) -> Result<ApplyOutcome, StoreError> {
        self.apply_attributed(id, only, reason, extra, self.default_attribution().as_ref())
    }

    /// [`Store::apply`], recording who decided as `attribution` says.
    pub fn apply_as(
        &self,
        id: &str,
        only: Option<&[String]>,
        reason: &str,
        extra: Option<Extra>,
        attribution: &Attribution,
    ) -> Result<ApplyOutcome, StoreError> {
        self.apply_attributed(id, only, reason, extra, Some(attribution))
    }

    fn apply_attributed(
        &self,
        id: &str,
        only: Option<&[String]>,
        reason: &str,
        extra: Option<Extra>,
        attribution: Option<&Attribution>,
    ) -> Result<ApplyOutcome, StoreError> {
        let _lock = self.session()?;
        self.tidy_blobs();
        let record = self.require_pending(id)?;
        refuse_external(&record)?;
        self.refuse_foreign(&record)?;
        let restricted = match only {
            None => None,
            Some([]) => return Err(StoreError::NothingSelected),
            Some(only) => Some(record.change_set.restrict(only)?),
        };
        let (selected, dropped_files) = match restricted {
            Some((kept, dropped)) => (Some(kept), dropped),
            None => (None, Vec::new()),
        };
        let decision = Resolution {
            reason,
            extra,
            attribution,
        };
        self.land(record, selected, dropped_files, None, decision)
    }

    /// Apply part of a pending action as a reviewer picked it (see [`ReviewedApply`]),
    /// consuming it: like [`Store::apply`], with each landing file receiving its given content.
    /// Every landing file is checked against its base first; the fingerprint must still be the
    /// action's ([`StoreError::PreviewChanged`] otherwise); nothing is written on any error.
    pub fn apply_reviewed(
        &self,
        id: &str,
        reviewed: ReviewedApply,
        reason: &str,
        extra: Option<Extra>,
    ) -> Result<ApplyOutcome, StoreError> {
        let attribution = self.default_attribution();
        self.apply_reviewed_as_opt(id, reviewed, reason, extra, attribution.as_ref())
    }

    /// [`Store::apply_reviewed`], recording who decided as `attribution` says.
    pub fn apply_reviewed_as(
        &self,
        id: &str,
        reviewed: ReviewedApply,
        reason: &str,
        extra: Option<Extra>,
        attribution: &Attribution,
    ) -> Result<ApplyOutcome, StoreError> {
        self.apply_reviewed_as_opt(id, reviewed, reason, extra, Some(attribution))
    }

    fn apply_reviewed_as_opt(
        &self,
        id: &str,
        reviewed: ReviewedApply,
        reason: &str,
        extra: Option<Extra>,
        attribution: Option<&Attribution>,
    ) -> Result<ApplyOutcome, StoreError> {
        let ReviewedApply {
            fingerprint,
            mut landings,
            review,
        } = reviewed;
        if landings.is_empty() {
            return Err(StoreError::NothingSelected);
        }
        let blobs = self.blobs();
        for landing in &mut landings {
            if let Some(content) = &mut landing.content {
                blobs.intern(content)?;
            }
        }
        let _lock = self.session()?;
        self.tidy_blobs();
        let record = self.require_pending(id)?;
        refuse_external(&record)?;
        self.refuse_foreign(&record)?;
        if record.fingerprint != fingerprint {
            return Err(StoreError::PreviewChanged { id: id.to_owned() });
        }
        let mut selected = ChangeSet::with_capacity(landings.len());
        for landing in landings {
            let change =
                record
                    .change_set
                    .get(&landing.path)
                    .ok_or_else(|| StoreError::NotInPreview {
                        path: landing.path.clone(),
                        touched: record.change_set.paths(),
                    })?;
            let change = match (landing.content, change) {
                (None, change) => change.clone(),
                (
                    Some(content),
                    FileChange::Update {
                        base_hash, base, ..
                    },
                ) => FileChange::Update {
                    base_hash: base_hash.clone(),
                    content,
                    replacements: landing.replacements,
                    base: base.clone(),
                },
                (Some(content), FileChange::Create { .. }) => FileChange::Create { content },
                (Some(_), FileChange::Delete { .. }) => {
                    return Err(StoreError::NotEditable { path: landing.path });
                }
            };
            selected.insert(landing.path, change);
        }
        let dropped_files = record
            .change_set
            .paths()
            .into_iter()
            .filter(|path| selected.get(path).is_none())
            .collect();
        let decision = Resolution {
            reason,
            extra,
            attribution,
        };
        self.land(record, Some(selected), dropped_files, review, decision)
    }

    /// Write `selected` (the whole change set when `None`) and move `record` to the history,
    /// with a reviewer note when this decision makes one. Call under the lock.
    fn land(
        &self,
        mut record: PendingRecord,
        selected: Option<ChangeSet>,
        dropped_files: Vec<String>,
        review: Option<Review>,
        decision: Resolution<'_>,
    ) -> Result<ApplyOutcome, StoreError> {
        let Resolution {
            reason,
            extra,
            attribution,
        } = decision;
        if self.require_check {
            require_passing_check(&record)?;
        }
        let selected_set = selected.as_ref().unwrap_or(&record.change_set);
        let checked = self.check_or_rebase(selected_set, record.rederive.as_ref(), Keep::Merged)?;
        let applied_files = selected_set.paths();
        let total_replacements = selected_set.total_replacements();
        let rebased_files: Vec<String> = checked
            .rebased
            .iter()
            .map(|(path, _)| path.clone())
            .collect();
        // The history keeps what each applied file received and what it held just before
        // (undo compares against the one and restores the other).
        if selected.is_some() || !checked.rebased.is_empty() {
            for (path, change) in selected.into_iter().flat_map(ChangeSet::into_files) {
                record.change_set.insert(path, change);
            }
            for (path, change) in checked.rebased {
                record.change_set.insert(path, change);
            }
            self.sign_pending(&mut record)?;
        }
        let note = self.resolution_note(
            &record,
            attribution,
            NoteResolution {
                outcome: Outcome::Applied,
                reason: reason.to_owned(),
                applied_files: applied_files.clone(),
                dropped_files: dropped_files.clone(),
                review: review.clone(),
            },
        )?;
        record.order = self.take_seq()?;
        let history = HistoryRecord {
            applied_files,
            dropped_files: dropped_files.clone(),
            review,
            ..self.resolved_now(record, Outcome::Applied, reason, extra, attribution)
        };
        let written: Vec<String> = history
            .applied_files
            .iter()
            .filter(|path| !checked.settled.contains(path))
            .cloned()
            .collect();
        let files = file_writes(checked.targets, &written, &history.action.change_set)?;
        self.commit_noting(Purpose::Apply, files, &history, None, note.as_ref())?;
        Ok(ApplyOutcome {
            applied_files: history.applied_files.clone(),
            dropped_files,
            total_replacements,
            rebased_files,
            rederived_files: checked.rederived,
            record: history,
        })
    }

    /// Record in the history of the applied action `id` what came of the git commit asked
    /// for after it (the commit's id, or why none was made); the record as written.
    pub fn record_commit(&self, id: &str, fact: &CommitFact) -> Result<HistoryRecord, StoreError> {
        let _lock = self.session()?;
        let mut record = self
            .find_history(id)?
            .ok_or_else(|| StoreError::UnknownAction { id: id.to_owned() })?;
        record.set_commit(fact);
        // This rewrites the history record alone; no file is written.
        self.commit(Purpose::RecordCommit, Vec::new(), &record)?;
        Ok(record)
    }

    /// Discard a pending action: it moves to history with the reason; no file is touched.
    pub fn discard(
        &self,
        id: &str,
        reason: &str,
        extra: Option<Extra>,
    ) -> Result<HistoryRecord, StoreError> {
        let attribution = self.default_attribution();
        self.discard_attributed(id, reason, extra, attribution.as_ref())
    }

    /// [`Store::discard`], recording who decided as `attribution` says.
    pub fn discard_as(
        &self,
        id: &str,
        reason: &str,
        extra: Option<Extra>,
        attribution: &Attribution,
    ) -> Result<HistoryRecord, StoreError> {
        self.discard_attributed(id, reason, extra, Some(attribution))
    }

    fn discard_attributed(
        &self,
        id: &str,
        reason: &str,
        extra: Option<Extra>,
        attribution: Option<&Attribution>,
    ) -> Result<HistoryRecord, StoreError> {
        let _lock = self.session()?;
        self.tidy_blobs();
        let mut record = self.require_pending(id)?;
        let dropped_files = record.change_set.paths();
        let note = self.resolution_note(
            &record,
            attribution,
            NoteResolution {
                outcome: Outcome::Discarded,
                reason: reason.to_owned(),
                applied_files: Vec::new(),
                dropped_files: dropped_files.clone(),
                review: None,
            },
        )?;
        record.order = self.take_seq()?;
        let history = HistoryRecord {
            dropped_files,
            ..self.resolved_now(record, Outcome::Discarded, reason, extra, attribution)
        };
        self.commit_noting(Purpose::Discard, Vec::new(), &history, None, note.as_ref())?;
        Ok(history)
    }

    /// Write `history` and, unless it is an undo, remove the pending record, in one
    /// transaction with `files`.
    pub(super) fn commit(
        &self,
        purpose: Purpose,
        files: Vec<FileWrite<'_>>,
        history: &HistoryRecord,
    ) -> Result<(), StoreError> {
        self.commit_noting(purpose, files, history, None, None)
    }

    /// [`Store::commit`], also removing the state file `also_remove` (relative to the state
    /// directory) and writing the reviewer note `note`, in the same transaction.
    pub(super) fn commit_noting(
        &self,
        purpose: Purpose,
        files: Vec<FileWrite<'_>>,
        history: &HistoryRecord,
        also_remove: Option<String>,
        note: Option<&ReviewerNote>,
    ) -> Result<(), StoreError> {
        let files = merge_aliases(files)?;
        let seq = history.action.seq;
        let history_file = StateRecord::History(history);
        let note_file = note.map(StateRecord::Note);
        // The note is placed before the history record: whoever sees the action resolved (a
        // hook waiting for a person's decision polls for its history record without the lock)
        // finds the note the decision left.
        let mut state: Vec<_> = note_file
            .as_ref()
            .map(|note| StateChange::Write {
                path: note_relative(seq),
                record: note,
            })
            .into_iter()
            .collect();
        state.push(StateChange::Write {
            path: RecordKind::History.relative(seq),
            record: &history_file,
        });
        match purpose {
            Purpose::Apply | Purpose::Discard => state.push(StateChange::Remove {
                path: RecordKind::Pending.relative(seq),
            }),
            // A trial is never committed (see `Store::check_in_place`); it keeps its record.
            Purpose::Undo | Purpose::Observe | Purpose::Trial | Purpose::RecordCommit => {}
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

    /// The files of `record` that no longer hold the base its preview was computed from, read
    /// without the lock: a snapshot for telling watchers a preview went stale, never the check
    /// before a write (apply makes that one under the lock).
    pub fn stale_files(&self, record: &PendingRecord) -> Result<Vec<String>, StoreError> {
        match self.check_fresh(&record.change_set) {
            Ok(_) => Ok(Vec::new()),
            Err(StoreError::Stale { files }) => Ok(files),
            Err(error) => Err(error),
        }
    }

    /// Whether the file `path` of a preview no longer holds the base `change` was computed
    /// from: [`Store::stale_files`] for one file, read without the lock (a review computing
    /// one file's hunks asks it).
    pub fn is_stale(&self, path: &str, change: &FileChange) -> Result<bool, StoreError> {
        match self.hash_target(path) {
            Ok((_, current)) => Ok(change.base_hash() != current.as_deref()),
            // A directory now stands where the preview saw a file (or none): it changed.
            Err(StoreError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::IsADirectory =>
            {
                Ok(true)
            }
            Err(error) => Err(error),
        }
    }

    /// Check every file of `set` against its base (absence for a create), reading one file at
    /// a time; on success each file's real root-relative name, in the order of
    /// `set`.
    pub(super) fn check_fresh(&self, set: &ChangeSet) -> Result<Vec<String>, StoreError> {
        let mut stale = Vec::new();
        let mut files = Vec::with_capacity(set.len());
        for (path, change) in set.files() {
            let Some((relative, current)) =
                unless_directory(self.hash_target(path), path, &mut stale)?
            else {
                continue;
            };
            if change.base_hash() != current.as_deref() {
                stale.push(path.to_owned());
            }
            files.push(relative);
        }
        if stale.is_empty() {
            Ok(files)
        } else {
            Err(StoreError::Stale { files: stale })
        }
    }

    /// Confine `path`, follow it to the real file, and hash that: its root-relative name and
    /// its content's hash (`None` when absent).
    pub(super) fn hash_target(&self, path: &str) -> Result<Target, StoreError> {
        let (relative, real) = self.located_target(path)?;
        let current = fs::read_bytes(&real)?.map(|bytes| content_hash(&bytes));
        Ok((relative, current))
    }

    /// Confine `path` and follow it to the real file: its root-relative name and real path.
    pub(super) fn located_target(
        &self,
        path: &str,
    ) -> Result<(String, std::path::PathBuf), StoreError> {
        let real = self.real_target(path)?;
        let relative =
            self.workspace
                .relative_name(&real)
                .ok_or_else(|| StoreError::SymlinkEscape {
                    path: path.to_owned(),
                    target: real.clone(),
                })?;
        Ok((relative, real))
    }

    /// Where the workspace file `path` really is, its links followed (confinement checked).
    pub(super) fn real_target(&self, path: &str) -> Result<std::path::PathBuf, StoreError> {
        Ok(self.workspace.resolve(path)?.real)
    }
}

/// A state file a resolution writes: the history record, or a reviewer note.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum StateRecord<'a> {
    /// The action's history record.
    History(&'a HistoryRecord),
    /// The note telling its model what a person did.
    Note(&'a ReviewerNote),
}

/// An MCP tool call is resolved by calling it ([`Store::resolve_external`]), never by writing.
pub(super) fn refuse_external(record: &PendingRecord) -> Result<(), StoreError> {
    match &record.mcp {
        Some(action) => Err(StoreError::ExternalPayload {
            id: record.id.clone(),
            server: action.server.clone(),
            tool: action.apply.tool.clone(),
        }),
        None => Ok(()),
    }
}

/// The files a transaction writes for `paths` of `change_set`, whose real root-relative names
/// are `targets` (as [`Store::check_fresh`] gave them). Every file holds its base (checked),
/// so that is its original.
pub(super) fn file_writes<'a>(
    targets: Vec<String>,
    paths: &[String],
    change_set: &'a ChangeSet,
) -> Result<Vec<FileWrite<'a>>, StoreError> {
    let mut files = Vec::with_capacity(targets.len());
    for (relative, path) in targets.into_iter().zip(paths) {
        let change = change_set
            .get(path)
            .ok_or_else(|| Invariant::NotInChangeSet { path: path.clone() })?;
        files.push(FileWrite {
            relative,
            original: change.base_hash().map(Cow::Borrowed),
            content: change.new_content(),
        });
    }
    Ok(files)
}

/// Refuse `record` unless its last check ran on its change set and passed.
fn require_passing_check(record: &PendingRecord) -> Result<(), StoreError> {
    let state = match record.last_check() {
        Some(check) if check.passed => return Ok(()),
        Some(check) => format!("failed its last check ({})", check.status_text()),
        None => "has not been checked".to_owned(),
    };
    Err(StoreError::CheckRequired {
        id: record.id.clone(),
        state,
    })
}

/// Write each real file once: a change set may name one file twice (a path and a symlink to
/// it, both given to `ast_edit`); two writes of one target would collide in the transaction.
/// The two changes must agree.
pub(super) fn merge_aliases(files: Vec<FileWrite>) -> Result<Vec<FileWrite>, StoreError> {
    let mut merged: Vec<FileWrite> = Vec::with_capacity(files.len());
    let mut index: HashMap<String, usize> = HashMap::new();
    for file in files {
        match index.get(&file.relative).map(|at| &merged[*at]) {
            Some(kept) if kept.content.map(Content::hash) == file.content.map(Content::hash) => {}
            Some(_) => {
                return Err(StoreError::AliasConflict {
                    path: file.relative,
                });
            }
            None => {
                index.insert(file.relative.clone(), merged.len());
                merged.push(file);
            }
        }
    }
    Ok(merged)
}
