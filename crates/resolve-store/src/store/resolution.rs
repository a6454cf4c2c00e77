//! Applying and discarding a pending action: the freshness check of every file against its
//! base, and the transaction that writes the files and moves the record to the history
//! together.

use std::borrow::Cow;
use std::collections::HashMap;

use resolve_core::Extra;

use super::Store;
use super::records::{ApplyOutcome, HistoryRecord, Outcome, PendingRecord, unix_now};
use crate::change_set::{ChangeSet, Content};
use crate::error::{Invariant, StoreError};
use crate::fs;
use crate::hash::content_hash;
use crate::layout::RecordKind;
use crate::transaction::{FileWrite, Purpose, StateChange, Transaction};

/// A file to write: its real root-relative name and its current hash (`None`: absent).
pub(super) type Target = (String, Option<String>);

impl Store {
    /// Apply a pending action (only the files in `only`, when given), consuming it.
    ///
    /// Every selected file is checked against its base hash before any write; a mismatch is
    /// [`StoreError::Stale`] naming every changed file, with nothing written and the action
    /// still pending. The files and the move to history land together or not at all.
    pub fn apply(
        &self,
        id: &str,
        only: Option<&[String]>,
        reason: &str,
        extra: Option<Extra>,
    ) -> Result<ApplyOutcome, StoreError> {
        let _lock = self.session()?;
        self.tidy_blobs();
        let mut record = self.require_pending(id)?;
        if let Some(action) = &record.mcp {
            return Err(StoreError::ExternalPayload {
                id: id.to_owned(),
                server: action.server.clone(),
                tool: action.apply.tool.clone(),
            });
        }
        let restricted = match only {
            None => None,
            Some([]) => return Err(StoreError::NothingSelected),
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
            resolved_by: self.resolver.clone(),
            decided_by: self.decider,
            model_reason: self.model_reason_beside(reason),
            applied_files,
            dropped_files: dropped_files.clone(),
            undone: false,
        };
        // Every file holds its base (checked above), so that is its original here.
        let mut files = Vec::with_capacity(targets.len());
        for (relative, path) in targets.into_iter().zip(&history.applied_files) {
            let change = history
                .action
                .change_set
                .get(path)
                .ok_or_else(|| Invariant::NotInChangeSet { path: path.clone() })?;
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
    ) -> Result<HistoryRecord, StoreError> {
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
            resolved_by: self.resolver.clone(),
            decided_by: self.decider,
            model_reason: self.model_reason_beside(reason),
            applied_files: Vec::new(),
            undone: false,
        };
        self.commit(Purpose::Discard, Vec::new(), &history)?;
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
        self.commit_removing(purpose, files, history, None)
    }

    /// [`Store::commit`], also removing the state file `also_remove` (relative to the state
    /// directory) in the same transaction.
    pub(super) fn commit_removing(
        &self,
        purpose: Purpose,
        files: Vec<FileWrite<'_>>,
        history: &HistoryRecord,
        also_remove: Option<String>,
    ) -> Result<(), StoreError> {
        let files = merge_aliases(files)?;
        let seq = history.action.seq;
        let mut state = vec![StateChange::Write {
            path: RecordKind::History.relative(seq),
            record: history,
        }];
        match purpose {
            Purpose::Apply | Purpose::Discard => state.push(StateChange::Remove {
                path: RecordKind::Pending.relative(seq),
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

    fn check_fresh(&self, set: &ChangeSet) -> Result<Vec<String>, StoreError> {
        let mut stale = Vec::new();
        let mut files = Vec::with_capacity(set.len());
        for (path, change) in set.files() {
            let (relative, current) = match self.hash_target(path) {
                Ok(target) => target,
                // A directory now stands where the preview saw a file (or none): it changed.
                Err(StoreError::Io { source, .. })
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
            Err(StoreError::Stale { files: stale })
        }
    }

    /// Confine `path`, follow it to the real file, and hash that: its root-relative name and
    /// its content's hash (`None` when absent).
    pub(super) fn hash_target(&self, path: &str) -> Result<Target, StoreError> {
        let resolved = self.workspace.resolve(path)?;
        let real = self.workspace.real_path(&resolved.absolute);
        let relative =
            self.workspace
                .relative_name(&real)
                .ok_or_else(|| StoreError::SymlinkEscape {
                    path: path.to_owned(),
                    target: real.clone(),
                })?;
        let current = fs::read_bytes(&real)?.map(|bytes| content_hash(&bytes));
        Ok((relative, current))
    }
}

/// Write each real file once: a change set may name one file twice (a path and a symlink to
/// it, both given to `ast_edit`); two writes of one target would collide in the transaction.
/// The two changes must agree.
fn merge_aliases(files: Vec<FileWrite>) -> Result<Vec<FileWrite>, StoreError> {
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
