//! Settling a file whose preview conflicts with what changed since ([`settle`], `resolve amend
//! --take current|preview`): the three-way merge of the preview into the file as it is now,
//! each conflicting hunk taking the side the person chose, becomes the file's new content, and
//! the file's current bytes its new base, so the action applies as staged. It is an amendment
//! like any other (the action keeps its id; the amendment is recorded and told to the model).
//! To write the result by hand, a person edits the merge with conflict markers
//! ([`conflict_draft`]) and amends the file with it.

use resolve_store::{AmendFile, FileChange, PendingRecord, Store, StoreError, content_hash};

use crate::diff::{change_diff, unified_diff};
use crate::error::EditError;
use crate::merge::{MergeSide, merge_lines, merge_lines_taking};
use crate::preview::replace_file_diff;
use crate::review::{amend_target, moved_bytes, pending_at, previewed_content};

/// What settling a file did.
#[derive(Debug)]
pub enum SettleOutcome {
    /// The file's conflicting hunks (this many) took the chosen side; the action applies as
    /// staged now.
    Settled {
        /// The amended action.
        record: Box<PendingRecord>,
        /// The file settled.
        path: String,
        /// How many hunks conflicted.
        hunks: usize,
    },
    /// The file rebases cleanly (or has not moved): there was nothing to settle.
    Clean {
        /// The file.
        path: String,
    },
}

/// What a person edits to resolve `path` of `record` by hand: when the file moved since the
/// preview and the preview conflicts with that change, the merge onto the file as it is now
/// with `git`'s conflict markers around each conflicting hunk; `None` when it does not conflict
/// (the previewed content is what to edit). Saved by [`amend`](crate::amend), it becomes the
/// content and the file's current bytes the base.
pub fn conflict_draft(
    store: &Store,
    record: &PendingRecord,
    path: &str,
) -> Result<Option<String>, EditError> {
    let Some(current) = moved_bytes(store, record, path)? else {
        return Ok(None);
    };
    let Some(change @ FileChange::Update { .. }) = record.change_set.get(path) else {
        return Ok(None);
    };
    let Some(base) = store.base_content(path, change)? else {
        return Ok(None);
    };
    let preview = previewed_content(store, record, path)?;
    let merge = merge_lines(&current, &base, preview.as_bytes());
    if merge.conflicts.is_empty() {
        return Ok(None);
    }
    Ok(String::from_utf8(merge.merged).ok())
}

/// Whether `content` still holds a conflict marker line of [`conflict_draft`].
pub fn has_conflict_markers(content: &str) -> bool {
    content
        .lines()
        .any(|line| line == "<<<<<<< current" || line == ">>>>>>> preview")
}

/// Settle `path` (or the action's only file) of the pending action `id`, each conflicting hunk
/// taking `side`; `fingerprint`, when given, must still be the action's.
pub fn settle(
    store: &Store,
    id: &str,
    path: Option<&str>,
    side: MergeSide,
    fingerprint: Option<&str>,
) -> Result<SettleOutcome, EditError> {
    let record = pending_at(store, id, fingerprint)?;
    let path = amend_target(&record, path)?;
    let Some(change @ FileChange::Update { base_hash, .. }) = record.change_set.get(&path) else {
        return Err(EditError::InvalidRequest(format!(
            "`{path}` is not a file the preview updates; only an updated file's conflicting hunks can be settled. Use `resolve amend` without --take to write its content."
        )));
    };
    let real = store.workspace().resolve(&path)?.real;
    let Some(current) = resolve_store::read_regular_file(&real)? else {
        return Err(StoreError::Stale {
            files: vec![path.clone()],
        }
        .into());
    };
    if content_hash(&current) == *base_hash {
        return Ok(SettleOutcome::Clean { path });
    }
    let Some(base) = store.base_content(&path, change)? else {
        return Err(StoreError::Stale { files: vec![path] }.into());
    };
    let preview = previewed_content(store, &record, &path)?;
    let hunks = merge_lines(&current, &base, preview.as_bytes())
        .conflicts
        .len();
    if hunks == 0 {
        return Ok(SettleOutcome::Clean { path });
    }
    let merged = merge_lines_taking(&current, &base, preview.as_bytes(), side).merged;
    let merged = String::from_utf8(merged).map_err(|_| EditError::Binary { path: path.clone() })?;
    let current_text =
        String::from_utf8(current).map_err(|_| EditError::Binary { path: path.clone() })?;
    let shown = store.blobs().read_text(&record.preview_text)?;
    let preview_text = replace_file_diff(
        &shown,
        &path,
        &change_diff(&path, Some(&current_text), Some(&merged)),
    );
    let diff = unified_diff(&path, &preview, &merged);
    let amended = store.amend(
        id,
        AmendFile {
            fingerprint: record.fingerprint,
            path: path.clone(),
            content: merged.into(),
            preview_text: preview_text.into(),
            diff,
            rebased_onto: Some(current_text.into_bytes()),
        },
    )?;
    Ok(SettleOutcome::Settled {
        record: Box::new(amended),
        path,
        hunks,
    })
}
